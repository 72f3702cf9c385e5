// The validation closed forms against hand-computed cases (the harness tests then hold
// aggnet and SimGrid to them).
#include <gtest/gtest.h>

#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "model/network_math.h"
#include "validation/closed_form.h"

namespace aggnet::validation {
namespace {

// A 3-site ring with edge latencies 1, 2, 4 (s), steps [0, 4) = the all-reduce of n = 3.
TEST(RingTime, ReceiveRuleSumsTheConsecutiveEdgesIntoEachSite) {
  // Site i completes at the sum of the 4 edges ending at i: 2 laps (14) minus the two
  // edges after it; the latest site skips the smallest consecutive pair, 1 + 2.
  EXPECT_DOUBLE_EQ(ring_time({1, 2, 4}, 0, 4, RingStepRule::kReceive), 14 - 3);
}

TEST(RingTime, BarrierRuleTakesTheSlowestEdgeEveryStep) {
  EXPECT_DOUBLE_EQ(ring_time({1, 2, 4}, 0, 4, RingStepRule::kBarrier), 4 * 4);
  EXPECT_DOUBLE_EQ(ring_time({1, 2, 4}, 2, 4, RingStepRule::kBarrier), 2 * 4);
}

TEST(RingTime, SendRecvRuleByHand) {
  // Edges L0 = 1 (0->1), L1 = 2 (1->2), L2 = 4 (2->0). A_i = S_{i-1} + L_{i-1};
  // step 0: A = (4, 1, 2) -> S = max(A_i, A_{i+1}) = (4, 2, 4);
  // step 1: A = (4+4, 4+1, 2+2) = (8, 5, 4) -> S = (8, 5, 8).
  EXPECT_DOUBLE_EQ(ring_time({1, 2, 4}, 0, 2, RingStepRule::kSendRecv), 8);
  // Receive: the two edges into site 0, L1 + L2.
  EXPECT_DOUBLE_EQ(ring_time({1, 2, 4}, 0, 2, RingStepRule::kReceive), 6);
}

TEST(StoreAndForward, OneLinkPipelineByHand) {
  const Platform p = load_platform(AGGNET_SOURCE_DIR "/platforms/nine_city.yaml",
                                   {{"defaults.link.bandwidth", "10Gbps"}});
  const Routing routing(p);
  const int lon = 3, nyc = 0;
  ASSERT_EQ(p.sites[lon].code, "lon");
  const std::uint64_t c = 1 << 20, n = 8;
  const auto links = route_links(p, routing, lon, nyc);
  ASSERT_EQ(links.size(), 3u);  // access up, lon-nyc, access down
  const std::uint64_t wan = chunk_serialization_ps(links[1], c);
  const std::uint64_t acc = chunk_serialization_ps(links[0], c);
  const std::uint64_t expected = 2 * (acc + 2'000'000) + wan + 33'465'000'000 + (n - 1) * wan;
  EXPECT_EQ(store_and_forward_ps(p, routing, lon, nyc, n * c, c), expected);
  // The flow-level time lacks exactly the two access serializations of one chunk.
  EXPECT_NEAR(flow_level_s(p, routing, lon, nyc, n * c, c),
              static_cast<double>(expected - 2 * acc) * 1e-12, 1e-12);
}

TEST(ClosedForm, RingFamilyHalvesAreHalfTheRing) {
  const Platform p = load_platform(AGGNET_SOURCE_DIR "/platforms/nine_city.yaml");
  const std::uint64_t g = 9ull << 20, c = 1 << 20;
  const auto rs = closed_form(p, make_schedule("reduce-scatter", p), g, c);
  const auto ag = closed_form(p, make_schedule("all-gather", p), g, c);
  const auto ring = closed_form(p, make_schedule("ring:barrier", p), g, c);
  const auto rs_barrier = closed_form(p, make_schedule("reduce-scatter:barrier", p), g, c);
  ASSERT_TRUE(rs.applicable && ag.applicable && ring.applicable);
  // Every site starts together: both halves of the receive ring take as long.
  EXPECT_DOUBLE_EQ(rs.store_and_forward_s, ag.store_and_forward_s);
  // With a barrier every step takes the slowest edge: the ring is two halves exactly.
  EXPECT_NEAR(ring.store_and_forward_s, 2 * rs_barrier.store_and_forward_s, 1e-12);
}

}  // namespace
}  // namespace aggnet::validation
