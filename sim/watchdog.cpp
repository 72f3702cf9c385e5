#include "sim/watchdog.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/units.h"
#include "modules/core/event_calendar.h"
#include "modules/core/time.h"
#include "sim/builder.h"
#include "sim/faults.h"

namespace aggnet {

namespace {

sc_core::sc_time auto_window(const NetworkSystem& system) {
  const auto& plan = system.options().faults;
  if (plan.watchdog_ps) return ps_time(plan.watchdog_ps);
  std::uint64_t rto = 0, longest = 0;
  for (const auto& o : plan.outages)
    if (o.up_ps != std::numeric_limits<std::uint64_t>::max())
      longest = std::max(longest, o.up_ps - o.down_ps);
  for (const auto& s : plan.stalls) longest = std::max(longest, s.to_ps - s.from_ps);
  rto = plan.retransmit_timeout_ps;
  if (rto == 0)
    for (const auto& round : system.round_plans())
      for (const auto& g : round.groups)
        if (g.members.size() > 1)
          rto = std::max(rto, retransmit_timeout_ps(system.platform(), system.routing(), g,
                                                    per_transaction(system.options())));
  constexpr std::uint64_t kFloorPs = 1'000'000'000'000;  // 1 s
  return ps_time(std::max(kFloorPs, 20 * rto + longest));
}

std::string names(const NetworkSystem& system, const std::vector<int>& sites) {
  std::string out;
  for (int s : sites)
    out += (out.empty() ? "" : ",") + system.platform().sites[static_cast<std::size_t>(s)].code;
  return out;
}

}  // namespace

Watchdog::Watchdog(sc_core::sc_module_name name, const NetworkSystem& system,
                   const FaultInjector* faults)
    : sc_module(name), system_(system), faults_(faults) {
  // Without loss recovery nothing is watched: its window (a retransmission timeout per
  // group of the period, O(members^2) path latencies each) is not computed.
  if (!loss_recovery(system.options().faults, system.options().flow_control)) return;
  window_ = auto_window(system);
  SC_HAS_PROCESS(Watchdog);
  SC_METHOD(check);
  sensitive << tick_;
  dont_initialize();
  tick_.notify(interval());
}

std::uint64_t Watchdog::progress() const {
  std::uint64_t total = 0;
  for (const auto& site : system_.sites()) total += site.cluster->progress_count();
  return total;
}

bool Watchdog::all_finished() const {
  return std::all_of(system_.sites().begin(), system_.sites().end(),
                     [](const SiteModules& m) { return m.cluster->finished(); });
}

void Watchdog::check() {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const std::uint64_t count = progress();
  const bool timed = std::any_of(system_.sites().begin(), system_.sites().end(),
                                 [](const SiteModules& m) { return m.cluster->in_timed_phase(); });
  if (count != last_count_ || timed) {
    last_count_ = count;
    last_progress_ = now;
  }
  if (all_finished()) {
    // Results are complete everywhere; what is left are acknowledgements. Stop waiting for
    // the ones that cannot come any more.
    bool pending = false;
    for (const auto& site : system_.sites())
      pending = pending || site.cluster->unacknowledged() > 0;
    if (!pending) return;
    if (now - last_progress_ >= window_) {
      for (const auto& site : system_.sites()) site.cluster->abandon_retransmissions();
      return;
    }
  } else if (now - last_progress_ >= window_) {
    stop(
        "stopped progressing",
        fmt::format("no progress for {} (watchdog window {}): {}",
                    format_time_ps(static_cast<double>(to_ps(now - last_progress_))),
                    format_time_ps(static_cast<double>(to_ps(window_))), stall_diagnosis(system_)));
    return;
  }
  tick_.notify(interval());
}

void Watchdog::stop(std::string reason, std::string diagnosis) {
  fired_ = true;
  fired_at_ = EventCalendar::now();
  stop_reason_ = std::move(reason);
  diagnosis_ = std::move(diagnosis);
  // The kernel's "simulation stopped by user" note is noise next to the diagnosis.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO,
                                          sc_core::SC_DO_NOTHING);
  sc_core::sc_stop();
  EventCalendar::current().stop();  // the caller may be a client of the calendar
}

// Chunks that pile up without bound: with loss recovery, a retransmission timeout that
// is shorter than the queues it creates (a congestion collapse).
void Watchdog::stop_for_memory(std::uint64_t limit_bytes) {
  std::size_t unacknowledged = 0;
  for (const auto& site : system_.sites()) unacknowledged += site.cluster->unacknowledged();
  std::string diagnosis = fmt::format(
      "its chunk transactions took more than {} (a quarter of the memory it may use: "
      "AGGNET_MEMORY_LIMIT, else the memory available when it started, within the "
      "process's address-space, data and cgroup limits)",
      format_bytes(limit_bytes));
  const DirectedLink* fullest = nullptr;
  for (const auto& l : system_.links())
    if (!fullest || l.link->bytes_in_flight() > fullest->link->bytes_in_flight()) fullest = &l;
  if (fullest)
    diagnosis += fmt::format("; the fullest link, {}->{}, held {} on the wire or queued",
                             system_.platform().sites[fullest->from].code,
                             system_.platform().sites[fullest->to].code,
                             format_bytes(fullest->link->bytes_in_flight()));
  if (unacknowledged > 0) {
    const bool drop = system_.options().flow_control == FlowControl::kDrop;
    diagnosis += fmt::format(
        "; {} contributions unacknowledged: retransmitted copies arrive faster than the links "
        "drain them (loss recovery's timeout stops backing off at 8x the first; {} keeps "
        "the queues bounded)",
        unacknowledged, drop ? "--flow-control pacing or credit" : "a longer --retransmit-timeout");
  }
  stop("reached its memory limit", std::move(diagnosis));
}

std::string stall_diagnosis(const NetworkSystem& system) {
  std::vector<std::string> codes;
  for (const auto& s : system.platform().sites) codes.push_back(s.code);
  std::string out;
  for (std::size_t i = 0; i < system.sites().size(); ++i) {
    const auto& m = system.sites()[i];
    if (m.cluster->finished()) continue;
    const std::string what = m.cluster->waiting_for(codes);
    std::string line =
        fmt::format("{}: step {} of {}", codes[i], m.cluster->steps().size(), system.steps());
    if (!what.empty())
      line +=
          fmt::format(", waits since {} for {}",
                      format_time_ps(static_cast<double>(to_ps(m.cluster->waiting_since()))), what);
    line += fmt::format(" ({} slots in use, {} contributions waiting for a slot",
                        m.fpga->slots_in_use(), m.fpga->waiting_contributions());
    if (m.cluster->unacknowledged())
      line += fmt::format(", {} contributions unacknowledged", m.cluster->unacknowledged());
    line += ")";
    const auto& group = m.cluster->current_group();
    const auto cut = system.faults().unreachable_from(static_cast<int>(i), group);
    if (!cut.empty()) line += "; cannot reach " + names(system, cut);
    out += (out.empty() ? "" : "; ") + line;
  }
  const std::string down = system.faults().outages();
  if (!out.empty() && !down.empty()) out += "; links down: " + down;
  return out;
}

}  // namespace aggnet
