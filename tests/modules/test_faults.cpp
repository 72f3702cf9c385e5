// Faults, loss recovery, the run's invariants and the watchdog (issue 11), and the two
// output fixes of issue 10 the network model owns: control traffic counted apart from the
// gradient payload, and one agreed start instant for every member of an aligned group.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cmath>

#include "common/units.h"
#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "module_harness.h"
#include "modules/cluster/retransmitter.h"
#include "modules/core/event_calendar.h"
#include "modules/core/time.h"
#include "sim/builder.h"
#include "sim/faults.h"
#include "sim/invariants.h"
#include "sim/watchdog.h"
#include "test_platforms.h"

namespace aggnet {
namespace {

using sc_core::sc_time;
using testing::kMs;
using testing::make_platform;
using testing::one_group;

const WanLink& link_between(const NetworkSystem& system, int from, int to) {
  for (const auto& d : system.links())
    if (d.from == from && d.to == to) return *d.link;
  throw std::runtime_error("no such link");
}

// Triangle a-b 1 ms, a-c 21 ms, b-c 20 ms (every pair on its direct link).
Platform triangle(std::uint64_t bandwidth_bps = 100'000'000'000) {
  return make_platform({"a", "b", "c"}, {{0, 1, 1 * kMs}, {0, 2, 21 * kMs}, {1, 2, 20 * kMs}},
                       bandwidth_bps);
}

Platform nine_city() {
  return load_platform(std::string(AGGNET_SOURCE_DIR) + "/platforms/nine_city.yaml");
}

std::string broken(const NetworkSystem& sys) { return violations(check_invariants(sys)); }

void expect_every_invariant(const NetworkSystem& sys) {
  for (const auto& r : check_invariants(sys))
    EXPECT_TRUE(r.holds()) << r.name << ": " << r.violation;
}

std::uint64_t retransmissions(const NetworkSystem& sys) {
  std::uint64_t n = 0;
  for (const auto& s : sys.sites())
    for (const auto& st : s.cluster->statistics())
      if (st.name == "retransmissions") n += static_cast<std::uint64_t>(st.value);
  return n;
}

std::uint64_t lost_chunks(const NetworkSystem& sys) {
  std::uint64_t n = 0;
  for (const auto& d : sys.links()) n += d.link->lost_chunks();
  return n;
}

std::uint64_t lost_messages(const NetworkSystem& sys) {
  std::uint64_t n = 0;
  for (const auto& d : sys.links()) n += d.link->lost_messages();
  return n;
}

void expect_exact(const NetworkSystem& sys, std::uint64_t checks_per_site) {
  for (const auto& s : sys.sites()) {
    EXPECT_TRUE(s.cluster->finished());
    EXPECT_EQ(s.cluster->functional_mismatches(), 0u);
    EXPECT_EQ(s.cluster->functional_checks(), checks_per_site);
    EXPECT_EQ(s.cluster->duplicate_results(), 0u);
  }
}

// ----------------------------------------------------------------------------------------
// Issue 10: control traffic apart from the payload; one agreed start.

TEST(ControlTraffic, PayloadBytesEqualGradientBytesExactlyInCreditMode) {
  RunOptions o;
  o.gradient_bytes = 8 << 20;
  o.chunk_bytes = 1 << 20;
  o.flow_control = FlowControl::kCredit;
  o.aligned_start = false;
  Platform p = triangle();
  for (auto& s : p.sites) s.fpga.buffer_bytes = 4 << 20;  // 4 slots: credits flow back
  NetworkSystem sys("wan", p, one_group({0, 1, 2}), o);
  sc_core::sc_start();
  // a -> b carries a's tree to b only (a -> c is direct): G of payload in 8 chunks; its
  // control traffic is a's grant to b and a's 8 credits for b's chunks, 64 B each.
  const auto& ab = link_between(sys, 0, 1);
  EXPECT_EQ(ab.payload_bytes(), o.gradient_bytes);
  EXPECT_EQ(ab.chunks(), 8u);
  EXPECT_EQ(ab.control_messages(), 1u + 8u);
  EXPECT_EQ(ab.control_bytes(), 9u * 64u);
  // The wire carries both: 8 chunks of 1 MiB and 9 messages of 64 B, with headers.
  EXPECT_EQ(ab.wire_bytes_sent(), 8 * wire_bytes(1 << 20, 2048, 80) + 9 * wire_bytes(64, 2048, 80));
  // Access links: the cluster's contributions up, the reduced chunks down; payload = G.
  for (const auto& s : sys.sites()) {
    EXPECT_EQ(s.access_up->payload_bytes(), o.gradient_bytes);
    EXPECT_EQ(s.access_down->payload_bytes(), o.gradient_bytes);
  }
}

// The triangle's group of three, everyone ready at 0: every member starts sending at the
// agreed start, which is `start_ps` after 0.
void expect_triangle_start(bool multicast, std::uint64_t start_ps) {
  RunOptions o;
  o.gradient_bytes = 4 << 20;
  o.chunk_bytes = 1 << 20;
  o.alignment = SendAlignment::kNone;
  o.multicast = multicast;
  NetworkSystem sys("wan", triangle(), one_group({0, 1, 2}), o);
  sc_core::sc_start();
  EXPECT_EQ(sys.round_plans()[0].groups[0].start_delay_ps, start_ps);
  for (const auto& s : sys.sites()) {
    const auto& r = s.cluster->steps().at(0);
    EXPECT_EQ(r.agreed_start, ps_time(start_ps));
    EXPECT_EQ(r.first_send, ps_time(start_ps));
  }
}

const std::uint64_t kReadyAccessPs = serialization_ps(wire_bytes(64, 2048, 80), 400'000'000'000);
const std::uint64_t kReadyWanPs = serialization_ps(wire_bytes(64, 2048, 80), 100'000'000'000);

TEST(AlignedStart, EveryMemberStartsAtTheSamePicosecond) {
  // The farthest pair is a-c: the ready message a -> c crosses a's access link up, the
  // 21 ms link and c's access link down (2 us and a 64 B serialization each), and may
  // queue behind b's (each member multicasts one) on each of them; the agreed start
  // counts all of it, so no member starts late.
  expect_triangle_start(true, 2 * (2'000'000 + kReadyAccessPs) + 21 * kMs + kReadyWanPs +
                                  (2 * kReadyAccessPs + kReadyWanPs));
}

// Four sites, a full mesh of equal 1 ms links, everyone ready at 0: each member's ready
// messages from the three others reach its access link down at the same instant and queue
// there. Every member still starts at the planned picosecond.
void expect_converging_ready_messages_in_time(bool multicast) {
  const Platform mesh =
      make_platform({"a", "b", "c", "d"},
                    {{0, 1, kMs}, {0, 2, kMs}, {0, 3, kMs}, {1, 2, kMs}, {1, 3, kMs}, {2, 3, kMs}},
                    100'000'000'000);
  RunOptions o;
  o.gradient_bytes = 4 << 20;
  o.chunk_bytes = 1 << 20;
  o.alignment = SendAlignment::kNone;
  o.multicast = multicast;
  NetworkSystem sys("wan", mesh, one_group({0, 1, 2, 3}), o);
  sc_core::sc_start();
  const std::uint64_t start = sys.round_plans()[0].groups[0].start_delay_ps;
  for (const auto& s : sys.sites())
    EXPECT_EQ(s.cluster->steps().at(0).agreed_start, ps_time(start));
}

TEST(AlignedStart, MulticastReadyMessagesConvergingOnAMemberArriveBeforeTheAgreedStart) {
  expect_converging_ready_messages_in_time(true);
}

TEST(AlignedStart, UnicastReadyMessagesConvergingOnAMemberArriveBeforeTheAgreedStart) {
  expect_converging_ready_messages_in_time(false);
}

TEST(AlignedStart, WithoutMulticastEveryMemberStartsAtTheSamePicosecondToo) {
  // As above, but a sends its two ready messages back to back: the one to c may queue
  // behind the one to b on a's access link (the bound adds one serialization per link up
  // to c's switch).
  expect_triangle_start(false, 2 * (2'000'000 + kReadyAccessPs) + 21 * kMs + kReadyWanPs +
                                   (kReadyAccessPs + kReadyWanPs));
}

// ----------------------------------------------------------------------------------------
// WanLink faults against closed forms.

using Source = testing::ByteSource;
using Sink = testing::ArrivalSink;

// 10 ms, 10 Gbps: a 1 MiB chunk serializes in 872'972'800 ps (test_wan_link.cpp).
struct LinkBench : sc_core::sc_module {
  Source source{"source"};
  WanLink link;
  Sink sink{"sink"};
  explicit LinkBench(sc_core::sc_module_name n, WanLinkParams p) : sc_module(n), link("link", p) {
    source.out.bind(link.in);
    link.out.bind(sink.in);
  }
};

WanLinkParams ten_ms_10g() {
  WanLinkParams p;
  p.delay_ps = 10 * kMs;
  p.bandwidth_bps = 10'000'000'000;
  return p;
}

TEST(WanLinkFaults, LossRateLosesThatFractionAndConservesBytes) {
  LinkBench b("bench", ten_ms_10g());
  b.link.set_loss_rate(0.25, 42);
  constexpr int n = 4000;
  for (int i = 0; i < n; ++i) b.source.sends.push_back({sc_core::SC_ZERO_TIME, 1000});
  sc_core::sc_start();
  const auto lost = b.link.lost_chunks();
  EXPECT_EQ(b.sink.arrivals.size() + lost, static_cast<std::size_t>(n));
  // Binomial(4000, 0.25): mean 1000, sd 27.4; 5 sd either way.
  EXPECT_NEAR(static_cast<double>(lost), 1000.0, 137.0);
  EXPECT_EQ(b.link.wire_bytes_sent(), n * wire_bytes(1000, 2048, 80));
  EXPECT_EQ(b.link.wire_bytes_delivered() + b.link.wire_bytes_lost(), b.link.wire_bytes_sent());
  EXPECT_EQ(b.link.bytes_in_flight(), 0u);
}

// A loss rate set while chunks are on the link applies to what is handed over from then
// on: the 10 chunks queued or propagating at 5 ms all arrive, and of the 10 handed over at
// 6 ms, with a loss rate of 1 - 1e-9, none does.
TEST(WanLinkFaults, ALossRateSetWithChunksOnTheLinkSparesThem) {
  LinkBench b("bench", ten_ms_10g());
  for (int i = 0; i < 10; ++i) b.source.sends.push_back({sc_core::SC_ZERO_TIME, 1 << 20});
  for (int i = 0; i < 10; ++i) b.source.sends.push_back({ps_time(6 * kMs), 1 << 20});
  testing::Probe set_loss("set_loss");
  set_loss.checks = {{5 * kMs, [&] { b.link.set_loss_rate(1 - 1e-9, 7); }}};
  sc_core::sc_start();
  constexpr std::uint64_t ser = 872'972'800;
  ASSERT_EQ(b.sink.arrivals.size(), 10u);
  EXPECT_EQ(b.sink.arrivals.back(), ps_time(10 * kMs + 10 * ser));
  EXPECT_EQ(b.link.lost_chunks(), 10u);
  EXPECT_EQ(b.link.wire_bytes_delivered() + b.link.wire_bytes_lost(), b.link.wire_bytes_sent());
  EXPECT_EQ(b.link.bytes_in_flight(), 0u);
}

// Down at 12 ms: chunks 0-2 (last bits out at 0.87, 1.75, 2.62 ms) have arrived by then?
// No: they arrive 10 ms later, at 10.87, 11.75, 12.62 ms. So 0 and 1 arrive, 2 (still
// propagating) and 3-9 (queued or serializing, or handed over while down) are lost; the
// link is up again at 20 ms and chunk 10, handed over at 25 ms, arrives.
TEST(WanLinkFaults, GoingDownLosesEverythingOnTheLinkAndWhatComesUntilItIsUp) {
  LinkBench b("bench", ten_ms_10g());
  for (int i = 0; i < 10; ++i) b.source.sends.push_back({sc_core::SC_ZERO_TIME, 1 << 20});
  b.source.sends.push_back({ps_time(15 * kMs), 1 << 20});  // while down
  b.source.sends.push_back({ps_time(25 * kMs), 1 << 20});  // after
  testing::Probe flip("flip");
  flip.checks = {{12 * kMs, [&] { b.link.set_down(); }}, {20 * kMs, [&] { b.link.set_up(); }}};
  sc_core::sc_start();
  constexpr std::uint64_t ser = 872'972'800;
  ASSERT_EQ(b.sink.arrivals.size(), 3u);
  EXPECT_EQ(b.sink.arrivals[0], ps_time(10 * kMs + ser));
  EXPECT_EQ(b.sink.arrivals[1], ps_time(10 * kMs + 2 * ser));
  EXPECT_EQ(b.sink.arrivals[2], ps_time(25 * kMs + 10 * kMs + ser));
  EXPECT_EQ(b.link.lost_chunks(), 9u);
  EXPECT_EQ(b.link.down_time(), ps_time(8 * kMs));
  EXPECT_EQ(b.link.wire_bytes_lost(), 9 * wire_bytes(1 << 20, 2048, 80));
  EXPECT_EQ(b.link.wire_bytes_delivered() + b.link.wire_bytes_lost(), b.link.wire_bytes_sent());
}

// ----------------------------------------------------------------------------------------
// Loss recovery end to end.

TEST(LossRecovery, OnePercentLossOnEveryWanLinkOfNineCitiesKeepsSumsExact) {
  RunOptions o;
  o.gradient_bytes = 1 << 20;
  o.chunk_bytes = 16 << 10;  // 64 chunks per step
  o.functional = true;
  o.faults.wan_loss_rate = 0.01;
  o.seed = 5;
  const Platform p = nine_city();
  NetworkSystem sys("wan", p, make_schedule("triads", p), o);
  sc_core::sc_start();
  ASSERT_FALSE(sys.watchdog().fired()) << sys.watchdog().diagnosis();
  expect_every_invariant(sys);
  expect_exact(sys, 4 * 64);  // 4 steps x 64 reduced chunks, each checked once
  EXPECT_GT(lost_chunks(sys), 0u);
  EXPECT_GT(retransmissions(sys), 0u);
  // Every lost contribution was recovered: each site reduced every chunk of every step.
  for (const auto& s : sys.sites()) EXPECT_EQ(s.fpga->reduced_chunks(), 4u * 64u);
}

TEST(LossRecovery, HeavyLossAlsoRecoversLostControlMessagesWithCredits) {
  // 20 % on the a-c link loses grants, credits, acknowledgements and contributions alike.
  RunOptions o;
  o.gradient_bytes = 512 << 10;
  o.chunk_bytes = 16 << 10;
  o.functional = true;
  o.flow_control = FlowControl::kCredit;
  o.aligned_start = false;
  o.faults.link_loss.push_back({{"a", "c"}, 0.2});
  Platform p = triangle();
  for (auto& s : p.sites) s.fpga.buffer_bytes = 64 << 10;  // 4 slots
  NetworkSystem sys("wan", p, one_group({0, 1, 2}), o);
  sc_core::sc_start();
  ASSERT_FALSE(sys.watchdog().fired()) << sys.watchdog().diagnosis();
  expect_every_invariant(sys);
  expect_exact(sys, 32);
  EXPECT_GT(link_between(sys, 0, 2).lost_messages() - link_between(sys, 0, 2).lost_chunks() +
                link_between(sys, 2, 0).lost_messages() - link_between(sys, 2, 0).lost_chunks(),
            0u);  // control messages were lost too
  EXPECT_GT(retransmissions(sys), 0u);
}

TEST(LossRecovery, AlignedStartSurvivesLostReadyMessages) {
  RunOptions o;
  o.gradient_bytes = 256 << 10;
  o.chunk_bytes = 16 << 10;
  o.functional = true;
  o.steps = 3;
  o.faults.link_loss.push_back({{"a", "b"}, 0.5});
  o.seed = 3;
  NetworkSystem sys("wan", triangle(), one_group({0, 1, 2}), o);
  sc_core::sc_start();
  ASSERT_FALSE(sys.watchdog().fired()) << sys.watchdog().diagnosis();
  expect_every_invariant(sys);
  expect_exact(sys, 3 * 16);
  EXPECT_GT(lost_messages(sys) - lost_chunks(sys), 0u);
}

// a - c (1 ms) is down until 10.5 ms, so the ready messages both members send at 10 ms
// (their compute done) take the detour through b (1 ms + 1 ms). When a - c comes back the
// trees are rerouted onto it, b leaves them, and the copies reaching b are dropped there.
// Each member sends its ready message again on the new tree at once: both hear each other
// one direct latency (the start delay of a pair) after 10.5 ms, and start then, not a
// retransmission timeout later.
TEST(AlignedStart, ReadyMessagesOnATreeReroutedUnderThemAreSentAgain) {
  RunOptions o;
  o.gradient_bytes = 4 << 20;
  o.chunk_bytes = 1 << 20;
  o.faults.outages.push_back({{"a", "c"}, 1 * kMs, 10 * kMs + kMs / 2});
  // d hangs off b, on no tree: its link's outage reroutes, but no tree changes.
  o.faults.outages.push_back({{"b", "d"}, 10 * kMs + kMs / 5, 10 * kMs + kMs / 4});
  Platform p = make_platform({"a", "b", "c", "d"},
                             {{0, 1, kMs}, {1, 2, kMs}, {0, 2, kMs}, {1, 3, kMs}}, 100'000'000'000);
  for (auto& site : p.sites) site.cluster.compute_time_ps = 10 * kMs;
  NetworkSystem sys("wan", p, one_group({0, 2}), o);
  sc_core::sc_start();
  ASSERT_FALSE(sys.watchdog().fired()) << sys.watchdog().diagnosis();
  expect_every_invariant(sys);
  const std::uint64_t start_delay = sys.round_plans()[0].groups[0].start_delay_ps;
  for (int s : {0, 2}) {
    EXPECT_EQ(sys.sites()[s].cluster->steps().at(0).agreed_start,
              ps_time(10 * kMs + kMs / 2 + start_delay));
  }
  double unroutable = -1;
  for (const auto& st : sys.sites()[1].sw->statistics())
    if (st.name == "unroutable") unroutable = st.value;
  EXPECT_EQ(unroutable, 2.0);  // both first copies, at b
  for (int s : {0, 2}) {       // one ready message sent again each: when a - c came back
    double again = -1;
    for (const auto& st : sys.sites()[s].cluster->statistics())
      if (st.name == "control_retransmissions") again = st.value;
    EXPECT_EQ(again, 1.0);
  }
}

// Pair {a, c}: a -> c goes direct (15 ms; via b 20 ms). At 10 Gbps a 1 MiB chunk
// serializes in 0.87 ms. Everyone is ready at 0; the agreed start is ~15 ms, so at 25 ms
// the first chunks are propagating on a-c: the failure loses them, the switches reroute
// over b and the senders' timeouts recover them.
TEST(LossRecovery, LinkFailingMidRoundIsReroutedAndRecovered) {
  RunOptions o;
  o.gradient_bytes = 16 << 20;
  o.chunk_bytes = 1 << 20;
  o.functional = true;
  o.faults.outages.push_back({{"a", "c"}, 25 * kMs, std::numeric_limits<std::uint64_t>::max()});
  const Platform p = make_platform(
      {"a", "b", "c"}, {{0, 1, 10 * kMs}, {1, 2, 10 * kMs}, {0, 2, 15 * kMs}}, 10'000'000'000);
  NetworkSystem sys("wan", p, one_group({0, 2}), o);
  sc_core::sc_start();
  ASSERT_FALSE(sys.watchdog().fired()) << sys.watchdog().diagnosis();
  expect_every_invariant(sys);
  for (int s : {0, 2}) EXPECT_EQ(sys.sites()[s].cluster->functional_mismatches(), 0u);
  EXPECT_EQ(sys.sites()[0].cluster->functional_checks(), 16u);
  EXPECT_EQ(sys.faults().reroutes(), 1u);
  // Of what the dead link carried only the ready message (64 B + an 80 B header, at
  // ~15 ms) arrived: every data chunk handed to it was lost.
  for (auto [from, to] : {std::pair{0, 2}, std::pair{2, 0}}) {
    const auto& dead = link_between(sys, from, to);
    EXPECT_GT(dead.lost_chunks(), 0u);
    EXPECT_EQ(dead.lost_chunks(), dead.chunks());
    EXPECT_EQ(dead.wire_bytes_delivered(), 144u);
    EXPECT_EQ(dead.wire_bytes_lost() + 144u, dead.wire_bytes_sent());
  }
  // The retransmissions took the detour through b.
  EXPECT_GT(link_between(sys, 0, 1).chunks(), 0u);
  EXPECT_GT(link_between(sys, 1, 2).chunks(), 0u);
  EXPECT_GE(retransmissions(sys), link_between(sys, 0, 2).lost_chunks());
}

// A timeout far below the round trip (1 ms against 2-42 ms) re-sends every chunk every
// millisecond until its acknowledgement arrives: dozens of copies of a chunk are on the
// wire at once. In functional mode they share one buffer of values; each used to carry
// its own, which exhausted memory at nine-city delays.
TEST(LossRecovery, CopiesOfARetransmittedChunkShareTheirValues) {
  RunOptions o;
  o.gradient_bytes = 1 << 20;
  o.chunk_bytes = 64 << 10;  // 16 chunks per step
  o.functional = true;
  o.aligned_start = false;
  o.faults.retransmit_timeout_ps = 1 * kMs;
  o.faults.retransmit_backoff_max = 1;  // a fixed timeout: a copy every millisecond
  o.faults.link_loss.push_back({{"a", "c"}, 0.1});
  NetworkSystem sys("wan", triangle(), one_group({0, 1, 2}), o);
  sc_core::sc_start();
  ASSERT_FALSE(sys.watchdog().fired()) << sys.watchdog().diagnosis();
  expect_every_invariant(sys);
  expect_exact(sys, 16);
  std::uint64_t buffers = 0;
  for (const auto& s : sys.sites()) buffers += s.cluster->resent_value_buffers();
  EXPECT_GT(buffers, 0u);
  EXPECT_GT(retransmissions(sys), 10 * buffers);  // 3,341 against 96
}

std::uint64_t site_statistic(const NetworkSystem& sys, int site, const char* name) {
  for (const auto& st : sys.sites()[site].cluster->statistics())
    if (st.name == name) return static_cast<std::uint64_t>(st.value);
  throw std::runtime_error(std::string("no statistic ") + name);
}

// One lost contribution, held back: a -> c's only chunk is lost on a-c (down from 5 to
// 10 ms while it propagates, 21 ms), b's reaches c's FPGA at 20 ms and c (computing for
// 100 ms) sends its own afterwards. c's FPGA acknowledges b's contribution as it adds it
// (selective acknowledgement), so only a times out (T = 100 ms) and sends its chunk again;
// with acknowledgements per reduced chunk b timed out too: 2 retransmissions for 1 loss.
TEST(LossRecovery, OneLostContributionMakesOnlyItsOwnSenderRetransmit) {
  RunOptions o;
  o.gradient_bytes = 1 << 20;
  o.chunk_bytes = 1 << 20;  // one chunk
  o.aligned_start = false;
  o.alignment = SendAlignment::kNone;
  o.faults.retransmit_timeout_ps = 100 * kMs;
  o.faults.outages.push_back({{"a", "c"}, 5 * kMs, 10 * kMs});
  Platform p = triangle();
  p.sites[2].cluster.compute_time_ps = 100 * kMs;
  NetworkSystem sys("wan", p, one_group({0, 1, 2}), o);
  sc_core::sc_start();
  ASSERT_FALSE(sys.watchdog().fired()) << sys.watchdog().diagnosis();
  expect_every_invariant(sys);
  EXPECT_EQ(lost_chunks(sys), 1u);
  EXPECT_EQ(link_between(sys, 0, 2).lost_chunks(), 1u);
  EXPECT_EQ(retransmissions(sys), 1u);
  EXPECT_EQ(site_statistic(sys, 0, "retransmissions"), 1u);
  EXPECT_EQ(site_statistic(sys, 1, "retransmissions"), 0u);
  // One acknowledgement per contribution added: 3 senders x 2 receivers, a's to c once
  // (its lost first copy is never added); none from the clusters.
  std::uint64_t fpga_acks = 0, cluster_acks = 0;
  for (int s = 0; s < 3; ++s) {
    fpga_acks += sys.sites()[s].fpga->acks_sent();
    cluster_acks += site_statistic(sys, s, "acks_sent");
  }
  EXPECT_EQ(fpga_acks, 6u);
  EXPECT_EQ(cluster_acks, 0u);
  EXPECT_EQ(sys.sites()[2].fpga->duplicate_contributions(), 0u);
  for (const auto& s : sys.sites()) EXPECT_EQ(s.cluster->unacknowledged(), 0u);
}

// The collapse pattern without its randomness: a timeout (1 ms) far below the round trips
// (a-b 2 ms, b-c 40 ms, a-c 42 ms, plus microseconds of serialization) on a lossless
// triangle with loss recovery on. Each contribution is acknowledged one round trip after
// it was sent, and until then every expiry sends a copy: with a fixed timeout
// floor(RTT / 1 ms) copies each, 4 chunks x (2 + 2 + 40 + 40 + 42 + 42) = 672; with the
// timeout doubling to its cap (expiries at 1, 3, 7, 15, 23, 31, 39 ms) 1 for a 2 ms round
// trip and 7 for 40 and 42 ms: 4 x (1 + 1 + 4 x 7) = 120, and never more than
// backoff_expiries(RTT / T) per contribution.
std::uint64_t copies_before_acknowledgement(std::uint64_t backoff_max) {
  RunOptions o;
  o.gradient_bytes = 256 << 10;
  o.chunk_bytes = 64 << 10;  // 4 chunks
  o.aligned_start = false;
  o.alignment = SendAlignment::kNone;
  // Loss recovery on, nothing lost: an outage long after the step (a loss rate of 0 is no
  // loss, and turns no recovery on).
  o.faults.outages.push_back({{"a", "c"}, 1000 * kMs * 1000});
  o.faults.retransmit_timeout_ps = 1 * kMs;
  o.faults.retransmit_backoff_max = backoff_max;
  NetworkSystem sys("wan", triangle(), one_group({0, 1, 2}), o);
  sc_core::sc_start();
  EXPECT_FALSE(sys.watchdog().fired()) << sys.watchdog().diagnosis();
  expect_every_invariant(sys);
  EXPECT_EQ(lost_messages(sys), 0u);
  for (const auto& s : sys.sites()) EXPECT_EQ(s.cluster->unacknowledged(), 0u);
  return retransmissions(sys);
}

TEST(LossRecovery, ATimeoutBelowTheRoundTripSendsACopyEveryTimeoutWithoutBackoff) {
  EXPECT_EQ(copies_before_acknowledgement(1), 4u * (2 + 2 + 40 + 40 + 42 + 42));
}

TEST(LossRecovery, ATimeoutBelowTheRoundTripBacksOffToABoundedNumberOfCopies) {
  const std::uint64_t per_round_trip_ms[] = {2, 2, 40, 40, 42, 42};
  std::uint64_t bound = 0;
  for (std::uint64_t rtt : per_round_trip_ms)
    bound += 4 * Retransmitter::backoff_expiries(static_cast<double>(rtt));
  EXPECT_EQ(bound, 4u * (1 + 1 + 4 * 7));
  EXPECT_EQ(copies_before_acknowledgement(Retransmitter::kMaxBackoff), bound);
}

// Without aggregation the receivers' edges pass contributions on and hold no slot; a
// credit window then counts the contributions passed on (this stopped on the watchdog:
// no credit ever came back).
RunOptions credit_without_aggregation() {
  RunOptions o;
  o.gradient_bytes = 1 << 20;
  o.chunk_bytes = 64 << 10;  // 16 chunks
  o.functional = true;
  o.aggregation = false;
  o.flow_control = FlowControl::kCredit;
  o.aligned_start = false;
  return o;
}

// Finished with exact sums: each site checks the other two members' chunks as passed on.
void expect_credit_run_exact(const NetworkSystem& sys, int steps) {
  ASSERT_FALSE(sys.watchdog().fired()) << sys.watchdog().diagnosis();
  expect_every_invariant(sys);
  expect_exact(sys, static_cast<std::uint64_t>(steps) * 2 * 16);
}

// The triangle with buffers of `slots` chunks of 64 KiB: a credit window of `slots`.
Platform triangle_with_slots(int slots) {
  Platform p = triangle();
  for (auto& s : p.sites) s.fpga.buffer_bytes = static_cast<std::uint64_t>(slots) * (64 << 10);
  return p;
}

TEST(CreditFlowControl, WithoutAggregationCreditsComeBackAsContributionsArePassedOn) {
  NetworkSystem sys("wan", triangle_with_slots(4), one_group({0, 1, 2}),
                    credit_without_aggregation());
  sc_core::sc_start();
  expect_credit_run_exact(sys, 1);
  // a -> b carries a's grant to b and one credit per chunk of b's passed on at a.
  EXPECT_EQ(link_between(sys, 0, 1).control_messages(), 1u + 16u);
}

// Under loss: a sender counts a first acknowledgement as the credit it stands for (a lost
// credit is repaired), and grants are repeated until the round is over (a passed-on
// contribution shows only its own sender had the grant). Either missing stalled the round.
TEST(CreditFlowControl, WithoutAggregationLostCreditsGrantsAndContributionsAreRecovered) {
  RunOptions o = credit_without_aggregation();
  o.steps = 3;
  o.seed = 2;
  o.faults.link_loss.push_back({{"a", "c"}, 0.2});
  o.faults.link_loss.push_back({{"a", "b"}, 0.2});
  NetworkSystem sys("wan", triangle_with_slots(2), one_group({0, 1, 2}), o);
  sc_core::sc_start();
  expect_credit_run_exact(sys, 3);
  EXPECT_GT(lost_chunks(sys), 0u);
  EXPECT_GT(lost_messages(sys) - lost_chunks(sys), 0u);  // grants and credits too
}

TEST(DropFlowControl, ContributionsWithoutASlotAreDroppedAndRetransmitted) {
  RunOptions o;
  o.gradient_bytes = 1 << 20;
  o.chunk_bytes = 16 << 10;
  o.functional = true;
  o.flow_control = FlowControl::kDrop;
  o.alignment = SendAlignment::kNone;  // the full 20 ms skew at a
  Platform p = triangle();
  for (auto& s : p.sites) s.fpga.buffer_bytes = 64 << 10;  // 4 slots
  NetworkSystem sys("wan", p, one_group({0, 1, 2}), o);
  sc_core::sc_start();
  ASSERT_FALSE(sys.watchdog().fired()) << sys.watchdog().diagnosis();
  expect_every_invariant(sys);
  expect_exact(sys, 64);
  EXPECT_GT(sys.sites()[0].fpga->dropped_contributions(), 0u);
  EXPECT_EQ(sys.sites()[0].fpga->slot_stalls(), 0u);  // nothing waits: it is dropped
  EXPECT_GE(retransmissions(sys), sys.sites()[0].fpga->dropped_contributions());
  for (const auto& s : sys.sites())
    EXPECT_LE(s.fpga->buffer().high_water_bytes(), s.fpga->buffer().capacity_bytes());
}

TEST(Faults, StalledSiteHoldsItsTrafficAndSlowSiteComputesLonger) {
  RunOptions o;
  o.gradient_bytes = 1 << 20;
  o.chunk_bytes = 64 << 10;
  o.aligned_start = false;
  o.faults.stalls.push_back({"b", 0, 100 * kMs});
  o.faults.slowdowns.push_back({"c", 3.0});
  Platform p = triangle();
  for (auto& s : p.sites) s.cluster.compute_time_ps = 10 * kMs;
  NetworkSystem sys("wan", p, one_group({0, 1, 2}), o);
  sc_core::sc_start();
  expect_every_invariant(sys);
  EXPECT_EQ(sys.sites()[2].cluster->steps().at(0).send_start, ps_time(30 * kMs));
  // b's access link sent nothing before the stall ended; so a's results (which need b's
  // contributions) start after 100 ms + b -> a (1 ms).
  EXPECT_GE(sys.sites()[0].cluster->steps().at(0).first_result, ps_time(101 * kMs));
}

// ----------------------------------------------------------------------------------------
// Each invariant broken on purpose is caught and named.

RunOptions hooked(TestHook hook) {
  RunOptions o;
  o.gradient_bytes = 256 << 10;
  o.chunk_bytes = 16 << 10;
  o.functional = true;
  o.faults.test_hook = hook;
  return o;
}

TEST(Invariants, AllHoldWithoutAHook) {
  NetworkSystem sys("wan", triangle(), one_group({0, 1, 2}), hooked(TestHook::kNone));
  sc_core::sc_start();
  EXPECT_EQ(broken(sys), "");
}

TEST(Invariants, AggregatorAddingAContributionTwiceIsCaught) {
  NetworkSystem sys("wan", triangle(), one_group({0, 1, 2}), hooked(TestHook::kDoubleAdd));
  sc_core::sc_start();
  EXPECT_NE(broken(sys).find("invariant 'one contribution per member' violated"), std::string::npos)
      << broken(sys);
}

TEST(Invariants, LeakedSlotIsCaught) {
  NetworkSystem sys("wan", triangle(), one_group({0, 1, 2}), hooked(TestHook::kLeakSlot));
  sc_core::sc_start();
  EXPECT_NE(broken(sys).find("invariant 'no slot leaked' violated"), std::string::npos)
      << broken(sys);
}

TEST(Invariants, DoubleDeliveryIsCaught) {
  NetworkSystem sys("wan", triangle(), one_group({0, 1, 2}), hooked(TestHook::kDoubleDeliver));
  sc_core::sc_start();
  EXPECT_NE(broken(sys).find("invariant 'exactly-once delivery' violated"), std::string::npos)
      << broken(sys);
}

TEST(Invariants, BufferOvercommitIsCaught) {
  // Immediate start, b ready 100 ms late: c's chunks would stall at a for want of slots;
  // the hook takes slots beyond the 4 the buffer has instead.
  RunOptions o = hooked(TestHook::kOvercommit);
  o.aligned_start = false;
  Platform p = triangle();
  p.sites[1].cluster.compute_time_ps = 100 * kMs;
  for (auto& s : p.sites) s.fpga.buffer_bytes = 64 << 10;
  NetworkSystem sys("wan", p, one_group({0, 1, 2}), o);
  sc_core::sc_start();
  EXPECT_NE(broken(sys).find("invariant 'buffer within capacity' violated"), std::string::npos)
      << broken(sys);
}

TEST(Invariants, UncountedLossIsCaught) {
  RunOptions o = hooked(TestHook::kMiscountLoss);
  o.faults.wan_loss_rate = 0.05;
  NetworkSystem sys("wan", triangle(), one_group({0, 1, 2}), o);
  sc_core::sc_start();
  EXPECT_NE(broken(sys).find("invariant 'link conservation' violated"), std::string::npos)
      << broken(sys);
}

// ----------------------------------------------------------------------------------------
// The watchdog.

TEST(Watchdog, PartitionedGroupEndsInTheDiagnosisWithinTheWindow) {
  // a and b share one link, down from 5 ms for good: the ready messages (10 ms on the
  // way) are lost and a member can never reach the other. Nothing new arrives after t = 0,
  // so the watchdog (checking every window / 8) fires at exactly one window.
  RunOptions o;
  o.gradient_bytes = 1 << 20;
  o.chunk_bytes = 64 << 10;
  o.faults.outages.push_back({{"a", "b"}, 5 * kMs, std::numeric_limits<std::uint64_t>::max()});
  o.faults.watchdog_ps = 2'000 * kMs;
  const Platform p = make_platform({"a", "b"}, {{0, 1, 10 * kMs}}, 100'000'000'000);
  NetworkSystem sys("wan", p, one_group({0, 1}), o);
  sc_core::sc_start();
  ASSERT_TRUE(sys.watchdog().fired());
  EXPECT_EQ(sys.watchdog().fired_at(), ps_time(2'000 * kMs));
  EXPECT_EQ(sc_core::sc_time_stamp(), ps_time(2'000 * kMs));
  const std::string& d = sys.watchdog().diagnosis();
  EXPECT_NE(d.find("a: step 0 of 1, waits since 0 ps for ready messages of step 0 from b"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("cannot reach b"), std::string::npos) << d;
  EXPECT_NE(d.find("links down: a-b down since 5.000 ms"), std::string::npos) << d;
}

// ----------------------------------------------------------------------------------------
// Fault specs.

TEST(FaultSpecs, ParseAndCheckAgainstThePlatform) {
  FaultPlan plan;
  add_fault_spec(plan, "loss:a-b=0.05");
  add_fault_spec(plan, "down:a-c@150ms-400ms");
  add_fault_spec(plan, "down:b-c@1s");
  add_fault_spec(plan, "stall:b@1s-2s");
  add_fault_spec(plan, "slow:c=2.5");
  ASSERT_EQ(plan.link_loss.size(), 1u);
  EXPECT_EQ(plan.link_loss[0].rate, 0.05);
  ASSERT_EQ(plan.outages.size(), 2u);
  EXPECT_EQ(plan.outages[0].down_ps, 150 * kMs);
  EXPECT_EQ(plan.outages[0].up_ps, 400 * kMs);
  EXPECT_EQ(plan.outages[1].up_ps, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(plan.stalls[0].to_ps, 2'000 * kMs);
  EXPECT_EQ(plan.slowdowns[0].factor, 2.5);
  EXPECT_TRUE(plan.lossy());
  EXPECT_NO_THROW(check_faults(plan, triangle()));
  for (const char* bad : {"loss:a-b=1.5", "down:a-c@400ms-150ms", "stall:b@1s", "slow:c=0.5",
                          "flood:a-b", "down:ab@1s", "loss:a-b=x", "down:a-c@5"}) {
    FaultPlan p2;
    EXPECT_THROW(add_fault_spec(p2, bad), std::invalid_argument) << bad;
  }
  // A time with a unit the parser lacks names it and the known ones, as --watchdog does;
  // the spec follows as in every option error (", got '...'"), and apart for the callers.
  try {
    FaultPlan p3;
    add_fault_spec(p3, "down:a-b@5hours");
    ADD_FAILURE() << "5hours accepted";
  } catch (const FaultSpecError& e) {
    const std::string expected =
        "expected a time like '33.3ms' or '2us' (unknown unit 'hours'; known: ps, ns, us, "
        "\xC2\xB5s, \xCE\xBCs, ms, s, min)";
    EXPECT_EQ(e.expected(), expected);
    EXPECT_EQ(e.spec(), "down:a-b@5hours");
    EXPECT_EQ(std::string(e.what()), expected + ", got 'down:a-b@5hours'");
  }
  // An unknown site: the closest link of the platform, else the closest site, if any.
  const auto check_error = [](const std::string& spec) {
    FaultPlan plan;
    add_fault_spec(plan, spec);
    try {
      check_faults(plan, triangle());
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(check_error("down:a-zzz@1s"), "down: unknown site 'zzz' in a-zzz");
  EXPECT_EQ(check_error("loss:a-bb=0.1"), "loss: unknown site 'bb' in a-bb (did you mean 'a-b'?)");
  EXPECT_EQ(check_error("stall:B@1s-2s"), "stall: unknown site 'B' (did you mean 'b'?)");
  EXPECT_EQ(check_error("slow:zzz=2"), "slow: unknown site 'zzz'");
  const Platform line = make_platform({"a", "b", "c"}, {{0, 1, kMs}, {1, 2, kMs}}, 1'000'000'000);
  FaultPlan missing;
  add_fault_spec(missing, "down:a-c@1s");
  EXPECT_THROW(check_faults(missing, line), std::invalid_argument);
}

}  // namespace
}  // namespace aggnet
