// The ring's segment split: RingSegmentSplit (arithmetic) against hand-derived splits and
// against ring_segment_offsets (the table, built by summing the segments one by one).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "model/network_math.h"

namespace aggnet {
namespace {

// 10 floats (40 B) over 4 segments: 3, 3, 2, 2 floats, at bytes 0, 12, 24, 32.
TEST(RingSegmentSplit, TenFloatsOverFourSegments) {
  const RingSegmentSplit split(40, 4);
  const std::vector<std::uint64_t> offsets{0, 12, 24, 32};
  const std::vector<std::uint64_t> bytes{12, 12, 8, 8};
  for (std::uint64_t s = 0; s < 4; ++s) {
    EXPECT_EQ(split.offset_bytes(s), offsets[s]) << "segment " << s;
    EXPECT_EQ(split.bytes(s), bytes[s]) << "segment " << s;
  }
  EXPECT_EQ(split.offset_bytes(4), 40u);  // one past the last: the gradient's end
}

// Fewer floats than segments (3 floats over 5): the last two segments are empty.
TEST(RingSegmentSplit, FewerFloatsThanSegments) {
  const RingSegmentSplit split(12, 5);
  EXPECT_EQ(split.bytes(0), 4u);
  EXPECT_EQ(split.bytes(2), 4u);
  EXPECT_EQ(split.bytes(3), 0u);
  EXPECT_EQ(split.offset_bytes(4), 12u);
  EXPECT_EQ(split.offset_bytes(5), 12u);
}

TEST(RingSegmentSplit, MatchesTheTable) {
  const std::vector<std::uint64_t> gradients{
      4, 40, 1'000'004, std::uint64_t{1} << 30, (std::uint64_t{1} << 40) + 12, 140'000'000'004};
  for (const std::uint64_t g : gradients) {
    for (const std::uint64_t n : {1, 2, 3, 9, 27, 81, 243, 1000}) {
      const auto table = ring_segment_offsets(g, n);
      const RingSegmentSplit split(g, n);
      for (std::uint64_t s = 0; s < n; ++s) {
        ASSERT_EQ(split.offset_bytes(s), table[s]) << g << " B over " << n << ", segment " << s;
        ASSERT_EQ(split.bytes(s), table[s + 1] - table[s]) << g << " B over " << n;
      }
      ASSERT_EQ(split.offset_bytes(n), table[n]) << g << " B over " << n;
    }
  }
}

}  // namespace
}  // namespace aggnet
