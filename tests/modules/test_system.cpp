// Whole platforms against closed forms: multicast trunk sharing, paced rate vs buffer /
// skew and vs the line rate, credit flow control, functional exactness, ring all-reduce.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "common/units.h"
#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "modules/core/time.h"
#include "sim/builder.h"
#include "test_platforms.h"
#include "traffic/families.h"
#include "traffic/load_aware.h"

namespace aggnet {
namespace {

using testing::kMs;
using testing::make_platform;
using testing::one_group;
using testing::shared_trunk;
using testing::two_pairs;

const WanLink& link_between(const NetworkSystem& system, int from, int to) {
  for (const auto& d : system.links())
    if (d.from == from && d.to == to) return *d.link;
  throw std::runtime_error("no such link");
}

// S - T trunk, T fans out to R1 and R2. Group {S, R1, R2}.
Platform trunk_platform() {
  return make_platform({"s", "t", "r1", "r2"}, {{0, 1, 10 * kMs}, {1, 2, 5 * kMs}, {1, 3, 7 * kMs}},
                       100'000'000'000);
}

TEST(Multicast, TrunkCarriesEachChunkOncePerTree) {
  RunOptions o;
  o.gradient_bytes = 16 << 20;
  o.chunk_bytes = 1 << 20;
  o.aligned_start = false;  // no ready messages: the links carry data chunks only
  NetworkSystem sys("wan", trunk_platform(), one_group({0, 2, 3}), o);
  sc_core::sc_start();
  const std::uint64_t n = 16;
  EXPECT_EQ(link_between(sys, 0, 1).chunks(), n);      // only S's own tree
  EXPECT_EQ(link_between(sys, 1, 0).chunks(), 2 * n);  // R1's and R2's trees
  EXPECT_EQ(link_between(sys, 1, 2).chunks(), 2 * n);  // S's and R2's trees
  EXPECT_EQ(link_between(sys, 1, 3).chunks(), 2 * n);  // S's and R1's trees
  EXPECT_EQ(link_between(sys, 2, 1).chunks(), n);
  // T is no receiver: its FPGA sees nothing; every receiver reduces n chunks.
  EXPECT_EQ(sys.sites()[1].fpga->contributions(), 0u);
  for (int d : {0, 2, 3}) EXPECT_EQ(sys.sites()[d].fpga->reduced_chunks(), n);
}

// Slowest site's last result of round 0, from the common start at 0 (s).
double round_time_s(const NetworkSystem& sys) {
  double last = 0;
  for (const auto& site : sys.sites())
    if (!site.cluster->steps().empty())
      last = std::max(last, site.cluster->steps().at(0).last_result.to_seconds());
  return last;
}

// Load-aware routing on testing::shared_trunk(): two pairs share the 10 Gb/s trunk m-n by
// delay; the planned metrics move b <-> d to its detour b-k-d. Immediate start, compute 0:
// each stream sends N = 64 chunks of 1 MiB, 8'729'728 wire bits = s = 872.9728 us on a
// 10 Gb/s hop, paced at (1 - 0.02) x the hop's rate / its streams, and its last chunk lands
// (N - 1) intervals + the path delay + one s per store-and-forward hop later (the access
// links, 400 Gb/s, and the FPGA pipeline add ~0.1 ms):
//  - by delay: 2 streams on the trunk, interval 2 s / 0.98; a-m-n-c and b-m-n-d, 12 ms,
//    3 hops, one chunk queued behind the other pair's on the trunk: 63 x 1781.577 us +
//    12 ms + 4 s = 127.731 ms;
//  - load-aware: interval s / 0.98 = 890.789 us; a-c: 56.120 + 12 + 2.619 = 70.739 ms;
//    b-k-d, 14 ms, 2 hops: 56.120 + 14 + 1.746 = 71.866 ms, the round's time.
TEST(LoadAwareRouting, OnePairOnItsDetourHalvesTheTrunkLoadAndTheRoundTime) {
  RunOptions o;
  o.gradient_bytes = 64 << 20;
  o.chunk_bytes = 1 << 20;
  o.aligned_start = false;
  const Platform p = shared_trunk();
  const LoadAwarePlan plan = plan_load_aware_routing(p, two_pairs(), o);
  EXPECT_EQ(plan.busiest_round_load_before, 2);
  EXPECT_EQ(plan.busiest_round_load_after, 1);
  o.link_metric = plan.link_metric;
  NetworkSystem sys("wan", p, two_pairs(), o);
  sc_core::sc_start();
  EXPECT_EQ(link_between(sys, 2, 3).chunks(), 64u);  // only a's stream on the trunk
  EXPECT_EQ(link_between(sys, 3, 2).chunks(), 64u);
  EXPECT_EQ(link_between(sys, 1, 6).chunks(), 64u);  // b's, on the detour
  const double s = 872.9728e-6, interval = s / 0.98;
  const double expected = 63 * interval + 14e-3 + 2 * s;
  EXPECT_NEAR(round_time_s(sys), expected, 0.003 * expected);  // 71.866 ms, from 127.731
}

TEST(LoadAwareRouting, ByDelayBothPairsShareTheTrunk) {
  RunOptions o;
  o.gradient_bytes = 64 << 20;
  o.chunk_bytes = 1 << 20;
  o.aligned_start = false;
  NetworkSystem sys("wan", shared_trunk(), two_pairs(), o);
  sc_core::sc_start();
  EXPECT_EQ(link_between(sys, 2, 3).chunks(), 128u);
  EXPECT_EQ(link_between(sys, 1, 6).chunks(), 0u);
  const double s = 872.9728e-6;
  // Both pairs' chunks reach m together: one waits a serialization on the trunk (+ s).
  const double expected = 63 * 2 * s / 0.98 + 12e-3 + 3 * s + s;
  EXPECT_NEAR(round_time_s(sys), expected, 0.003 * expected);
}

TEST(Multicast, WithoutMulticastTheTrunkCarriesOneCopyPerReceiver) {
  RunOptions o;
  o.gradient_bytes = 16 << 20;
  o.chunk_bytes = 1 << 20;
  o.multicast = false;
  o.aligned_start = false;
  NetworkSystem sys("wan", trunk_platform(), one_group({0, 2, 3}), o);
  sc_core::sc_start();
  EXPECT_EQ(link_between(sys, 0, 1).chunks(), 32u);
  EXPECT_EQ(link_between(sys, 1, 0).chunks(), 32u);
}

// Triangle a-b 1 ms, a-c 21 ms, b-c 20 ms: at a the skew is 21 - 1 = 20 ms (the largest).
Platform triangle() {
  return make_platform({"a", "b", "c"}, {{0, 1, 1 * kMs}, {0, 2, 21 * kMs}, {1, 2, 20 * kMs}},
                       100'000'000'000);
}

// Payload rate at which reduced chunks reach site d's cluster in step 0 (bytes/s).
double delivered_rate(const NetworkSystem& sys, int d, const RunOptions& o) {
  const auto& r = sys.sites()[d].cluster->steps().at(0);
  const double chunks = static_cast<double>(o.gradient_bytes / o.chunk_bytes);
  return (chunks - 1) * static_cast<double>(o.chunk_bytes) /
         (r.last_result - r.first_result).to_seconds();
}

// A host-based transfer s -> r1 (route s - t - r1) gets modules for the links on its
// route only; the data crosses them as with every link built.
TEST(Builder, HostTransferBuildsOnlyTheLinksOnItsRoute) {
  RunOptions o;
  o.gradient_bytes = 4 << 20;
  o.chunk_bytes = 1 << 20;
  const Platform p = trunk_platform();
  NetworkSystem sys("wan", p, point_to_point_schedule(p, {{0, 2}}, 1), o);
  std::set<std::pair<int, int>> built;
  for (const auto& d : sys.links()) built.emplace(d.from, d.to);
  EXPECT_EQ(built, (std::set<std::pair<int, int>>{{0, 1}, {1, 0}, {1, 2}, {2, 1}}));
  EXPECT_EQ(sys.port_to(1, 3), -1);  // t - r2 is not built
  EXPECT_GE(sys.port_to(1, 2), 0);
  sc_core::sc_start();
  EXPECT_EQ(link_between(sys, 0, 1).payload_bytes(), o.gradient_bytes);
  EXPECT_EQ(link_between(sys, 1, 2).payload_bytes(), o.gradient_bytes);
}

// Group-average rounds (multicast trees, control messages) keep every link.
TEST(Builder, GroupAverageBuildsEveryLink) {
  RunOptions o;
  const Platform p = trunk_platform();
  NetworkSystem sys("wan", p, one_group({0, 2}), o);
  EXPECT_EQ(sys.links().size(), 2 * p.links.size());
}

TEST(Pacing, RateFollowsBufferOverSkewWhenBelowLineRate) {
  RunOptions o;
  o.gradient_bytes = 64 << 20;
  o.chunk_bytes = 256 << 10;
  o.alignment = SendAlignment::kNone;  // every member starts at the agreed start: full skew
  Platform p = triangle();
  const std::uint64_t buffer = 16 << 20;
  for (auto& s : p.sites) s.fpga.buffer_bytes = buffer;
  NetworkSystem sys("wan", p, one_group({0, 1, 2}), o);
  sc_core::sc_start();
  const double expected = static_cast<double>(buffer) / 0.020;  // B / skew = 839 MB/s
  ASSERT_LT(expected, 12.5e9);
  EXPECT_NEAR(delivered_rate(sys, 0, o) / expected, 1.0, 0.05);
  for (const auto& s : sys.sites()) {
    EXPECT_EQ(s.fpga->slot_stalls(), 0u);
    EXPECT_LE(s.fpga->buffer().high_water_bytes(), buffer);
  }
}

TEST(Pacing, RateReachesLineRateWhenBufferCoversBandwidthDelayOfSkew) {
  RunOptions o;
  o.gradient_bytes = 256 << 20;
  o.chunk_bytes = 256 << 10;
  o.alignment = SendAlignment::kNone;
  Platform p = triangle();
  const double line_rate = 12.5e9;  // bytes/s at 100 Gbps
  for (auto& s : p.sites) s.fpga.buffer_bytes = static_cast<std::uint64_t>(2 * line_rate * 0.020);
  NetworkSystem sys("wan", p, one_group({0, 1, 2}), o);
  sc_core::sc_start();
  const double wire_per_payload =
      static_cast<double>(wire_bytes(o.chunk_bytes, 2048, 80)) / static_cast<double>(o.chunk_bytes);
  EXPECT_GE(delivered_rate(sys, 0, o) * wire_per_payload / line_rate, 0.95);
  EXPECT_EQ(sys.sites()[0].fpga->slot_stalls(), 0u);
}

TEST(Credit, WindowNeverOverrunsTheBuffer) {
  RunOptions o;
  o.gradient_bytes = 32 << 20;
  o.chunk_bytes = 256 << 10;
  o.flow_control = FlowControl::kCredit;
  o.aligned_start = false;  // credit is self-clocked: everyone starts at once (t = 0)
  Platform p = triangle();
  const std::uint64_t buffer = 4 << 20;  // 16 slots
  for (auto& s : p.sites) s.fpga.buffer_bytes = buffer;
  NetworkSystem sys("wan", p, one_group({0, 1, 2}), o);
  sc_core::sc_start();
  for (const auto& s : sys.sites()) {
    EXPECT_TRUE(s.cluster->finished());
    EXPECT_EQ(s.fpga->slot_stalls(), 0u);
    EXPECT_LE(s.fpga->buffer().high_water_bytes(), buffer);
    EXPECT_EQ(s.fpga->reduced_chunks(), 128u);
  }
  // a grants c its window of 16 when the round starts: c hears it at 21 ms. c's chunk
  // k + 16 then waits for the credit of chunk k from a: 21 ms there, 21 ms back. So chunk
  // 112 leaves c at >= 21 + 7 x 42 ms and reaches a >= 21 ms later; without the window
  // all 128 chunks would be there after ~24 ms.
  const auto last = sys.sites()[0].cluster->steps().at(0).last_result;
  EXPECT_GE(last, ps_time(21 * kMs + 7 * 42 * kMs + 21 * kMs));
  EXPECT_LE(last, ps_time(350 * kMs));
}

TEST(AlignedStart, MembersStartTogetherAfterTheLastReadyPlusTheLargestDelay) {
  RunOptions o;
  o.gradient_bytes = 4 << 20;
  o.chunk_bytes = 1 << 20;
  o.alignment = SendAlignment::kNone;  // no send offsets: everyone sends at the agreed start
  Platform p = triangle();
  p.sites[1].cluster.compute_time_ps = 5 * kMs;  // b is ready last, at 5 ms
  NetworkSystem sys("wan", p, one_group({0, 1, 2}), o);
  sc_core::sc_start();
  // Agreed start = 5 ms + the largest ready-message latency between two members (a-c:
  // 21 ms, both access links of 2 us, 64 B serializations and one queued message; the
  // control plane's start_delay, pinned in test_faults.cpp); c hears b's ready message
  // at about 25 ms, before it.
  const std::uint64_t delay = sys.round_plans()[0].groups[0].start_delay_ps;
  EXPECT_GT(delay, 21 * kMs + 4'000'000);
  EXPECT_LT(delay, 21 * kMs + 4'100'000);
  for (const auto& s : sys.sites()) {
    EXPECT_EQ(s.cluster->steps().at(0).first_send, ps_time(5 * kMs + delay));
  }
  EXPECT_EQ(sys.sites()[0].cluster->steps().at(0).send_start, sc_core::SC_ZERO_TIME);
}

TEST(Stalls, ContributionsWaitForSlotsAndEveryChunkStillReducesExactly) {
  // Immediate start, b ready 100 ms late: at a, c's chunks take all 4 slots waiting for
  // b's contributions, so c's later chunks stall until b's arrive and free slots.
  RunOptions o;
  o.gradient_bytes = 64 << 10;
  o.chunk_bytes = 4 << 10;
  o.aligned_start = false;
  o.functional = true;
  Platform p = triangle();
  p.sites[1].cluster.compute_time_ps = 100 * kMs;
  for (auto& s : p.sites) s.fpga.buffer_bytes = 16 << 10;  // 4 slots
  NetworkSystem sys("wan", p, one_group({0, 1, 2}), o);
  sc_core::sc_start();
  const auto& a = *sys.sites()[0].fpga;
  EXPECT_GT(a.slot_stalls(), 0u);
  EXPECT_GT(a.stall_backlog_high_water_bytes(), 0u);
  EXPECT_EQ(a.waiting_contributions(), 0u);
  for (const auto& s : sys.sites()) {
    EXPECT_TRUE(s.cluster->finished());
    EXPECT_EQ(s.fpga->reduced_chunks(), 16u);
    EXPECT_LE(s.fpga->buffer().high_water_bytes(), 16u << 10);
    EXPECT_EQ(s.cluster->functional_mismatches(), 0u);
    EXPECT_EQ(s.cluster->functional_checks(), 16u);
  }
}

// A strict triangle (every pair on its direct link): a-b 10 ms, a-c 30 ms, b-c 35 ms.
// Arms x_a = (10 + 30 - 35) / 2 = 2.5 ms, x_b = 7.5 ms, x_c = 27.5 ms; offsets
// max x - x_s: a 25 ms, b 20 ms, c 0 (every other latency term is the same per pair).
Platform strict_triangle() {
  return make_platform({"a", "b", "c"}, {{0, 1, 10 * kMs}, {0, 2, 30 * kMs}, {1, 2, 35 * kMs}},
                       100'000'000'000);
}

TEST(ArrivalAligned, TriadOffsetsAreTheArmDifferences) {
  RunOptions o;
  o.gradient_bytes = 4 << 20;
  o.chunk_bytes = 1 << 20;
  o.alignment = SendAlignment::kArrival;  // auto would not wait: 64 MiB never binds here
  NetworkSystem sys("wan", strict_triangle(), one_group({0, 1, 2}), o);
  sc_core::sc_start();
  const std::uint64_t expected[] = {25 * kMs, 20 * kMs, 0};
  for (int s = 0; s < 3; ++s) {
    const auto& r = sys.sites()[s].cluster->steps().at(0);
    EXPECT_EQ(r.first_send - r.agreed_start, ps_time(expected[s])) << s;
    EXPECT_EQ(sys.round_plans()[0].groups[0].skew_ps.at(s), 0u);
  }
}

// Buffer of four 1 MiB chunks at 100 Gbps (alignment auto: the offsets pay off here, see
// the next test): aligned contributions arrive together, so a slot is held for the
// pipeline alone (two contributions of 1 MiB at 32 GB/s, plus 64
// cycles at 500 MHz) and the triad runs at its paced link rate (98 % of the payload rate).
TEST(ArrivalAligned, TriadHoldsSlotsForThePipelineTimeAndRunsAtLinkRate) {
  RunOptions o;
  o.gradient_bytes = 64 << 20;
  o.chunk_bytes = 1 << 20;
  o.buffer_bytes = 4 << 20;
  NetworkSystem sys("wan", strict_triangle(), one_group({0, 1, 2}), o);
  sc_core::sc_start();
  const double pipeline_ns = 2 * 32'768.0 + 128.0;
  const double wire_per_payload =
      static_cast<double>(wire_bytes(o.chunk_bytes, 2048, 80)) / static_cast<double>(o.chunk_bytes);
  for (int d = 0; d < 3; ++d) {
    const auto& fpga = *sys.sites()[d].fpga;
    EXPECT_EQ(fpga.slot_stalls(), 0u);
    EXPECT_NEAR(fpga.buffer().hold_time_ns().max(), pipeline_ns, 1e-3) << d;  // 1 ps
    EXPECT_NEAR(fpga.buffer().hold_time_ns().mean(), pipeline_ns, 1e-3) << d;
    EXPECT_GE(delivered_rate(sys, d, o) * wire_per_payload / 12.5e9, 0.95) << d;
  }
}

// Offsets given in the schedule file win over the control plane's: b waits 7 ms, and the
// residual skew the plan reports is the one those offsets leave.
TEST(ArrivalAligned, ScheduleFileOffsetsAreUsedAsGiven) {
  RunOptions o;
  o.gradient_bytes = 4 << 20;
  o.chunk_bytes = 1 << 20;
  const Platform p = strict_triangle();
  const Schedule s = parse_schedule("rounds:\n  - [{members: [a, b, c], send_offsets: {b: 7ms}}]\n",
                                    p, "given.yaml");
  NetworkSystem sys("wan", p, s, o);
  sc_core::sc_start();
  const auto& b = sys.sites()[1].cluster->steps().at(0);
  EXPECT_EQ(b.first_send - b.agreed_start, ps_time(7 * kMs));
  const auto& a = sys.sites()[0].cluster->steps().at(0);
  EXPECT_EQ(a.first_send, a.agreed_start);
  const GroupPlan& g = sys.round_plans()[0].groups[0];
  EXPECT_EQ(g.alignment, "given");
  // At c: a lands at 30 ms, b at 7 + 35 = 42 ms: 12 ms apart.
  EXPECT_EQ(g.skew_ps.at(2), 12 * kMs);
}

// The same triad without offsets holds each slot for the arrival skew (25 ms at a) and
// is throttled to about 3 slots / skew.
TEST(ArrivalAligned, UnalignedTriadIsThrottledByTheSkew) {
  RunOptions o;
  o.gradient_bytes = 64 << 20;
  o.chunk_bytes = 1 << 20;
  o.buffer_bytes = 4 << 20;
  o.alignment = SendAlignment::kNone;
  NetworkSystem sys("wan", strict_triangle(), one_group({0, 1, 2}), o);
  sc_core::sc_start();
  EXPECT_GE(sys.sites()[1].fpga->buffer().hold_time_ns().max(), 25e6);
  EXPECT_LT(delivered_rate(sys, 0, o) / 12.5e9, 0.02);
}

Platform nine_city() {
  return load_platform(std::string(AGGNET_SOURCE_DIR) + "/platforms/nine_city.yaml");
}

void expect_exact_averages(const NetworkSystem& sys, int step) {
  const auto& schedule = sys.schedule();
  const auto& round = schedule.rounds[step % schedule.period()];
  for (const auto& g : round.groups) {
    for (int d : g.sites) {
      const auto& cluster = *sys.sites()[d].cluster;
      EXPECT_EQ(cluster.functional_mismatches(), 0u) << sys.platform().sites[d].code;
      const auto& result = cluster.result();
      ASSERT_EQ(result.size(), sys.options().gradient_bytes / 4);
      for (std::size_t j = 0; j < result.size(); ++j) {
        double mean = 0;
        for (int s : g.sites) mean += ComputeCluster::gradient_value(s, step, j);
        mean /= static_cast<double>(g.sites.size());
        ASSERT_NEAR(result[j], mean, 1e-4) << "site " << d << " element " << j;
      }
    }
  }
}

TEST(Functional, TriadSumsAreExactForEverySiteAndChunk) {
  RunOptions o;
  o.gradient_bytes = 64 << 10;
  o.chunk_bytes = 8 << 10;
  o.functional = true;
  const Platform p = nine_city();
  NetworkSystem sys("wan", p, make_schedule("triads", p), o);
  sc_core::sc_start();
  for (const auto& s : sys.sites()) {
    // 4 steps x 8 chunks, one reduced chunk checked each.
    EXPECT_EQ(s.cluster->functional_checks(), 32u);
    EXPECT_EQ(s.cluster->duplicate_results(), 0u);
    EXPECT_EQ(s.fpga->reduced_chunks(), 32u);
  }
  expect_exact_averages(sys, 3);
}

TEST(Functional, AllToAllWithoutAggregationSumsOnTheHost) {
  RunOptions o;
  o.gradient_bytes = 32 << 10;
  o.chunk_bytes = 8 << 10;
  o.functional = true;
  o.aggregation = false;
  const Platform p = nine_city();
  NetworkSystem sys("wan", p, make_schedule("all-to-all", p), o);
  sc_core::sc_start();
  for (const auto& s : sys.sites()) {
    EXPECT_EQ(s.cluster->functional_checks(), 8u * 4u);  // 8 senders x 4 chunks
    EXPECT_EQ(s.fpga->reduced_chunks(), 0u);
  }
  expect_exact_averages(sys, 0);
}

TEST(Functional, RingAllReduceSumsAreExact) {
  RunOptions o;
  o.gradient_bytes = 36 << 10;
  o.chunk_bytes = 1 << 10;
  o.functional = true;
  const Platform p = nine_city();
  NetworkSystem sys("wan", p, make_schedule("ring", p), o);
  sc_core::sc_start();
  for (const auto& s : sys.sites()) {
    EXPECT_EQ(s.cluster->functional_mismatches(), 0u);
    EXPECT_EQ(s.cluster->functional_checks(), (36u << 10) / 4);
  }
  expect_exact_averages(sys, 0);
}

// Uniform ring of 4 sites, 5 ms links at 10 Gbps, G = 4 MiB: each of the 2(n-1) = 6 steps
// moves one G/n = 1 MiB segment one hop: access up + WAN + access down, store-and-forward.
TEST(Ring, AllReduceTimeMatchesTextbookFormula) {
  Platform p = make_platform({"a", "b", "c", "d"},
                             {{0, 1, 5 * kMs}, {1, 2, 5 * kMs}, {2, 3, 5 * kMs}, {3, 0, 5 * kMs}},
                             10'000'000'000);
  RunOptions o;
  o.gradient_bytes = 4 << 20;
  o.chunk_bytes = 1 << 20;
  Schedule ring;
  ring.name = "ring";
  ring.collective = Collective::kRing;
  ring.rounds.push_back(Round{{Group{{0, 1, 2, 3}}}});
  NetworkSystem sys("wan", p, ring, o);
  sc_core::sc_start();
  const std::uint64_t wire = wire_bytes(1 << 20, 2048, 80);
  const std::uint64_t access = serialization_ps(wire, p.sites[0].cluster.access_bandwidth_bps) +
                               p.sites[0].cluster.access_delay_ps;
  const std::uint64_t hop = 5 * kMs + serialization_ps(wire, 10'000'000'000) + 2 * access;
  for (const auto& s : sys.sites()) {
    const auto& r = s.cluster->steps().at(0);
    EXPECT_EQ(r.end - r.send_start, ps_time(6 * hop));
  }
}

// Without multicast every unicast copy has its own offset: all-to-all aligns perfectly.
TEST(ArrivalAligned, PerCopyUnicastSumsAreExact) {
  RunOptions o;
  o.gradient_bytes = 32 << 10;
  o.chunk_bytes = 8 << 10;
  o.functional = true;
  o.multicast = false;
  o.alignment = SendAlignment::kArrival;
  const Platform p = nine_city();
  NetworkSystem sys("wan", p, make_schedule("all-to-all", p), o);
  sc_core::sc_start();
  for (std::size_t d = 0; d < sys.sites().size(); ++d) {
    EXPECT_EQ(sys.sites()[d].cluster->functional_checks(), 4u);
    EXPECT_EQ(sys.round_plans()[0].groups[0].skew_ps.at(static_cast<int>(d)), 0u);
    // Every copy for d lands together (up to queueing behind other copies): no slot is
    // held for anything like the 100 ms spread of one-way delays.
    EXPECT_LT(sys.sites()[d].fpga->buffer().hold_time_ns().max(), 1e6);
  }
  expect_exact_averages(sys, 0);
}

}  // namespace
}  // namespace aggnet
