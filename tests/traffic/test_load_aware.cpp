// Routing by an explicit link metric, and the load-aware planner, on hand-made platforms
// whose routes and loads are worked out in the comments.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "config/platform_loader.h"
#include "model/routing.h"
#include "tests/modules/test_platforms.h"
#include "traffic/load_aware.h"

namespace aggnet {
namespace {

using testing::kMs;
using testing::make_platform;
using testing::shared_trunk;
using testing::two_pairs;

// Square a-b-c-d-a with a-b 1 ms, b-c 2 ms, c-d 1 ms, d-a 3 ms. By delay a -> c goes
// a-b-c (3 ms, against 4 ms by d). With a-b's metric at 5 ms, a-b-c weighs 7 and a-d-c 4,
// so a -> c turns to a-d-c and its delay is that path's, 4 ms; a -> b stays direct
// (metric 5 against a-d-c-b's 6), delay 1 ms.
Platform square() {
  return make_platform({"a", "b", "c", "d"},
                       {{0, 1, 1 * kMs}, {1, 2, 2 * kMs}, {2, 3, 1 * kMs}, {3, 0, 3 * kMs}},
                       100'000'000'000);
}

TEST(RoutingMetric, DelayRoutesTakeTheShortestDelay) {
  const Routing r(square());
  EXPECT_EQ(r.path(0, 2), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(r.delay_ps(0, 2), 3 * kMs);
  EXPECT_EQ(r.next_hop(0, 2), 1);
}

TEST(RoutingMetric, AnExplicitMetricSendsOnePairTheLongWay) {
  const Routing r(square(), {5 * kMs, 2 * kMs, 1 * kMs, 3 * kMs});
  EXPECT_EQ(r.path(0, 2), (std::vector<int>{0, 3, 2}));
  EXPECT_EQ(r.delay_ps(0, 2), 4 * kMs);  // the routed path's delay, not the shortest (3)
  EXPECT_EQ(r.delay_ps(2, 0), 4 * kMs);
  EXPECT_EQ(r.next_hop(0, 2), 3);
  EXPECT_EQ(r.next_hop(3, 2), 2);
  EXPECT_EQ(r.path(0, 1), (std::vector<int>{0, 1}));
  EXPECT_EQ(r.delay_ps(0, 1), 1 * kMs);
  // b -> d: b-a-d weighs 8, b-c-d 3: b-c-d, 3 ms.
  EXPECT_EQ(r.path(1, 3), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(r.delay_ps(1, 3), 3 * kMs);
  // From a to b and c: hops a-b (b at 1 ms), a-d (3 ms), d-c (4 ms), parents first.
  const std::vector<std::pair<int, int>> tree = {{0, 1}, {0, 3}, {3, 2}};
  EXPECT_EQ(r.multicast_tree(0, {1, 2}), tree);
  int hops = 0;
  r.for_each_hop_reversed(0, 2, [&](int u, int v) {
    EXPECT_EQ(r.next_hop(u, 2), v);
    ++hops;
  });
  EXPECT_EQ(hops, 2);
}

TEST(RoutingMetric, AMetricPerLinkIsRequired) {
  EXPECT_THROW(Routing(square(), {1, 2, 3}), std::invalid_argument);
}

// Shortest delays by Floyd-Warshall over the links, independently of Routing.
std::vector<std::vector<std::uint64_t>> shortest_delays(const Platform& p) {
  const std::size_t n = p.sites.size();
  const std::uint64_t inf = ~std::uint64_t{0} / 4;
  std::vector<std::vector<std::uint64_t>> d(n, std::vector<std::uint64_t>(n, inf));
  for (std::size_t i = 0; i < n; ++i) d[i][i] = 0;
  for (const LinkSpec& l : p.links) {
    auto& x = d[static_cast<std::size_t>(l.a)][static_cast<std::size_t>(l.b)];
    x = std::min(x, l.params.delay_ps);
    d[static_cast<std::size_t>(l.b)][static_cast<std::size_t>(l.a)] = x;
  }
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) d[i][j] = std::min(d[i][j], d[i][k] + d[k][j]);
  return d;
}

// The delay metric given explicitly routes every pair as the default does, over paths of
// the true shortest delay.
TEST(RoutingMetric, DelayMetricKeepsTheNineCityRoutes) {
  const Platform p = load_platform(AGGNET_SOURCE_DIR "/platforms/nine_city.yaml");
  std::vector<std::uint64_t> delays;
  for (const LinkSpec& l : p.links) delays.push_back(l.params.delay_ps);
  const Routing by_default(p);
  const Routing explicit_delays(p, delays);
  const auto shortest = shortest_delays(p);
  const int n = by_default.num_sites();
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      EXPECT_EQ(by_default.path(s, d), explicit_delays.path(s, d)) << s << " -> " << d;
      EXPECT_EQ(by_default.next_hop(s, d), explicit_delays.next_hop(s, d));
      EXPECT_EQ(by_default.delay_ps(s, d), shortest[s][d]) << s << " -> " << d;
      EXPECT_EQ(explicit_delays.delay_ps(s, d), shortest[s][d]);
    }
  }
}

TEST(LoadAware, OnePairLeavesTheSharedTrunk) {
  const Platform p = shared_trunk();
  RunOptions o;
  o.gradient_bytes = 64ull << 20;
  const LoadAwarePlan plan = plan_load_aware_routing(p, two_pairs(), o);
  EXPECT_EQ(plan.busiest_round_load_before, 2);
  EXPECT_EQ(plan.busiest_round_load_after, 1);
  const Routing r(p, plan.link_metric);
  EXPECT_EQ(r.path(1, 5), (std::vector<int>{1, 6, 5}));
  EXPECT_EQ(r.delay_ps(1, 5), 14 * kMs);
  EXPECT_EQ(r.path(0, 4), (std::vector<int>{0, 2, 3, 4}));
  EXPECT_LT(plan.time_after_s, plan.time_before_s);
}

TEST(LoadAware, RefusesAScheduleThatIsNotAGroupAverage) {
  Schedule s = two_pairs();
  s.collective = Collective::kRing;
  EXPECT_THROW(plan_load_aware_routing(shared_trunk(), s, RunOptions{}), std::invalid_argument);
}

}  // namespace
}  // namespace aggnet
