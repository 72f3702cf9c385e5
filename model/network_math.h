// The network arithmetic both sides of aggnet share: the SystemC modules and builder
// (exact, in ps) and the analytic time model, the control plane and size-buffers.
// Plain C++. One definition each, so the two sides cannot drift apart.
#pragma once

#include <cstdint>
#include <vector>

#include "model/platform.h"
#include "model/routing.h"

namespace aggnet {

/// Chunks of `chunk_bytes` (the last one shorter) that carry `bytes`.
std::uint64_t num_chunks(std::uint64_t bytes, std::uint64_t chunk_bytes);

/// The ring all-reduce's n segments of a gradient, in whole floats (4 bytes), the first
/// (elements mod n) one float larger: byte offsets, n + 1 values from 0 to the end.
std::vector<std::uint64_t> ring_segment_offsets(std::uint64_t gradient_bytes, std::uint64_t n);

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

}  // namespace aggnet
