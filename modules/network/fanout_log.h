// A switch's wide multicast hand-overs, kept once for all of their egress links: the
// shared buffer of an output-queued switch.
//
// The co-located reference's fabric hands each chunk of an all-to-all to n - 1 port
// links. Handed over one by one, each of those links' hot state and arrival FIFO takes the
// chunk at once: at 1,000 sites a million cold lines a chunk and a FIFO stream of 16 MB a
// wave, most of the reference's time. A link that is busy (its arrival FIFO scheduled)
// cannot deliver the chunk before those already queued, so it takes it later, from this
// log, when its FIFO runs dry (WanLink::refill): its serialization start, queueing and
// arrival are computed from the hand-over instant kept here, exactly as at the hand-over
// (a FIFO link's timing depends only on its own earlier hand-overs). A link that is not
// scheduled takes the chunk at once, as before, so every calendar entry is made when and
// in the order it was.
#pragma once

#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

namespace aggnet {

class FanoutLog {
 public:
  /// One wide hand-over: what, when, to which member set, and how many members have not
  /// yet taken it.
  struct Entry {
    tlm::tlm_generic_payload* trans = nullptr;
    sc_core::sc_time at;
    std::uint32_t members = 0;    ///< member set (add_members)
    std::uint32_t remaining = 0;  ///< members yet to take it
  };

  /// `ports`: the egress ports a member set may name, 0 .. ports - 1; all start direct.
  explicit FanoutLog(std::uint32_t ports);

  /// A member set (ports below the log's count), its index.
  std::uint32_t add_members(const std::vector<std::uint32_t>& ports);
  bool member(std::uint32_t members, std::uint32_t port) const {
    return (member_bits_[members * words_ + port / 64] >> (port % 64) & 1u) != 0;
  }

  /// A direct port takes a hand-over at once (its link is not scheduled, or cannot defer).
  bool direct(std::uint32_t port) const { return (direct_[port / 64] >> (port % 64) & 1u) != 0; }
  void set_direct(std::uint32_t port, bool on) {
    const std::uint64_t bit = std::uint64_t{1} << (port % 64);
    direct_[port / 64] = on ? direct_[port / 64] | bit : direct_[port / 64] & ~bit;
  }

  /// Appends a hand-over for `count` members of set `members`; its sequence number.
  std::uint64_t append(tlm::tlm_generic_payload& trans, const sc_core::sc_time& at,
                       std::uint32_t members, std::uint32_t count);
  /// The first entry at or after `from` that `port` is a member of, else end().
  std::uint64_t next_for(std::uint32_t port, std::uint64_t from) const;
  const Entry& entry(std::uint64_t seq) const { return entries_[seq & mask_]; }
  /// A member has taken entry `seq`: entries every member took leave the log.
  void taken(std::uint64_t seq);
  std::uint64_t end() const { return end_; }
  /// Entries some member has not taken yet (and those before them).
  std::uint64_t size() const { return end_ - head_; }

 private:
  void grow();

  std::vector<Entry> entries_;  // a ring: entry seq at seq & mask_
  std::uint64_t mask_ = 0;
  std::uint64_t head_ = 0, end_ = 0;
  std::uint32_t ports_;
  std::uint32_t words_;                     // 64-bit words per port set
  std::vector<std::uint64_t> direct_;       // [port / 64]
  std::vector<std::uint64_t> member_bits_;  // [set * words_ + port / 64]
};

}  // namespace aggnet
