#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "modules/core/event_calendar.h"

#include <algorithm>

namespace aggnet {

EventCalendar* EventCalendar::current_ = nullptr;
sc_core::sc_simcontext* EventCalendar::current_context_ = nullptr;

EventCalendar& EventCalendar::make_current() {
  current_context_ = sc_core::sc_get_curr_simcontext();
  current_ = new EventCalendar();
  return *current_;
}

EventCalendar::EventCalendar()
    : event_("aggnet_calendar_event"), catch_up_("aggnet_calendar_catch_up") {
  sc_core::sc_spawn_options options;
  options.spawn_method();
  options.set_sensitivity(&event_);
  options.dont_initialize();
  sc_core::sc_spawn([this] { fire(); }, "aggnet_calendar", &options);
}

// The entry being fired is not searched for: cancelling it drops its re-arming.
void EventCalendar::cancel(Client& client) {
  if (&client == firing_client_) {
    rescheduled_ = false;
    return;
  }
  // The kernel event may be armed for the entry removed, if it was the earliest; touching
  // it otherwise would reorder the kernel's timed notifications due at that instant.
  const bool earliest = !firing_ && !queue_.empty() && queue_.top().client == &client;
  if (queue_.remove(&client, firing_) && earliest) {
    event_.cancel();
    armed_ = false;
    arm();
  }
}

EventCalendar* EventCalendar::ahead_ = nullptr;
bool EventCalendar::kernel_touched_ = true;

void EventCalendar::fire() {
  armed_ = false;
  firing_ = true;
  now_ = sc_core::sc_time_stamp();
  kernel_touched_ = true;
  while (true) {
    fire_due();
    if (stopped_ || queue_.empty()) break;
    const sc_core::sc_time next = instant_of(queue_.top());
    if (!may_run_ahead_to(next)) break;
    now_ = next;
    ahead_ = this;
  }
  ahead_ = nullptr;
  firing_ = false;
  arm();
  // The kernel must reach the last instant run ahead to, even with nothing left to do
  // there: the simulation ends at its last event.
  if (queue_.empty() && now_ > sc_core::sc_time_stamp())
    catch_up_.notify(now_ - sc_core::sc_time_stamp());
}

void EventCalendar::fire_due() {
  const Key due = (Key{now_.value()} << 64) | ~std::uint64_t{0};  // all entries at <= now_
  while (!queue_.empty() && queue_.top().key <= due) {
    Client* const client = queue_.top().client;
    firing_client_ = client;
    queue_.begin_firing();
    prefetch_next();
    rescheduled_ = false;
    client->on_calendar();
    firing_client_ = nullptr;
    const Entry rescheduled{(Key{rescheduled_at_} << 64) | rescheduled_order_, client,
                            rescheduled_hint_};
    queue_.end_firing(rescheduled_ ? &rescheduled : nullptr);
  }
}

// The entry fired next is almost always the one the queue names (the one being fired
// re-arms later than it): its client, cold at hundreds of sites, is fetched while this one
// runs, two lines of it (a link's arrival reads those two), and, with many entries
// pending (the radix heap: hundreds of sites, whose state does not stay cached), three
// lines of its hint (a link's hot state).
void EventCalendar::prefetch_next() {
  const Entry* next = queue_.next_entry();
  if (next == nullptr) return;
  const char* client = reinterpret_cast<const char*>(next->client);
  __builtin_prefetch(client);
  __builtin_prefetch(client + 64);
  const char* hint = static_cast<const char*>(next->hint);
  if (hint == nullptr || !queue_.in_radix_form()) return;
  __builtin_prefetch(hint);
  __builtin_prefetch(hint + 64);
  __builtin_prefetch(hint + 128);
}

// Another process due at the same instant keeps its order with the calendar's clients
// only if the kernel runs both: ties go to the kernel. Activity pending now (a runnable
// process, a delta notification, an update) makes sc_time_to_pending_activity zero, so the
// cached kernel_next_ covers it too: only a client can add such activity while the
// calendar runs, and it touches the kernel to do so.
bool EventCalendar::may_run_ahead_to(const sc_core::sc_time& at) {
  if (!run_ahead() || at > horizon_) return false;
  if (kernel_touched_) {
    kernel_next_ = sc_core::sc_time_stamp() + sc_core::sc_time_to_pending_activity();
    kernel_touched_ = false;
  }
  return at < kernel_next_;
}

// A pending notification later than the earliest entry is replaced (sc_event keeps the
// earliest of two timed notifications).
void EventCalendar::arm() {
  if (queue_.empty() || stopped_) return;
  const sc_core::sc_time at = instant_of(queue_.top());
  if (armed_ && armed_at_ <= at) return;
  event_.notify(at - sc_core::sc_time_stamp());
  armed_ = true;
  armed_at_ = at;
}

}  // namespace aggnet
