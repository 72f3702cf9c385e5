// Histogram against hand-computed counts: zeros (counted apart) land in bucket 0 with the
// other values below 1, and every value counts in count, sum, min and max. to_ns against
// SystemC's own to_seconds, bit for bit (the histograms' statistics must not move).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
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

// Every value's bucket against std::ilogb's (a second method), up to the largest double.
TEST(LogBuckets, CountsEveryBucketAsIlogbDoes) {
  std::mt19937_64 rng(5);
  std::vector<double> values = {0.25,
                                1.0,
                                std::ldexp(1.0, 39) - 1,
                                std::ldexp(1.0, 45) * 1.5,
                                1e300,
                                std::numeric_limits<double>::max()};
  for (int i = 0; i < 10'000; ++i)
    values.push_back(std::ldexp(1.0 + static_cast<double>(rng() % 1000) / 1000, rng() % 60));
  LogBuckets buckets;
  std::vector<std::uint64_t> expected;
  for (const double v : values) {
    buckets.add(v);
    const auto b = v < 1.0 ? std::size_t{0} : static_cast<std::size_t>(std::ilogb(v)) + 1;
    if (expected.size() <= b) expected.resize(b + 1, 0);
    ++expected[b];
  }
  EXPECT_EQ(buckets.counts(), expected);
  EXPECT_EQ(expected.size(), 1025u);  // the largest double: bucket 1024
}

TEST(LogBuckets, EndAtTheHighestUsed) {
  LogBuckets buckets;
  EXPECT_TRUE(buckets.counts().empty());
  buckets.add(5.0);  // bucket 3: [4, 8)
  buckets.add(1.5);  // bucket 1: [1, 2)
  EXPECT_EQ(buckets.counts(), (std::vector<std::uint64_t>{0, 1, 0, 1}));
}

}  // namespace
}  // namespace aggnet
