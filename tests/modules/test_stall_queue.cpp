// StallQueue against a plain vector in arrival order (a second method): random pushes,
// front pops and takes of one chunk's contributions must hand out the same contributions
// in the same order, and the queue must report the same size throughout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <systemc>
#include <vector>

#include "modules/core/time.h"
#include "modules/fpga/stall_queue.h"

namespace aggnet {
namespace {

using Stalled = StallQueue::Stalled;

bool same(const Stalled& a, const Stalled& b) {
  return a.trans == b.trans && a.since == b.since && a.key == b.key && a.order == b.order;
}

TEST(StallQueue, HandsOutWhatAVectorInArrivalOrderWould) {
  std::mt19937_64 rng(11);
  std::vector<tlm::tlm_generic_payload> payloads(64);
  for (int trial = 0; trial < 50; ++trial) {
    StallQueue queue;
    std::vector<Stalled> reference;
    std::uint64_t order = 0;
    for (int op = 0; op < 400; ++op) {
      const auto choice = rng() % 10;
      if (choice < 5) {  // push: a few chunks, so takes find several
        auto& trans = payloads[rng() % payloads.size()];
        const sc_core::sc_time since = ps_time(static_cast<std::uint64_t>(op));
        const std::uint64_t key = rng() % 6;
        queue.push(trans, since, key);
        reference.push_back({&trans, since, key, order++});
      } else if (choice < 8) {
        if (reference.empty()) continue;
        ASSERT_TRUE(same(queue.pop_front(), reference.front()));
        reference.erase(reference.begin());
      } else {
        const std::uint64_t key = rng() % 6;
        std::vector<Stalled> taken;
        queue.take_key(key, taken);
        std::vector<Stalled> expected;
        std::copy_if(reference.begin(), reference.end(), std::back_inserter(expected),
                     [key](const Stalled& s) { return s.key == key; });
        reference.erase(std::remove_if(reference.begin(), reference.end(),
                                       [key](const Stalled& s) { return s.key == key; }),
                        reference.end());
        ASSERT_EQ(taken.size(), expected.size());
        for (std::size_t i = 0; i < taken.size(); ++i) ASSERT_TRUE(same(taken[i], expected[i]));
      }
      ASSERT_EQ(queue.size(), reference.size());
      ASSERT_EQ(queue.empty(), reference.empty());
    }
  }
}

TEST(StallQueue, APopSkipsContributionsTakenAhead) {
  std::vector<tlm::tlm_generic_payload> p(3);
  StallQueue queue;
  queue.push(p[0], sc_core::SC_ZERO_TIME, 7);
  queue.push(p[1], sc_core::SC_ZERO_TIME, 8);
  queue.push(p[2], sc_core::SC_ZERO_TIME, 7);
  std::vector<Stalled> taken;
  queue.take_key(7, taken);
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken[0].trans, &p[0]);
  EXPECT_EQ(taken[1].trans, &p[2]);
  ASSERT_EQ(queue.size(), 1u);
  EXPECT_EQ(queue.pop_front().trans, &p[1]);
  EXPECT_TRUE(queue.empty());
}

}  // namespace
}  // namespace aggnet
