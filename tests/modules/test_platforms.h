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

// Two pairs {a, c} and {b, d} share the trunk m-n (10 ms); b and d also have a detour
// b-k-d (7 + 7 ms). By delay both pairs cross the trunk (a-m-n-c and b-m-n-d, 12 ms):
// 2 streams per direction on it. Halving b-k's metric makes b-k-d weigh 10.5 < 12 (or
// quadrupling b-m's makes b-m-n-d weigh 15 > 14), so b <-> d takes the detour, while a -> c by the
// detour would weigh 1 + 1 + 10.5 + 1 + 1 = 14.5 > 12 and stays: 1 stream per direction everywhere.
inline Platform shared_trunk() {
  return make_platform({"a", "b", "m", "n", "c", "d", "k"},
                       {{0, 2, 1 * kMs},
                        {1, 2, 1 * kMs},
                        {2, 3, 10 * kMs},
                        {3, 4, 1 * kMs},
                        {3, 5, 1 * kMs},
                        {1, 6, 7 * kMs},
                        {6, 5, 7 * kMs}},
                       10'000'000'000);
}

/// The two pairs of shared_trunk() in one round.
inline Schedule two_pairs() {
  Schedule s;
  s.name = "two-pairs";
  s.rounds.push_back(Round{{Group{{0, 4}}, Group{{1, 5}}}});
  return s;
}

}  // namespace aggnet::testing
