// ArrivalQueue against exact instants: each transaction is handed to the callback at
// now + delay of its notify(), in notify order (ties included); zero delays, notifies
// from inside the callback, and times going backwards.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "modules/core/arrival_queue.h"
#include "modules/core/chunk.h"
#include "modules/core/delivery_hint.h"
#include "modules/core/event_calendar.h"
#include "modules/core/time.h"

namespace aggnet {
namespace {

using sc_core::sc_time;

struct Delivery {
  std::uint64_t at_ps;
  std::uint32_t id;
};

/// Calls notify(trans id, delay) at the given instants; records what the queue delivers.
struct Harness : sc_core::sc_module {
  struct Post {
    std::uint64_t at_ps;       ///< when notify() is called
    std::uint64_t delay_ps;    ///< its delay
    std::uint32_t id;          ///< carried in the chunk index
    bool clear_first = false;  ///< clear() the queue (its items to `cleared`) before
  };
  std::vector<Post> posts;
  std::vector<Delivery> deliveries;
  std::vector<std::string> errors;      ///< what notify() threw
  std::vector<std::size_t> size_after;  ///< queue size right after each post
  std::vector<std::uint32_t> cleared;   ///< ids clear() removed
  /// Called on each delivery before it is recorded (may notify again).
  std::function<void(tlm::tlm_generic_payload&)> on_delivery;
  ChunkPool pool;
  ArrivalQueue queue;

