// EventCalendar: clients fire in time order, ties in the order they were scheduled; with
// running ahead the calendar skips kernel timesteps but no process outside it can tell:
// a thread sees exactly the firings before its instant, an event notified from a client
// wakes its thread at the client's instant, and the kernel ends at the last instant.
// Each test runs in its own process (gtest_discover_tests), so each has a fresh kernel.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <systemc>
#include <vector>

#include "module_harness.h"
#include "modules/core/event_calendar.h"
#include "modules/core/time.h"

namespace aggnet {
namespace {

using sc_core::sc_time;

struct Firing {
  std::uint64_t at_ps;
  int id;
};

/// Fires at the instants it is given, one after the other; records them and runs `on_fire`.
class Ticker : public EventCalendar::Client {
 public:
  Ticker(int id, std::vector<Firing>& log) : id_(id), log_(log) {}
  std::vector<std::uint64_t> instants_ps;
  std::function<void(std::uint64_t)> on_fire;
  std::function<void(std::uint64_t)> after_rearm;  ///< runs last in each firing

  void start() { EventCalendar::current().schedule(*this, ps_time(instants_ps.at(0))); }

 private:
  void on_calendar() override {
    const std::uint64_t now = to_ps(EventCalendar::now());
    log_.push_back({now, id_});
    if (on_fire) on_fire(now);
    if (++next_ < instants_ps.size())
      EventCalendar::current().schedule(*this, ps_time(instants_ps[next_]));
    if (after_rearm) after_rearm(now);
  }
  int id_;
  std::size_t next_ = 0;
  std::vector<Firing>& log_;
};

using testing::Probe;

std::vector<std::uint64_t> every(std::uint64_t step_ps, int n) {
  std::vector<std::uint64_t> at;
  for (int i = 1; i <= n; ++i) at.push_back(step_ps * static_cast<std::uint64_t>(i));
  return at;
}

/// The log is exactly these (instant ps, ticker id) firings, in order.
void expect_firings(const std::vector<Firing>& log,
                    const std::vector<std::pair<std::uint64_t, int>>& expected) {
  ASSERT_EQ(log.size(), expected.size());
  for (std::size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(log[i].at_ps, expected[i].first) << i;
    EXPECT_EQ(log[i].id, expected[i].second) << i;
  }
}

TEST(EventCalendar, FiresInTimeOrderAndTiesInSchedulingOrder) {
  std::vector<Firing> log;
  Ticker a(1, log), b(2, log), c(3, log);
  a.instants_ps = {5, 5, 9};  // re-scheduled at its own instant: after b, already due
  b.instants_ps = {5};
  c.instants_ps = {3, 9};
  Probe probe("probe");
  probe.body = [&] {
    a.start();
    b.start();
    c.start();
  };
  sc_core::sc_start();
  expect_firings(log, {{3, 3}, {5, 1}, {5, 2}, {5, 1}, {9, 3}, {9, 1}});
}

// A cancelled client does not fire; the others keep their instants and order. Cancelling
// the client being fired drops its re-arming; cancelling an idle client does nothing.
TEST(EventCalendar, CancelledClientsDoNotFire) {
  std::vector<Firing> log;
  Ticker a(1, log), b(2, log), c(3, log), d(4, log), idle(5, log);
  a.instants_ps = {4, 8};
  b.instants_ps = {6};
  c.instants_ps = {2, 3, 7};
  d.instants_ps = {5, 9};
  c.after_rearm = [&](std::uint64_t now) {
    if (now == 3) EventCalendar::current().cancel(c);  // it has re-armed for 7
  };
  d.on_fire = [&](std::uint64_t now) {
    if (now == 5) EventCalendar::current().cancel(b);  // b is due at 6, below d in the heap
  };
  Probe probe("probe");
  probe.body = [&] {
    for (Ticker* t : {&a, &b, &c, &d}) t->start();
    EventCalendar::current().cancel(idle);
  };
  sc_core::sc_start();
  expect_firings(log, {{2, 3}, {3, 3}, {4, 1}, {5, 4}, {8, 1}, {9, 4}});
}

// Cancelling the only pending firing leaves the kernel nothing to do: the simulation ends
// where it is, not at the instant the calendar's event was armed for.
TEST(EventCalendar, CancellingTheEarliestFiringDisarmsTheKernelEvent) {
  std::vector<Firing> log;
  Ticker a(1, log);
  a.instants_ps = {100};
  Probe probe("probe");
  probe.body = [&] {
    a.start();
    sc_core::wait(ps_time(10));
    EventCalendar::current().cancel(a);
  };
  sc_core::sc_start();
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(to_ps(sc_core::sc_time_stamp()), 10u);
}

// The same timeline with and without running ahead: what a kernel thread observes at its
// own instants, and when the event a client notifies wakes the thread waiting on it.
struct Observed {
  std::vector<std::size_t> firings_seen;  // at 505 ps and 1,005 ps
  std::uint64_t woken_at_ps = 0;
  std::uint64_t end_ps = 0;
  std::uint64_t kernel_cycles = 0;
  std::size_t firings = 0;
};

Observed run_timeline(bool run_ahead) {
  if (run_ahead) EventCalendar::current().enable_run_ahead();
  std::vector<Firing> log;
  Ticker ticker(1, log);
  ticker.instants_ps = every(10, 200);  // 10 ps ... 2,000 ps
  sc_core::sc_event wake;
  ticker.on_fire = [&](std::uint64_t now) {
    if (now == 1'500) EventCalendar::notify_now(wake);
  };
  Observed seen;
  Probe counter("counter");
  auto count = [&] { seen.firings_seen.push_back(log.size()); };
  counter.checks = {{505, count}, {1'005, count}};
  Probe sleeper("sleeper");
  sleeper.body = [&] {
    ticker.start();
    sc_core::wait(wake);
    seen.woken_at_ps = to_ps(sc_core::sc_time_stamp());
  };
  sc_core::sc_start();
  seen.end_ps = to_ps(sc_core::sc_time_stamp());
  seen.kernel_cycles = sc_core::sc_delta_count();
  seen.firings = log.size();
  return seen;
}

void expect_exact_timeline(const Observed& seen) {
  EXPECT_EQ(seen.firings, 200u);
  ASSERT_EQ(seen.firings_seen.size(), 2u);
  EXPECT_EQ(seen.firings_seen[0], 50u);  // 10 ... 500 ps
  EXPECT_EQ(seen.firings_seen[1], 100u);
  EXPECT_EQ(seen.woken_at_ps, 1'500u);
  EXPECT_EQ(seen.end_ps, 2'000u);  // the kernel catches up with the last instant
}

TEST(EventCalendar, WithoutRunningAheadEveryInstantIsAKernelTimestep) {
  const Observed seen = run_timeline(false);
  expect_exact_timeline(seen);
  EXPECT_GE(seen.kernel_cycles, 200u);
}

TEST(EventCalendar, RunningAheadSkipsKernelTimestepsButNobodyCanTell) {
  const Observed seen = run_timeline(true);
  expect_exact_timeline(seen);
  // Kernel cycles only where a process outside the calendar has something to do (the
  // probes' instants, the wake-up, the end): a handful, not one per firing.
  EXPECT_LT(seen.kernel_cycles, 20u);
}

TEST(EventCalendar, ForbiddingRunningAheadWins) {
  EventCalendar::current().forbid_run_ahead();
  const Observed seen = run_timeline(true);
  expect_exact_timeline(seen);
  EXPECT_GE(seen.kernel_cycles, 200u);
}

TEST(EventCalendar, RunningAheadStopsAtTheHorizonOfSimStart) {
  EventCalendar::current().enable_run_ahead();
  std::vector<Firing> log;
  Ticker ticker(1, log);
  ticker.instants_ps = every(10, 200);
  Probe starter("starter");
  starter.body = [&] { ticker.start(); };
  const sc_time horizon = ps_time(505);
  EventCalendar::current().set_horizon(horizon);
  sc_core::sc_start(horizon);
  EXPECT_EQ(log.size(), 50u);  // 10 ... 500 ps
  EXPECT_EQ(sc_core::sc_time_stamp(), horizon);
}

// A client that stops the simulation (sc_stop) while the calendar runs ahead: what is
// due at that instant still fires (another client scheduled after it), nothing later does.
TEST(EventCalendar, AStoppedCalendarFiresNothingAfterItsInstant) {
  EventCalendar::current().enable_run_ahead();
  std::vector<Firing> log;
  Ticker ticker(1, log), tied(2, log);
  ticker.instants_ps = every(10, 200);
  tied.instants_ps = {300, 310};
  ticker.on_fire = [](std::uint64_t now) {
    if (now != 300) return;
    sc_core::sc_stop();
    EventCalendar::current().stop();
  };
  ticker.after_rearm = [&tied](std::uint64_t now) {
    if (now == 290) tied.start();  // due at 300 after the ticker (scheduled later)
  };
  Probe starter("starter");
  starter.body = [&] { ticker.start(); };
  sc_core::sc_start();
  ASSERT_EQ(log.size(), 31u);  // the ticker at 10 ... 300 ps, then the tied client at 300
  EXPECT_EQ(log[29].id, 1);
  EXPECT_EQ(log[29].at_ps, 300u);
  EXPECT_EQ(log.back().id, 2);
  EXPECT_EQ(log.back().at_ps, 300u);
}

}  // namespace
}  // namespace aggnet
