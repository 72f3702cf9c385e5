// Retransmitter alone: timers per (step, receiver, chunk), the copy sent again at expiry,
// and a timer that expires while the sender's previous copy is still queued at its own
// edge, which waits for that copy to leave (plus one timeout) instead of queueing another.
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

TEST(Retransmitter, AnUnacknowledgedCopyIsSentAgainEveryTimeout) {
  Sender sender("sender", 0, 35 * kUs);
  sc_core::sc_start();
  EXPECT_EQ(sender.resent_at_ps, (std::vector<std::uint64_t>{10 * kUs, 20 * kUs, 30 * kUs}));
  EXPECT_EQ(sender.retransmitter.timeouts(), 3u);
  EXPECT_EQ(sender.retransmitter.outstanding(), 0u);
}

TEST(Retransmitter, ATimerWaitsForItsCopyToLeaveTheSendersEdge) {
  // Handed over at 0, the copy leaves at 25 us: the timer (10 us) expires at 10 and 20 us
  // with the copy still queued, so the first copy again goes at 25 + 10 = 35 us. That one
  // waits 7 us to leave (42 us): its timer expires at 45 us with it gone, so the next
  // goes at 45 us, and the acknowledgement at 50 us ends it.
  Sender sender("sender", 25 * kUs, 50 * kUs);
  sender.queueing_ps = 7 * kUs;
  sc_core::sc_start();
  EXPECT_EQ(sender.resent_at_ps, (std::vector<std::uint64_t>{35 * kUs, 45 * kUs}));
  EXPECT_EQ(sender.retransmitter.timeouts(), 2u);
}

TEST(Retransmitter, ACopyStillQueuedAtExpiryDefersTheNextByItsDeparture) {
  // Each copy waits 15 us at the edge, longer than the 10 us timeout: copies go at 10 us
  // (the first left at 0), then 25 + 10 = 35 us, then 50 + 10 = 60 us; never two queued.
  Sender sender("sender", 0, 65 * kUs);
  sender.queueing_ps = 15 * kUs;
  sc_core::sc_start();
  EXPECT_EQ(sender.resent_at_ps, (std::vector<std::uint64_t>{10 * kUs, 35 * kUs, 60 * kUs}));
}

}  // namespace
}  // namespace aggnet
