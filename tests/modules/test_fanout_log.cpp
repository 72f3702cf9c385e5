// A switch's shared fan-outs (MulticastSwitch::share_fanouts, FanoutLog): a port link
// that takes a wide multicast chunk from the log delivers it when a FIFO link handed it
// over at the fan-out would (the recurrence arrival = max(hand-over, previous departure) +
// serialization + delay, per port), and its counters read mid-run as if it had taken it
// then. The log itself: members, skipping, trimming and growth.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "module_harness.h"
#include "modules/core/chunk.h"
#include "modules/core/event_calendar.h"
#include "modules/core/time.h"
#include "modules/network/fanout_log.h"
#include "modules/network/multicast_switch.h"
#include "modules/network/wan_link.h"

namespace aggnet {
namespace {

constexpr std::uint64_t kUs = 1'000'000;  // ps per microsecond

TEST(FanoutLog, APortFindsOnlyTheEntriesOfItsSets) {
  FanoutLog log(70);
  const std::uint32_t low = log.add_members({0, 1, 65});
  const std::uint32_t high = log.add_members({2, 65, 69});
  tlm::tlm_generic_payload a, b;
  EXPECT_EQ(log.append(a, sc_core::SC_ZERO_TIME, low, 3), 0u);
  EXPECT_EQ(log.append(b, ps_time(5), high, 3), 1u);
  EXPECT_EQ(log.next_for(0, 0), 0u);
  EXPECT_EQ(log.next_for(2, 0), 1u);
  EXPECT_EQ(log.next_for(65, 1), 1u);
  EXPECT_EQ(log.next_for(3, 0), log.end());
  EXPECT_EQ(log.entry(1).trans, &b);
  EXPECT_EQ(log.entry(1).at, ps_time(5));
}

TEST(FanoutLog, EntriesLeaveOnceEveryMemberTookThemAndKeepTheirNumbersAsItGrows) {
  FanoutLog log(2);
  const std::uint32_t both = log.add_members({0, 1});
  std::vector<tlm::tlm_generic_payload> trans(100);
  for (std::size_t i = 0; i < trans.size(); ++i)
    log.append(trans[i], ps_time(i), both, 2);  // grows past 16, 32, 64 entries
  EXPECT_EQ(log.size(), 100u);
  log.taken(0);
  EXPECT_EQ(log.size(), 100u);  // port 1 has not taken it
  log.taken(0);
  EXPECT_EQ(log.size(), 99u);
  EXPECT_EQ(log.next_for(1, 0), 1u);  // a cursor behind the head starts there
  for (std::uint64_t seq = 1; seq < 100; ++seq) EXPECT_EQ(log.entry(seq).trans, &trans[seq]);
}

// A source, a switch with no latency and kPorts port links of 1 us serialization (1,000
// bytes at 8 Gb/s, no headers) and 10 us delay, each into a recorder, and a last port
// bound to a recorder directly (as a site's FPGA), first on tree 0's list.
constexpr int kPorts = 40;
constexpr std::uint64_t kSerPs = 1 * kUs, kDelayPs = 10 * kUs, kBytes = 1000;

struct Fabric {
  ChunkPool pool;
  testing::ChunkSource source{"source", pool};
  MulticastSwitch sw{"sw", SwitchParams{0}};
  std::vector<std::unique_ptr<WanLink>> links;
  std::vector<std::unique_ptr<testing::ChunkRecorder>> sinks;
  testing::ChunkRecorder local{"local"};
  Fabric() {
    WanLinkParams p;
    p.delay_ps = kDelayPs;
    p.bandwidth_bps = 8'000'000'000;
    p.mtu_bytes = 1 << 20;
    p.header_bytes = 0;
    source.out.bind(sw.in);
    for (int i = 0; i < kPorts; ++i) {
      links.push_back(std::make_unique<WanLink>(("link" + std::to_string(i)).c_str(), p));
      sinks.push_back(
          std::make_unique<testing::ChunkRecorder>(("sink" + std::to_string(i)).c_str()));
      sw.out.bind(links.back()->in);
      links.back()->out.bind(sinks.back()->in);
    }
    sw.out.bind(local.in);
    std::vector<int> all = {kPorts}, upper;
    for (int i = 0; i < kPorts; ++i) all.push_back(i);
    for (int i = 4; i < kPorts; ++i) upper.push_back(i);
    sw.set_multicast_group(0, all);
    sw.set_multicast_group(1, upper);
    sw.set_multicast_group(2, {0, 1, 2});
    sw.set_unicast_route(7, 7);
  }
  // Each post: (instant, tree or -1 for the unicast to port 7), chunk index = post index.
  void post(std::uint64_t at_ps, int tree) {
    ChunkExtension c;
    c.src_site = 99;
    c.tree_id = tree;
    c.dst_site = tree < 0 ? 7 : -1;
    c.payload_bytes = kBytes;
    c.chunk = static_cast<std::uint32_t>(source.posts.size());
    source.posts.push_back({at_ps, c});
  }
  static bool on_port(int tree, int port) {
    if (tree == 0) return true;
    if (tree == 1) return port >= 4;
    if (tree == 2) return port <= 2;
    return port == 7;
  }
};

// Bursts that queue on every port: wide lists of both sets, a narrow list and a unicast
// among them (handed over at once, behind what waits in the log), then an idle gap.
void post_traffic(Fabric& f) {
  for (int i = 0; i < 12; ++i) f.post(0, i % 2);
  f.post(2 * kUs + kUs / 2, 2);
  f.post(3 * kUs + kUs / 2, -1);
  f.post(4 * kUs, 0);
  f.post(40 * kUs, 0);
  f.post(40 * kUs + kUs / 5, 1);
  f.post(40 * kUs + 2 * kUs / 5, 0);
}

struct Expected {
  std::vector<std::uint32_t> chunks;
  std::vector<std::uint64_t> arrivals_ps, queued_ps;
};

// The FIFO recurrence per port from the posts, as a link handed each chunk at its post.
Expected expected_at(const Fabric& f, int port) {
  Expected e;
  std::uint64_t departure = 0;
  for (const auto& post : f.source.posts) {
    if (!Fabric::on_port(post.chunk.tree_id, port)) continue;
    const std::uint64_t start = std::max(post.at_ps, departure);
    departure = start + kSerPs;
    e.chunks.push_back(post.chunk.chunk);
    e.arrivals_ps.push_back(departure + kDelayPs);
    e.queued_ps.push_back(start - post.at_ps);
  }
  return e;
}

// Bytes on port's link at `at_ps` (no event then): handed over, not yet arrived.
std::uint64_t expected_in_flight(const Fabric& f, int port, std::uint64_t at_ps) {
  const Expected e = expected_at(f, port);
  std::uint64_t bytes = 0, i = 0;
  for (const auto& post : f.source.posts) {
    if (!Fabric::on_port(post.chunk.tree_id, port)) continue;
    if (post.at_ps <= at_ps && e.arrivals_ps[i] > at_ps) bytes += kBytes;
    ++i;
  }
  return bytes;
}

void expect_recurrence_except(const Fabric& f, int skipped);
void expect_recurrence(const Fabric& f) { expect_recurrence_except(f, -1); }

// Every port but `skipped` (-1: none) as the recurrence has it.
void expect_recurrence_except(const Fabric& f, int skipped) {
  std::vector<std::uint64_t> local_expected;  // tree 0's chunks, at their hand-over
  for (const auto& post : f.source.posts)
    if (post.chunk.tree_id == 0) local_expected.push_back(post.at_ps);
  ASSERT_EQ(f.local.seen.size(), local_expected.size());
  for (std::size_t k = 0; k < local_expected.size(); ++k)
    EXPECT_EQ(f.local.seen[k].at_ps, local_expected[k]);
  for (int port = 0; port < kPorts; ++port) {
    if (port == skipped) continue;
    const Expected e = expected_at(f, port);
    const auto& seen = f.sinks[static_cast<std::size_t>(port)]->seen;
    ASSERT_EQ(seen.size(), e.chunks.size()) << "port " << port;
    for (std::size_t k = 0; k < seen.size(); ++k) {
      EXPECT_EQ(seen[k].chunk.chunk, e.chunks[k]) << "port " << port << " #" << k;
      EXPECT_EQ(seen[k].at_ps, e.arrivals_ps[k]) << "port " << port << " #" << k;
    }
    const WanLink& link = *f.links[static_cast<std::size_t>(port)];
    EXPECT_EQ(link.payload_bytes(), kBytes * e.chunks.size()) << "port " << port;
    EXPECT_EQ(link.bytes_in_flight(), 0u);
    EXPECT_EQ(to_ps(link.busy_time()), kSerPs * e.chunks.size());
    const Histogram queued = link.queueing_delay_ns();
    EXPECT_EQ(queued.count(), e.chunks.size());
    EXPECT_DOUBLE_EQ(
        queued.max(),
        static_cast<double>(*std::max_element(e.queued_ps.begin(), e.queued_ps.end())) / 1000.0);
  }
}

TEST(SharedFanout, EachPortDeliversAsALinkHandedTheChunkAtTheFanout) {
  Fabric f;
  f.sw.share_fanouts(32);
  post_traffic(f);
  // Mid-run, inside the first burst (nothing happens at these instants): what the links
  // hold is what was handed over, the log's waiting chunks included.
  testing::Probe probe("probe");
  std::vector<std::uint64_t> probed;
  const std::vector<std::uint64_t> instants = {kUs / 2, 5 * kUs + kUs / 3, 13 * kUs + kUs / 7};
  for (std::uint64_t at : instants)
    probe.checks.push_back({at, [&f, &probed] {
                              for (const auto& link : f.links)
                                probed.push_back(link->bytes_in_flight());
                            }});
  sc_core::sc_start();
  EXPECT_EQ(f.sw.shared_lists(), 2u);  // trees 0 and 1; tree 2's three ports go one by one
  expect_recurrence(f);
  ASSERT_EQ(probed.size(), instants.size() * kPorts);
  for (std::size_t i = 0; i < instants.size(); ++i)
    for (int port = 0; port < kPorts; ++port)
      EXPECT_EQ(probed[i * kPorts + static_cast<std::size_t>(port)],
                expected_in_flight(f, port, instants[i]))
          << "port " << port << " at " << instants[i] << " ps";
}

// A port link that goes down loses what waits for it in the log with what its FIFO holds,
// and what is handed over while it is down; it takes chunks again once up.
TEST(SharedFanout, ALinkGoingDownLosesWhatWaitsForItInTheLog) {
  Fabric f;
  f.sw.share_fanouts(32);
  post_traffic(f);
  constexpr int kPort = 10;
  constexpr std::uint64_t kDown = 5 * kUs + kUs / 3, kUp = 30 * kUs;
  testing::Probe probe("probe");
  WanLink& link = *f.links[kPort];
  probe.checks.push_back({kDown, [&link] { link.set_down(); }});
  probe.checks.push_back({kUp, [&link] { link.set_up(); }});
  sc_core::sc_start();
  ASSERT_EQ(f.sw.shared_lists(), 2u);
  // Delivered: what arrived before it went down, and what was handed over once it was up.
  const Expected e = expected_at(f, kPort);
  std::size_t before = 0, handed = 0, after = 0;
  for (std::size_t k = 0; k < e.arrivals_ps.size(); ++k) before += e.arrivals_ps[k] <= kDown;
  for (const auto& post : f.source.posts) {
    if (!Fabric::on_port(post.chunk.tree_id, kPort)) continue;
    ++handed;
    after += post.at_ps >= kUp;
  }
  EXPECT_EQ(f.sinks[kPort]->seen.size(), before + after);
  EXPECT_EQ(link.lost_chunks(), handed - before - after);
  EXPECT_EQ(link.wire_bytes_sent(),
            link.wire_bytes_delivered() + link.wire_bytes_lost() + link.bytes_in_flight());
  EXPECT_EQ(link.bytes_in_flight(), 0u);
  expect_recurrence_except(f, kPort);
}

TEST(SharedFanout, OffWhileSomethingSamplesAtKernelTimesteps) {
  Fabric f;
  f.sw.share_fanouts(32);
  post_traffic(f);
  EventCalendar::current().forbid_run_ahead();  // as a VCD file does
  sc_core::sc_start();
  EXPECT_EQ(f.sw.shared_lists(), 0u);
  expect_recurrence(f);
}

TEST(SharedFanout, AListNarrowerThanAskedGoesPortByPort) {
  Fabric f;
  f.sw.share_fanouts(kPorts);  // only tree 0's list has that many links
  post_traffic(f);
  sc_core::sc_start();
  EXPECT_EQ(f.sw.shared_lists(), 1u);
  expect_recurrence(f);
}

}  // namespace
}  // namespace aggnet
