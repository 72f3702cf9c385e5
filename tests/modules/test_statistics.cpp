// Histogram against hand-computed counts: zeros (counted apart) land in bucket 0 with the
// other values below 1, and every value counts in count, sum, min and max.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "modules/core/statistics.h"

namespace aggnet {
namespace {

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
