#include "model/network_math.h"

#include "common/units.h"

namespace aggnet {

std::uint64_t num_chunks(std::uint64_t bytes, std::uint64_t chunk_bytes) {
  return (bytes + chunk_bytes - 1) / chunk_bytes;
}

std::vector<std::uint64_t> ring_segment_offsets(std::uint64_t gradient_bytes, std::uint64_t n) {
  std::vector<std::uint64_t> offsets(n + 1, 0);
  const std::uint64_t elems = gradient_bytes / 4;
  for (std::uint64_t s = 0; s < n; ++s)
    offsets[s + 1] = offsets[s] + (elems / n + (s < elems % n ? 1 : 0)) * 4;
  return offsets;
}

std::uint64_t chunk_serialization_ps(const WanLinkParams& link, std::uint64_t chunk_bytes) {
  return serialization_ps(wire_bytes(chunk_bytes, link.mtu_bytes, link.header_bytes),
                          link.bandwidth_bps);
}

double payload_rate(const WanLinkParams& params, std::uint64_t chunk_bytes) {
  const double wire =
      static_cast<double>(wire_bytes(chunk_bytes, params.mtu_bytes, params.header_bytes));
  return static_cast<double>(params.bandwidth_bps) / 8.0 * static_cast<double>(chunk_bytes) / wire;
}

WanLinkParams access_link(const Site& site) {
  WanLinkParams p;
  p.bandwidth_bps = site.cluster.access_bandwidth_bps;
  p.delay_ps = site.cluster.access_delay_ps;
  return p;
}

std::uint64_t arrival_latency_ps(const Platform& platform, const Routing& routing, int s, int d,
                                 std::uint64_t chunk_bytes) {
  auto serialize = [chunk_bytes](const WanLinkParams& l) {
    return chunk_serialization_ps(l, chunk_bytes);
  };
  const WanLinkParams up = access_link(platform.sites[s]);
  std::uint64_t t = serialize(up) + up.delay_ps;
  const auto path = routing.path(s, d);
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    const auto& link = platform.links[routing.link_index(path[i], path[i + 1])].params;
    t += platform.sites[path[i]].sw.latency_ps + serialize(link) + link.delay_ps;
  }
  return t + platform.sites[d].sw.latency_ps;
}

}  // namespace aggnet
