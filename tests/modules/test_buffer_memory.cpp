// BufferMemory on its own (no kernel run: it only reads sc_time stamps handed to it):
// slot count, allocation and free, occupancy, high-water mark, full(), the hold-time
// histogram, and what an allocation that breaks the precondition does to the books; the
// SlotTable under it (direct-mapped entries, growth, overflow, reuse).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <systemc>
#include <vector>

#include "modules/core/time.h"
#include "modules/fpga/buffer_memory.h"
#include "modules/fpga/slot_table.h"

namespace aggnet {
namespace {

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kNs = 1000;  // ps per ns

TEST(BufferMemory, SlotsAreWholeChunksOfTheCapacity) {
  // 10 MiB + 5 B hold 10 slots of 1 MiB (the 5 B left over are no slot).
  const BufferMemory b(10 * kMiB + 5, kMiB);
  EXPECT_EQ(b.num_slots(), 10u);
  EXPECT_EQ(b.slot_bytes(), kMiB);
  EXPECT_EQ(b.capacity_bytes(), 10 * kMiB + 5);
  EXPECT_EQ(b.occupancy_bytes(), 0u);
  EXPECT_EQ(b.high_water_bytes(), 0u);
  EXPECT_EQ(b.allocations(), 0u);
  EXPECT_FALSE(b.full());
  EXPECT_FALSE(b.holds(0));
  // Exactly one slot.
  EXPECT_EQ(BufferMemory(kMiB, kMiB).num_slots(), 1u);
}

TEST(BufferMemory, CapacityBelowOneSlotOrZeroSlotSizeIsRejected) {
  EXPECT_THROW(BufferMemory(kMiB - 1, kMiB), std::invalid_argument);
  EXPECT_THROW(BufferMemory(0, kMiB), std::invalid_argument);
  EXPECT_THROW(BufferMemory(kMiB, 0), std::invalid_argument);
}

TEST(BufferMemory, AllocateAndFreeTrackOccupancyHighWaterAndFull) {
  BufferMemory b(3 * kMiB, kMiB);  // 3 slots
  const sc_core::sc_time t0 = sc_core::SC_ZERO_TIME;
  b.allocate(7, t0);
  EXPECT_TRUE(b.holds(7));
  EXPECT_FALSE(b.holds(8));
  EXPECT_EQ(b.occupancy_bytes(), kMiB);
  b.allocate(8, t0);
  EXPECT_FALSE(b.full());
  b.allocate((1ull << 32) | 7, t0);  // step 1, chunk 7: a different key from step 0's
  EXPECT_TRUE(b.full());
  EXPECT_EQ(b.occupancy_bytes(), 3 * kMiB);
  EXPECT_EQ(b.high_water_bytes(), 3 * kMiB);
  EXPECT_EQ(b.allocations(), 3u);

  b.free(8, ps_time(10 * kNs));
  EXPECT_FALSE(b.full());
  EXPECT_FALSE(b.holds(8));
  EXPECT_TRUE(b.holds(7));
  EXPECT_EQ(b.occupancy_bytes(), 2 * kMiB);
  EXPECT_EQ(b.high_water_bytes(), 3 * kMiB);  // a mark, not the current level

  // The freed key can be taken again: a new allocation.
  b.allocate(8, ps_time(20 * kNs));
  EXPECT_TRUE(b.full());
  EXPECT_EQ(b.allocations(), 4u);
  EXPECT_EQ(b.high_water_bytes(), 3 * kMiB);

  b.free(7, ps_time(30 * kNs));
  b.free(8, ps_time(30 * kNs));
  b.free((1ull << 32) | 7, ps_time(30 * kNs));
  EXPECT_EQ(b.occupancy_bytes(), 0u);
  EXPECT_FALSE(b.full());
  EXPECT_EQ(b.hold_time_ns().count(), 4u);
}

TEST(BufferMemory, HoldTimeHistogramRecordsAllocationToFree) {
  BufferMemory b(4 * kMiB, kMiB);
  b.allocate(1, ps_time(0));
  b.allocate(2, ps_time(500 * kNs));
  b.free(1, ps_time(1000 * kNs));  // held 1000 ns
  b.free(2, ps_time(3500 * kNs));  // held 3000 ns
  const Histogram& h = b.hold_time_ns();
  EXPECT_EQ(h.count(), 2u);
  EXPECT_DOUBLE_EQ(h.min(), 1000.0);
  EXPECT_DOUBLE_EQ(h.max(), 3000.0);
  EXPECT_DOUBLE_EQ(h.mean(), 2000.0);
  // Bucket b counts [2^(b-1), 2^b): 1000 ns in [512, 1024) = bucket 10, 3000 ns in
  // [2048, 4096) = bucket 12.
  ASSERT_EQ(h.buckets().size(), 13u);
  EXPECT_EQ(h.buckets()[10], 1u);
  EXPECT_EQ(h.buckets()[12], 1u);
  EXPECT_EQ(h.buckets()[11], 0u);
}

TEST(BufferMemory, HoldTimeIsExactToThePicosecond) {
  BufferMemory b(kMiB, kMiB);
  b.allocate(1, ps_time(1));
  b.free(1, ps_time(81'896'001));  // 81'896'000 ps = 81'896 ns
  EXPECT_DOUBLE_EQ(b.hold_time_ns().max(), 81'896.0);
}

TEST(BufferMemory, FreeingAKeyNotHeldChangesNothing) {
  BufferMemory b(2 * kMiB, kMiB);
  b.allocate(1, ps_time(0));
  b.free(2, ps_time(1000));
  EXPECT_EQ(b.occupancy_bytes(), kMiB);
  EXPECT_EQ(b.hold_time_ns().count(), 0u);
  b.free(1, ps_time(1000));
  b.free(1, ps_time(2000));  // twice: the second is no-op
  EXPECT_EQ(b.occupancy_bytes(), 0u);
  EXPECT_EQ(b.hold_time_ns().count(), 1u);
}

// allocate() documents the precondition !holds(key); a caller that breaks it (the
// FpgaAggregator checks holds() first, so the model itself does not) must not leave the
// books inconsistent, whether allocate() rejects the call or ignores it.
TEST(BufferMemory, AllocatingAnAlreadyHeldKeyKeepsTheBooksConsistent) {
  BufferMemory b(4 * kMiB, kMiB);
  b.allocate(1, ps_time(0));
  try {
    b.allocate(1, ps_time(100));
  } catch (const std::logic_error&) {
    // Rejecting the call is fine too.
  }
  EXPECT_EQ(b.occupancy_bytes(), kMiB);  // one key held: one slot
  EXPECT_EQ(b.high_water_bytes(), kMiB);
  b.free(1, ps_time(1000));
  EXPECT_EQ(b.occupancy_bytes(), 0u);  // nothing held: nothing occupied
}

// Likewise !full(): a slot allocated beyond the capacity would report occupancy and a
// high-water mark above the buffer size.
TEST(BufferMemory, AllocatingWhenFullNeverReportsMoreThanTheCapacity) {
  BufferMemory b(2 * kMiB, kMiB);
  b.allocate(1, ps_time(0));
  b.allocate(2, ps_time(0));
  ASSERT_TRUE(b.full());
  try {
    b.allocate(3, ps_time(0));
  } catch (const std::logic_error&) {
  }
  EXPECT_LE(b.occupancy_bytes(), b.capacity_bytes());
  EXPECT_LE(b.high_water_bytes(), b.capacity_bytes());
}

// SlotTable: a key (step, chunk) lives in entry (chunk + step x 0x9E3779B9) mod capacity;
// the array starts at 16 entries and doubles up to its bound.
constexpr std::uint64_t key(std::uint64_t step, std::uint64_t chunk) { return step << 32 | chunk; }

TEST(SlotTable, ChunksOfAStepTakeTheirOwnEntriesAndStepsAreDistinctKeys) {
  SlotTable<int> t(16);
  for (int c = 0; c < 16; ++c) t.insert(key(0, c)) = 100 + c;
  EXPECT_EQ(t.size(), 16u);
  EXPECT_EQ(t.capacity(), 16u);
  EXPECT_EQ(t.overflowed(), 0u);  // 16 consecutive chunks: 16 distinct entries
  for (int c = 0; c < 16; ++c) ASSERT_EQ(*t.find(key(0, c)), 100 + c);
  EXPECT_EQ(t.find(key(1, 0)), nullptr);  // same chunk, next step: another key
  EXPECT_EQ(t.find(key(0, 16)), nullptr);
}

TEST(SlotTable, ACollisionAtTheBoundGoesToTheOverflowAndStaysFindable) {
  SlotTable<int> t(16);  // bound = initial size: never grows
  for (int c = 0; c < 16; ++c) t.insert(key(0, c)) = c;
  t.insert(key(0, 16)) = 16;  // 16 mod 16 = entry 0, held by chunk 0
  EXPECT_EQ(t.capacity(), 16u);
  EXPECT_EQ(t.overflowed(), 1u);
  EXPECT_EQ(t.size(), 17u);
  EXPECT_EQ(*t.find(key(0, 16)), 16);
  EXPECT_EQ(*t.find(key(0, 0)), 0);
  // Freeing the entry's holder does not lose the overflowed key.
  EXPECT_TRUE(t.erase(key(0, 0)));
  EXPECT_EQ(t.find(key(0, 0)), nullptr);
  EXPECT_EQ(*t.find(key(0, 16)), 16);
  EXPECT_TRUE(t.erase(key(0, 16)));
  EXPECT_FALSE(t.erase(key(0, 16)));
  EXPECT_EQ(t.overflowed(), 0u);
  EXPECT_EQ(t.size(), 15u);
}

TEST(SlotTable, ACollisionBelowTheBoundDoublesTheArray) {
  SlotTable<int> t(100);  // bound: 64 (a power of two)
  t.insert(key(0, 0)) = 1;
  t.insert(key(0, 16)) = 2;  // entry 0 of 16: grow to 32, where chunk 16 has entry 16
  EXPECT_EQ(t.capacity(), 32u);
  t.insert(key(0, 32)) = 3;  // entry 0 of 32: grow to 64
  EXPECT_EQ(t.capacity(), 64u);
  t.insert(key(0, 64)) = 4;  // entry 0 of 64, at the bound: overflow
  EXPECT_EQ(t.capacity(), 64u);
  EXPECT_EQ(t.overflowed(), 1u);
  EXPECT_EQ(*t.find(key(0, 0)), 1);  // rehashed entries keep their values
  EXPECT_EQ(*t.find(key(0, 16)), 2);
  EXPECT_EQ(*t.find(key(0, 32)), 3);
  EXPECT_EQ(*t.find(key(0, 64)), 4);
}

// The key ~0 marks a free entry: as a key of its own it lives in the overflow map,
// found, kept across the array's growth and erased like any other.
TEST(SlotTable, TheKeyThatMarksAFreeEntryIsAKeyLikeTheOthers) {
  SlotTable<int> t(64);
  constexpr std::uint64_t kAllOnes = ~std::uint64_t{0};
  EXPECT_EQ(t.find(kAllOnes), nullptr);  // not every free entry's key
  t.insert(kAllOnes) = 7;
  EXPECT_EQ(t.capacity(), 16u);  // no growth for it
  EXPECT_EQ(t.overflowed(), 1u);
  t.insert(key(0, 0)) = 1;
  t.insert(key(0, 16)) = 2;  // grows to 32
  EXPECT_EQ(t.capacity(), 32u);
  EXPECT_EQ(*t.find(kAllOnes), 7);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_TRUE(t.erase(kAllOnes));
  EXPECT_EQ(t.find(kAllOnes), nullptr);
  EXPECT_FALSE(t.erase(kAllOnes));
  EXPECT_EQ(*t.find(key(0, 0)), 1);
  EXPECT_EQ(t.size(), 2u);
}

TEST(SlotTable, AFreedEntryIsReusedWithItsValueObject) {
  SlotTable<std::vector<int>> t(16);
  auto& v = t.insert(key(0, 3));
  v.assign(1000, 7);
  const int* storage = v.data();
  t.erase(key(0, 3));
  EXPECT_EQ(t.find(key(0, 3)), nullptr);
  auto& again = t.insert(key(0, 19));  // 19 mod 16 = entry 3: the freed one, no overflow
  EXPECT_EQ(t.overflowed(), 0u);
  EXPECT_EQ(again.data(), storage);  // the same vector: its capacity is kept
  EXPECT_GE(again.capacity(), 1000u);
  EXPECT_EQ(t.size(), 1u);
}

// Side words: zero for a new key, kept for each key across the array's growth, a widening
// and the overflow map, and zero again for a key taking a freed entry.
TEST(SlotTable, SideWordsStayWithTheirKeyThroughGrowthWideningAndOverflow) {
  SlotTable<int> t(32);  // bound: 32
  EXPECT_EQ(t.side_words(), 0u);
  t.widen_side(2);
  ASSERT_EQ(t.side_words(), 2u);
  auto side = [&](std::uint64_t k) { return t.find_with_side(k).side; };
  t.insert(key(0, 0)) = 0;
  EXPECT_EQ(side(key(0, 0))[0], 0u);
  EXPECT_EQ(side(key(0, 0))[1], 0u);
  side(key(0, 0))[0] = 10;
  side(key(0, 0))[1] = 11;
  t.insert(key(0, 16)) = 16;  // entry 0 of 16: grows to 32
  ASSERT_EQ(t.capacity(), 32u);
  side(key(0, 16))[1] = 161;
  t.insert(key(0, 32)) = 32;  // entry 0 of 32, at the bound: overflow
  ASSERT_EQ(t.overflowed(), 1u);
  side(key(0, 32))[0] = 320;
  t.widen_side(3);  // the held keys' words kept, the third zero
  for (const auto& [k, words] : std::vector<std::pair<std::uint64_t, std::vector<std::uint64_t>>>{
           {key(0, 0), {10, 11, 0}}, {key(0, 16), {0, 161, 0}}, {key(0, 32), {320, 0, 0}}}) {
    const std::uint64_t* s = side(k);
    EXPECT_EQ(std::vector<std::uint64_t>(s, s + 3), words) << k;
  }
  EXPECT_EQ(*t.find(key(0, 32)), 32);
  t.erase(key(0, 16));
  t.insert(key(1, 23)) = 7;  // 23 + 0x9E3779B9 = 48 mod 32: entry 16 again, zeroed
  const std::uint64_t* s = side(key(1, 23));
  EXPECT_EQ(std::vector<std::uint64_t>(s, s + 3), (std::vector<std::uint64_t>{0, 0, 0}));
  EXPECT_EQ(t.overflowed(), 1u);
}

}  // namespace
}  // namespace aggnet
