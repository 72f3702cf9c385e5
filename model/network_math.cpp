#include "model/network_math.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "common/config_error.h"
#include "common/host.h"
#include "common/units.h"
#include "model/arrival_latencies.h"

namespace aggnet {

namespace {

/// a + b, or std::overflow_error naming `what` (no sum of times may wrap).
std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* what) {
  if (b > std::numeric_limits<std::uint64_t>::max() - a)
    throw std::overflow_error(std::string(what) + " exceeds 2^64 ps");
  return a + b;
}

/// a x b, saturating at 2^64 - 1 (estimates only compare against a limit).
std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  return p >> 64 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(p);
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return b > std::numeric_limits<std::uint64_t>::max() - a
             ? std::numeric_limits<std::uint64_t>::max()
             : a + b;
}

// Per-unit costs measured with /usr/bin/time (max RSS) on synthetic platforms of 30, 60
// and 120 sites, with and without the co-located reference: ~59 KB per (two-way) link,
// ~9 B per aggregation slot; rounded up here.
constexpr std::uint64_t kBaseBytes = 32ull << 20;
constexpr std::uint64_t kPerSiteBytes = 256ull << 10;
constexpr std::uint64_t kPerLinkBytes = 64ull << 10;
constexpr std::uint64_t kPerSlotBytes = 16;
// One --stats sample: 8 B in the series (up to 16 B with vector growth) and its row in
// the written file (CSV ~60 B, JSON ~10 B plus a parsed node of 16 B).
constexpr std::uint64_t kPerSampleBytes = 96;
// One chunk transaction queued on a link with its calendar entry (measured: 10,000 64 MiB
// point-to-point messages, 640,000 chunks, peak 230 MB above the bare run).
constexpr std::uint64_t kPerQueuedChunkBytes = 400;

}  // namespace

std::uint64_t num_chunks(std::uint64_t bytes, std::uint64_t chunk_bytes) {
  return bytes / chunk_bytes + (bytes % chunk_bytes != 0 ? 1 : 0);
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
  const char* what = "arrival latency";
  const WanLinkParams up = access_link(platform.sites[s]);
  std::uint64_t t = checked_add(serialize(up), up.delay_ps, what);
  routing.for_each_hop_reversed(s, d, [&](int u, int v) {
    const auto& link = platform.links[routing.link_index(u, v)].params;
    t = checked_add(t, platform.sites[u].sw.latency_ps, what);
    t = checked_add(t, serialize(link), what);
    t = checked_add(t, link.delay_ps, what);
  });
  return checked_add(t, platform.sites[d].sw.latency_ps, what);
}

// The terms of arrival_latency_ps, summed from s outwards instead of from d back: unsigned
// and non-negative, so the total is the same and overflows in one order exactly when in
// the other.
std::uint64_t ArrivalLatencies::to(int d) {
  if (++queries_ <= direct_queries_)
    return arrival_latency_ps(platform_, routing_, s_, d, chunk_bytes_);
  const char* what = "arrival latency";
  if (hops_ps_.empty()) {
    const WanLinkParams up = access_link(platform_.sites[static_cast<std::size_t>(s_)]);
    up_ps_ = checked_add(chunk_serialization_ps(up, chunk_bytes_), up.delay_ps, what);
    hops_ps_.assign(platform_.sites.size(), kUnknown);
    hops_ps_[static_cast<std::size_t>(s_)] = 0;
  }
  const auto at = [this](int v) -> std::uint64_t& { return hops_ps_[static_cast<std::size_t>(v)]; };
  const auto sw_ps = [this](int v) {
    return platform_.sites[static_cast<std::size_t>(v)].sw.latency_ps;
  };
  // Summed before: reachable (the walks only sum reachable sites), no routing look-up.
  if (d >= 0 && static_cast<std::size_t>(d) < hops_ps_.size() && at(d) != kUnknown)
    return checked_add(checked_add(up_ps_, at(d), what), sw_ps(d), what);
  const bool reachable = routing_.reachable(s_, d);  // unreachable: no hop, as there
  // The sites summed form a subtree of s's routing tree: walk back to the nearest one.
  walk_.clear();
  for (int v = d; reachable && at(v) == kUnknown; v = walk_.back().first)
    walk_.emplace_back(routing_.predecessor(s_, v), v);
  for (auto it = walk_.rbegin(); it != walk_.rend(); ++it) {
    const auto [u, v] = *it;
    const auto& link = platform_.links[static_cast<std::size_t>(routing_.link_index(u, v))].params;
    std::uint64_t t = checked_add(at(u), sw_ps(u), what);
    t = checked_add(t, chunk_serialization_ps(link, chunk_bytes_), what);
    at(v) = checked_add(t, link.delay_ps, what);
  }
  const std::uint64_t hops = reachable ? at(d) : 0;
  return checked_add(checked_add(up_ps_, hops, what), sw_ps(d), what);
}

