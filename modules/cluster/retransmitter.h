// The sender side of loss recovery (SwitchML / ATP style): every contribution a site hands
// to the network is tracked per receiver until that receiver's cluster acknowledges the
// contribution; one not acknowledged within the retransmission timeout is sent again, as
// a unicast copy to that receiver, and re-armed with twice the timeout (capped).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <systemc>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "modules/core/statistics.h"

namespace aggnet {

/// Retransmitter: `track` starts a timer per (step, receiver, chunk), `ack` stops it;
/// on expiry `resend(step, receiver, chunk)` is called (the owner builds and emits the copy
/// and returns when it leaves the sender's edge) and the timer restarts with twice the
/// timeout, at most kMaxBackoff times the first (binary exponential backoff per
/// contribution, as TCP backs off a segment's RTO): a contribution unacknowledged for
/// D after it was sent has been sent again at most backoff_expiries(D / timeout) times.
/// Without it, timeouts below the queueing delay sent a copy every timeout (a collapse).
/// A retransmission window per receiver bounds the copies in flight to it (as TCP bounds
/// a connection's segments in flight after a timeout): a copy is in flight from its
/// sending until its acknowledgement or its own timer's expiry, and an expiry that finds
/// `max_window` copies to its receiver in flight (or older expiries waiting) waits in
/// line for one to leave. First sends are not counted: random loss of a few of them needs
/// no window, and in flight copies are at most max_window x receivers. Without it, a run
/// without flow control (`drop`) kept tens of thousands of copies queued on its WAN links
/// and grew until the memory guard stopped it. The line is served lowest (step, chunk)
/// first, as TCP SACK recovery sends the lowest hole first (RFC 6675, NextSeg): with the
/// receiver's admission window (FpgaAggregator, `drop`) the contributions its held slots
/// miss are every sender's lowest unacknowledged ones, so they never wait behind others.
/// `nack` (the receiver dropped the copy for want of a slot) takes a copy out of the
/// window and puts its contribution in line at once, without waiting for its timer. A
/// receiver that sends negative acknowledgements advertises its admission window's end
/// with them and with its acknowledgements (as TCP's receive window): a chunk of that step
/// at or past the end waits in line, and with no copy in flight to the receiver the lowest
/// waiting one goes anyway, as a probe (TCP's zero-window probe), to learn the new end.
/// Without the advertised end every sender kept its 16 copies bouncing off a full
/// receiver each round trip (the collapse case: 669 GB sent again for 18 GiB of gradient).
/// A timer that expires while the previous copy has not yet left the sender's
/// edge (a long queue of its own) waits for it to leave, plus one timeout: a sender never
/// queues a second copy behind the first. Without this, a sender whose backlog outlasted
/// the timeout queued every unacknowledged contribution again each timeout, faster than
/// its link drained them, and the copies' memory grew without bound.
class Retransmitter : public sc_core::sc_module {
 public:
  using Resend = std::function<sc_core::sc_time(int step, int dst, std::uint32_t chunk)>;
  /// The timeout stops doubling at this multiple of the first (three doublings: the
  /// watchdog's default window, 20 timeouts, still spans two capped intervals).
  static constexpr std::uint64_t kMaxBackoff = 8;
  /// Retransmitted copies in flight to one receiver, at most (the window's start).
  static constexpr std::uint64_t kMaxWindow = 16;
  /// Expiries of a timer never acknowledged within `timeouts` first timeouts of its
  /// tracking (copies leaving at once): T, 2T, 4T, 8T, 8T, ... summed up to `timeouts`.
  static std::uint64_t backoff_expiries(double timeouts, std::uint64_t max_backoff = kMaxBackoff);

  /// `max_backoff`: the timeout's cap as a multiple of the first (1: fixed, no backoff);
  /// `max_window`: copies in flight per receiver at most (0: no window).
  Retransmitter(sc_core::sc_module_name name, Resend resend,
                std::uint64_t max_backoff = kMaxBackoff, std::uint64_t max_window = kMaxWindow);

