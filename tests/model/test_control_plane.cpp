// The control plane (plan_round) on small hand-built platforms, against values derived
// by hand in the comments: arrival latencies, streams per hop, the four rate limits and
// the pacing rate and interval, the aligned-start delay, and the alignment modes (none,
// arrival, auto, per-copy, given). Defaults used throughout: access link 400 Gbps, 2 us,
// MTU 2048 B, header 80 B; FPGA 32 GB/s, 64 cycles at 500 MHz = 128 ns; switch latency 0.
//
// One chunk of 1 MiB = 1'048'576 B with MTU 2048 / header 80 is ceil(1'048'576 / 1968) =
// 533 packets: 1'048'576 + 533 x 80 = 1'091'216 wire bytes = 8'729'728 bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model/arrival_latencies.h"
#include "model/control_plane.h"
#include "model/routing.h"
#include "model/send_alignment.h"
#include "tests/modules/test_platforms.h"

namespace aggnet {
namespace {

using testing::kMs;
using testing::make_platform;
using testing::one_group;

constexpr std::uint64_t kUs = 1'000'000;  // ps per us
constexpr std::uint64_t kMiB = 1ull << 20;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Serialization of a 1 MiB chunk (8'729'728 bit on the wire with MTU 2048 / header 80).
constexpr std::uint64_t kSer1MiB_10G = 872'972'800;  // 100 ps/bit
constexpr std::uint64_t kSer1MiB_100G = 87'297'280;  // 10 ps/bit
constexpr std::uint64_t kSer1MiB_400G = 21'824'320;  // 2.5 ps/bit
constexpr double kWire1MiB = 1'091'216.0;            // wire bytes of 1 MiB (MTU 2048 / 80)
constexpr double kChunk = 1'048'576.0;

RoundPlan plan(const Platform& p, const Round& round, const RunOptions& o) {
  const Routing routing(p);
  return plan_round(p, routing, round, o);
}

RoundPlan plan(const Platform& p, const std::vector<int>& members, const RunOptions& o) {
  return plan(p, one_group(members).rounds[0], o);
}

// ---------------------------------------------------------------------------------
// Arrival latency and the aligned-start delay
// ---------------------------------------------------------------------------------

// a - b (10 ms, 10 Gbps, MTU 2048 / 80) - c (20 ms, 10 Gbps, MTU 1500 / header 100).
// Site a's access link is 100 Gbps / 5 us; switch latencies a 1 us, b 2 us, c 3 us.
Platform line3() {
  Platform p = make_platform({"a", "b", "c"}, {{0, 1, 10 * kMs}, {1, 2, 20 * kMs}}, 10'000'000'000);
  p.links[1].params.mtu_bytes = 1500;
  p.links[1].params.header_bytes = 100;
  p.sites[0].cluster.access_bandwidth_bps = 100'000'000'000;
  p.sites[0].cluster.access_delay_ps = 5 * kUs;
  p.sites[0].sw.latency_ps = 1 * kUs;
  p.sites[1].sw.latency_ps = 2 * kUs;
  p.sites[2].sw.latency_ps = 3 * kUs;
  return p;
}

// 1 MiB over b - c: ceil(1'048'576 / 1400) = 749 packets, 1'048'576 + 749 x 100 =
// 1'123'476 B = 8'987'808 bit = 898'780'800 ps at 10 Gbps.
constexpr std::uint64_t kSer1MiB_bc = 898'780'800;

TEST(ControlPlane, ArrivalLatencyAddsAccessThenPerHopSwitchSerializationAndPropagation) {
  const Platform p = line3();
  const Routing r(p);
  // a -> c: access up (100 Gbps + 5 us), a's switch, a-b, b's switch, b-c, c's switch.
  EXPECT_EQ(arrival_latency_ps(p, r, 0, 2, kMiB), kSer1MiB_100G + 5 * kUs + 1 * kUs + kSer1MiB_10G +
                                                      10 * kMs + 2 * kUs + kSer1MiB_bc + 20 * kMs +
                                                      3 * kUs);
  // c -> a: c's default access link (400 Gbps, 2 us), the same hops backwards.
  EXPECT_EQ(arrival_latency_ps(p, r, 2, 0, kMiB), kSer1MiB_400G + 2 * kUs + 3 * kUs + kSer1MiB_bc +
                                                      20 * kMs + 2 * kUs + kSer1MiB_10G + 10 * kMs +
                                                      1 * kUs);
  // a -> b: one hop.
  EXPECT_EQ(arrival_latency_ps(p, r, 0, 1, kMiB),
            kSer1MiB_100G + 5 * kUs + 1 * kUs + kSer1MiB_10G + 10 * kMs + 2 * kUs);
  // 100 B fit one packet everywhere: 180 B on the access link and a-b (1440 bit), 200 B
  // on b-c (1600 bit): 14'400 ps at 100 Gbps, 144'000 and 160'000 ps at 10 Gbps.
  EXPECT_EQ(arrival_latency_ps(p, r, 0, 2, 100), 14'400 + 5 * kUs + 1 * kUs + 144'000 + 10 * kMs +
                                                     2 * kUs + 160'000 + 20 * kMs + 3 * kUs);
}

// One sender, many receivers: the hand-derived sums above, whichever receiver is asked
// first once its table is used (a -> c first fills a -> b on the way; the second object
// asks a -> b first). A wrong table (a hop's term counted twice, or the sum of another
// sender) fails it.
TEST(ControlPlane, ArrivalLatenciesFromOneSenderAreTheHandDerivedSums) {
  const Platform p = line3();
  const Routing r(p);
  const auto past_direct = [&](ArrivalLatencies& from, int s) {
    for (int i = 0; i < ArrivalLatencies::kDirectQueries; ++i)
      EXPECT_EQ(from.to(s), arrival_latency_ps(p, r, s, s, kMiB));
  };
  const std::uint64_t to_b = kSer1MiB_100G + 5 * kUs + 1 * kUs + kSer1MiB_10G + 10 * kMs + 2 * kUs;
  const std::uint64_t to_c = to_b + kSer1MiB_bc + 20 * kMs + 3 * kUs;  // then b-c, c's switch
  ArrivalLatencies far_first(p, r, 0, kMiB);
  past_direct(far_first, 0);
  EXPECT_EQ(far_first.to(2), to_c);
  EXPECT_EQ(far_first.to(1), to_b);
  EXPECT_EQ(far_first.to(2), to_c);
  ArrivalLatencies near_first(p, r, 0, kMiB);
  past_direct(near_first, 0);
  EXPECT_EQ(near_first.to(1), to_b);
  EXPECT_EQ(near_first.to(2), to_c);
  EXPECT_EQ(near_first.to(0), arrival_latency_ps(p, r, 0, 0, kMiB));  // itself: no hop
  ArrivalLatencies from_c(p, r, 2, kMiB);
  past_direct(from_c, 2);
  EXPECT_EQ(from_c.to(0), kSer1MiB_400G + 2 * kUs + 3 * kUs + kSer1MiB_bc + 20 * kMs + 2 * kUs +
                              kSer1MiB_10G + 10 * kMs + 1 * kUs);
  // An unreachable receiver: access up and its switch, as arrival_latency_ps has it.
  Platform cut = line3();
  cut.links.pop_back();
  const Routing rc(cut);
  ArrivalLatencies from_a(cut, rc, 0, kMiB);
  for (int i = 0; i <= ArrivalLatencies::kDirectQueries; ++i)
    EXPECT_EQ(from_a.to(2), arrival_latency_ps(cut, rc, 0, 2, kMiB));
  EXPECT_EQ(from_a.to(2), kSer1MiB_100G + 5 * kUs + 3 * kUs);
}

// The cache keeps one table per sender and size: the hand-derived sums whatever was asked
// before, past the direct answers too, and a size's sums never answer for another size
// (100 B fit one packet: 14'400 ps on a's access link, 144'000 on a-b, 160'000 on b-c).
TEST(ControlPlane, ArrivalLatencyCacheAnswersEverySenderAndSizeWithTheHandDerivedSums) {
  const Platform p = line3();
  const Routing r(p);
  ArrivalLatencyCache cache(p, r);
  const std::uint64_t to_b = kSer1MiB_100G + 5 * kUs + 1 * kUs + kSer1MiB_10G + 10 * kMs + 2 * kUs;
  const std::uint64_t to_c = to_b + kSer1MiB_bc + 20 * kMs + 3 * kUs;
  const std::uint64_t small_to_c =
      14'400 + 5 * kUs + 1 * kUs + 144'000 + 10 * kMs + 2 * kUs + 160'000 + 20 * kMs + 3 * kUs;
  for (int i = 0; i < 3 * ArrivalLatencies::kDirectQueries; ++i) {
    EXPECT_EQ(cache.get(0, 2, kMiB), to_c);
    EXPECT_EQ(cache.get(0, 1, kMiB), to_b);
    EXPECT_EQ(cache.get(0, 2, 100), small_to_c);
    EXPECT_EQ(cache.get(2, 0, kMiB), kSer1MiB_400G + 2 * kUs + 3 * kUs + kSer1MiB_bc + 20 * kMs +
                                         2 * kUs + kSer1MiB_10G + 10 * kMs + 1 * kUs);
  }
}

// Summed along a multicast tree (the planner's path): the same hand-derived sums, for the
// sender itself (no hop) and both receivers, and per size (100 B: one packet per hop).
TEST(ControlPlane, TreeArrivalLatenciesAreTheHandDerivedSums) {
  const Platform p = line3();
  const Routing r(p);
  ArrivalLatencyCache cache(p, r);
  std::vector<int> links;
  const auto hops = r.multicast_tree(0, {1, 2}, &links);
  std::vector<std::uint32_t> directed;
  for (std::size_t h = 0; h < hops.size(); ++h)
    directed.push_back(
        static_cast<std::uint32_t>(2 * links[h] + (hops[h].first < hops[h].second ? 0 : 1)));
  std::vector<std::uint64_t> out(3, 0);
  cache.tree_arrival_ps(0, hops, directed, kMiB, {0, 1, 2}, out.data());
  const std::uint64_t to_b = kSer1MiB_100G + 5 * kUs + 1 * kUs + kSer1MiB_10G + 10 * kMs + 2 * kUs;
  EXPECT_EQ(out[0], arrival_latency_ps(p, r, 0, 0, kMiB));
  EXPECT_EQ(out[1], to_b);
  EXPECT_EQ(out[2], to_b + kSer1MiB_bc + 20 * kMs + 3 * kUs);
  cache.tree_arrival_ps(0, hops, directed, 100, {2}, out.data());
  EXPECT_EQ(out[0], 14'400 + 5 * kUs + 1 * kUs + 144'000 + 10 * kMs + 2 * kUs + 160'000 + 20 * kMs +
                        3 * kUs);
}

// The plan keeps the latencies its alignment was planned from, [sender][receiver] in the
// group's member order (a -> c and c -> a differ: a's access link is slower).
TEST(ControlPlane, GroupPlanKeepsItsArrivalLatenciesInMemberOrder) {
  const Platform p = line3();
  RunOptions o;
  const GroupPlan g = plan(p, {2, 0}, o).groups[0];
  ASSERT_EQ(g.arrival_ps.size(), 2u);
  const std::uint64_t a_to_c = kSer1MiB_100G + 5 * kUs + 1 * kUs + kSer1MiB_10G + 10 * kMs +
                               2 * kUs + kSer1MiB_bc + 20 * kMs + 3 * kUs;
  const std::uint64_t c_to_a = kSer1MiB_400G + 2 * kUs + 3 * kUs + kSer1MiB_bc + 20 * kMs +
                               2 * kUs + kSer1MiB_10G + 10 * kMs + 1 * kUs;
  EXPECT_EQ(g.arrival_ps[0][1], c_to_a);  // member 0 is c
  EXPECT_EQ(g.arrival_ps[1][0], a_to_c);
  EXPECT_EQ(g.arrival_ps[0][0], 0u);
  EXPECT_TRUE(plan(p, {1}, o).groups[0].arrival_ps.empty());
}

TEST(ControlPlane, PayloadRateIsTheLineRateLessHeaders) {
  WanLinkParams l;  // 100 Gbps, MTU 2048, header 80
  EXPECT_DOUBLE_EQ(payload_rate(l, kMiB), 12.5e9 * kChunk / kWire1MiB);
  l.mtu_bytes = 2048;
  l.header_bytes = 1024;  // half of every packet is header
  EXPECT_DOUBLE_EQ(payload_rate(l, kMiB), 12.5e9 / 2);
}

TEST(ControlPlane, StartDelayIsTheLargestReadyMessageLatencyBetweenMembers) {
  // Triangle a-b 1 ms, b-c 1 ms, a-c 5 ms: a and c are 2 ms apart (through b). A 64 B
  // ready message is 144 B on the wire: 2'880 ps on a 400 Gbps access link, 11'520 ps on
  // a 100 Gbps hop; access links 2 us each way. a -> c: up 2 us + 2'880, two hops of
  // 1 ms + 11'520, down 2 us + 2'880. In a group of three the message may queue behind
  // one other: without multicast a's own other message (sent back to back), on the links
  // up to c's switch (2'880 + 2 x 11'520); with multicast b's (one message per member),
  // converging on c, on those links and c's access link down (another 2'880).
  const Platform tri = make_platform(
      {"a", "b", "c"}, {{0, 1, 1 * kMs}, {1, 2, 1 * kMs}, {0, 2, 5 * kMs}}, 100'000'000'000);
  RunOptions o;
  const std::uint64_t a_to_c = 2 * kMs + 4 * kUs + 2 * 2'880 + 2 * 11'520;
  const std::uint64_t a_to_b = 1 * kMs + 4 * kUs + 2 * 2'880 + 11'520;
  EXPECT_EQ(plan(tri, {0, 1, 2}, o).groups[0].start_delay_ps, a_to_c + 2'880 + 2 * 11'520 + 2'880);
  EXPECT_EQ(plan(tri, {0, 1}, o).groups[0].start_delay_ps, a_to_b);  // no other message
  o.multicast = false;
  EXPECT_EQ(plan(tri, {0, 1, 2}, o).groups[0].start_delay_ps, a_to_c + 2'880 + 2 * 11'520);
  EXPECT_EQ(plan(tri, {0, 1}, o).groups[0].start_delay_ps, a_to_b);
  o.multicast = true;
  // On the line a - b - c only the ends are members: the message's latency to c's
  // aggregator, then c's access link down.
  const Platform line = line3();
  const Routing r(line);
  const WanLinkParams down = access_link(line.sites[2]);
  const std::uint64_t expected =
      arrival_latency_ps(line, r, 0, 2, 64) + chunk_serialization_ps(down, 64) + down.delay_ps;
  EXPECT_EQ(cluster_latency_ps(line, r, 0, 2, 64), expected);
  EXPECT_EQ(plan(line, {0, 2}, o).groups[0].start_delay_ps,
            std::max(expected, cluster_latency_ps(line, r, 2, 0, 64)));
}

// ---------------------------------------------------------------------------------
// Streams per hop and the link limit
// ---------------------------------------------------------------------------------

// S - T trunk (10 ms), T fans out to R1 (5 ms) and R2 (7 ms). Group {S, R1, R2}.
Platform trunk() {
  return make_platform({"s", "t", "r1", "r2"}, {{0, 1, 10 * kMs}, {1, 2, 5 * kMs}, {1, 3, 7 * kMs}},
                       100'000'000'000);
}

std::set<Hop> as_set(const std::vector<Hop>& hops) { return {hops.begin(), hops.end()}; }

// The builder plans a whole period on one cache and keeps no streams per hop: every round
// as a plan of its own would be (the rounds meet the same senders again; a sum kept from
// round 1 must be the one round 2 would compute).
TEST(ControlPlane, RoundsPlannedOnOneCacheAreThoseOfFreshPlans) {
  const Platform p = trunk();
  const Routing routing(p);
  std::vector<Round> rounds;
  for (const auto& members : std::vector<std::vector<int>>{{0, 2, 3}, {0, 2}, {1, 3}, {0, 3, 2}})
    for (int repeat = 0; repeat < ArrivalLatencies::kDirectQueries; ++repeat)
      rounds.push_back(one_group(members).rounds[0]);
  RunOptions o;
  ArrivalLatencyCache cache(p, routing);
  for (const Round& round : rounds) {
    const RoundPlan fresh = plan_round(p, routing, round, o);
    const RoundPlan kept = plan_round(cache, round, o, false);
    EXPECT_TRUE(kept.link_streams.empty());
    ASSERT_EQ(kept.groups.size(), fresh.groups.size());
    for (std::size_t g = 0; g < fresh.groups.size(); ++g) {
      const GroupPlan &a = fresh.groups[g], &b = kept.groups[g];
      EXPECT_EQ(b.arrival_ps, a.arrival_ps);
      EXPECT_EQ(b.start_delay_ps, a.start_delay_ps);
      EXPECT_EQ(b.send_offset_ps, a.send_offset_ps);
      EXPECT_EQ(b.skew_ps, a.skew_ps);
      EXPECT_EQ(b.hops, a.hops);
      EXPECT_EQ(b.link_rate, a.link_rate);
      EXPECT_EQ(b.pacing_interval_ps, a.pacing_interval_ps);
    }
  }
}

// The co-located reference is a star (every site up its own port to the fabric switch,
// down another's), so its arrival latencies are separable and align_senders answers in
// O(n^2): the general method's offsets, for sites whose access links and switches differ.
TEST(ControlPlane, ColocatedReferenceAlignsAsTheGeneralMethodDoes) {
  std::mt19937_64 rng(36);
  std::vector<std::string> codes;
  for (int i = 0; i < 24; ++i) codes.push_back("s" + std::to_string(i));
  Platform wan = make_platform(codes, {}, 10'000'000'000);
  for (Site& s : wan.sites) {
    s.cluster.access_bandwidth_bps = 100'000'000'000ull * (1 + rng() % 4);
    s.cluster.access_delay_ps = 1'000'000 + rng() % 5'000'000;
    s.sw.latency_ps = rng() % 700'000;
  }
  const Platform ref = wan.colocated_variant();
  std::vector<int> members(codes.size());
  for (std::size_t i = 0; i < members.size(); ++i) members[i] = static_cast<int>(i);
  RunOptions o;
  o.alignment = SendAlignment::kArrival;
  const GroupPlan g = plan(ref, members, o).groups.at(0);
  const SenderAlignment general = align_senders_general(g.arrival_ps);
  EXPECT_EQ(g.alignment, "cycle-mean");
  EXPECT_EQ(general.max_residual_skew_ps, 0u);  // a star aligns exactly
  EXPECT_NE(general.offset_ps, std::vector<std::uint64_t>(members.size(), 0));
  for (std::size_t i = 0; i < members.size(); ++i) {
    EXPECT_EQ(g.skew_ps.at(members[i]), 0u);
    for (std::size_t j = 0; j < members.size(); ++j)
      if (j != i) {
        EXPECT_EQ(g.send_offset_ps.at(members[i]).at(members[j]), general.offset_ps[i]);
      }
  }
}

// A sender's offsets answer as the std::map they replace: by receiver, the first of a
// repeated one, out_of_range for a receiver without one; [] adds 0 in order.
TEST(ControlPlane, OffsetRowAnswersAsAMap) {
  OffsetRow row = {{5, 50}, {1, 10}, {3, 30}, {1, 99}};
  EXPECT_EQ(row.size(), 3u);
  EXPECT_EQ(row.at(1), 10u);
  EXPECT_EQ(row.at(5), 50u);
  EXPECT_THROW(row.at(2), std::out_of_range);
  row[2] = 20;
  EXPECT_EQ(row[4], 0u);
  std::vector<std::pair<int, std::uint64_t>> in_order(row.begin(), row.end());
  EXPECT_EQ(in_order, (std::vector<std::pair<int, std::uint64_t>>{
                          {1, 10}, {2, 20}, {3, 30}, {4, 0}, {5, 50}}));
  OffsetRow appended;
  appended.append(1, 10);
  appended.append(3, 30);
  EXPECT_THROW(appended.append(3, 31), std::logic_error);
  EXPECT_EQ(appended, (OffsetRow{{3, 30}, {1, 10}}));
}

TEST(ControlPlane, MulticastCountsEachTreeOncePerHop) {
  RunOptions o;
  const RoundPlan rp = plan(trunk(), {0, 2, 3}, o);
  // S's tree: s>t, t>r1, t>r2. R1's: r1>t, t>s, t>r2. R2's: r2>t, t>s, t>r1.
  const std::map<Hop, int> expected = {{{0, 1}, 1}, {{1, 0}, 2}, {{1, 2}, 2},
                                       {{1, 3}, 2}, {{2, 1}, 1}, {{3, 1}, 1}};
  EXPECT_EQ(rp.link_streams, expected);
  const GroupPlan& g = rp.groups[0];
  EXPECT_EQ(as_set(g.hops.at(0)), (std::set<Hop>{{0, 1}, {1, 2}, {1, 3}}));
  EXPECT_EQ(as_set(g.hops.at(2)), (std::set<Hop>{{2, 1}, {1, 0}, {1, 3}}));
  EXPECT_EQ(g.hops.at(0).size(), 3u);  // each hop once
  // The busiest hops carry two trees: each gets half the payload rate of a 100 G link.
  EXPECT_DOUBLE_EQ(g.link_rate, 12.5e9 * kChunk / kWire1MiB / 2);
}

TEST(ControlPlane, WithoutMulticastEveryUnicastCopyIsAStream) {
  RunOptions o;
  o.multicast = false;
  const RoundPlan rp = plan(trunk(), {0, 2, 3}, o);
  // S sends two copies over s>t; t>r1 carries S's and R2's copies; and so on: 2 each.
  const std::map<Hop, int> expected = {{{0, 1}, 2}, {{1, 0}, 2}, {{1, 2}, 2},
                                       {{1, 3}, 2}, {{2, 1}, 2}, {{3, 1}, 2}};
  EXPECT_EQ(rp.link_streams, expected);
  EXPECT_EQ(rp.groups[0].hops.at(0).size(), 4u);  // s>t twice, t>r1, t>r2
}

TEST(ControlPlane, StreamsOfDifferentGroupsShareAHop) {
  // Line a - b - c - d, groups {a, c} and {b, d}: b>c and c>b carry one stream of each.
  const Platform p = make_platform(
      {"a", "b", "c", "d"}, {{0, 1, 1 * kMs}, {1, 2, 1 * kMs}, {2, 3, 1 * kMs}}, 100'000'000'000);
  Round round;
  round.groups = {Group{{0, 2}}, Group{{1, 3}}};
  RunOptions o;
  const RoundPlan rp = plan(p, round, o);
  const std::map<Hop, int> expected = {{{0, 1}, 1}, {{1, 0}, 1}, {{1, 2}, 2},
                                       {{2, 1}, 2}, {{2, 3}, 1}, {{3, 2}, 1}};
  EXPECT_EQ(rp.link_streams, expected);
  ASSERT_EQ(rp.groups.size(), 2u);
  for (const auto& g : rp.groups) EXPECT_DOUBLE_EQ(g.link_rate, 12.5e9 * kChunk / kWire1MiB / 2);
}

// ---------------------------------------------------------------------------------
// Rate limits and pacing
// ---------------------------------------------------------------------------------

TEST(ControlPlane, LinkBoundPairPacesAtAnExactInterval) {
  // A pair over one link of 2^33 bit/s whose packets are half header (MTU 2048, header
  // 1024): 1 MiB = 1024 packets = 2 MiB on the wire, so the payload rate is
  // 2^33 / 8 / 2 = 2^29 B/s. Everything else is faster: access 400 Gbps x 1'048'576 /
  // 1'091'216, pipeline 32 GB/s / 1 sender; the 1 GiB buffer holds all 64 chunks of the
  // gradient, so it never binds. Margin 0.5: 2^28 B/s, a 1 MiB chunk every 2^-8 s =
  // 3'906'250'000 ps.
  Platform p = make_platform({"a", "b"}, {{0, 1, 10 * kMs}}, 8'589'934'592);
  p.links[0].params.header_bytes = 1024;
  RunOptions o;
  o.gradient_bytes = 64 * kMiB;
  o.buffer_bytes = 1024 * kMiB;
  o.pacing_margin = 0.5;
  const GroupPlan g = plan(p, {0, 1}, o).groups[0];
  EXPECT_DOUBLE_EQ(g.link_rate, 536'870'912.0);
  EXPECT_DOUBLE_EQ(g.access_rate, 50e9 * kChunk / kWire1MiB);
  EXPECT_DOUBLE_EQ(g.pipeline_rate, 32e9);
  EXPECT_EQ(g.buffer_rate, kInf);
  EXPECT_DOUBLE_EQ(g.pacing_rate, 268'435'456.0);
  EXPECT_EQ(g.pacing_interval_ps, 3'906'250'000u);
  EXPECT_EQ(g.slots, (std::map<int, std::uint64_t>{{0, 1024}, {1, 1024}}));
  // The ready message: 10 ms + both access links (2 us + 2'880 ps each) + 1'088 wire
  // bytes at 2^33 bit/s (1'013'279 ps, rounded up).
  EXPECT_EQ(g.start_delay_ps, 10 * kMs + 4 * kUs + 2 * 2'880 + 1'013'279);
  // Two members: one sender per receiver, no skew, nothing to align.
  EXPECT_EQ(g.skew_ps, (std::map<int, std::uint64_t>{{0, 0}, {1, 0}}));
  EXPECT_EQ(g.alignment, "none");
}

// A strict triangle (every pair on its direct link, 100 Gbps): a-b 10 ms, a-c 30 ms,
// b-c 35 ms. With default access links and no switch latency every arrival latency is
// A + delay, A = 21'824'320 + 2'000'000 + 87'297'280 ps (access serialization and delay,
// the link's serialization). Without offsets the skews are: at a |10 - 30| = 20 ms, at b
// |10 - 35| = 25 ms, at c |30 - 35| = 5 ms.
Platform strict_triangle() {
  return make_platform({"a", "b", "c"}, {{0, 1, 10 * kMs}, {0, 2, 30 * kMs}, {1, 2, 35 * kMs}},
                       100'000'000'000);
}
constexpr std::uint64_t kA = kSer1MiB_400G + 2 * kUs + kSer1MiB_100G;

TEST(ControlPlane, BufferBoundTriadIsPacedBySlotsOverTheHoldTime) {
  // 4 slots of 1 MiB, 64 chunks, no offsets: hold_d = skew_d + 128 ns + 2 x 1 MiB /
  // 32 GB/s; the buffer limit is the smallest 3 MiB / hold_d, at b (25 ms).
  RunOptions o;
  o.gradient_bytes = 64 * kMiB;
  o.buffer_bytes = 4 * kMiB;
  o.alignment = SendAlignment::kNone;
  const GroupPlan g = plan(strict_triangle(), {0, 1, 2}, o).groups[0];
  const std::map<int, std::uint64_t> skews = {{0, 20 * kMs}, {1, 25 * kMs}, {2, 5 * kMs}};
  EXPECT_EQ(g.skew_ps, skews);
  EXPECT_EQ(g.unaligned_skew_ps, skews);
  EXPECT_EQ(g.slots, (std::map<int, std::uint64_t>{{0, 4}, {1, 4}, {2, 4}}));
  const double hold_b = 25e-3 + 128e-9 + 2 * kChunk / 32e9;
  EXPECT_DOUBLE_EQ(g.buffer_rate, 3 * kChunk / hold_b);        // ~125.8 MB/s
  EXPECT_DOUBLE_EQ(g.pipeline_rate, 32e9 / 2);                 // two contributions per chunk
  EXPECT_DOUBLE_EQ(g.link_rate, 12.5e9 * kChunk / kWire1MiB);  // one tree per hop
  EXPECT_DOUBLE_EQ(g.access_rate, 50e9 * kChunk / kWire1MiB);
  const double pacing = 0.98 * 3 * kChunk / hold_b;  // default margin 2 %
  EXPECT_DOUBLE_EQ(g.pacing_rate, pacing);
  EXPECT_EQ(g.pacing_interval_ps, static_cast<std::uint64_t>(std::ceil(kChunk / pacing * 1e12)));
  // About 8.5 ms per chunk.
  EXPECT_GT(g.pacing_interval_ps, 8'300 * kUs);
  EXPECT_LT(g.pacing_interval_ps, 8'600 * kUs);
}

TEST(ControlPlane, AccessLimitIsSharedByUnicastCopiesAndByPassThroughStreams) {
  // Site a's access link is 1 Gbps: its payload rate, 125 MB/s x 1'048'576 / 1'091'216,
  // binds. Without multicast a sends 2 copies over it; without aggregation it carries
  // the 2 other members' contributions down: either way half of it per stream.
  Platform p = strict_triangle();
  p.sites[0].cluster.access_bandwidth_bps = 1'000'000'000;
  const double access = 125e6 * kChunk / kWire1MiB;
  RunOptions o;
  o.gradient_bytes = 64 * kMiB;
  o.alignment = SendAlignment::kNone;
  o.pacing_margin = 0;
  const GroupPlan both = plan(p, {0, 1, 2}, o).groups[0];
  EXPECT_DOUBLE_EQ(both.access_rate, access);
  EXPECT_DOUBLE_EQ(both.pacing_rate, access);
  o.multicast = false;
  EXPECT_DOUBLE_EQ(plan(p, {0, 1, 2}, o).groups[0].access_rate, access / 2);
  o.multicast = true;
  o.aggregation = false;
  const GroupPlan pass = plan(p, {0, 1, 2}, o).groups[0];
  EXPECT_DOUBLE_EQ(pass.access_rate, access / 2);
  // Without aggregation there is no pipeline and no slot to bind.
  EXPECT_EQ(pass.pipeline_rate, kInf);
  EXPECT_EQ(pass.buffer_rate, kInf);
  EXPECT_DOUBLE_EQ(pass.pacing_rate, access / 2);
}

// ---------------------------------------------------------------------------------
// Alignment modes
// ---------------------------------------------------------------------------------

/// Every member's offset to every other member, all equal to `offset[s]` (multicast).
std::map<int, OffsetRow> per_sender(const std::vector<std::uint64_t>& offset) {
  std::map<int, OffsetRow> out;
  for (int s = 0; s < static_cast<int>(offset.size()); ++s)
    for (int d = 0; d < static_cast<int>(offset.size()); ++d)
      if (d != s) out[s][d] = offset[s];
  return out;
}

/// When the last contribution lands after the agreed start: the latest offset + arrival
/// latency (kA + delay on the strict triangle) plus N - 1 paced intervals.
double landing(const GroupPlan& g, std::uint64_t chunks) {
  const std::uint64_t delay[3][3] = {
      {0, 10 * kMs, 30 * kMs}, {10 * kMs, 0, 35 * kMs}, {30 * kMs, 35 * kMs, 0}};
  std::uint64_t last = 0;
  for (int s = 0; s < 3; ++s)
    for (int d = 0; d < 3; ++d)
      if (s != d) last = std::max(last, g.send_offset_ps.at(s).at(d) + kA + delay[s][d]);
  return static_cast<double>(last) + static_cast<double>(chunks - 1) * g.pacing_interval_ps;
}

TEST(ControlPlane, ArrivalAlignmentGivesTheTriadItsArmDifferences) {
  // Arms x_a = (10 + 30 - 35) / 2 = 2.5 ms, x_b = 7.5 ms, x_c = 27.5 ms; offsets
  // max x - x_s: a 25 ms, b 20 ms, c 0. Each receiver then hears both others at once.
  RunOptions o;
  o.alignment = SendAlignment::kArrival;
  const GroupPlan g = plan(strict_triangle(), {0, 1, 2}, o).groups[0];
  EXPECT_EQ(g.alignment, "closed-form");
  EXPECT_EQ(g.send_offset_ps, per_sender({25 * kMs, 20 * kMs, 0}));
  EXPECT_EQ(g.waiting_ps, (std::map<int, std::uint64_t>{{0, 25 * kMs}, {1, 20 * kMs}, {2, 0}}));
  EXPECT_EQ(g.skew_ps, (std::map<int, std::uint64_t>{{0, 0}, {1, 0}, {2, 0}}));
  EXPECT_EQ(g.unaligned_skew_ps,
            (std::map<int, std::uint64_t>{{0, 20 * kMs}, {1, 25 * kMs}, {2, 5 * kMs}}));
}

TEST(ControlPlane, NoAlignmentOrNoAlignedStartMeansZeroOffsets) {
  RunOptions o;
  o.alignment = SendAlignment::kNone;
  const GroupPlan none = plan(strict_triangle(), {0, 1, 2}, o).groups[0];
  EXPECT_EQ(none.alignment, "none");
  EXPECT_EQ(none.send_offset_ps, per_sender({0, 0, 0}));
  EXPECT_EQ(none.waiting_ps, (std::map<int, std::uint64_t>{{0, 0}, {1, 0}, {2, 0}}));
  // Offsets need a common start: `arrival` without the aligned start uses none.
  o.alignment = SendAlignment::kArrival;
  o.aligned_start = false;
  const GroupPlan immediate = plan(strict_triangle(), {0, 1, 2}, o).groups[0];
  EXPECT_EQ(immediate.alignment, "none");
  EXPECT_EQ(immediate.send_offset_ps, per_sender({0, 0, 0}));
  EXPECT_EQ(immediate.skew_ps.at(1), 25 * kMs);
}

TEST(ControlPlane, AutoKeepsOffsetsOnlyWhereTheGroupLandsEarlier) {
  // 64 chunks. With a 64 MiB buffer (every chunk fits) the rate is the link's either way,
  // and the offsets only delay the last arrival: 27.5 + 27.5 = 55 ms after the start
  // instead of 35 ms. With 4 slots the unaligned group is paced by 3 MiB / 25 ms (~8.5 ms
  // per chunk, landing ~570 ms) but the aligned one by the link (~89 us, ~61 ms).
  const std::uint64_t chunks = 64;
  RunOptions o;
  o.gradient_bytes = chunks * kMiB;
  for (std::uint64_t buffer : {64 * kMiB, 4 * kMiB}) {
    o.buffer_bytes = buffer;
    o.alignment = SendAlignment::kArrival;
    const GroupPlan aligned = plan(strict_triangle(), {0, 1, 2}, o).groups[0];
    o.alignment = SendAlignment::kNone;
    const GroupPlan plain = plan(strict_triangle(), {0, 1, 2}, o).groups[0];
    o.alignment = SendAlignment::kAuto;
    const GroupPlan chosen = plan(strict_triangle(), {0, 1, 2}, o).groups[0];
    const bool offsets_win = landing(aligned, chunks) < landing(plain, chunks);
    EXPECT_EQ(offsets_win, buffer == 4 * kMiB) << buffer;
    const GroupPlan& expected = offsets_win ? aligned : plain;
    EXPECT_EQ(chosen.alignment, offsets_win ? "closed-form" : "none") << buffer;
    EXPECT_EQ(chosen.send_offset_ps, expected.send_offset_ps) << buffer;
    EXPECT_EQ(chosen.skew_ps, expected.skew_ps) << buffer;
    EXPECT_EQ(chosen.pacing_interval_ps, expected.pacing_interval_ps) << buffer;
  }
}

TEST(ControlPlane, WithoutMulticastEveryCopyIsAlignedOnItsOwn) {
  // Copy s -> d starts at max_k a(k, d) - a(s, d): for a, b's copy waits 30 - 10 = 20 ms;
  // for b, a's waits 35 - 10 = 25 ms; for c, a's waits 35 - 30 = 5 ms. A member waits
  // for its earliest copy: a 5 ms, b and c 0.
  RunOptions o;
  o.multicast = false;
  o.alignment = SendAlignment::kArrival;
  const GroupPlan g = plan(strict_triangle(), {0, 1, 2}, o).groups[0];
  EXPECT_EQ(g.alignment, "per-copy");
  const std::map<int, OffsetRow> offsets = {
      {0, {{1, 25 * kMs}, {2, 5 * kMs}}}, {1, {{0, 20 * kMs}, {2, 0}}}, {2, {{0, 0}, {1, 0}}}};
  EXPECT_EQ(g.send_offset_ps, offsets);
  EXPECT_EQ(g.waiting_ps, (std::map<int, std::uint64_t>{{0, 5 * kMs}, {1, 0}, {2, 0}}));
  EXPECT_EQ(g.skew_ps, (std::map<int, std::uint64_t>{{0, 0}, {1, 0}, {2, 0}}));
  // Auto: every copy for d lands at max_k a(k, d), so the last one lands at 35 ms either
  // way; with a buffer that never binds nothing is gained and the tie keeps no offsets.
  // With 4 slots the zero skew pays off.
  o.alignment = SendAlignment::kAuto;
  o.gradient_bytes = 64 * kMiB;
  o.buffer_bytes = 64 * kMiB;
  EXPECT_EQ(plan(strict_triangle(), {0, 1, 2}, o).groups[0].alignment, "none");
  o.buffer_bytes = 4 * kMiB;
  EXPECT_EQ(plan(strict_triangle(), {0, 1, 2}, o).groups[0].alignment, "per-copy");
}

TEST(ControlPlane, ScheduleOffsetsAreUsedAsGiven) {
  // a waits 15 ms: at a, b lands at 10 and c at 30 ms (skew 20); at b, a at 15 + 10 = 25
  // and c at 35 (10); at c, a at 15 + 30 = 45 and b at 35 (10).
  const Platform p = strict_triangle();
  Round round;
  round.groups = {Group{{0, 1, 2}, {15 * kMs, 0, 0}}};
  RunOptions o;
  o.gradient_bytes = 64 * kMiB;
  o.buffer_bytes = 4 * kMiB;
  o.alignment = SendAlignment::kAuto;
  const GroupPlan g = plan(p, round, o).groups[0];
  EXPECT_EQ(g.alignment, "given");
  EXPECT_EQ(g.send_offset_ps, per_sender({15 * kMs, 0, 0}));
  EXPECT_EQ(g.waiting_ps, (std::map<int, std::uint64_t>{{0, 15 * kMs}, {1, 0}, {2, 0}}));
  EXPECT_EQ(g.skew_ps, (std::map<int, std::uint64_t>{{0, 20 * kMs}, {1, 10 * kMs}, {2, 10 * kMs}}));
  EXPECT_EQ(g.unaligned_skew_ps,
            (std::map<int, std::uint64_t>{{0, 20 * kMs}, {1, 25 * kMs}, {2, 5 * kMs}}));
  // The buffer limit follows the given offsets' skews: the largest is now 20 ms, at a.
  const double hold_a = 20e-3 + 128e-9 + 2 * kChunk / 32e9;
  EXPECT_DOUBLE_EQ(g.buffer_rate, 3 * kChunk / hold_a);
  EXPECT_DOUBLE_EQ(g.pacing_rate, 0.98 * 3 * kChunk / hold_a);
  // Without an aligned start there is no common instant to offset from.
  o.aligned_start = false;
  const GroupPlan immediate = plan(p, round, o).groups[0];
  EXPECT_EQ(immediate.alignment, "none");
  EXPECT_EQ(immediate.send_offset_ps, per_sender({0, 0, 0}));
}

TEST(ControlPlane, LoneMembersAreNotPlannedAndUnknownSitesAreRejected) {
  const Platform p = strict_triangle();
  Round round;
  round.groups = {Group{{0, 1}}, Group{{2}}};
  RunOptions o;
  const RoundPlan rp = plan(p, round, o);
  ASSERT_EQ(rp.groups.size(), 2u);
  EXPECT_EQ(rp.groups[1].members, (std::vector<int>{2}));
  EXPECT_EQ(rp.groups[1].pacing_interval_ps, 0u);
  EXPECT_TRUE(rp.groups[1].hops.empty());
  EXPECT_EQ(rp.link_streams, (std::map<Hop, int>{{{0, 1}, 1}, {{1, 0}, 1}}));
  EXPECT_THROW(plan(p, {0, 3}, o), std::invalid_argument);
  EXPECT_THROW(plan(p, {-1, 0}, o), std::invalid_argument);
}

}  // namespace
}  // namespace aggnet
