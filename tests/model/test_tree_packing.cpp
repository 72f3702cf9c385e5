// Spanning-tree packing and forest planning on hand-solved networks. Rates are in units of
// 1e9 payload bytes/s; access links and FPGAs are fast unless a test says otherwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "model/tree_packing.h"

namespace aggnet {
namespace {

constexpr double kRate = 1e9;
constexpr double kFast = 1e15;

TreeNetwork make_net(int sites, const std::vector<std::tuple<int, int, double>>& links) {
  TreeNetwork net;
  net.sites = sites;
  for (const auto& [a, b, delay_s] : links) net.links.push_back({a, b, kRate, delay_s});
  net.access_bytes_per_s.assign(sites, kFast);
  net.access_delay_s.assign(sites, 0.0);
  net.fpga_bytes_per_s.assign(sites, kFast);
  return net;
}

double packed_rate(const TreeNetwork& net) {
  double sum = 0;
  for (const PackedTree& t : pack_spanning_trees(net)) sum += t.rate_bytes_per_s;
  return sum;
}

// Nash-Williams/Tutte: edges crossing the best partition over its parts less one.
TEST(TreePacking, SmallGraphsPackTheirPartitionValue) {
  EXPECT_NEAR(packed_rate(make_net(3, {{0, 1, 0}, {1, 2, 0}})), 1.0 * kRate, 1e-6);
  EXPECT_NEAR(packed_rate(make_net(3, {{0, 1, 0}, {1, 2, 0}, {0, 2, 0}})), 1.5 * kRate, 1e-6);
  EXPECT_NEAR(packed_rate(make_net(4, {{0, 1, 0}, {1, 2, 0}, {2, 3, 0}, {3, 0, 0}})),
              4.0 / 3 * kRate, 1e-6);
  EXPECT_NEAR(
      packed_rate(make_net(4, {{0, 1, 0}, {1, 2, 0}, {2, 3, 0}, {3, 0, 0}, {0, 2, 0}, {1, 3, 0}})),
      2.0 * kRate, 1e-6);
}

// Every tree's contribution crosses every access link: K4 packs 2 but one site's access
// link carries only 1.2.
TEST(TreePacking, AccessLinksCapEveryTree) {
  TreeNetwork net = make_net(4, {{0, 1, 0}, {1, 2, 0}, {2, 3, 0}, {3, 0, 0}, {0, 2, 0}, {1, 3, 0}});
  net.access_bytes_per_s[2] = 1.2 * kRate;
  EXPECT_NEAR(packed_rate(net), 1.2 * kRate, 1e-6);
}

// A star's one tree: the centre sums three inputs per byte of the tree's rate (two children
// and its own) when a leaf is the root, four when it is the root itself. At 2.4 the centre
// caps the tree at 0.8 rooted at a leaf (a leaf root sums 2 inputs: fine at 10).
TEST(TreePacking, FpgaSumsEveryInput) {
  TreeNetwork net = make_net(4, {{0, 1, 0}, {0, 2, 0}, {0, 3, 0}});
  net.fpga_bytes_per_s[0] = 2.4 * kRate;
  net.fpga_bytes_per_s[1] = net.fpga_bytes_per_s[2] = net.fpga_bytes_per_s[3] = 10 * kRate;
  const auto trees = pack_spanning_trees(net);
  EXPECT_NEAR(packed_rate(net), 0.8 * kRate, 1e-6);
  for (const PackedTree& t : trees) EXPECT_NE(t.root, 0);
}

// Rerooting gives every root's latency at once: the same as one walk per root, on a tree
// with access delays and a hop latency.
TEST(TreePacking, EveryRootsLatencyMatchesItsOwnWalk) {
  TreeNetwork net = make_net(7, {{0, 1, 0.010},
                                 {1, 2, 0.003},
                                 {1, 3, 0.020},
                                 {3, 4, 0.001},
                                 {3, 5, 0.007},
                                 {0, 6, 0.030},
                                 {2, 5, 0.001}});
  net.access_delay_s = {0.001, 0.0, 0.025, 0.002, 0.0, 0.004, 0.0};
  net.hop_latency_s = 0.0005;
  const std::vector<int> tree = {0, 1, 2, 3, 4, 5};  // without the 2-5 link
  const std::vector<double> all = root_latencies_s(net, tree);
  for (int r = 0; r < 7; ++r) EXPECT_NEAR(all[r], tree_latency_s(net, tree, r), 1e-15) << r;
  // Hand-computed: rooted at 1 the farthest cluster is 6's (10 + 30 ms, two hops) or 2's
  // (3 + 25 ms, one hop): 2 x 41 ms.
  EXPECT_NEAR(all[1], 2 * 0.041, 1e-15);
}

TEST(TreePacking, DisconnectedLinksAreRefused) {
  EXPECT_THROW(pack_spanning_trees(make_net(3, {{0, 1, 0}})), std::invalid_argument);
}

// A line 0 -10 ms- 1 -20 ms- 2: rooted at 1 the farthest member is 20 ms away, so 40 ms
// there and back, then 1e9 bytes at 1e9 B/s.
TEST(LoadAwareForest, LineRootsAtItsCentre) {
  const TreeNetwork net = make_net(3, {{0, 1, 0.010}, {1, 2, 0.020}});
  EXPECT_NEAR(tree_latency_s(net, {0, 1}, 0), 0.060, 1e-15);
  EXPECT_NEAR(tree_latency_s(net, {0, 1}, 1), 0.040, 1e-15);
  const LoadAwareForest plan = plan_load_aware_forest(net, 1e9);
  ASSERT_EQ(plan.trees.size(), 1u);
  EXPECT_EQ(plan.trees[0].root, 1);
  EXPECT_NEAR(plan.time_s, 1.040, 1e-9);
}

// Triangle with a long edge 0-2 (100 ms) and short ones (10 ms). Trees: S = {01, 12}
// rooted at 1 (latency 20 ms), P = {01, 02} and Q = {12, 02} (200 ms). By time T the
// forest delivers max(T - 0.02, 1.5 T - 0.21) (x 1e9 B): S alone at rate 1, or all three
// at 0.5 (each edge in two of them). G = 0.2e9: S alone, T = 0.22; G = 3e9: T = 2.14.
TEST(LoadAwareForest, LatencyDecidesSmallGradientsRateLargeOnes) {
  const TreeNetwork net = make_net(3, {{0, 1, 0.010}, {1, 2, 0.010}, {0, 2, 0.100}});
  const LoadAwareForest small = plan_load_aware_forest(net, 0.2e9);
  ASSERT_EQ(small.trees.size(), 1u);
  EXPECT_EQ(small.trees[0].root, 1);
  EXPECT_NEAR(small.time_s, 0.22, 1e-9);
  const LoadAwareForest large = plan_load_aware_forest(net, 3e9);
  EXPECT_EQ(large.trees.size(), 3u);
  EXPECT_NEAR(large.time_s, 2.14, 1e-9);
  EXPECT_NEAR(large.packing_bytes_per_s, 1.5 * kRate, 1e-3);
  double bytes = 0;
  for (const PackedTree& t : large.trees) bytes += t.bytes;
  EXPECT_NEAR(bytes, 3e9, 1e-3);
}

// A small gradient rides on the lowest-latency trees (ties share it), and every root's
// shortest-path tree is the lowest-latency tree at that root: the plan's latency is the least of
// those, walked one root at a time. 16 sites (more than the 8 shortest-path candidates), a ring
// with chords, unequal access delays (far larger at sites 0 and 1) and a hop latency, so that the
// farthest cluster, not the farthest site, sets each latency.
TEST(LoadAwareForest, SmallGradientTakesTheQuickestShortestPathTree) {
  constexpr int kSites = 16;
  std::vector<std::tuple<int, int, double>> links;
  for (int i = 0; i < kSites; ++i) {
    links.push_back({i, (i + 1) % kSites, 0.001 * ((i * 7) % 13 + 1)});
    if (i % 3 == 0) links.push_back({i, (i + 5) % kSites, 0.002 * ((i * 5) % 11 + 2)});
  }
  TreeNetwork net = make_net(kSites, links);
  for (int v = 0; v < kSites; ++v) net.access_delay_s[v] = 0.004 * ((v * 3) % 7);
  net.access_delay_s[0] = net.access_delay_s[1] = 0.2;
  net.hop_latency_s = 0.0007;
  double quickest_s = kFast;
  for (int r = 0; r < net.sites; ++r)
    quickest_s = std::min(quickest_s, tree_latency_s(net, shortest_path_tree(net, r), r));
  const LoadAwareForest plan = plan_load_aware_forest(net, 1e3);
  ASSERT_FALSE(plan.trees.empty());
  for (const PackedTree& t : plan.trees) EXPECT_EQ(t.latency_s, quickest_s);
  EXPECT_NEAR(plan.time_s, quickest_s, 1e-5);  // 1e3 bytes at about 1e9 B/s on top
}

}  // namespace
}  // namespace aggnet