  /// `departure`: when the copy handed over now leaves the sender's edge.
  void track(int step, int dst, std::uint32_t chunk, std::uint64_t bytes,
             const sc_core::sc_time& timeout, const sc_core::sc_time& departure);
  /// Acknowledgement of (step, chunk) from receiver `from`; false if none was outstanding.
  /// `window_end`: the receiver's admission window's end for `step` (0: none advertised).
  bool ack(int step, int from, std::uint32_t chunk, std::uint32_t window_end = 0);
  /// Negative acknowledgement of (step, chunk) from `from` (dropped, not added): its copy
  /// leaves the window and it waits in line, without a timer; false if not outstanding.
  /// From then on chunks of `step` from `window_end` on wait (see above).
  bool nack(int step, int from, std::uint32_t chunk, std::uint32_t window_end);
  std::size_t outstanding() const { return outstanding_.size(); }
  /// Forgets every outstanding contribution (counted as abandoned); timers lapse.
  void abandon() {
    counters_.abandoned += outstanding_.size();
    outstanding_.clear();
    windows_.clear();
  }
  /// Copies in flight to receiver `dst` now.
  std::size_t copies_in_flight(int dst) const;

  struct Counters {
    std::uint64_t timeouts = 0;             ///< timer expiries = contributions sent again
    std::uint64_t retransmitted_bytes = 0;  ///< their payload bytes
    Histogram recovery_ns;                  ///< first timeout to acknowledgement
    std::uint64_t abandoned = 0;            ///< never acknowledged (given up at the end)
    std::uint64_t window_waits = 0;         ///< expiries put in line behind the window
    std::uint64_t nacks = 0;                ///< negative acknowledgements of outstanding ones
    std::uint64_t probes = 0;               ///< copies sent past an advertised window end
    std::uint64_t max_in_flight = 0;        ///< most copies in flight to one receiver
  };
  const Counters& counters() const { return counters_; }
  std::uint64_t timeouts() const { return counters_.timeouts; }
  static std::vector<Statistic> statistics(const Counters& counters);

 private:
  using Key = std::tuple<int, int, std::uint32_t>;  // step, receiver, chunk
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      const auto [step, dst, chunk] = k;
      std::uint64_t h =
          (static_cast<std::uint64_t>(static_cast<std::uint32_t>(step)) << 32) ^ chunk ^
          static_cast<std::uint64_t>(static_cast<std::uint32_t>(dst)) * 0x9E3779B97F4A7C15ULL;
      h ^= h >> 33;  // the murmur3 finalizer: the low bits depend on every field
      h *= 0xff51afd7ed558ccdULL;
      h ^= h >> 33;
      return static_cast<std::size_t>(h);
    }
  };
  struct State {
    sc_core::sc_time sent, deadline, timeout, first_timeout, departure;
    sc_core::sc_time max_timeout;  // kMaxBackoff x the first
    std::uint64_t bytes = 0;
    bool timed_out = false;
    bool copy_in_flight = false;  // its last copy counts in its receiver's window
    bool waiting = false;         // expired with the window full: no timer, in line
  };
  struct Window {
    std::size_t in_flight = 0;
    std::set<Key> waiting;              // one receiver's: lowest (step, chunk) first
    std::map<int, std::uint32_t> ends;  // step -> admission window end, once NACKed
  };
  struct Timer {
    sc_core::sc_time deadline;
    Key key;
    bool operator>(const Timer& o) const { return deadline > o.deadline; }
  };
  void fire();
  void arm();
  Window& window_of(int dst);
  bool window_full(const Window& w) const;
  void send_copy(const Key& key, State& s, const sc_core::sc_time& now);
  void put_in_line(const Key& key, State& s);
  void release_waiting(const sc_core::sc_time& now);
  void release(Window& w, const sc_core::sc_time& now);
  static void raise_end(Window& w, int step, std::uint32_t window_end);

  Resend resend_;
  std::uint64_t max_backoff_, max_window_;
  // A hash map: every contribution a site sends is tracked, looked up when its timer
  // fires and erased at its acknowledgement (a tree's lookups were a third of a lossy run).
  std::unordered_map<Key, State, KeyHash> outstanding_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;
  std::unordered_map<int, Window> windows_;
  std::vector<int> widened_;  // receivers whose window took a copy out since fire()
  sc_core::sc_event wake_;
  Counters counters_;
};

}  // namespace aggnet
