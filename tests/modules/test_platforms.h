// Small platforms built in code for closed-form tests.
#pragma once

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "model/reduction_forest.h"
#include "model/routing.h"
#include "model/schedule.h"

namespace aggnet::testing {

/// Sites named by `codes`, joined by `links` (a, b, one-way delay in ps), every link at
/// `bandwidth_bps`. Compute time 0 so every site starts communicating at t = 0.
inline Platform make_platform(const std::vector<std::string>& codes,
                              const std::vector<std::tuple<int, int, std::uint64_t>>& links,
                              std::uint64_t bandwidth_bps) {
  Platform p;
  p.name = "test";
  for (const auto& code : codes) {
    Site s;
    s.code = code;
    s.name = code;
    s.cluster.compute_time_ps = 0;
    p.sites.push_back(s);
  }
  for (const auto& [a, b, delay_ps] : links) {
    LinkSpec l;
    l.a = a;
    l.b = b;
    l.params.delay_ps = delay_ps;
    l.params.bandwidth_bps = bandwidth_bps;
    p.links.push_back(l);
  }
  return p;
}

/// `p` with every site's access links at `access_bps` and `access_delay_ps` one way and its
/// switch's latency `switch_ps` (the reduction-tree tests' sites: 200 Gb/s, 1 us, 500 ns).
inline Platform with_sites(Platform p, std::uint64_t access_bps, std::uint64_t access_delay_ps,
                           std::uint64_t switch_ps) {
  for (Site& s : p.sites) {
    s.cluster.access_bandwidth_bps = access_bps;
    s.cluster.access_delay_ps = access_delay_ps;
    s.sw.latency_ps = switch_ps;
  }
  return p;
}

/// A reduction tree rooted at `root` (`parent[s]`: s's parent, -1 at the root) carrying
/// `share` of the gradient.
inline ReductionTree reduction_tree(int root, std::vector<int> parent, double share = 1.0) {
  ReductionTree t;
  t.root = root;
  t.parent = std::move(parent);
  t.share = share;
  return t;
}

/// One round with one group of `members`.
inline Schedule one_group(const std::vector<int>& members) {
  Schedule s;
  s.name = "one-group";
  s.rounds.push_back(Round{{Group{members}}});
  return s;
}

constexpr std::uint64_t kMs = 1'000'000'000ull;  // ps per millisecond

}  // namespace aggnet::testing
