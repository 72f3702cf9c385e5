// RadixHeap and CalendarQueue against std::set (a second method): a random discrete-event
// run takes the same entries in the same order, through ties at one instant, the queue's
// switches between its 4-ary heap and its radix heap, and removals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "modules/core/calendar_queue.h"
#include "modules/core/radix_heap.h"

namespace aggnet {
namespace {

__extension__ using Key = unsigned __int128;

struct Entry {
  Key key;
  const int* client;
};

Key key_of(std::uint64_t instant, std::uint64_t order) { return (Key{instant} << 64) | order; }

// Next instants as a calendar sees them: often now (a tie), often a little later, sometimes
// far later (a propagation delay).
std::uint64_t next_instant(std::mt19937_64& rng, std::uint64_t now) {
  switch (rng() % 4) {
    case 0:
      return now;
    case 1:
      return now + rng() % 100;
    case 2:
      return now + rng() % 100'000;
    default:
      return now + rng() % 50'000'000'000;
  }
}

TEST(RadixHeap, TakesItemsInKeyOrderLikeASortedSet) {
  std::mt19937_64 rng(7);
  RadixHeap<Entry> heap;
  std::set<Key> reference;
  std::uint64_t order = 0, now = 0;
  // Grows to about 400 items, then drains: every size on the way is seen with pushes
  // (some below the current least) between the takes.
  for (int round = 0; round < 20'000; ++round) {
    const int pushes = round < 10'000 ? static_cast<int>(rng() % 3) : static_cast<int>(rng() % 2);
    for (int k = 0; k < pushes; ++k) {
      const Key key = key_of(next_instant(rng, now), order++);
      heap.push({key, nullptr});
      reference.insert(key);
    }
    if (reference.empty()) continue;
    ASSERT_EQ(heap.size(), reference.size());
    ASSERT_TRUE(heap.top().key == *reference.begin()) << round;
    const Entry taken = heap.pop();
    ASSERT_TRUE(taken.key == *reference.begin()) << round;
    reference.erase(reference.begin());
    now = static_cast<std::uint64_t>(taken.key >> 64);
  }
  while (!reference.empty()) {
    ASSERT_TRUE(heap.pop().key == *reference.begin());
    reference.erase(reference.begin());
  }
  EXPECT_TRUE(heap.empty());
}

// Items at the instant reached leave in key order however they came: spread there from a
// bucket in a shuffled order, and added there out of order (a firing client's own next
// entry, keyed before the entries its callback made).
TEST(RadixHeap, TiesAtTheInstantReachedLeaveInKeyOrder) {
  RadixHeap<Entry> heap;
  std::vector<std::uint64_t> orders(50);
  for (std::size_t i = 0; i < orders.size(); ++i) orders[i] = 2 * i + 2;
  std::shuffle(orders.begin(), orders.end(), std::mt19937_64(3));
  heap.push({key_of(5, 0), nullptr});
  for (std::uint64_t order : orders) heap.push({key_of(1'000, order), nullptr});
  EXPECT_TRUE(heap.pop().key == key_of(5, 0));
  EXPECT_TRUE(heap.pop().key == key_of(1'000, 2));  // instant 1,000 reached
  heap.push({key_of(1'000, 200), nullptr});
  heap.push({key_of(1'000, 5), nullptr});
  heap.push({key_of(1'000, 3), nullptr});
  std::vector<std::uint64_t> taken;
  while (!heap.empty()) taken.push_back(static_cast<std::uint64_t>(heap.pop().key));
  ASSERT_EQ(taken.size(), 52u);
  EXPECT_TRUE(std::is_sorted(taken.begin(), taken.end()));
  EXPECT_EQ(taken.front(), 3u);
  EXPECT_EQ(taken.back(), 200u);
}

TEST(RadixHeap, RefusesAKeyBelowTheLastTaken) {
  RadixHeap<Entry> heap;
  heap.push({key_of(10, 1), nullptr});
  heap.pop();
  EXPECT_THROW(heap.push({key_of(9, 2), nullptr}), std::logic_error);
  EXPECT_NO_THROW(heap.push({key_of(10, 3), nullptr}));
}

TEST(RadixHeap, RemovesTheItemAsked) {
  const int a = 0, b = 0, c = 0;
  RadixHeap<Entry> heap;
  heap.push({key_of(5, 0), &a});
  heap.push({key_of(3, 1), &b});
  heap.push({key_of(4, 2), &c});
  EXPECT_TRUE(heap.top().client == &b);  // the least is known before the removal
  EXPECT_TRUE(heap.remove_if_first([&](const Entry& e) { return e.client == &b; }));
  EXPECT_FALSE(heap.remove_if_first([&](const Entry& e) { return e.client == &b; }));
  EXPECT_EQ(heap.pop().client, &c);
  EXPECT_EQ(heap.pop().client, &a);
  EXPECT_TRUE(heap.empty());
}

// The calendar's protocol: fire the top, which usually schedules itself again (held until
// its callback ends) and sometimes others; clients come and go so that the queue's size
// crosses both switching thresholds many times.
TEST(CalendarQueue, FiresInKeyOrderAcrossItsSwitchesBetweenHeapAndRadixHeap) {
  std::mt19937_64 rng(11);
  std::vector<int> clients(600);
  CalendarQueue<Entry> queue;
  std::set<std::pair<Key, const int*>> reference;
  std::uint64_t order = 0, now = 0;
  std::size_t next_client = 0, largest = 0, smallest_after_largest = ~std::size_t{0};
  int switches = 0;
  bool radix = false;
  int named[2] = {0, 0};  // next entries named, heap and radix form
  auto schedule = [&](const int* client, std::uint64_t at, bool held, Entry* hold) {
    const Entry entry{key_of(at, order++), client};
    reference.insert({entry.key, client});
    if (held) {
      *hold = entry;
    } else {
      queue.push(entry);
    }
  };
  for (int round = 0; round < 40'000; ++round) {
    // The size follows a triangle wave between 0 and 400 entries (period 4,000 firings).
    const int phase = round % 4'000;
    const std::size_t target =
        static_cast<std::size_t>(phase < 2'000 ? phase / 5 : (4'000 - phase) / 5);
    const bool grow = queue.size() < target;
    if (grow || queue.empty()) {
      schedule(&clients[next_client], next_instant(rng, now), false, nullptr);
      next_client = (next_client + 1) % clients.size();
    }
    largest = std::max(largest, queue.size());
    if (largest > 300) smallest_after_largest = std::min(smallest_after_largest, queue.size());
    ASSERT_EQ(queue.size(), reference.size());
    const Entry top = queue.top();
    ASSERT_TRUE(top.key == reference.begin()->first) << round;
    reference.erase(reference.begin());
    now = static_cast<std::uint64_t>(top.key >> 64);
    queue.begin_firing();
    // What the calendar prefetches while this entry fires: the least entry left (none
    // named while the heap is small).
    if (const Entry* next = queue.next_entry()) {
      ASSERT_FALSE(reference.empty()) << round;
      ASSERT_TRUE(next->key == reference.begin()->first) << round;
      ++named[queue.in_radix_form()];
    }
    Entry again{};
    const bool rearm = grow || rng() % 2 == 0;
    if (rearm) schedule(top.client, next_instant(rng, now), true, &again);
    if (grow && rng() % 5 == 0) {  // another client, scheduled from this callback
      schedule(&clients[next_client], next_instant(rng, now), false, nullptr);
      next_client = (next_client + 1) % clients.size();
    }
    queue.end_firing(rearm ? &again : nullptr);
    switches += queue.in_radix_form() != radix;
    radix = queue.in_radix_form();
  }
  EXPECT_GE(switches, 10);                 // both ways, several times
  EXPECT_GT(largest, 300u);                // the radix heap held them
  EXPECT_LT(smallest_after_largest, 48u);  // and the heap again
  EXPECT_GT(named[0], 1'000);
  EXPECT_GT(named[1], 1'000);
}

TEST(CalendarQueue, RemovesAClientInEitherForm) {
  for (const int n : {5, 200}) {  // below and above the switch to the radix heap
    std::vector<int> clients(static_cast<std::size_t>(n));
    CalendarQueue<Entry> queue;
    std::uint64_t order = 0;
    for (auto& c : clients) {
      queue.push({key_of(1'000 - order, order), &c});
      ++order;
    }
    // One firing: the size check that switches forms runs at its end.
    queue.begin_firing();
    queue.end_firing(nullptr);
    EXPECT_EQ(queue.in_radix_form(), n > 128) << n;
    const int* victim = &clients[static_cast<std::size_t>(n) / 2];
    EXPECT_TRUE(queue.remove(victim, false)) << n;
    EXPECT_FALSE(queue.remove(victim, false)) << n;
    Key last = 0;
    std::size_t taken = 0;
    while (!queue.empty()) {
      const Entry top = queue.top();
      EXPECT_NE(top.client, victim);
      EXPECT_TRUE(top.key > last);
      last = top.key;
      queue.begin_firing();
      queue.end_firing(nullptr);
      ++taken;
    }
    EXPECT_EQ(taken, static_cast<std::size_t>(n) - 2) << n;
  }
}

}  // namespace
}  // namespace aggnet
