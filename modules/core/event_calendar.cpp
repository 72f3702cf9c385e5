#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "modules/core/event_calendar.h"

#include <algorithm>

namespace aggnet {

EventCalendar& EventCalendar::current() {
  // One calendar per simulation context; a context is never torn down while the process
  // runs, so neither is its calendar.
  static sc_core::sc_simcontext* context = nullptr;
  static EventCalendar* calendar = nullptr;
  if (calendar == nullptr || context != sc_core::sc_get_curr_simcontext()) {
    context = sc_core::sc_get_curr_simcontext();
    calendar = new EventCalendar();
  }
  return *calendar;
}

EventCalendar::EventCalendar()
    : event_("aggnet_calendar_event"), catch_up_("aggnet_calendar_catch_up") {
  sc_core::sc_spawn_options options;
  options.spawn_method();
  options.set_sensitivity(&event_);
  options.dont_initialize();
  sc_core::sc_spawn([this] { fire(); }, "aggnet_calendar", &options);
}

// The entry being fired (at the top, popped after its callback unless re-armed) is not
// searched for: cancelling it drops its re-arming.
void EventCalendar::cancel(Client& client) {
  if (&client == firing_client_) {
    rescheduled_ = false;
    return;
  }
  for (std::size_t i = firing_ ? 1 : 0; i < heap_.size(); ++i) {
    if (heap_[i].client != &client) continue;
    heap_[i] = heap_.back();
    heap_.pop_back();
    if (i < heap_.size()) sift_down(i);  // rises again if it belongs higher
    // The kernel event may be armed for the entry removed.
    if (i == 0 && !firing_) {
      event_.cancel();
      armed_ = false;
      arm();
    }
    return;
  }
}

void EventCalendar::push(const Entry& entry) {
  heap_.push_back(entry);
  sift_up(heap_.size() - 1);
  if (!firing_) arm();
}

// Nothing scheduled during a callback is earlier than the entry being fired (its time is
// now, its order the smallest), so that entry stays at index 0 meanwhile.
void EventCalendar::sift_up(std::size_t i) {
  const Entry entry = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!earlier(entry, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = entry;
}

// Bottom-up: the hole at i follows the smaller child down to a leaf, then the entry
// rises from there. An entry re-keyed at the top usually belongs near the bottom (its next
// instant is later than most), so this skips the unpredictable "stop here?" test of every
// level; the child selection is branch-free.
void EventCalendar::sift_down(std::size_t i) {
  const Entry entry = heap_[i];
  const std::size_t size = heap_.size();
  while (4 * i + 4 < size) {  // all four children exist
    const std::size_t first = 4 * i + 1;
    const std::size_t a = first + (earlier(heap_[first + 1], heap_[first]) ? 1 : 0);
    const std::size_t b = first + 2 + (earlier(heap_[first + 3], heap_[first + 2]) ? 1 : 0);
    const std::size_t best = earlier(heap_[b], heap_[a]) ? b : a;
    heap_[i] = heap_[best];
    i = best;
  }
  const std::size_t first = 4 * i + 1;
  if (first < size) {  // a last, partial family
    std::size_t best = first;
    for (std::size_t c = first + 1; c < size; ++c) best = earlier(heap_[c], heap_[best]) ? c : best;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = entry;
  sift_up(i);
}

void EventCalendar::pop_top() {
  heap_[0] = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
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
    if (heap_.empty() || !may_run_ahead_to(heap_.front().at)) break;
    now_ = heap_.front().at;
    ahead_ = this;
  }
  ahead_ = nullptr;
  firing_ = false;
  arm();
  // The kernel must reach the last instant run ahead to, even with nothing left to do
  // there: the simulation ends at its last event.
  if (heap_.empty() && now_ > sc_core::sc_time_stamp())
    catch_up_.notify(now_ - sc_core::sc_time_stamp());
}

void EventCalendar::fire_due() {
  const Key due = (Key{now_.value()} << 64) | ~std::uint64_t{0};  // all entries at <= now_
  while (!heap_.empty() && heap_.front().key <= due) {
    firing_client_ = heap_.front().client;
    prefetch_next();
    rescheduled_ = false;
    firing_client_->on_calendar();
    firing_client_ = nullptr;
    if (rescheduled_) {
      heap_.front() = rescheduled_entry_;
      sift_down(0);
    } else {
      pop_top();
    }
  }
}

// The entry fired next is almost always the earliest of the top's children (the one being
// fired re-arms later than they): its client, cold at hundreds of sites, is fetched while
// this one runs, two lines of it (a link's arrival reads those two). A heap of fewer than
// five entries is in cache anyway.
void EventCalendar::prefetch_next() const {
  if (heap_.size() < 5) return;
  const std::size_t a = 1 + (earlier(heap_[2], heap_[1]) ? 1 : 0);
  const std::size_t b = 3 + (earlier(heap_[4], heap_[3]) ? 1 : 0);
  const char* client =
      reinterpret_cast<const char*>(heap_[earlier(heap_[b], heap_[a]) ? b : a].client);
  __builtin_prefetch(client);
  __builtin_prefetch(client + 64);
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
  if (heap_.empty()) return;
  const sc_core::sc_time at = heap_.front().at;
  if (armed_ && armed_at_ <= at) return;
  event_.notify(at - sc_core::sc_time_stamp());
  armed_ = true;
  armed_at_ = at;
}

}  // namespace aggnet