  SC_HAS_PROCESS(Harness);
  explicit Harness(sc_core::sc_module_name n)
      : sc_module(n), queue("queue", [this](tlm::tlm_generic_payload& t) { deliver(t); }) {
    SC_THREAD(run);
  }
  void post(std::uint64_t delay_ps, std::uint32_t id) {
    auto& t = pool.allocate();
    chunk_of(t).chunk = id;
    try {
      queue.notify(t, ps_time(delay_ps));
    } catch (const std::logic_error& e) {
      errors.push_back(e.what());
      t.release();
    }
  }
  void run() {
    for (const auto& p : posts) {
      wait(ps_time(p.at_ps) - sc_core::sc_time_stamp());
      if (p.clear_first) {
        queue.clear([this](tlm::tlm_generic_payload& t) {
          cleared.push_back(chunk_of(t).chunk);
          t.release();
        });
      }
      post(p.delay_ps, p.id);
      size_after.push_back(queue.size());
    }
  }
  void deliver(tlm::tlm_generic_payload& t) {
    deliveries.push_back({to_ps(EventCalendar::now()), chunk_of(t).chunk});
    if (on_delivery) on_delivery(t);
    t.release();
  }
};

TEST(ArrivalQueue, DeliversEachTransactionAtNotifyTimePlusDelayInOrder) {
  Harness h("h");
  // At 0: ids 1 (+5 ns), 2 (+5 ns, a tie: after 1), 3 (+7 ns); at 3 ns: id 4 (+6 ns = 9 ns);
  // at 20 ns, with the queue drained: id 5 (+1 ps).
  h.posts = {{0, 5000, 1}, {0, 5000, 2}, {0, 7000, 3}, {3000, 6000, 4}, {20'000, 1, 5}};
  sc_core::sc_start();
  ASSERT_EQ(h.deliveries.size(), 5u);
  const std::uint64_t at[] = {5000, 5000, 7000, 9000, 20'001};
  for (std::uint32_t i = 0; i < 5; ++i) {
    EXPECT_EQ(h.deliveries[i].id, i + 1) << i;
    EXPECT_EQ(h.deliveries[i].at_ps, at[i]) << i;
  }
  EXPECT_TRUE(h.errors.empty());
  // Pending after each post: 1, 2, 3, then 4 (nothing due before 5 ns), then 1.
  EXPECT_EQ(h.size_after, (std::vector<std::size_t>{1, 2, 3, 4, 1}));
  EXPECT_EQ(h.queue.size(), 0u);
  EXPECT_EQ(sc_core::sc_time_stamp(), ps_time(20'001));
}

TEST(ArrivalQueue, ZeroDelayIsDeliveredAtTheSameInstant) {
  Harness h("h");
  h.posts = {{4000, 0, 1}, {4000, 0, 2}};
  sc_core::sc_start();
  ASSERT_EQ(h.deliveries.size(), 2u);
  EXPECT_EQ(h.deliveries[0].at_ps, 4000u);
  EXPECT_EQ(h.deliveries[0].id, 1u);
  EXPECT_EQ(h.deliveries[1].at_ps, 4000u);
  EXPECT_EQ(h.deliveries[1].id, 2u);
}

TEST(ArrivalQueue, AnEarlierInstantThanThePendingLastIsRejected) {
  Harness h("h");
  // At 0: id 1 at 10 ns; at 2 ns: id 2 at 2 + 5 = 7 ns < 10 ns: out of order.
  // At 10 ns (id 1 delivered, queue empty): id 3 at 10 ns + 0 is fine again.
  h.posts = {{0, 10'000, 1}, {2000, 5000, 2}, {10'000, 0, 3}};
  sc_core::sc_start();
  ASSERT_EQ(h.errors.size(), 1u);
  EXPECT_NE(h.errors[0].find("out of time order"), std::string::npos) << h.errors[0];
  ASSERT_EQ(h.deliveries.size(), 2u);
  EXPECT_EQ(h.deliveries[0].id, 1u);
  EXPECT_EQ(h.deliveries[0].at_ps, 10'000u);
  EXPECT_EQ(h.deliveries[1].id, 3u);
  EXPECT_EQ(h.deliveries[1].at_ps, 10'000u);
}

TEST(ArrivalQueue, TheOrderIsCheckedAgainstTheLastPendingNotTheFirst) {
  Harness h("h");
  // At 0: id 1 at 10 ns, id 2 at 20 ns; at 1 ns: id 3 at 16 ns, after id 1 but before
  // id 2: rejected. At 2 ns: id 4 at 2 + 18 = 20 ns, a tie with the last: accepted.
  h.posts = {{0, 10'000, 1}, {0, 20'000, 2}, {1000, 15'000, 3}, {2000, 18'000, 4}};
  sc_core::sc_start();
  ASSERT_EQ(h.errors.size(), 1u);
  EXPECT_NE(h.errors[0].find("out of time order"), std::string::npos) << h.errors[0];
  ASSERT_EQ(h.deliveries.size(), 3u);
  const std::uint32_t ids[] = {1, 2, 4};
  const std::uint64_t at[] = {10'000, 20'000, 20'000};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(h.deliveries[i].id, ids[i]) << i;
    EXPECT_EQ(h.deliveries[i].at_ps, at[i]) << i;
  }
}

TEST(ArrivalQueue, ClearedItTakesAnEarlierInstantThanItsLastAgain) {
  Harness h("h");
  // At 0: ids 1 and 2 at 10 and 20 ns; at 1 ns the queue is cleared (both removed) and
  // id 3 posted at 1 + 2 = 3 ns, before the 20 ns of the last item cleared: accepted.
  // Then, still at 1 ns, id 4 at 2 ns is before id 3 (pending): rejected; id 5 at 4 ns
  // is fine.
  h.posts = {
      {0, 10'000, 1}, {0, 20'000, 2}, {1000, 2000, 3, true}, {1000, 1000, 4}, {1000, 3000, 5}};
  sc_core::sc_start();
  ASSERT_EQ(h.errors.size(), 1u);
  EXPECT_NE(h.errors[0].find("out of time order"), std::string::npos) << h.errors[0];
  EXPECT_EQ(h.cleared, (std::vector<std::uint32_t>{1, 2}));
  ASSERT_EQ(h.deliveries.size(), 2u);
  EXPECT_EQ(h.deliveries[0].id, 3u);
  EXPECT_EQ(h.deliveries[0].at_ps, 3000u);
  EXPECT_EQ(h.deliveries[1].id, 5u);
  EXPECT_EQ(h.deliveries[1].at_ps, 4000u);
}

TEST(ArrivalQueue, NotifyFromTheCallbackChainsDeliveries) {
  // A serial pipeline re-arms from its own output: each delivery of id k < 4 notifies
  // id k + 1 three ns later (queue empty) and, for id 1, also id 10 at +3 ns (a tie with
  // id 2, after it) and id 11 at +0 (same instant: delivered in this same pass).
  Harness h("h");
  h.posts = {{1000, 1000, 1}};
  h.on_delivery = [&h](tlm::tlm_generic_payload& t) {
    const std::uint32_t id = chunk_of(t).chunk;
    if (id == 1) {
      h.post(0, 11);
      h.post(3000, 2);
      h.post(3000, 10);
    } else if (id >= 2 && id < 4) {
      h.post(3000, id + 1);
    }
  };
  sc_core::sc_start();
  EXPECT_TRUE(h.errors.empty());
  // id 1 at 2 ns; id 11 at 2 ns; ids 2 and 10 at 5 ns; id 3 at 8 ns; id 4 at 11 ns.
  ASSERT_EQ(h.deliveries.size(), 6u);
  const std::uint32_t ids[] = {1, 11, 2, 10, 3, 4};
  const std::uint64_t at[] = {2000, 2000, 5000, 5000, 8000, 11'000};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(h.deliveries[i].id, ids[i]) << i;
    EXPECT_EQ(h.deliveries[i].at_ps, at[i]) << i;
  }
}

TEST(ArrivalQueue, NotifyFromTheCallbackKeepsTheEarlierBacklogOnTime) {
  // Ids 1 (5 ns) and 2 (8 ns) queued; id 1's delivery notifies id 3 at 5 + 4 = 9 ns while
  // id 2 still waits: id 2 must arrive at 8 ns, not with id 3 (found by a helper's probe).
  Harness h("h");
  h.posts = {{0, 5000, 1}, {0, 8000, 2}};
  h.on_delivery = [&h](tlm::tlm_generic_payload& t) {
    if (chunk_of(t).chunk == 1) h.post(4000, 3);
  };
  sc_core::sc_start();
  EXPECT_TRUE(h.errors.empty());
  ASSERT_EQ(h.deliveries.size(), 3u);
  const std::uint64_t at[] = {5000, 8000, 9000};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(h.deliveries[i].id, i + 1) << i;
    EXPECT_EQ(h.deliveries[i].at_ps, at[i]) << i;
  }
}

}  // namespace
}  // namespace aggnet

namespace aggnet {
namespace {

struct Tag {
  std::uint64_t value;
};

/// A queue with a record per transaction: ids 1..3 posted at 0 with delays 1, 1 and 2 ns,
/// id 4 at 1.5 ns with 1 ns; each with record id * 10.
struct RecordHarness : sc_core::sc_module {
  ChunkPool pool;
  BasicArrivalQueue<Tag> queue;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> deliveries;  // (id, record)
  std::vector<std::uint64_t> at_ps;

  SC_HAS_PROCESS(RecordHarness);
  explicit RecordHarness(sc_core::sc_module_name n)
      : sc_module(n), queue("queue", [this](tlm::tlm_generic_payload& t, const Tag& tag) {
          deliveries.emplace_back(chunk_of(t).chunk, tag.value);
          at_ps.push_back(to_ps(EventCalendar::now()));
          t.release();
        }) {
    SC_THREAD(run);
  }
  void post(std::uint32_t id, std::uint64_t delay_ps) {
    auto& t = pool.allocate();
    chunk_of(t).chunk = id;
    queue.notify(t, ps_time(delay_ps), Tag{id * 10u});
  }
  void run() {
    post(1, 1000);
    post(2, 1000);
    post(3, 2000);
    wait(ps_time(1500));
    post(4, 1000);
  }
};

TEST(ArrivalQueue, ARecordTravelsWithItsTransaction) {
  RecordHarness h("h");
  sc_core::sc_start();
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> expected = {
      {1, 10}, {2, 20}, {3, 30}, {4, 40}};
  EXPECT_EQ(h.deliveries, expected);
  EXPECT_EQ(h.at_ps, (std::vector<std::uint64_t>{1000, 1000, 2000, 2500}));
}

}  // namespace
}  // namespace aggnet

// A delivery's hint is what the first module claiming one names; claims outside a delivery
// and after the first are ignored, and none survives the delivery.
TEST(DeliveryHint, TheFirstClaimDuringADeliveryIsItsHint) {
  using aggnet::DeliveryHint;
  const int switch_state = 0, link_state = 0, later_state = 0;
  const void* hint = nullptr;
  DeliveryHint::claim(&later_state);  // no delivery under way
  {
    const DeliveryHint::Delivering delivering(&hint);
    DeliveryHint::claim(&switch_state);
    DeliveryHint::claim(&link_state);
  }
  EXPECT_EQ(hint, &switch_state);
  { const DeliveryHint::Delivering delivering(&hint); }
  DeliveryHint::claim(&later_state);
  EXPECT_EQ(hint, &switch_state);
}
