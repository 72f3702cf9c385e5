// size-buffers' analytic bound for reduction trees (analytic_tree_bounds) on the star of
// docs/reduction-trees.md, derived by hand: hub h with leaves a, b, c 2, 4, 6 ms away,
// rooted at h, 100 Gb/s WAN, 200 Gb/s and 1 us access, 500 ns switches, default FPGAs,
// 1 MiB chunks (1'091'216 wire bytes).
#include <gtest/gtest.h>

#include "sizing/buffer_sizing.h"
#include "tests/modules/test_platforms.h"

namespace aggnet {
namespace {

constexpr std::uint64_t kMs = 1'000'000'000, kMiB = 1 << 20;
// Switch s, FPGA service F (32 GB/s) and latency L (128 ns), WAN serialization W.
constexpr std::uint64_t s = 500'000, F = 32'768'000, L = 128'000, W = 87'297'280;
enum Site { a, b, c, h };

Schedule star_tree(std::uint64_t pacing_interval_ps) {
  Schedule sc;
  sc.name = "star";
  sc.collective = Collective::kReductionTree;
  sc.rounds.push_back(Round{{Group{{a, b, c, h}}}});
  sc.forest.push_back(testing::reduction_tree(h, {h, h, h, -1}));
  sc.forest[0].pacing_interval_ps = pacing_interval_ps;
  return sc;
}

Platform star() {
  return testing::with_sites(
      testing::make_platform({"a", "b", "c", "h"},
                             {{a, h, 2 * kMs}, {b, h, 4 * kMs}, {c, h, 6 * kMs}}, 100'000'000'000),
      200'000'000'000, 1'000'000, s);
}

RunOptions options(SendAlignment alignment) {
  RunOptions o;
  o.gradient_bytes = 64 * kMiB;
  o.chunk_bytes = kMiB;
  o.steps = 1;
  o.alignment = alignment;
  return o;
}

// Aligned, every input of a sum arrives together: the hub holds a slot for its four
// services and the latency, 4F + L, a leaf for F + L. The chunks come every 4F (the hub's
// FPGA serves four inputs per chunk, more than the 50 us pacing interval), so the hub
// needs ceil((4F + L) / 4F) = 2 slots and a leaf 1, each plus one of slack.
TEST(TreeSizing, AlignedStarHoldsSlotsForThePipelineOnly) {
  const auto bounds =
      analytic_tree_bounds(star(), star_tree(50'000'000), options(SendAlignment::kArrival));
  ASSERT_EQ(bounds.size(), 4u);
  EXPECT_EQ(bounds[h].hold_ps, 4 * F + L);
  EXPECT_EQ(bounds[h].skew_ps, 0u);
  EXPECT_EQ(bounds[h].analytic_bytes, 3 * kMiB);
  for (int leaf : {a, b, c}) {
    EXPECT_EQ(bounds[leaf].hold_ps, F + L) << leaf;
    EXPECT_EQ(bounds[leaf].analytic_bytes, 2 * kMiB) << leaf;
  }
  const double rate = kMiB / (4.0 * F * 1e-12);
  EXPECT_DOUBLE_EQ(bounds[h].unconstrained_rate_bytes_per_s, rate);
  EXPECT_DOUBLE_EQ(bounds[h].access_bytes_per_s, 2 * 4 * rate);
  EXPECT_EQ(bounds[h].group.size(), 4u);
}

// Without offsets the hub's own chunk arrives first and c's partial sum last, F + L + 2s +
// W + 6 ms later (c's sum, its switch, the link, the hub's switch); the hub's slot is held
// from the first input to c's service and the latency: 2F + 2L + 2s + W + 6 ms. A pacing
// interval of 200 us, above 4F, sets the spacing: ceil(hold / 200 us) + 1 slots.
TEST(TreeSizing, UnalignedStarHoldsTheHubsSlotForTheSkew) {
  const std::uint64_t interval = 200'000'000;
  const auto bounds =
      analytic_tree_bounds(star(), star_tree(interval), options(SendAlignment::kNone));
  const std::uint64_t skew = F + L + 2 * s + W + 6 * kMs;
  EXPECT_EQ(bounds[h].skew_ps, skew);
  EXPECT_EQ(bounds[h].early_sender, h);
  EXPECT_EQ(bounds[h].late_sender, c);
  EXPECT_EQ(bounds[h].hold_ps, skew + F + L);
  EXPECT_EQ(bounds[h].analytic_bytes, ((skew + F + L + interval - 1) / interval + 1) * kMiB);
  EXPECT_EQ(bounds[a].analytic_bytes, 2 * kMiB);  // a leaf sums its own chunk only
}

}  // namespace
}  // namespace aggnet
