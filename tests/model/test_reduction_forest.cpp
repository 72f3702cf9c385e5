// Reduction forests without SystemC: the chunk split by largest remainder, the trees'
// checks, the shortest-path tree and its root, and the aligned offsets on a star, each
// against values worked out by hand.
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "model/reduction_forest.h"
#include "tests/modules/test_platforms.h"

namespace aggnet {
namespace {

constexpr std::uint64_t kMs = 1'000'000'000;

std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs(const std::vector<ChunkRange>& r) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const auto& c : r) out.emplace_back(c.first, c.end);
  return out;
}

TEST(SplitChunks, LargestRemainderContiguousRanges) {
  // 3.5, 2.1, 1.4 chunks: floors 3 + 2 + 1, the one left to the largest fraction (0.5).
  EXPECT_EQ(pairs(split_chunks({0.5, 0.3, 0.2}, 7)),
            (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 4}, {4, 6}, {6, 7}}));
  // Equal fractions: the earlier tree first.
  EXPECT_EQ(pairs(split_chunks({1.0 / 3, 1.0 / 3, 1.0 / 3}, 10)),
            (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 4}, {4, 7}, {7, 10}}));
  // 0.6 and 0.4 of one chunk: the first tree carries it, the second none.
  EXPECT_EQ(pairs(split_chunks({0.6, 0.4}, 1)),
            (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 1}, {1, 1}}));
  EXPECT_EQ(pairs(split_chunks({1.0}, 4096)),
            (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 4096}}));
  EXPECT_THROW(split_chunks({}, 3), std::invalid_argument);
  EXPECT_THROW(split_chunks({0.0}, 3), std::invalid_argument);
}

