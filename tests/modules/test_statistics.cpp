// Histogram against hand-computed counts: zeros (counted apart) land in bucket 0 with the
// other values below 1, and every value counts in count, sum, min and max. to_ns against
// SystemC's own to_seconds, bit for bit (the histograms' statistics must not move).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <systemc>
#include <vector>

#include "modules/core/statistics.h"
#include "modules/core/time.h"

namespace aggnet {
namespace {

TEST(ToNs, IsTheSameDoubleAsToSecondsTimesABillion) {
  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> values = {0,
                                       1,
                                       999,
                                       1000,
                                       1001,
                                       123'456'789,
                                       1ull << 40,
                                       1ull << 53,
                                       (1ull << 53) + 1,
                                       (1ull << 62) + 12'345};
  for (int i = 0; i < 100'000; ++i) values.push_back(rng() >> (rng() % 64));
  for (const std::uint64_t ps : values) {
    const sc_core::sc_time t = sc_core::sc_time::from_value(ps);
    const double ours = to_ns(t), systemc = t.to_seconds() * 1e9;
    ASSERT_EQ(std::memcmp(&ours, &systemc, sizeof ours), 0) << ps << ": " << ours << " " << systemc;
  }
}

TEST(Histogram, ZerosJoinBucketZero) {
  Histogram h;
  for (double v : {0.0, 3.0, 0.0, 0.5}) h.add(v);
  EXPECT_EQ(h.count(), 4u);
  EXPECT_DOUBLE_EQ(h.mean(), 3.5 / 4);
  EXPECT_DOUBLE_EQ(h.min(), 0.0);
  EXPECT_DOUBLE_EQ(h.max(), 3.0);
  // bucket 0: values < 1 (two zeros and 0.5); bucket 2: [2, 4).
  EXPECT_EQ(h.buckets(), (std::vector<std::uint64_t>{3, 0, 1}));
}

TEST(Histogram, OnlyZerosMakeOneBucket) {
  Histogram h;
  h.add(0.0);
  h.add(0.0);
  EXPECT_EQ(h.buckets(), (std::vector<std::uint64_t>{2}));
  EXPECT_DOUBLE_EQ(h.max(), 0.0);
}

TEST(Histogram, EmptyHasNoBuckets) {
  const Histogram h;
  EXPECT_TRUE(h.buckets().empty());
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.mean(), 0.0);
  EXPECT_EQ(h.min(), 0.0);
  EXPECT_EQ(h.max(), 0.0);
}

// No value is zero: the count is the buckets' alone, min and max come from the values.
TEST(Histogram, CountsMinAndMaxWithoutZeros) {
  Histogram h;
  for (double v : {5.0, 1024.0, 2.5, 1500.0, 7.0}) h.add(v);
  EXPECT_EQ(h.count(), 5u);
  EXPECT_DOUBLE_EQ(h.min(), 2.5);
  EXPECT_DOUBLE_EQ(h.max(), 1500.0);
  EXPECT_DOUBLE_EQ(h.mean(), 2538.5 / 5);
  // [2, 4): 2.5; [4, 8): 5 and 7; [1024, 2048): 1024 and 1500.
  std::vector<std::uint64_t> expected(12, 0);
  expected[2] = 1;
  expected[3] = 2;
  expected[11] = 2;
  EXPECT_EQ(h.buckets(), expected);
}

TEST(Histogram, CopiesAreIndependent) {
  Histogram h;
  for (double v : {0.0, 3.0, 100.0}) h.add(v);
  Histogram copy = h;
  copy.add(5000.0);
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.buckets().size(), 8u);
  EXPECT_DOUBLE_EQ(h.max(), 100.0);
  EXPECT_EQ(copy.count(), 4u);
  EXPECT_EQ(copy.buckets().size(), 14u);
  h = copy;
  EXPECT_EQ(h.buckets(), copy.buckets());
  EXPECT_DOUBLE_EQ(h.mean(), 5103.0 / 4);
}

TEST(Histogram, MovedFromIsEmptyAndUsable) {
  Histogram h;
  for (double v : {0.0, 3.0, 100.0}) h.add(v);
  Histogram taken = std::move(h);
  EXPECT_EQ(taken.count(), 3u);
  EXPECT_EQ(h.count(), 0u);  // NOLINT(bugprone-use-after-move): the state is specified
  EXPECT_TRUE(h.buckets().empty());
  h.add(2.0);
  EXPECT_EQ(h.buckets(), (std::vector<std::uint64_t>{0, 0, 1}));
  Histogram other;
  other.add(0.0);
  other = std::move(taken);
  EXPECT_EQ(other.count(), 3u);
  EXPECT_DOUBLE_EQ(other.max(), 100.0);
  EXPECT_EQ(taken.count(), 0u);  // NOLINT(bugprone-use-after-move)
}

}  // namespace
}  // namespace aggnet
