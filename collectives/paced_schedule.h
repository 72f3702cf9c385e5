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
    std::uint64_t end = 0;          ///< one past the stream's last chunk
    std::uint64_t interval_ps = 0;  ///< between its chunks
    int reduction_tree = -1;        ///< the chunks' reduction tree (-1: none)
  };
  /// Streams of `chunks` chunks each, one every `interval_ps`.
  void reset(int step, std::uint64_t chunks, std::uint64_t interval_ps) {
    streams_.clear();
    step_ = step;
    chunks_ = chunks;
    interval_ps_ = interval_ps;
  }
  void add_stream(int dst, std::uint64_t start_ps) {
    streams_.push_back({dst, start_ps, 0, chunks_, interval_ps_});
  }
  /// A stream of its own: chunks [first, end), one every `interval_ps`, of reduction tree
  /// `reduction_tree` (reduction forests: one stream per tree).
  void add_stream(int dst, std::uint64_t start_ps, std::uint64_t first, std::uint64_t end,
                  std::uint64_t interval_ps, int reduction_tree) {
    streams_.push_back({dst, start_ps, first, end, interval_ps, reduction_tree});
  }
  /// The stream whose chunk is due first; null once every chunk is emitted.
  const Stream* next() const {
    const Stream* best = nullptr;
    for (const Stream& s : streams_)
      if (s.chunk < s.end && (best == nullptr || s.next_ps < best->next_ps)) best = &s;
    return best;
  }
  /// `stream`'s chunk is emitted: its next one is due an interval later.
  void advance(const Stream& stream) {
    Stream& s = streams_[static_cast<std::size_t>(&stream - streams_.data())];
    ++s.chunk;
    s.next_ps += s.interval_ps;
  }
  int step() const { return step_; }

 private:
  std::vector<Stream> streams_;
  int step_ = 0;
  std::uint64_t chunks_ = 0;
  std::uint64_t interval_ps_ = 0;
};

}  // namespace aggnet
