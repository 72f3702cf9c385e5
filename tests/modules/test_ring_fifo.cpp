// RingFifo against std::deque: the same items in the same order through wrap-around and
// growth (the array doubles while items sit across its end).
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>

#include "modules/core/ring_fifo.h"

namespace aggnet {
namespace {

TEST(RingFifo, StartsEmpty) {
  RingFifo<int> fifo;
  EXPECT_TRUE(fifo.empty());
  EXPECT_EQ(fifo.size(), 0u);
}

TEST(RingFifo, KeepsOrderThroughWrapAroundAndGrowth) {
  RingFifo<std::uint64_t> fifo;
  std::deque<std::uint64_t> reference;
  std::uint64_t next = 0;
  // Rounds of pushes and fewer pops: the head moves through the array while it grows
  // from 16 to 256 entries with items on both sides of its end.
  for (int round = 0; round < 40; ++round) {
    for (int k = 0; k < 7; ++k) {
      fifo.push_back(next);
      reference.push_back(next);
      ++next;
      ASSERT_EQ(fifo.back(), reference.back());
    }
    for (int k = 0; k < 2 + round % 5; ++k) {
      ASSERT_EQ(fifo.front(), reference.front());
      fifo.pop_front();
      reference.pop_front();
    }
    ASSERT_EQ(fifo.size(), reference.size());
  }
  while (!reference.empty()) {
    ASSERT_EQ(fifo.front(), reference.front());
    fifo.pop_front();
    reference.pop_front();
  }
  EXPECT_TRUE(fifo.empty());
}

TEST(RingFifo, EmptiedAndRefilledFromAnyHeadPosition) {
  RingFifo<int> fifo;
  for (int cycle = 0; cycle < 50; ++cycle) {
    for (int k = 0; k < cycle % 20 + 1; ++k) fifo.push_back(cycle * 100 + k);
    for (int k = 0; k < cycle % 20 + 1; ++k) {
      ASSERT_EQ(fifo.front(), cycle * 100 + k);
      fifo.pop_front();
    }
    ASSERT_TRUE(fifo.empty());
  }
}

}  // namespace
}  // namespace aggnet
