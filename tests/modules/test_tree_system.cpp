// Reduction trees end to end through the builder (NetworkSystem): the clusters' programs,
// the FPGAs' roles, the partial sums' unicast to the parent and the result multicast down
// the tree. Closed forms on a line and a star exact to the ps (the same store-and-forward
// chain as test_reduction_tree.cpp, which builds the modules by hand), aligned offsets
// giving every relay its inputs at one instant, functional sums, a two-tree forest.
#include <gtest/gtest.h>

#include <array>
#include <tuple>
#include <vector>

#include "collectives/functional.h"
#include "modules/core/time.h"
#include "sim/builder.h"
#include "sim/invariants.h"
#include "tests/modules/test_platforms.h"
#include "traffic/closed_form.h"

namespace aggnet {
namespace {

constexpr std::uint64_t kMs = 1'000'000'000, kMiB = 1 << 20;
// 1 MiB = 533 packets = 1'091'216 wire bytes. Access 200 Gb/s: S; access delay d; switch
// s; FPGA service F (32 GB/s) and latency L (128 ns); WAN 100 Gb/s: W.
constexpr std::uint64_t S = 43'648'640, d = 1'000'000, s = 500'000, F = 32'768'000, L = 128'000,
                        W = 87'297'280;

// Sites `codes` joined by `links` (a, b, delay) at 100 Gb/s; access 200 Gb/s and 1 us,
// switches 500 ns, default FPGAs, compute time 0.
Platform platform(const std::vector<std::string>& codes,
                  const std::vector<std::tuple<int, int, std::uint64_t>>& links) {
  return testing::with_sites(testing::make_platform(codes, links, 100'000'000'000), 200'000'000'000,
                             d, s);
}

ReductionTree tree(int root, std::vector<int> parent, double share = 1.0) {
  return testing::reduction_tree(root, std::move(parent), share);
}

Schedule forest(std::vector<int> members, std::vector<ReductionTree> trees) {
  Schedule sc;
  sc.name = "tree";
  sc.collective = Collective::kReductionTree;
  sc.rounds.push_back(Round{{Group{std::move(members)}}});
  sc.forest = std::move(trees);
  return sc;
}

RunOptions options(std::uint64_t chunks, bool aligned) {
  RunOptions o;
  o.gradient_bytes = chunks * kMiB;
  o.chunk_bytes = kMiB;
  o.buffer_bytes = 8 * kMiB;
  o.steps = 1;
  o.aligned_start = aligned;
  o.round_start_auto = false;
  o.alignment = aligned ? SendAlignment::kArrival : SendAlignment::kNone;
  return o;
}

// a - b 5 ms, b - c 3 ms.
Platform line() { return platform({"a", "b", "c"}, {{0, 1, 5 * kMs}, {1, 2, 3 * kMs}}); }

std::uint64_t ps(const sc_core::sc_time& t) { return to_ps(t); }

// Rooted at c, immediate start, 3 chunks: every cluster emits its chunks at 0; a's sum
// reaches b's FPGA at T_ab(i) = S + d + 2s + F + L + (i + 1) W + 5 ms + s (a -> b binds);
// b's reaches c at T_ab(i) + F + L + s + W + 3 ms + s; c's result leaves its switch F + L + s
// later, R(i) = 8'320'931'200 + i W, and reaches c's cluster S + d later, b's
// W + 3 ms + s + S + d later, a's 2W + 8 ms + 2s + S + d later.
TEST(TreeSystem, LineRootedAtTheEndDeliversAtTheClosedForm) {
  NetworkSystem sys("wan", line(), forest({0, 1, 2}, {tree(2, {1, 2, -1})}), options(3, false));
  sc_core::sc_start();
  const std::uint64_t R =
      S + d + 2 * s + F + L + W + 5 * kMs + s + F + L + s + W + 3 * kMs + s + F + L + s;
  EXPECT_EQ(R, 8'320'931'200u);
  const std::array<std::uint64_t, 3> first = {R + 2 * W + 8 * kMs + 2 * s + S + d,
                                              R + W + 3 * kMs + s + S + d, R + S + d};
  for (int site = 0; site < 3; ++site) {
    const auto& r = sys.sites()[site].cluster->steps().at(0);
    EXPECT_EQ(ps(r.first_result), first[site]) << site;
    EXPECT_EQ(ps(r.last_result), first[site] + 2 * W) << site;
    EXPECT_EQ(ps(r.end), first[site] + 2 * W) << site;
    EXPECT_EQ(sys.sites()[site].fpga->tree_sums(), 3u);
  }
  EXPECT_EQ(ps(sys.sites()[0].cluster->steps().at(0).end), 16'541'174'400u + 2 * W);
  EXPECT_EQ(violations(check_invariants(sys)), "");
  // The analytic time: the first chunk's last result plus 2 chunks on the bottleneck a -> b.
  EXPECT_DOUBLE_EQ(
      reduction_tree_time(sys.platform(), sys.routing(), sys.schedule(), sys.options()),
      static_cast<double>(first[0] + 2 * W) * 1e-12);
}

// Star: hub h with leaves a, b, c 2, 4, 6 ms away, rooted at h, one chunk, immediate start:
// the hub's sum waits for c's partial sum, S + d + 3s + F + L + W + 6 ms, then F + L; the
// result leaves h's switch s later, R = 6'199'737'920, and reaches h's cluster S + d later,
// leaf x's W + D_x + s + S + d later.
Platform star() {
  return platform({"a", "b", "c", "h"}, {{0, 3, 2 * kMs}, {1, 3, 4 * kMs}, {2, 3, 6 * kMs}});
}

TEST(TreeSystem, StarRootedAtTheHubDeliversAtTheClosedForm) {
  NetworkSystem sys("wan", star(), forest({0, 1, 2, 3}, {tree(3, {3, 3, 3, -1})}),
                    options(1, false));
  sc_core::sc_start();
  const std::uint64_t R = S + d + 3 * s + F + L + W + 6 * kMs + F + L + s;
  EXPECT_EQ(R, 6'199'737'920u);
  const std::array<std::uint64_t, 4> expected = {R + W + 2 * kMs + s + S + d,
                                                 R + W + 4 * kMs + s + S + d,
                                                 R + W + 6 * kMs + s + S + d, R + S + d};
  for (int site = 0; site < 4; ++site)
    EXPECT_EQ(ps(sys.sites()[site].cluster->steps().at(0).end), expected[site]) << site;
  EXPECT_EQ(violations(check_invariants(sys)), "");
  EXPECT_DOUBLE_EQ(
      reduction_tree_time(sys.platform(), sys.routing(), sys.schedule(), sys.options()),
      static_cast<double>(expected[2]) * 1e-12);
}

// Aligned: offsets a 4 ms, b 2 ms, c 0, h 2s + F + L + W + 6 ms after the agreed start
// (model/test_reduction_forest.cpp derives them). Every input of the hub's sum arrives at
// one instant: its slot is held for the pipeline only (4 inputs: 4F + L), each leaf's for
// F + L; 0 ps of skew.
TEST(TreeSystem, AlignedOffsetsGiveEveryRelayItsInputsAtOneInstant) {
  NetworkSystem sys("wan", star(), forest({0, 1, 2, 3}, {tree(3, {3, 3, 3, -1})}),
                    options(1, true));
  sc_core::sc_start();
  const std::array<std::uint64_t, 4> offsets = {4 * kMs, 2 * kMs, 0, 2 * s + F + L + W + 6 * kMs};
  for (int site = 0; site < 4; ++site) {
    const auto& r = sys.sites()[site].cluster->steps().at(0);
    EXPECT_EQ(ps(r.first_send) - ps(r.agreed_start), offsets[site]) << site;
    const double hold_ns = sys.sites()[site].fpga->buffer().hold_time_ns().max();
    EXPECT_DOUBLE_EQ(hold_ns, static_cast<double>((site == 3 ? 4 : 1) * F + L) / 1000) << site;
  }
  EXPECT_EQ(violations(check_invariants(sys)), "");
}

// The line aligned: b's own chunk and a's sum meet at b, b's sum and c's own at c.
TEST(TreeSystem, AlignedLineHasNoSkewAtEitherRelay) {
  NetworkSystem sys("wan", line(), forest({0, 1, 2}, {tree(2, {1, 2, -1})}), options(1, true));
  sc_core::sc_start();
  for (int site = 0; site < 3; ++site) {
    const double hold_ns = sys.sites()[site].fpga->buffer().hold_time_ns().max();
    EXPECT_DOUBLE_EQ(hold_ns, static_cast<double>((site == 0 ? 1 : 2) * F + L) / 1000) << site;
  }
}

// Functional: every site ends with the exact average of the three gradients; a forest of
// two trees (rooted at c and at a, half the chunks each) carries each chunk once per link
// and direction (one partial sum up, one result down).
TEST(TreeSystem, FunctionalForestEndsWithTheExactAverage) {
  RunOptions o = options(4, false);
  o.functional = true;
  NetworkSystem sys("wan", line(),
                    forest({0, 1, 2}, {tree(2, {1, 2, -1}, 0.5), tree(0, {-1, 0, 1}, 0.5)}), o);
  sc_core::sc_start();
  for (int site = 0; site < 3; ++site) {
    const auto& c = *sys.sites()[site].cluster;
    EXPECT_EQ(c.functional_checks(), 4u);
    EXPECT_EQ(c.functional_mismatches(), 0u);
    ASSERT_EQ(c.result().size(), 4 * kMiB / 4);
    for (std::uint64_t j : {std::uint64_t{0}, std::uint64_t{300'000}, 4 * kMiB / 4 - 1}) {
      float sum = 0;
      for (int m = 0; m < 3; ++m) sum += FunctionalValues::gradient_value(m, 0, j);
      EXPECT_EQ(c.result()[j], sum / 3) << site << " " << j;
    }
    EXPECT_EQ(sys.sites()[site].fpga->tree_sums(), 4u);
  }
  for (const auto& l : sys.links()) EXPECT_EQ(l.link->chunks(), 4u) << l.from << "->" << l.to;
  EXPECT_EQ(sys.forest_plan().ranges[1].first, 2u);
  EXPECT_EQ(violations(check_invariants(sys)), "");
}

// Per-receiver in-trees on two sites 5 ms apart: each site is the root of one tree (the
// other its leaf) and keeps its sum. Both clusters send their chunk of tree a (index 0)
// first, of tree b S later. b's leaf chunk reaches a's FPGA at S + d + s + F + L + s + W +
// 5 ms + s, a's own long before: a's sum is done F + L later and reaches its cluster s +
// S + d after that. a's leaf chunk leaves S later than b's, so b's sum is S later.
TEST(TreeSystem, InTreesKeepEachSumAtItsRootAtTheClosedForm) {
  ReductionTree at_a = tree(0, {-1, 0}), at_b = tree(1, {1, -1});
  at_a.broadcast = at_b.broadcast = false;
  RunOptions o = options(1, false);
  o.functional = true;
  NetworkSystem sys("wan", platform({"a", "b"}, {{0, 1, 5 * kMs}}), forest({0, 1}, {at_a, at_b}),
                    o);
  sc_core::sc_start();
  const std::uint64_t end_a = 2 * S + 2 * d + 4 * s + 2 * F + 2 * L + W + 5 * kMs;
  EXPECT_EQ(end_a, 5'244'386'560u);
  for (int site = 0; site < 2; ++site) {
    const auto& c = *sys.sites()[site].cluster;
    EXPECT_EQ(ps(c.steps().at(0).end), end_a + static_cast<std::uint64_t>(site) * S) << site;
    EXPECT_EQ(c.functional_mismatches(), 0u);
    EXPECT_EQ(c.functional_checks(), 1u);
    EXPECT_EQ(sys.sites()[site].fpga->tree_sums(), 2u);  // its own sum and its leaf forward
  }
  // One partial sum per direction, no result on the WAN.
  for (const auto& l : sys.links()) EXPECT_EQ(l.link->chunks(), 1u) << l.from << "->" << l.to;
  EXPECT_EQ(violations(check_invariants(sys)), "");
}

// An in-tree forest needs one in-tree per member and no broadcast tree beside them.
TEST(TreeSystem, InTreeForestsAreCheckedBeforeTheyRun) {
  ReductionTree at_a = tree(0, {-1, 0}), at_b = tree(1, {1, -1});
  at_a.broadcast = false;
  const Platform two = platform({"a", "b"}, {{0, 1, 5 * kMs}});
  EXPECT_THROW(plan_forest(two, Routing(two), forest({0, 1}, {at_a, at_b}), options(1, false)),
               std::invalid_argument);
  at_b.broadcast = false;
  EXPECT_THROW(plan_forest(two, Routing(two), forest({0, 1}, {at_a}), options(1, false)),
               std::invalid_argument);
  EXPECT_NO_THROW(plan_forest(two, Routing(two), forest({0, 1}, {at_a, at_b}), options(1, false)));
}

}  // namespace
}  // namespace aggnet
