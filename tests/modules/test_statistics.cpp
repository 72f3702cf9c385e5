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
}

}  // namespace
}  // namespace aggnet
