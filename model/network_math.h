// The network arithmetic both sides of aggnet share: the SystemC modules and builder
// (exact, in ps) and the analytic time model, the control plane and size-buffers.
// Plain C++. One definition each, so the two sides cannot drift apart.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "model/platform.h"
#include "model/routing.h"
#include "model/run_options.h"
#include "model/schedule.h"

namespace aggnet {

/// Chunks of `chunk_bytes` (the last one shorter) that carry `bytes`.
std::uint64_t num_chunks(std::uint64_t bytes, std::uint64_t chunk_bytes);

/// The ring all-reduce's n segments of a gradient, in whole floats (4 bytes), the first
/// (elements mod n) one float larger: byte offsets, n + 1 values from 0 to the end.
std::vector<std::uint64_t> ring_segment_offsets(std::uint64_t gradient_bytes, std::uint64_t n);

/// The same split without a table (a ring's clusters read it per chunk, and a table of
/// n + 1 offsets per cluster is n^2 words touched at hundreds of sites): segment s starts
/// at 4 (s floats + min(s, longer)) bytes.
class RingSegmentSplit {
 public:
  RingSegmentSplit() = default;
  RingSegmentSplit(std::uint64_t gradient_bytes, std::uint64_t n)
      : floats_(gradient_bytes / 4 / n), longer_(gradient_bytes / 4 % n) {}
  std::uint64_t offset_bytes(std::uint64_t segment) const {
    return 4 * (segment * floats_ + std::min(segment, longer_));
  }
  std::uint64_t bytes(std::uint64_t segment) const {
    return 4 * (floats_ + (segment < longer_ ? 1 : 0));
  }
  /// The segments one float longer: [0, longer_segments()).
  std::uint64_t longer_segments() const { return longer_; }

 private:
  std::uint64_t floats_ = 0;  // whole floats of every segment
  std::uint64_t longer_ = 0;  // segments one float longer (the first ones)
};

/// Serialization of one chunk on a link: header-inflated wire bytes at the link rate,
/// rounded up to a whole ps.
std::uint64_t chunk_serialization_ps(const WanLinkParams& link, std::uint64_t chunk_bytes);

/// Payload bytes/s a link of `params` carries when it sends chunks of `chunk_bytes`
/// (line rate less the per-packet headers).
double payload_rate(const WanLinkParams& params, std::uint64_t chunk_bytes);

/// Access link (cluster <-> edge) parameters of a site: its cluster's access bandwidth
/// and delay, with the reference MTU and header of WanLinkParams' defaults.
WanLinkParams access_link(const Site& site);

/// Latency from s's cluster emitting a chunk of `chunk_bytes` to its last bit reaching
/// d's aggregator, in ps: access up (serialization + delay), then per WAN hop of the
/// shortest path the hop's switch latency + serialization + propagation (store-and-
/// forward), then d's switch latency. Queueing behind other streams is not included.
std::uint64_t arrival_latency_ps(const Platform& platform, const Routing& routing, int s, int d,
                                 std::uint64_t chunk_bytes);

/// Peak memory of one `aggnet run`, estimated before anything is built from per-unit
/// costs measured on this implementation (docs/simulation-semantics.md, "Memory"): the
/// modules of every site and link (the co-located reference: a fabric switch and one
/// port link per site), the aggregation slots, the functional mode's float data and the --stats
/// series (at least steps x the longest compute phase / interval samples each).
struct RunFootprint {
  std::uint64_t sites = 0, links = 0, colocated_links = 0;
  std::uint64_t structure_bytes = 0;  ///< modules, slots, functional data
  std::uint64_t stats_samples = 0;    ///< per series; 0 without --stats
  std::uint64_t stats_bytes = 0;
  std::uint64_t total_bytes() const { return structure_bytes + stats_bytes; }
};
RunFootprint estimate_run_footprint(const Platform& platform, const RunOptions& options,
                                    bool colocated, std::uint64_t stats_interval_ps);

/// The finest --stats interval whose series fit in memory with the rest of the run and
/// take at most a quarter of it (the series grow by reallocation, and the statistics are
/// written from them): `from_ps` times 1, 2, 5, 10, 20, 50, ... (the first that fits); 0
/// if the run does not fit even without series.
std::uint64_t stats_interval_that_fits(const Platform& platform, const RunOptions& options,
                                       bool colocated, std::uint64_t from_ps);
/// A time in ps as an option value ("50ms", "1s", "250us", "7ps").
std::string interval_text(std::uint64_t ps);

/// The host-to-host chunk transactions one step of a host collective hands to the access
/// links at once (point-to-point: messages x chunks per pair; parameter server: the
/// server's copies to its workers; unicast all-to-all: every member's copies to every
/// other; an unpaced reduction forest: every member's G): they all exist until they have
/// crossed. 0 for group averages and rings, whose chunks go out paced or a segment at a time.
std::uint64_t queued_host_chunks(const Schedule& schedule, const RunOptions& options);

/// Refuses a run whose estimate exceeds memory_limit_bytes() (common/host.h), before it
/// allocates anything; with `schedule`, also one whose host chunks queued at once
/// (queued_host_chunks) would not fit. Errors: ConfigError(where, 0, "--platform",
/// "--stats-interval" or "--schedule", what would fit and the estimate; for the interval,
/// the finest that fits).
void check_run_footprint(const std::string& where, const Platform& platform,
                         const RunOptions& options, bool colocated, std::uint64_t stats_interval_ps,
                         const Schedule* schedule = nullptr);

}  // namespace aggnet
