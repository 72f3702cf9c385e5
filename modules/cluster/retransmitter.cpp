#include "modules/cluster/retransmitter.h"

#include "modules/core/event_calendar.h"
#include "modules/core/time.h"

namespace aggnet {

using sc_core::sc_time;

Retransmitter::Retransmitter(sc_core::sc_module_name name, Resend resend)
    : sc_module(name), resend_(std::move(resend)) {
  SC_HAS_PROCESS(Retransmitter);
  SC_METHOD(fire);
  sensitive << wake_;
  dont_initialize();
}

void Retransmitter::track(int step, int dst, std::uint32_t chunk, std::uint64_t bytes,
                          const sc_time& timeout, const sc_time& departure) {
  const sc_time now = EventCalendar::now();
  const Key key{step, dst, chunk};
  State& s = outstanding_[key];
  s.sent = now;
  s.deadline = now + timeout;
  s.timeout = timeout;
  s.departure = departure;
  s.bytes = bytes;
  timers_.push({s.deadline, key});
  arm();
}

bool Retransmitter::ack(int step, int from, std::uint32_t chunk) {
  const auto it = outstanding_.find({step, from, chunk});
  if (it == outstanding_.end()) return false;
  if (it->second.timed_out)
    counters_.recovery_ns.add(to_ns(EventCalendar::now() - it->second.first_timeout));
  outstanding_.erase(it);
  return true;
}

// The earliest timer wakes the method (an event keeps its earliest pending notification;
// stale heap entries are skipped when popped).
void Retransmitter::arm() {
  if (!timers_.empty())
    wake_.notify(EventCalendar::kernel_delay(timers_.top().deadline - EventCalendar::now()));
}

void Retransmitter::fire() {
  const sc_time now = EventCalendar::now();
  while (!timers_.empty() && timers_.top().deadline <= now) {
    const Timer t = timers_.top();
    timers_.pop();
    const auto it = outstanding_.find(t.key);
    if (it == outstanding_.end() || it->second.deadline != t.deadline) continue;  // acked
    State& s = it->second;
    if (s.departure > now) {  // the last copy is still queued at the sender's edge
      s.deadline = s.departure + s.timeout;
      timers_.push({s.deadline, t.key});
      continue;
    }
    ++counters_.timeouts;
    counters_.retransmitted_bytes += s.bytes;
    if (!s.timed_out) s.first_timeout = now;
    s.timed_out = true;
    s.deadline = now + s.timeout;
    timers_.push({s.deadline, t.key});
    const auto [step, dst, chunk] = t.key;
    s.departure = resend_(step, dst, chunk);
  }
  arm();
}

std::vector<Statistic> Retransmitter::statistics(const Counters& c) {
  return {
      {"retransmissions", static_cast<double>(c.timeouts),
       "contributions sent again after a timeout (one timeout each; loss recovery)"},
      {"retransmitted_bytes", static_cast<double>(c.retransmitted_bytes),
       "gradient bytes sent again (wasted when the first copy had arrived)"},
      {"recovered_chunks", static_cast<double>(c.recovery_ns.count()),
       "contributions acknowledged after at least one timeout"},
      {"recovery_time_mean_s", c.recovery_ns.mean() * 1e-9,
       "mean time from a contribution's first timeout to its acknowledgement"},
      {"recovery_time_max_s", c.recovery_ns.max() * 1e-9,
       "longest time from a first timeout to the acknowledgement"},
      {"unacknowledged_abandoned", static_cast<double>(c.abandoned),
       "contributions never acknowledged (the receiver had its result; acknowledgements "
       "could no longer arrive)"},
  };
}

}  // namespace aggnet
