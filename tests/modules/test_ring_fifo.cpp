// RingFifo against std::deque: the same items in the same order through wrap-around and
// growth (the array doubles while items sit across its end); and where its items sit: a
// FIFO that empties starts again at its array's first item.
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

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// A queue that holds a few items at a time keeps them in the first line of its array
// however many have passed through it.
TEST(RingFifo, EmptiedRestartsAtTheFirstItem) {
  RingFifo<std::uint64_t> fifo;
  fifo.push_back(0);
  const std::uintptr_t first = address(&fifo.front());
  std::uint64_t next = 1;
  for (int burst = 1; burst < 40; ++burst) {
    fifo.pop_front();
    ASSERT_TRUE(fifo.empty());
    for (int k = 0; k < burst % 4 + 1; ++k) fifo.push_back(next++);
    ASSERT_EQ(address(&fifo.front()), first) << "burst " << burst;
    ASSERT_EQ(fifo.front(), next - (burst % 4 + 1));
    while (fifo.size() > 1) fifo.pop_front();
  }
  // Never emptied, the head moves on: the last burst (39 % 4 + 1 = 4 items at indexes
  // 0-3) left its last item at index 3; one more pushed and one popped leaves index 4.
  fifo.push_back(next);
  fifo.pop_front();
  EXPECT_EQ(address(&fifo.front()), first + 4 * sizeof(std::uint64_t));
}

}  // namespace
}  // namespace aggnet
