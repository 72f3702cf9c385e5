#include "modules/cluster/retransmitter.h"

#include <algorithm>

#include "modules/core/event_calendar.h"
#include "modules/core/time.h"

namespace aggnet {

using sc_core::sc_time;

namespace {
constexpr std::uint64_t kNeverPs = ~std::uint64_t{0};
}  // namespace

Retransmitter::Retransmitter(sc_core::sc_module_name name, Resend resend, std::uint64_t max_backoff,
                             std::uint64_t max_window)
    : sc_module(name),
      resend_(std::move(resend)),
      max_backoff_(std::max<std::uint64_t>(max_backoff, 1)),
      max_window_(max_window) {
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
  const std::uint64_t timeout_ps = to_ps(timeout);
  s.max_timeout =
      ps_time(timeout_ps > kNeverPs / max_backoff_ ? timeout_ps : timeout_ps * max_backoff_);
  s.departure = departure;
  s.bytes = bytes;
  timers_.push({s.deadline, key});
  arm();
}

bool Retransmitter::ack(int step, int from, std::uint32_t chunk, std::uint32_t window_end) {
  const auto it = outstanding_.find({step, from, chunk});
  if (it == outstanding_.end()) return false;
  if (window_end != 0 && window_of(from).ends.count(step) != 0) {
    raise_end(window_of(from), step, window_end);
    widened_.push_back(from);
    EventCalendar::notify_now(wake_);
  }
  if (it->second.timed_out)
    counters_.recovery_ns.add(to_ns(EventCalendar::now() - it->second.first_timeout));
  Window& w = window_of(from);
  if (it->second.waiting) w.waiting.erase(it->first);
  if (it->second.copy_in_flight) {  // a copy got through: room for the next in line
    --w.in_flight;
    if (!w.waiting.empty()) {
      widened_.push_back(from);
      EventCalendar::notify_now(wake_);
    }
  }
  outstanding_.erase(it);
  return true;
}

void Retransmitter::raise_end(Window& w, int step, std::uint32_t window_end) {
  std::uint32_t& end = w.ends[step];
  end = std::max(end, window_end);
}

bool Retransmitter::nack(int step, int from, std::uint32_t chunk, std::uint32_t window_end) {
  raise_end(window_of(from), step, window_end);
  widened_.push_back(from);
  EventCalendar::notify_now(wake_);
  const auto it = outstanding_.find({step, from, chunk});
  if (it == outstanding_.end() || it->second.waiting) return false;
  ++counters_.nacks;
  State& s = it->second;
  if (s.copy_in_flight) {
    s.copy_in_flight = false;
    --window_of(from).in_flight;
  }
  put_in_line(it->first, s);
  return true;
}

// Waits for its receiver's window, without a timer (the one pending lapses).
void Retransmitter::put_in_line(const Key& key, State& s) {
  s.waiting = true;
  s.deadline = sc_core::SC_ZERO_TIME;
  window_of(std::get<1>(key)).waiting.insert(key);
  widened_.push_back(std::get<1>(key));
}

Retransmitter::Window& Retransmitter::window_of(int dst) { return windows_[dst]; }

bool Retransmitter::window_full(const Window& w) const {
  return max_window_ > 0 && w.in_flight >= max_window_;
}

std::size_t Retransmitter::copies_in_flight(int dst) const {
  const auto it = windows_.find(dst);
  return it == windows_.end() ? 0 : it->second.in_flight;
}

// One more copy of an unacknowledged contribution, its timer re-armed with the timeout
// doubled (capped); it counts in its receiver's window until acknowledged or expired.
void Retransmitter::send_copy(const Key& key, State& s, const sc_time& now) {
  ++counters_.timeouts;
  counters_.retransmitted_bytes += s.bytes;
  if (!s.timed_out) s.first_timeout = now;
  s.timed_out = true;
  const std::uint64_t timeout_ps = to_ps(s.timeout), cap_ps = to_ps(s.max_timeout);
  s.timeout = ps_time(timeout_ps >= cap_ps / 2 ? cap_ps : 2 * timeout_ps);
  s.deadline = now + s.timeout;
  timers_.push({s.deadline, key});
  const auto [step, dst, chunk] = key;
  Window& w = window_of(dst);
  ++w.in_flight;
  counters_.max_in_flight = std::max<std::uint64_t>(counters_.max_in_flight, w.in_flight);
  s.copy_in_flight = true;
  s.departure = resend_(step, dst, chunk);
}

// Copies that waited for their receiver's window, lowest (step, chunk) first, while it
// has room.
void Retransmitter::release_waiting(const sc_time& now) {
  for (const int dst : widened_) release(window_of(dst), now);
  widened_.clear();
}

// A chunk at or past its step's advertised end waits (the rest of that step with it);
// with no copy in flight the lowest waiting one goes as a probe.
void Retransmitter::release(Window& w, const sc_time& now) {
  auto next = w.waiting.begin();
  while (next != w.waiting.end() && !window_full(w)) {
    const auto [step, dst, chunk] = *next;
    const auto end = w.ends.find(step);
    if (end != w.ends.end() && chunk >= end->second) {
      next = w.waiting.lower_bound({step + 1, dst, 0});
      continue;
    }
    const Key key = *next;
    next = w.waiting.erase(next);
    State& s = outstanding_.at(key);  // an acknowledgement takes it out of line
    s.waiting = false;
    send_copy(key, s, now);
  }
  if (w.in_flight == 0 && !w.waiting.empty()) {
    ++counters_.probes;
    const Key key = *w.waiting.begin();
    w.waiting.erase(w.waiting.begin());
    State& s = outstanding_.at(key);
    s.waiting = false;
    send_copy(key, s, now);
  }
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
    if (it == outstanding_.end() || it->second.waiting || it->second.deadline != t.deadline)
      continue;  // acknowledged, in line, or re-armed since
    State& s = it->second;
    if (s.departure > now) {  // the last copy is still queued at the sender's edge
      s.deadline = s.departure + s.timeout;
      timers_.push({s.deadline, t.key});
      continue;
    }
    Window& w = window_of(std::get<1>(t.key));
    if (s.copy_in_flight) {  // its copy expired too: it leaves the window
      s.copy_in_flight = false;
      --w.in_flight;
    }
    if (window_full(w) || !w.waiting.empty()) {  // in line with the others
      ++counters_.window_waits;
      put_in_line(t.key, s);
      continue;
    }
    send_copy(t.key, s, now);
  }
  release_waiting(now);
  arm();
}

std::uint64_t Retransmitter::backoff_expiries(double timeouts, std::uint64_t max_backoff) {
  const double cap = static_cast<double>(std::max<std::uint64_t>(max_backoff, 1));
  std::uint64_t expiries = 0;
  double elapsed = 0, timeout = 1;
  for (;;) {
    if (timeout >= cap)  // the rest at the cap, at once
      return expiries + static_cast<std::uint64_t>((timeouts - elapsed) / cap);
    if (elapsed + timeout > timeouts) return expiries;
    elapsed += timeout;
    ++expiries;
    timeout = std::min(timeout * 2, cap);
  }
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
