// The run watchdog: ends a run that stops progressing (a group waiting on a site it can no
// longer reach, a deadlock) with a diagnosis of who waits for what since when, instead of
// spinning on retransmissions or reporting a finished run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <systemc>

namespace aggnet {

class NetworkSystem;
class FaultInjector;

/// Watchdog: with loss recovery on (retransmission timers keep a stuck run busy forever)
/// it checks every window / 8 of simulated time whether any site has made progress (a new
/// result, ready, grant, credit or acknowledgement, a step finished, or a site computing);
/// after a whole window without, it writes the diagnosis and stops the simulation
/// (sc_stop). Once every site has finished it stops the sites' retransmissions that can
/// no longer be acknowledged and disarms. Without loss recovery a stuck run simply runs
/// out of events; stall_diagnosis() then explains it.
class Watchdog : public sc_core::sc_module {
 public:
  Watchdog(sc_core::sc_module_name name, const NetworkSystem& system, const FaultInjector* faults);

  /// The window: the plan's `watchdog_ps`, or (0) 20 retransmission timeouts plus the
  /// longest finite outage or stall, at least 1 s; zero without loss recovery (not watched).
  sc_core::sc_time window() const { return window_; }
  bool fired() const { return fired_; }
  sc_core::sc_time fired_at() const { return fired_at_; }
  /// What it stopped the run for ("stopped progressing", "reached its memory limit").
  const std::string& stop_reason() const { return stop_reason_; }
  /// The diagnosis written when it fired.
  const std::string& diagnosis() const { return diagnosis_; }
  /// Stops the run now: its chunk transactions took more than `limit_bytes` (the system's
  /// chunk pool calls this; see NetworkSystem).
  void stop_for_memory(std::uint64_t limit_bytes);

 private:
  void check();
  /// Between two checks: window / 8, at least 1 ps (a zero delay would never advance).
  sc_core::sc_time interval() const {
    return std::max(window_ / 8, sc_core::sc_time(1, sc_core::SC_PS));
  }
  std::uint64_t progress() const;
  bool all_finished() const;

  const NetworkSystem& system_;
  const FaultInjector* faults_;
  sc_core::sc_time window_, last_progress_;
  std::uint64_t last_count_ = 0;
  sc_core::sc_event tick_;
  void stop(std::string reason, std::string diagnosis);

  bool fired_ = false;
  sc_core::sc_time fired_at_;
  std::string stop_reason_, diagnosis_;
};

/// Who waits for what since when, per unfinished site, with the links down and the group
/// members a waiting site cannot reach; "" if every site finished.
std::string stall_diagnosis(const NetworkSystem& system);

/// Exit status of `aggnet run` when the watchdog ends a run (or it runs out of events
/// unfinished).
constexpr int kStalledRunExit = 3;

}  // namespace aggnet
