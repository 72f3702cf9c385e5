// Retransmitter alone: timers per (step, receiver, chunk), the copy sent again at expiry
// with the timeout doubled up to 8x (binary exponential backoff), and a timer that expires
// while the sender's previous copy is still queued at its own edge, which waits for that
// copy to leave (plus the current timeout) instead of queueing another.
#include <gtest/gtest.h>

#include <cstdint>
#include <systemc>
#include <vector>

#include "modules/cluster/retransmitter.h"
#include "modules/core/time.h"

namespace aggnet {
namespace {

constexpr std::uint64_t kUs = 1'000'000;  // ps per microsecond

// Sends the copies (noting when) and acknowledges at a given instant.
struct Sender : sc_core::sc_module {
  std::vector<std::uint64_t> resent_at_ps;
  std::uint64_t queueing_ps = 0;  // how long a copy waits at the sender's edge
  Retransmitter retransmitter;
  SC_HAS_PROCESS(Sender);
  Sender(sc_core::sc_module_name name, std::uint64_t first_departure_ps, std::uint64_t ack_ps)
      : sc_module(name),
        retransmitter("retransmitter",
                      [this](int, int, std::uint32_t) {
                        resent_at_ps.push_back(to_ps(sc_core::sc_time_stamp()));
                        return sc_core::sc_time_stamp() + ps_time(queueing_ps);
                      }),
        first_departure_ps_(first_departure_ps),
        ack_ps_(ack_ps) {
    SC_THREAD(run);
  }
  void run() {
    retransmitter.track(0, 1, 7, 1 << 20, ps_time(10 * kUs), ps_time(first_departure_ps_));
    wait(ps_time(ack_ps_));
    EXPECT_TRUE(retransmitter.ack(0, 1, 7));
  }
  std::uint64_t first_departure_ps_, ack_ps_;
};

TEST(Retransmitter, AnUnacknowledgedCopyIsSentAgainWithTheTimeoutDoubled) {
  // T = 10 us: copies at 10, then 10 + 20 = 30 us; the next would be 30 + 40 = 70 us, after
  // the acknowledgement at 35 us.
  Sender sender("sender", 0, 35 * kUs);
  sc_core::sc_start();
  EXPECT_EQ(sender.resent_at_ps, (std::vector<std::uint64_t>{10 * kUs, 30 * kUs}));
  EXPECT_EQ(sender.retransmitter.timeouts(), 2u);
  EXPECT_EQ(sender.retransmitter.outstanding(), 0u);
}

TEST(Retransmitter, TheTimeoutStopsDoublingAtEightTimesTheFirst) {
  // Timeouts 10, 20, 40, 80, 80, ... us: copies at 10, 30, 70, 150, 230, 310, 390 us, and
  // the acknowledgement at 400 us ends it (a fixed timeout sent 40 copies).
  Sender sender("sender", 0, 400 * kUs);
  sc_core::sc_start();
  EXPECT_EQ(sender.resent_at_ps,
            (std::vector<std::uint64_t>{10 * kUs, 30 * kUs, 70 * kUs, 150 * kUs, 230 * kUs,
                                        310 * kUs, 390 * kUs}));
  EXPECT_EQ(Retransmitter::backoff_expiries(40.0), 7u);
}

TEST(Retransmitter, BackoffExpiriesCountsDoublingsThenTheCap) {
  // Expiries at 1, 3, 7, 15 timeouts, then every 8.
  EXPECT_EQ(Retransmitter::backoff_expiries(0.5), 0u);
  EXPECT_EQ(Retransmitter::backoff_expiries(1.0), 1u);
  EXPECT_EQ(Retransmitter::backoff_expiries(2.9), 1u);
  EXPECT_EQ(Retransmitter::backoff_expiries(3.0), 2u);
  EXPECT_EQ(Retransmitter::backoff_expiries(7.0), 3u);
  EXPECT_EQ(Retransmitter::backoff_expiries(15.0), 4u);
  EXPECT_EQ(Retransmitter::backoff_expiries(22.9), 4u);
  EXPECT_EQ(Retransmitter::backoff_expiries(23.0), 5u);
  EXPECT_EQ(Retransmitter::backoff_expiries(1007.0), 3u + 125u);
}

TEST(Retransmitter, ATimerWaitsForItsCopyToLeaveTheSendersEdge) {
  // Handed over at 0, the copy leaves at 25 us: the timer (10 us) expires at 10 us with the
  // copy still queued, so the first copy again goes at 25 + 10 = 35 us (timeout now 20 us);
  // the acknowledgement at 50 us comes before 35 + 20 = 55 us.
  Sender sender("sender", 25 * kUs, 50 * kUs);
  sender.queueing_ps = 7 * kUs;
  sc_core::sc_start();
  EXPECT_EQ(sender.resent_at_ps, (std::vector<std::uint64_t>{35 * kUs}));
  EXPECT_EQ(sender.retransmitter.timeouts(), 1u);
}

TEST(Retransmitter, ACopyStillQueuedAtExpiryDefersTheNextByItsDeparture) {
  // Each copy waits 35 us at the edge. The first left at 0: a copy at 10 us (leaves at
  // 45 us; timeout 20 us). Its timer expires at 30 us with it queued: the next goes at
  // 45 + 20 = 65 us (timeout 40 us), and the acknowledgement at 100 us comes before
  // 65 + 40 = 105 us. Never two copies queued.
  Sender sender("sender", 0, 100 * kUs);
  sender.queueing_ps = 35 * kUs;
  sc_core::sc_start();
  EXPECT_EQ(sender.resent_at_ps, (std::vector<std::uint64_t>{10 * kUs, 65 * kUs}));
}

// Four contributions to one receiver, handed over at 0, a fixed timeout T = 10 us, a window
// of 2 copies, every one acknowledged at 95 us. At 10 us all four expire: two copies go,
// two wait. At 20 us both copies expire and join the line with the two waiting; the
// lowest two go (0 and 1 again: the line is served lowest chunk first); and so on: two
// copies per T from 10 to 90 us, 18 (without the window: 4 every T, 36), never more than
// 2 in flight; 2 expiries put in line at each of the 9 instants.
struct WindowSender : sc_core::sc_module {
  std::vector<std::uint64_t> resent_at_ps;
  Retransmitter retransmitter;
  SC_HAS_PROCESS(WindowSender);
  WindowSender(sc_core::sc_module_name name, std::uint64_t max_window)
      : sc_module(name),
        retransmitter(
            "retransmitter",
            [this](int, int, std::uint32_t) {
              resent_at_ps.push_back(to_ps(sc_core::sc_time_stamp()));
              return sc_core::sc_time_stamp();
            },
            1, max_window) {
    SC_THREAD(run);
  }
  void run() {
    for (std::uint32_t c = 0; c < 4; ++c)
      retransmitter.track(0, 1, c, 1 << 20, ps_time(10 * kUs), sc_core::SC_ZERO_TIME);
    wait(ps_time(95 * kUs));
    in_flight_before_ack = retransmitter.copies_in_flight(1);
    for (std::uint32_t c = 0; c < 4; ++c) EXPECT_TRUE(retransmitter.ack(0, 1, c));
  }
  std::size_t in_flight_before_ack = 0;
};

TEST(Retransmitter, AWindowPerReceiverBoundsTheCopiesInFlight) {
  WindowSender sender("sender", 2);
  sc_core::sc_start();
  std::vector<std::uint64_t> expected;
  for (std::uint64_t t = 10; t <= 90; t += 10) expected.insert(expected.end(), 2, t * kUs);
  EXPECT_EQ(sender.resent_at_ps, expected);
  EXPECT_EQ(sender.retransmitter.counters().max_in_flight, 2u);
  EXPECT_EQ(sender.retransmitter.counters().window_waits, 2u * 9u);
  EXPECT_EQ(sender.in_flight_before_ack, 2u);
  EXPECT_EQ(sender.retransmitter.copies_in_flight(1), 0u);
  EXPECT_EQ(sender.retransmitter.outstanding(), 0u);
}

TEST(Retransmitter, WithoutAWindowEveryExpirySendsACopy) {
  WindowSender sender("sender", 0);
  sc_core::sc_start();
  EXPECT_EQ(sender.resent_at_ps.size(), 4u * 9u);
  EXPECT_EQ(sender.retransmitter.counters().window_waits, 0u);
}

// Negative acknowledgements (`drop`), T = 10 us, a window of 1 copy, chunks 0-3 of step 0
// to receiver 1 handed over at 0 (first sends: outside the window). At 1 us the receiver
// drops chunk 2 (its window ends at chunk 2): it goes in line and, nothing in flight, at
// once as a probe. At 2 us chunk 0 is dropped (end 2): in line, the window full. At 3 us
// the probe is dropped (end still 2): line {0, 2}, chunk 0 goes (the lowest, inside the
// end). At 4 us chunk 0 is added (end 3): chunk 2 goes. At 5 us chunk 2 is added (end 4);
// 1 and 3 are acknowledged at 6 us, before their first timers (10 us).
struct NackSender : sc_core::sc_module {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> resent;  // (us, chunk)
  Retransmitter retransmitter;
  SC_HAS_PROCESS(NackSender);
  explicit NackSender(sc_core::sc_module_name name)
      : sc_module(name),
        retransmitter(
            "retransmitter",
            [this](int, int, std::uint32_t chunk) {
              resent.emplace_back(to_ps(sc_core::sc_time_stamp()) / kUs, chunk);
              return sc_core::sc_time_stamp();
            },
            1, 1) {
    SC_THREAD(run);
  }
  void run() {
    for (std::uint32_t c = 0; c < 4; ++c)
      retransmitter.track(0, 1, c, 1 << 20, ps_time(10 * kUs), sc_core::SC_ZERO_TIME);
    wait(ps_time(1 * kUs));
    EXPECT_TRUE(retransmitter.nack(0, 1, 2, 2));
    wait(ps_time(1 * kUs));
    EXPECT_TRUE(retransmitter.nack(0, 1, 0, 2));
    wait(ps_time(1 * kUs));
    EXPECT_TRUE(retransmitter.nack(0, 1, 2, 2));
    wait(ps_time(1 * kUs));
    EXPECT_TRUE(retransmitter.ack(0, 1, 0, 3));
    wait(ps_time(1 * kUs));
    EXPECT_TRUE(retransmitter.ack(0, 1, 2, 4));
    wait(ps_time(1 * kUs));
    in_flight_at_6us = retransmitter.copies_in_flight(1);
    EXPECT_TRUE(retransmitter.ack(0, 1, 1, 4));
    EXPECT_TRUE(retransmitter.ack(0, 1, 3, 4));
  }
  std::size_t in_flight_at_6us = 0;
};

TEST(Retransmitter, NegativeAcknowledgementsSendTheLowestChunkInsideTheReceiversWindow) {
  NackSender sender("sender");
  sc_core::sc_start();
  using P = std::pair<std::uint64_t, std::uint32_t>;
  EXPECT_EQ(sender.resent, (std::vector<P>{{1, 2}, {3, 0}, {4, 2}}));
  EXPECT_EQ(sender.retransmitter.counters().nacks, 3u);
  EXPECT_EQ(sender.retransmitter.counters().probes, 1u);
  EXPECT_EQ(sender.in_flight_at_6us, 0u);
  EXPECT_EQ(sender.retransmitter.outstanding(), 0u);
}

}  // namespace
}  // namespace aggnet