// A star: hub h (3) with leaves a, b, c (0, 1, 2) 2, 4 and 6 ms away, 100 Gb/s; access
// links 200 Gb/s and 1 us, switches 500 ns, default FPGAs (32 GB/s, 128 ns); a chord a-b of
// 20 ms (longer than a-h-b: routed through h).
Platform star() {
  return testing::with_sites(
      testing::make_platform({"a", "b", "c", "h"},
                             {{0, 3, 2 * kMs}, {1, 3, 4 * kMs}, {2, 3, 6 * kMs}, {0, 1, 20 * kMs}},
                             100'000'000'000),
      200'000'000'000, 1'000'000, 500'000);
}

ReductionTree hub_tree() { return testing::reduction_tree(3, {3, 3, 3, -1}); }

TEST(ReductionTreeChecks, ShortestPathTreeAndTheErrors) {
  const Platform p = star();
  const Routing routing(p);
  const std::vector<int> all = {0, 1, 2, 3};
  EXPECT_EQ(shortest_path_tree(routing, 3).parent, hub_tree().parent);
  EXPECT_EQ(shortest_path_tree(routing, 0).parent, (std::vector<int>{-1, 3, 3, 0}));
  EXPECT_EQ(tree_error(p, routing, hub_tree(), all), "");
  ReductionTree cycle = hub_tree();
  cycle.parent = {3, 3, -1, -1};  // c outside
  EXPECT_NE(tree_error(p, routing, cycle, all).find("c has no parent"), std::string::npos);
  cycle.parent = {1, 0, 3, -1};  // a <-> b
  EXPECT_NE(tree_error(p, routing, cycle, all).find("cycle"), std::string::npos);
  ReductionTree no_link = hub_tree();
  no_link.parent = {3, 3, 0, -1};  // c - a: no link
  EXPECT_NE(tree_error(p, routing, no_link, all).find("has none"), std::string::npos);
  ReductionTree routed = hub_tree();
  routed.parent = {3, 0, 3, -1};  // b - a: a link, but routed through h
  EXPECT_NE(tree_error(p, routing, routed, all).find("routed through"), std::string::npos);
}

// Hand-computed (1 MiB chunk = 533 packets = 1'091'216 wire bytes): access S = 43'648'640,
// d = 1'000'000, switch s = 500'000, FPGA F = 32'768'000 and L = 128'000, WAN W =
// 87'297'280 ps. A leaf x's own chunk reaches its FPGA at o_x + S + d + s, its sum the hub's
// FPGA F + L + s + W + D_x + s later; the hub's own chunk at o_h + S + d + s. Every input
// meets at the hub when o_x = D_c - D_x (a 4 ms, b 2 ms, c 0) and
// o_h = 2s + F + L + W + D_c = 6'121'193'280 ps; they meet at
// S + d + 3s + F + L + W + D_c = 6'166'341'920 ps.
TEST(AlignedTreeOffsets, StarOffsetTable) {
  const Platform p = star();
  const Routing routing(p);
  std::vector<std::uint64_t> meet;
  const auto offsets = aligned_tree_offsets(p, routing, hub_tree(), {0, 1, 2, 3}, 1 << 20, &meet);
  EXPECT_EQ(offsets, (std::vector<std::uint64_t>{4 * kMs, 2 * kMs, 0, 6'121'193'280}));
  EXPECT_EQ(meet[3], 6'166'341'920u);
  // The one-chunk times with these offsets: every input of the hub at the same instant.
  const auto t = tree_chunk_times(p, routing, hub_tree(), {0, 1, 2, 3}, offsets, 1 << 20);
  EXPECT_EQ(t.first_input_ps[3], 6'166'341'920u);
  EXPECT_EQ(t.sum_done_ps[3], 6'166'341'920u + 4 * 32'768'000 + 128'000);
}

// Unaligned, one chunk: the hub's sum waits for c's (6'166'341'920), one service and the
// latency; the result leaves its switch s later (R = 6'199'737'920) and reaches the hub's
// cluster S + d later, leaf x's W + D_x + s + S + d later: c last at 12'332'183'840 ps.
TEST(TreeRoundTrip, StarClosedForm) {
  const Platform p = star();
  const Routing routing(p);
  const auto t = tree_chunk_times(p, routing, hub_tree(), {0, 1, 2, 3}, {}, 1 << 20);
  EXPECT_EQ(t.result_ps, (std::vector<std::uint64_t>{8'332'183'840, 10'332'183'840, 12'332'183'840,
                                                     6'244'386'560}));
  EXPECT_EQ(tree_round_trip_ps(p, routing, hub_tree(), {0, 1, 2, 3}, 1 << 20), 12'332'183'840u);
  // Rooted at the hub the farthest leaf is 6 ms away; at a leaf, 2 + 6 ms or more.
  EXPECT_EQ(least_latency_root(p, routing, 1 << 20), 3);
}

// Deepest first, equal depths in site order; a site outside the tree (6) left out, sites
// whose parents never reach the root (a cycle 7 <-> 8) after the root.
TEST(BottomUpOrder, DeepestFirstThenSiteOrder) {
  ReductionTree tree;
  tree.root = 2;
  tree.parent = {2, 0, -1, 1, 2, 4, -1, 8, 7};
  EXPECT_EQ(bottom_up_order(tree), (std::vector<int>{3, 1, 5, 0, 4, 2, 7, 8}));
}

// The star's hub tree with members a and b only (c relays nothing and sends nothing):
// per chunk S = 43'648'640 on a member's access link each way, F = 32'768'000 per input
// at an FPGA (the hub sums its three children's, a and b their own), W = 87'297'280 on
// each tree link each way.
TEST(TreeWork, OnlyMembersLoadTheirAccessLinksAndFpgas) {
  const Platform p = star();
  const Routing routing(p);
  TreeWork work, one_chunk;
  add_tree_work(p, routing, hub_tree(), {0, 1}, 1 << 20, 2.0, work, one_chunk);
  const auto r = [](char kind, int a, int b) { return std::make_tuple(kind, a, b); };
  EXPECT_EQ(work[r('f', 3, 3)], 2 * 3 * 32'768'000.0);
  EXPECT_EQ(one_chunk[r('f', 3, 3)], 3 * 32'768'000.0);
  EXPECT_EQ(work[r('f', 0, 0)], 2 * 32'768'000.0);
  EXPECT_EQ(work[r('f', 2, 2)], 0.0);
  EXPECT_EQ(work[r('u', 0, 0)], 2 * 43'648'640.0);
  EXPECT_EQ(work[r('d', 1, 1)], 2 * 43'648'640.0);
  EXPECT_EQ(work.count(r('u', 2, 2)), 0u);
  EXPECT_EQ(work.count(r('d', 3, 3)), 0u);
  EXPECT_EQ(work[r('l', 2, 3)], 2 * 87'297'280.0);
  EXPECT_EQ(work[r('l', 3, 2)], 2 * 87'297'280.0);
}

}  // namespace
}  // namespace aggnet
