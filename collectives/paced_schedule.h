// Pacing: one stream per multicast tree (or per unicast copy), each starting at its send
// offset after the agreed start and emitting a chunk every pacing interval; the streams
// are merged in time order (ties: the earlier stream first).
#pragma once

#include <cstdint>
#include <vector>

namespace aggnet {

class PacedSchedule {
 public:
  struct Stream {
    int dst;  ///< -1: the multicast tree
    std::uint64_t next_ps;
    std::uint64_t chunk = 0;
  };
  /// Streams of `chunks` chunks each, one every `interval_ps`.
  void reset(int step, std::uint64_t chunks, std::uint64_t interval_ps) {
    streams_.clear();
    step_ = step;
    chunks_ = chunks;
    interval_ps_ = interval_ps;
  }
  void add_stream(int dst, std::uint64_t start_ps) { streams_.push_back({dst, start_ps}); }
  /// The stream whose chunk is due first; null once every chunk is emitted.
  const Stream* next() const {
    const Stream* best = nullptr;
    for (const Stream& s : streams_)
      if (s.chunk < chunks_ && (best == nullptr || s.next_ps < best->next_ps)) best = &s;
    return best;
  }
  /// `stream`'s chunk is emitted: its next one is due an interval later.
  void advance(const Stream& stream) {
    Stream& s = streams_[static_cast<std::size_t>(&stream - streams_.data())];
    ++s.chunk;
    s.next_ps += interval_ps_;
  }
  int step() const { return step_; }

 private:
  std::vector<Stream> streams_;
  int step_ = 0;
  std::uint64_t chunks_ = 0;
  std::uint64_t interval_ps_ = 0;
};

}  // namespace aggnet