ArrivalLatencies& ArrivalLatencyCache::from(int s, std::uint64_t bytes) {
  auto& senders = by_bytes_[bytes];
  if (senders.empty()) senders.resize(platform_.sites.size());
  auto& from = senders.at(static_cast<std::size_t>(s));
  if (!from) from = std::make_unique<ArrivalLatencies>(platform_, routing_, s, bytes);
  return *from;
}

LinkTerms::LinkTerms(const Platform& platform, std::uint64_t bytes)
    : platform_(platform),
      bytes_(bytes),
      serialization_ps_(platform.links.size(), kUnknown),
      payload_rate_(platform.links.size(), std::numeric_limits<double>::quiet_NaN()) {
  for (const LinkSpec& link : platform.links) delay_ps_.push_back(link.params.delay_ps);
}

LinkTerms& ArrivalLatencyCache::link_terms(std::uint64_t bytes) {
  auto it = link_terms_.find(bytes);
  if (it == link_terms_.end()) it = link_terms_.emplace(bytes, LinkTerms(platform_, bytes)).first;
  return it->second;
}

// The terms of arrival_latency_ps in ArrivalLatencies::to's order: the hops' sums from s
// outwards, then the access link up before them and d's switch after.
void ArrivalLatencyCache::tree_arrival_ps(int s, const std::vector<std::pair<int, int>>& hops,
                                          const std::vector<std::uint32_t>& directed_link,
                                          std::uint64_t bytes, const std::vector<int>& to,
                                          std::uint64_t* out) {
  const char* what = "arrival latency";
  if (switch_ps_.empty()) {
    for (const Site& site : platform_.sites) switch_ps_.push_back(site.sw.latency_ps);
    sums_ps_.assign(platform_.sites.size(), 0);
  }
  LinkTerms& terms = link_terms(bytes);
  sums_ps_[static_cast<std::size_t>(s)] = 0;
  for (std::size_t h = 0; h < hops.size(); ++h) {
    const auto [u, v] = hops[h];
    const std::size_t link = directed_link[h] / 2;
    std::uint64_t t = checked_add(sums_ps_[static_cast<std::size_t>(u)],
                                  switch_ps_[static_cast<std::size_t>(u)], what);
    t = checked_add(t, terms.serialization_ps(link), what);
    sums_ps_[static_cast<std::size_t>(v)] = checked_add(t, terms.delay_ps(link), what);
  }
  const WanLinkParams up = access_link(platform_.sites[static_cast<std::size_t>(s)]);
  const std::uint64_t up_ps = checked_add(chunk_serialization_ps(up, bytes), up.delay_ps, what);
  for (std::size_t k = 0; k < to.size(); ++k) {
    const auto d = static_cast<std::size_t>(to[k]);
    out[k] = checked_add(checked_add(up_ps, sums_ps_[d], what), switch_ps_[d], what);
  }
}

RunFootprint estimate_run_footprint(const Platform& platform, const RunOptions& options,
                                    bool colocated, std::uint64_t stats_interval_ps) {
  RunFootprint f;
  f.sites = platform.sites.size();
  f.links = platform.links.size();
  f.colocated_links = colocated ? f.sites : 0;  // a port per site on one fabric switch
  const std::uint64_t systems = colocated ? 2 : 1;
  std::uint64_t bytes = kBaseBytes;
  bytes = saturating_add(bytes, saturating_mul(systems * f.sites, kPerSiteBytes));
  bytes = saturating_add(bytes, saturating_mul(f.links + f.colocated_links, kPerLinkBytes));
  std::uint64_t max_compute_ps = 0;
  for (const Site& site : platform.sites) {
    const std::uint64_t buffer = fpga_buffer_bytes(options, site.fpga);
    const std::uint64_t slots = buffer / std::max<std::uint64_t>(options.chunk_bytes, 1);
    bytes = saturating_add(bytes, saturating_mul(systems * slots, kPerSlotBytes));
    max_compute_ps = std::max(max_compute_ps, site.cluster.compute_time_ps);
  }
  // Functional mode: each site's gradient, its received copies and the FPGA sums.
  if (options.functional)
    bytes = saturating_add(bytes, saturating_mul(systems * f.sites * 3, options.gradient_bytes));
  f.structure_bytes = bytes;
  if (stats_interval_ps > 0) {
    const std::uint64_t series = 4 * f.sites + 2 * f.links;
    const std::uint64_t steps = static_cast<std::uint64_t>(std::max(options.steps, 1));
    f.stats_samples = saturating_mul(steps, max_compute_ps) / stats_interval_ps + 1;
    f.stats_bytes = saturating_mul(saturating_mul(series, f.stats_samples), kPerSampleBytes);
  }
  return f;
}

