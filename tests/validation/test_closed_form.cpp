// The validation closed forms against hand-computed cases (the harness tests then hold
// aggnet and SimGrid to them).
#include <gtest/gtest.h>

#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "model/network_math.h"
#include "traffic/closed_form.h"

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

// The FIFO recurrence, on cases the idle-path closed forms give independently: one flow is
// the pipeline of store_and_forward_ps; two flows on one route interleave like 2 messages.
TEST(FifoRecurrence, MatchesTheIdlePathPipeline) {
  const Platform p = load_platform(AGGNET_SOURCE_DIR "/platforms/nine_city.yaml",
                                   {{"defaults.link.bandwidth", "10Gbps"}});
  const Routing routing(p);
  const int lon = 3, nyc = 0, bom = 8;
  const std::uint64_t c = 1 << 20, g = 8 * c;
  EXPECT_EQ(fifo_recurrence_ps(p, routing, {{lon, nyc, g}}, c),
            store_and_forward_ps(p, routing, lon, nyc, g, c));
  EXPECT_EQ(fifo_recurrence_ps(p, routing, {{bom, nyc, g}}, c),
            store_and_forward_ps(p, routing, bom, nyc, g, c));
  EXPECT_EQ(fifo_recurrence_ps(p, routing, {{lon, nyc, g}, {lon, nyc, g}}, c),
            store_and_forward_ps(p, routing, lon, nyc, g, c, 2));
}

// Two flows from one sender over disjoint WAN links (lon-ams 2.88 ms, lon-fra 5.545 ms):
// the access link up interleaves them (chunk i to ams, then to fra), so fra's chunk j
// leaves it at (2j + 2) ser_up, one ser_up later than alone. Its WAN link (0.84 ms per
// chunk) still drains continuously, so fra's last chunk is exactly one ser_up late, and
// the farther flow ends last.
TEST(FifoRecurrence, SenderInterleavesItsFlowsOnTheAccessLink) {
  const Platform p = load_platform(AGGNET_SOURCE_DIR "/platforms/nine_city.yaml",
                                   {{"defaults.link.bandwidth", "10Gbps"}});
  const Routing routing(p);
  const int lon = 3, ams = 4, fra = 5;
  ASSERT_EQ(routing.path(lon, ams).size(), 2u);
  ASSERT_EQ(routing.path(lon, fra).size(), 2u);
  const std::uint64_t c = 1 << 20, g = 4 * c;
  const auto links = route_links(p, routing, lon, fra);
  const std::uint64_t ser_up = chunk_serialization_ps(links[0], c);
  const std::uint64_t ser = chunk_serialization_ps(links[1], c);
  const std::uint64_t by_hand =
      (2 * ser_up + 2'000'000) + 4 * ser + 5'545'000'000 + (ser_up + 2'000'000);
  EXPECT_EQ(fifo_recurrence_ps(p, routing, {{lon, ams, g}, {lon, fra, g}}, c), by_hand);
  EXPECT_EQ(by_hand, store_and_forward_ps(p, routing, lon, fra, g, c) + ser_up);
}

// Weighted max-min reduces to the flow-level forms where those are exact: one flow; two
// equal flows (equal weights, half the bottleneck each); the shared trunk (whose
// contended form SimGrid matches, docs/validation.md).
TEST(WeightedMaxMin, MatchesTheFlowLevelForms) {
  const Platform p = load_platform(AGGNET_SOURCE_DIR "/platforms/nine_city.yaml",
                                   {{"defaults.link.bandwidth", "10Gbps"}});
  const Routing routing(p);
  const int lon = 3, nyc = 0;
  const std::uint64_t c = 1 << 20, g = 90 * c;
  EXPECT_NEAR(weighted_max_min_s(p, routing, {{lon, nyc, g}}, c),
              flow_level_s(p, routing, lon, nyc, g, c), 1e-9);
  EXPECT_NEAR(weighted_max_min_s(p, routing, {{lon, nyc, g}, {lon, nyc, g}}, c),
              flow_level_s(p, routing, lon, nyc, g, c, 2), 1e-9);
  for (const char* bandwidth : {"10Gbps", "100Gbps"}) {
    const Platform q = load_platform(AGGNET_SOURCE_DIR "/platforms/nine_city.yaml",
                                     {{"defaults.link.bandwidth", bandwidth}});
    const auto trunk = closed_form(q, make_schedule("p2p:lon-nyc,ams-chi", q), g, c);
    const int ams = 4, chi = 1;
    EXPECT_NEAR(weighted_max_min_s(q, Routing(q), {{lon, nyc, g}, {ams, chi, g}}, c),
                trunk.flow_level_s, 1e-9)
        << bandwidth;
  }
}

// The unicast all-to-all: every site sends G to the 8 others, members in rotated order.
TEST(ClosedForm, UnicastAllToAllFlowsAndBounds) {
  const Platform p = load_platform(AGGNET_SOURCE_DIR "/platforms/nine_city.yaml",
                                   {{"defaults.link.bandwidth", "10Gbps"}});
  const Routing routing(p);
  const std::uint64_t c = 1 << 20, g = 90 * c;
  const auto s = make_schedule("unicast-all-to-all", p);
  const auto flows = unicast_all_to_all_flows(s.rounds[0].groups[0].sites, g);
  ASSERT_EQ(flows.size(), 72u);
  EXPECT_EQ(flows[0].s, 0);
  EXPECT_EQ(flows[0].d, 1);
  EXPECT_EQ(flows[8].s, 1);
  EXPECT_EQ(flows[8].d, 2);
  EXPECT_EQ(flows[15].d, 0);  // site 1's last copy wraps round to site 0
  const auto f = closed_form(p, s, g, c);
  ASSERT_TRUE(f.applicable) << f.why;
  // No flow can beat its own idle path, and every link must carry all its chunks.
  for (const auto& flow : flows) {
    EXPECT_GE(f.store_and_forward_s,
              static_cast<double>(store_and_forward_ps(p, routing, flow.s, flow.d, g, c)) * 1e-12);
    EXPECT_GE(f.flow_level_s, flow_level_s(p, routing, flow.s, flow.d, g, c) - 1e-12);
  }
  // The lon->nyc trunk carries every flow routed over it, N chunks each.
  int over_trunk = 0;
  for (const auto& flow : flows) {
    const auto path = routing.path(flow.s, flow.d);
    for (std::size_t i = 0; i + 1 < path.size(); ++i)
      over_trunk += path[i] == 3 && path[i + 1] == 0;
  }
  const auto trunk = route_links(p, routing, 3, 0)[1];
  EXPECT_GT(f.store_and_forward_s, static_cast<double>(over_trunk) * 90 *
                                       static_cast<double>(chunk_serialization_ps(trunk, c)) *
                                       1e-12);
}

}  // namespace
}  // namespace aggnet::validation
