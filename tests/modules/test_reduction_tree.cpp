// A reduction tree on a line of three sites a - b - c rooted at c, built from the modules
// (sources stand for the clusters): a's FPGA sends its contribution to b, b's FPGA sums it
// with b's own and sends one partial sum to c, c's FPGA completes the sum and multicasts
// it on the result tree back down to every member's cluster. Expectations are exact ps
// from the closed forms of docs/simulation-semantics.md (store-and-forward per hop).
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "module_harness.h"
#include "modules/core/chunk.h"
#include "modules/core/event_calendar.h"
#include "modules/core/time.h"
#include "modules/fpga/fpga_aggregator.h"
#include "modules/network/multicast_switch.h"
#include "modules/network/wan_link.h"

namespace aggnet {
namespace {

constexpr std::uint64_t kNs = 1000, kUs = 1'000'000, kMs = 1'000'000'000;  // ps
constexpr std::uint64_t kMiB = 1ull << 20;
constexpr int kTree = 0, kResultTree = 50, kChunks = 3;

using Source = testing::ChunkSource;      // posts at t = 0, no delay: the last bit there now
using Recorder = testing::ChunkRecorder;  // a cluster's receiving side

// Access links 200 Gb/s, 1 us; WAN 100 Gb/s, a-b 5 ms, b-c 3 ms; MTU 2048, header 80;
// switch 500 ns; default FPGA (32 GB/s, 128 ns), 8 slots of 1 MiB.
WanLinkParams link(std::uint64_t delay_ps, std::uint64_t bps) {
  WanLinkParams p;
  p.delay_ps = delay_ps;
  p.bandwidth_bps = bps;
  return p;
}

FpgaAggregatorConfig fpga_config(int site, TestHook hook = TestHook::kNone) {
  FpgaAggregatorConfig c;
  c.test_hook = hook;
  c.site = site;
  c.slot_bytes = kMiB;
  c.params.buffer_bytes = 8 * kMiB;
  return c;
}

/// One site: source -> access up -> switch (port 0: FPGA) ; FPGA -> access down -> cluster,
/// FPGA to_network -> switch.
struct Site {
  Source source;
  WanLink up, down;
  MulticastSwitch sw;
  FpgaAggregator fpga;
  Recorder cluster;
  Site(const std::string& n, int site, ChunkPool& pool, TestHook hook = TestHook::kNone)
      : source((n + "_source").c_str(), pool),
        up((n + "_up").c_str(), link(1 * kUs, 200'000'000'000)),
        down((n + "_down").c_str(), link(1 * kUs, 200'000'000'000)),
        sw((n + "_sw").c_str(), SwitchParams{500 * kNs}),
        fpga((n + "_fpga").c_str(), fpga_config(site, hook), pool),
        cluster((n + "_cluster").c_str()) {
    source.out.bind(up.in);
    up.out.bind(sw.in);
    sw.out.bind(fpga.in);  // port 0
    fpga.to_network.bind(sw.in);
    fpga.out.bind(down.in);
    down.out.bind(cluster.in);
  }
};

struct Line {
  ChunkPool pool;
  TestHook relay_hook;  // b's FPGA
  Site a{"a", 0, pool}, b{"b", 1, pool, relay_hook}, c{"c", 2, pool};
  WanLink ab{"ab", link(5 * kMs, 100'000'000'000)}, ba{"ba", link(5 * kMs, 100'000'000'000)};
  WanLink bc{"bc", link(3 * kMs, 100'000'000'000)}, cb{"cb", link(3 * kMs, 100'000'000'000)};
  explicit Line(TestHook hook = TestHook::kNone) : relay_hook(hook) {
    a.sw.out.bind(ab.in);  // a: port 1
    b.sw.out.bind(ba.in);  // b: port 1
    b.sw.out.bind(bc.in);  // b: port 2
    c.sw.out.bind(cb.in);  // c: port 1
    ab.out.bind(b.sw.in);
    ba.out.bind(a.sw.in);
    bc.out.bind(c.sw.in);
    cb.out.bind(b.sw.in);
    const std::array<std::array<int, 3>, 3> port = {{{0, 1, 1}, {1, 0, 2}, {1, 1, 0}}};
    Site* sites[] = {&a, &b, &c};
    for (int s = 0; s < 3; ++s)
      for (int d = 0; d < 3; ++d) sites[s]->sw.set_unicast_route(d, port[s][d]);
    // The result tree from the root c: c's FPGA and link c->b; b's FPGA and b->a; a's FPGA.
    c.sw.set_multicast_group(kResultTree, {0, 1});
    b.sw.set_multicast_group(kResultTree, {0, 1});
    a.sw.set_multicast_group(kResultTree, {0});
    a.fpga.set_reduction_role(kTree, role(1, 0, 1));
    b.fpga.set_reduction_role(kTree, role(2, 1, 2));
    c.fpga.set_reduction_role(kTree, role(-1, 1, 3));
    for (int s = 0; s < 3; ++s)
      for (std::uint32_t i = 0; i < kChunks; ++i)
        sites[s]->source.posts.push_back({0, contribution(s, i)});
  }
  static ReductionRole role(int parent, int children, int members) {
    ReductionRole r;
    r.parent_site = parent;
    r.children = children;
    r.subtree_members = members;
    r.result_tree_id = parent < 0 ? kResultTree : -1;
    return r;
  }
  // Site s's gradient: chunk i holds {10^s, (i + 1) 10^s}.
  static ChunkExtension contribution(int s, std::uint32_t i) {
    ChunkExtension c;
    c.kind = ChunkKind::kContribution;
    c.src_site = c.dst_site = s;
    c.reduction_tree = kTree;
    c.group_size = 3;
    c.chunk = i;
    c.payload_bytes = kMiB;
    const float v = s == 0 ? 1.0f : (s == 1 ? 10.0f : 100.0f);
    c.data = std::make_shared<std::vector<float>>(std::vector<float>{v, (i + 1) * v});
    return c;
  }
};

// Closed form (store-and-forward per hop), 1 MiB = 533 packets = 1'091'216 wire bytes:
//   S = access serialization at 200 Gb/s = 43'648'640 ps, d = access delay 1 us,
//   W = WAN serialization at 100 Gb/s = 87'297'280 ps, s = switch 500 ns,
//   F = FPGA service 32'768'000 ps, L = FPGA latency 128'000 ps.
// Every source hands its 3 chunks to its access link at 0, so chunk i reaches its switch
// at (i + 1) S + d. a's FPGA (one input) sends chunk 0 to link a->b at
//   h = S + d + 2s + F + L = 78'044'640 ps;
// W > S, so the link a->b is the bottleneck and chunk i reaches b's FPGA at
//   T_ab(i) = h + (i + 1) W + 5 ms + s = 5'166'341'920 + i W.
// b's own chunk is long there; b's partial sum reaches c's FPGA at
//   T_bc(i) = T_ab(i) + F + L + s + W + 3 ms + s = 8'287'535'200 + i W,
// and c's result leaves its switch at R(i) = T_bc(i) + F + L + s = 8'320'931'200 + i W.
// Members receive it (access down S + d after their FPGA):
//   c: R + S + d                          =  8'365'579'840 + i W
//   b: R + W + 3 ms + s + S + d           = 11'453'377'120 + i W
//   a: R + 2W + 8 ms + 2s + S + d         = 16'541'174'400 + i W (the last member).
constexpr std::uint64_t kW = 87'297'280;
constexpr std::array<std::uint64_t, 3> kReceives = {16'541'174'400, 11'453'377'120,
                                                    8'365'579'840};  // a, b, c

TEST(ReductionTree, LineRootedAtTheEndDeliversEveryChunkAtItsClosedForm) {
  Line line;
  sc_core::sc_start();
  const Site* sites[] = {&line.a, &line.b, &line.c};
  for (int s = 0; s < 3; ++s) {
    const auto& seen = sites[s]->cluster.seen;
    ASSERT_EQ(seen.size(), static_cast<std::size_t>(kChunks)) << "site " << s;
    for (std::uint32_t i = 0; i < kChunks; ++i) {
      EXPECT_EQ(seen[i].at_ps, kReceives[s] + i * kW) << "site " << s << " chunk " << i;
      EXPECT_EQ(seen[i].chunk.chunk, i);
      EXPECT_EQ(seen[i].chunk.kind, ChunkKind::kReduced);
      EXPECT_EQ(seen[i].chunk.tree_id, kResultTree);
      EXPECT_EQ(seen[i].chunk.src_site, 2);
      EXPECT_EQ(seen[i].chunk.contributions, 3);
      // Functional: 1 + 10 + 100 and (i + 1) x 111, exact in float.
      ASSERT_TRUE(seen[i].chunk.data);
      EXPECT_EQ(*seen[i].chunk.data, (std::vector<float>{111.0f, (i + 1) * 111.0f}));
    }
    EXPECT_EQ(sites[s]->fpga.bad_reductions(), 0u);
    EXPECT_EQ(sites[s]->fpga.slots_held(), 0u);
    EXPECT_EQ(sites[s]->fpga.tree_sums(), static_cast<std::uint64_t>(kChunks));
    EXPECT_EQ(sites[s]->fpga.pipeline_busy(),
              ps_time(static_cast<std::uint64_t>(kChunks) * (s == 0 ? 1 : 2) * 32'768'000));
  }
  // One stream per link and direction: each carries each chunk once.
  for (const WanLink* l : {&line.ab, &line.bc, &line.cb, &line.ba})
    EXPECT_EQ(l->chunks(), static_cast<std::uint64_t>(kChunks)) << l->name();
  // Slots: b's chunk 2 from its own input (3S + d + s) to its sum leaving T_ab(2) + F + L;
  // c's likewise to T_bc(2) + F + L.
  EXPECT_DOUBLE_EQ(line.b.fpga.buffer().hold_time_ns().max(), 5'241'386'560 / 1000.0);
  EXPECT_DOUBLE_EQ(line.c.fpga.buffer().hold_time_ns().max(), 8'362'579'840 / 1000.0);
  EXPECT_EQ(line.b.fpga.buffer().high_water_bytes(), 3 * kMiB);
}

// The broken mechanism: b forwards a sum after one input instead of two. Its own
// contribution leaves alone, c completes early with 2 members; a's contribution then
// leaves b alone too and holds a slot at c for ever. Every wrong sum is counted.
TEST(ReductionTree, ARelayForwardingBeforeItsChildIsCaught) {
  Line line(TestHook::kEarlyTreeForward);
  sc_core::sc_start();
  ASSERT_EQ(line.a.cluster.seen.size(), static_cast<std::size_t>(kChunks));
  EXPECT_LT(line.a.cluster.seen[0].at_ps, kReceives[0]);
  EXPECT_EQ(line.a.cluster.seen[0].chunk.contributions, 2);
  EXPECT_EQ(line.c.fpga.bad_reductions(), static_cast<std::uint64_t>(kChunks));
  EXPECT_EQ(line.b.fpga.bad_reductions(), static_cast<std::uint64_t>(2 * kChunks));
  EXPECT_EQ(line.c.fpga.slots_held(), static_cast<std::size_t>(kChunks));
  EXPECT_EQ(line.bc.chunks(), static_cast<std::uint64_t>(2 * kChunks));
}

}  // namespace
}  // namespace aggnet