std::uint64_t stats_interval_that_fits(const Platform& platform, const RunOptions& options,
                                       bool colocated, std::uint64_t from_ps) {
  const std::uint64_t limit = memory_limit_bytes();
  if (from_ps == 0 || estimate_run_footprint(platform, options, colocated, 0).total_bytes() > limit)
    return 0;
  // A 1-2-5 ladder up from `from_ps`; the series shrink to one sample before it overflows.
  for (std::uint64_t decade = from_ps;; decade = saturating_mul(decade, 10)) {
    for (const std::uint64_t step : {1, 2, 5}) {
      const std::uint64_t interval = saturating_mul(decade, step);
      const RunFootprint f = estimate_run_footprint(platform, options, colocated, interval);
      if (f.total_bytes() <= limit && f.stats_bytes <= limit / 4) return interval;
      if (interval == std::numeric_limits<std::uint64_t>::max()) return 0;
    }
  }
}

std::string interval_text(std::uint64_t ps) {
  static const std::pair<std::uint64_t, const char*> units[] = {
      {1'000'000'000'000, "s"}, {1'000'000'000, "ms"}, {1'000'000, "us"}, {1'000, "ns"}};
  for (const auto& [per, name] : units)
    if (ps % per == 0) return fmt::format("{}{}", ps / per, name);
  return fmt::format("{}ps", ps);
}

std::uint64_t queued_host_chunks(const Schedule& schedule, const RunOptions& options) {
  const std::uint64_t chunks =
      num_chunks(options.gradient_bytes, std::max<std::uint64_t>(options.chunk_bytes, 1));
  std::uint64_t most = 0;
  for (const auto& round : schedule.rounds) {
    std::uint64_t copies = 0;  // messages of G bytes handed over at once in this round
    for (const auto& g : round.groups) {
      const std::uint64_t m = g.sites.size();
      switch (schedule.collective) {
        case Collective::kPointToPoint:
          copies += static_cast<std::uint64_t>(std::max(schedule.messages, 1));
          break;
        case Collective::kParameterServer:
          copies += m > 0 ? m - 1 : 0;
          break;
        case Collective::kUnicastAllToAll:
          copies += m * (m > 0 ? m - 1 : 0);
          break;
        case Collective::kReductionTree:  // an unpaced tree's chunks are handed over at once
          for (const auto& tree : schedule.forest)
            if (tree.pacing_interval_ps == 0) {
              copies += m;
              break;
            }
          break;
        default:
          break;
      }
    }
    most = std::max(most, saturating_mul(copies, chunks));
  }
  return most;
}

// The host chunks a step queues at once (queued_host_chunks) against the limit: a
// point-to-point schedule of many messages once grew past every memory limit.
void check_queued_chunks(const std::string& where, const Schedule& schedule,
                         const RunOptions& options, bool colocated, std::uint64_t limit) {
  const std::uint64_t queued = queued_host_chunks(schedule, options);
  const std::uint64_t bytes =
      saturating_mul(saturating_mul(queued, colocated ? 2 : 1), kPerQueuedChunkBytes);
  if (bytes <= limit / 2) return;
  throw ConfigError(where, 0, "--schedule",
                    fmt::format("expected transfers that fit in memory: one step hands {} chunk "
                                "transactions to the access links at once{}, about {}, {} "
                                "available (AGGNET_MEMORY_LIMIT overrides); fewer messages or "
                                "a larger --chunk",
                                queued, colocated ? " (twice with the co-located reference)" : "",
                                format_bytes(bytes), format_bytes(limit)));
}

void check_run_footprint(const std::string& where, const Platform& platform,
                         const RunOptions& options, bool colocated, std::uint64_t stats_interval_ps,
                         const Schedule* schedule) {
  const RunFootprint f = estimate_run_footprint(platform, options, colocated, stats_interval_ps);
  const std::uint64_t limit = memory_limit_bytes();
  if (schedule) check_queued_chunks(where, *schedule, options, colocated, limit);
  if (f.total_bytes() <= limit) return;
  const std::string have =
      fmt::format("{} available (AGGNET_MEMORY_LIMIT overrides)", format_bytes(limit));
  if (f.stats_bytes > f.structure_bytes) {
    const std::uint64_t fits =
        stats_interval_that_fits(platform, options, colocated, stats_interval_ps);
    throw ConfigError(
        where, 0, "--stats-interval",
        fmt::format("expected an interval giving a statistics series that fits in memory: at "
                    "least {} samples per series, about {}, {}{}",
                    f.stats_samples, format_bytes(f.stats_bytes), have,
                    fits > 0 ? fmt::format("; --stats-interval {} fits", interval_text(fits))
                             : std::string()));
  }
  const std::string hint = f.colocated_links > 0 ? fmt::format(
                                                       "; the co-located reference adds {} links "
                                                       "(--no-colocated skips it)",
                                                       f.colocated_links)
                                                 : "";
  throw ConfigError(where, 0, "--platform",
                    fmt::format("expected a platform that fits in memory: {} sites and {} links "
                                "need about {}, {}{}",
                                f.sites, f.links, format_bytes(f.total_bytes()), have, hint));
}

}  // namespace aggnet
