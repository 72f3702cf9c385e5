// The memory tier a buffer needs, at the tiers' boundaries, by hand.
#include <gtest/gtest.h>

#include "model/control_plane.h"
#include "model/memory_tiers.h"

namespace aggnet {
namespace {

constexpr std::uint64_t kMiB = 1ull << 20, kGiB = 1ull << 30;

// Two tiers small enough to count: 4 MiB at 100 GB/s, 1 GiB at 10 GB/s.
const std::vector<MemoryTier> kTiers = {{"sram", 4 * kMiB, 100e9, 1024.0, 1.0, "sram"},
                                        {"dram", kGiB, 10e9, 8.0, 20.0, "dram"}};

TEST(MemoryTiers, CapacityBoundary) {
  EXPECT_EQ(choose_memory_tier(kTiers, 4 * kMiB, 1e9).tier, 0);      // exactly full
  EXPECT_EQ(choose_memory_tier(kTiers, 4 * kMiB + 1, 1e9).tier, 1);  // one byte more
  EXPECT_EQ(choose_memory_tier(kTiers, kGiB, 1e9).tier, 1);
  EXPECT_EQ(choose_memory_tier(kTiers, kGiB + 1, 1e9).tier, -1);  // nothing holds it
}

TEST(MemoryTiers, BandwidthBoundary) {
  // 1 MiB fits both; at 10 GB/s the DRAM would do, but the SRAM is tried first.
  EXPECT_EQ(choose_memory_tier(kTiers, kMiB, 100e9).tier, 0);
  EXPECT_EQ(choose_memory_tier(kTiers, kMiB, 100e9 * (1 + 1e-12)).tier, -1);
  // 8 MiB only fits the DRAM: its 10 GB/s is the limit.
  EXPECT_EQ(choose_memory_tier(kTiers, 8 * kMiB, 10e9).tier, 1);
  EXPECT_EQ(choose_memory_tier(kTiers, 8 * kMiB, 10.001e9).tier, -1);
}

TEST(MemoryTiers, CostAndPowerOfTheChoice) {
  // 2 MiB of SRAM at 1024 $/GiB: 2 $; 50 GB/s x 8 bit x 1 pJ = 0.4 W.
  const TierChoice sram = choose_memory_tier(kTiers, 2 * kMiB, 50e9);
  EXPECT_DOUBLE_EQ(sram.cost_usd, 2.0);
  EXPECT_DOUBLE_EQ(sram.power_w, 0.4);
  // 512 MiB of DRAM at 8 $/GiB: 4 $; 5 GB/s x 8 x 20 pJ = 0.8 W.
  const TierChoice dram = choose_memory_tier(kTiers, 512 * kMiB, 5e9);
  EXPECT_EQ(dram.tier, 1);
  EXPECT_DOUBLE_EQ(dram.cost_usd, 4.0);
  EXPECT_DOUBLE_EQ(dram.power_w, 0.8);
}

// A triad at 100 Gb/s per stream: 3 members x 2 accesses x 12.5 GB/s = 75 GB/s, within
// HBM's 460 GB/s and DDR's 77 GB/s; all-to-all of nine: 225 GB/s, past DDR.
TEST(MemoryTiers, AccessRateAndTheDefaults) {
  EXPECT_DOUBLE_EQ(aggregation_access_bytes_per_s(3, 12.5e9), 75e9);
  const auto& tiers = default_memory_tiers();
  ASSERT_EQ(tiers.size(), 3u);
  EXPECT_EQ(choose_memory_tier(tiers, 32 * kMiB, 75e9).tier, 0);
  EXPECT_EQ(choose_memory_tier(tiers, 32 * kMiB + 1, 75e9).tier, 1);
  EXPECT_EQ(choose_memory_tier(tiers, 8 * kGiB + 1, 75e9).tier, 2);
  EXPECT_EQ(choose_memory_tier(tiers, 8 * kGiB + 1, aggregation_access_bytes_per_s(9, 12.5e9)).tier,
            -1);
}

// A group's streams run at (1 - margin) x its tightest limit; a site keeps the busiest of
// its groups over the rounds; a group of one aggregates nothing.
TEST(MemoryTiers, PeakAccessOverTheRounds) {
  GroupPlan triad, pair, alone;
  triad.members = {0, 1, 2};
  triad.link_rate = 10e9, triad.pipeline_rate = 20e9, triad.access_rate = 30e9;
  pair.members = {2, 3};
  pair.link_rate = 50e9, pair.pipeline_rate = 40e9, pair.access_rate = 45e9;
  alone.members = {4};
  alone.link_rate = alone.pipeline_rate = alone.access_rate = 1e12;
  EXPECT_DOUBLE_EQ(unconstrained_stream_bytes_per_s(triad, 0.1), 9e9);
  EXPECT_DOUBLE_EQ(unconstrained_stream_bytes_per_s(pair, 0.0), 40e9);
  RoundPlan r0, r1;
  r0.groups = {triad, alone};
  r1.groups = {pair};
  const std::vector<double> peak = peak_access_bytes_per_s({r0, r1}, 6, 0.1);
  ASSERT_EQ(peak.size(), 6u);
  EXPECT_DOUBLE_EQ(peak[0], 2 * 3 * 9e9);   // 54 GB/s
  EXPECT_DOUBLE_EQ(peak[2], 2 * 2 * 36e9);  // the pair's 144 GB/s beats the triad's 54
  EXPECT_DOUBLE_EQ(peak[3], 144e9);
  EXPECT_DOUBLE_EQ(peak[4], 0.0);  // alone: no aggregation
  EXPECT_DOUBLE_EQ(peak[5], 0.0);  // in no group
  EXPECT_EQ(tier_name(kTiers, choose_memory_tier(kTiers, kMiB, 54e9)), "sram");
  EXPECT_EQ(tier_name(kTiers, choose_memory_tier(kTiers, kMiB, 144e9)), "none fits");
}

}  // namespace
}  // namespace aggnet
