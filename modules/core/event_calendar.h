// One SystemC event for all of a simulation's time-ordered queues.
//
// Every link and FPGA pipeline used to own an sc_event: with hundreds of them pending,
// the kernel's timed-event heap (sc_ppq, a compare through a function pointer per level)
// and the trigger of a cold event object took about a third of a run. The calendar keeps
// one entry per non-empty queue (its earliest instant) in a flat priority queue
// (CalendarQueue: a 4-ary heap while few, a radix heap while many) and arms a single
// kernel event for the earliest of them.
//
// Running ahead (exact temporal decoupling): once the instants due now are done, the
// calendar moves on to its next instant itself, without the kernel, while no other
// process has anything pending at or before that instant. Nothing outside the calendar's
// clients can observe the difference as long as the clients read the time with
// EventCalendar::now() and reach the kernel only through notify_now() and
// kernel_delay(); a kernel event they notify ends the run-ahead at its instant. Trace
// files sample at kernel timesteps, so waveform output turns running ahead off.
// Results are the same either way (tests/golden and the module tests hold them to it).
#pragma once

#include <cstdint>
#include <systemc>

#include "modules/core/calendar_queue.h"

namespace aggnet {

class EventCalendar {
 public:
  /// A time-ordered source of work: fired at the instant it was scheduled for.
  class Client {
   public:
    virtual void on_calendar() = 0;

   protected:
    ~Client() = default;
  };

  /// The calendar of the current simulation context (made on first use).
  static EventCalendar& current() {
    if (current_ != nullptr && current_context_ == sc_core::sc_curr_simcontext) return *current_;
    return make_current();
  }

  /// Fires `client` at absolute time `at` (>= now). A client is scheduled at most once at a
  /// time; clients due at the same instant fire in the order they were scheduled.
  /// Inline: the usual call is the firing client re-arming itself (its entry is re-keyed
  /// when its callback returns), which needs no heap work.
  /// `hint`: three lines the firing will likely read besides the client's own first two (a
  /// link's arrival: the link its delivery went on to last time), fetched while the entry
  /// before it fires; may be null.
  void schedule(Client& client, const sc_core::sc_time& at, const void* hint = nullptr) {
    const Key key = (Key{at.value()} << 64) | next_order_++;
    if (&client == firing_client_ && !rescheduled_) {
      rescheduled_ = true;
      // In halves, read as such (fire_due): see push.
      rescheduled_at_ = static_cast<std::uint64_t>(key >> 64);
      rescheduled_order_ = static_cast<std::uint64_t>(key);
      rescheduled_hint_ = hint;
      return;
    }
    push(key, &client, hint);
  }

  /// Withdraws `client`'s pending firing, if any (a linear search: for rare events such as
  /// a link failure).
  void cancel(Client& client);

  /// Running ahead is off unless enabled by whoever builds the whole model (every module
  /// attached to the clients follows the contract above), and stays off once forbidden
  /// (anything that samples at kernel timesteps, e.g. a VCD file).
  void enable_run_ahead() { run_ahead_enabled_ = true; }
  void forbid_run_ahead() { run_ahead_forbidden_ = true; }
  bool run_ahead() const { return run_ahead_enabled_ && !run_ahead_forbidden_; }
  /// Something samples the modules' state at kernel timesteps (forbid_run_ahead).
  bool sampled_at_timesteps() const { return run_ahead_forbidden_; }
  /// The end time given to sc_start, which the kernel knows and the calendar cannot ask
  /// for: it does not run ahead past it.
  void set_horizon(const sc_core::sc_time& end) { horizon_ = end; }
  /// Fires nothing after the current instant (what is due at it still fires, as the
  /// kernel finishes its delta cycle): for a client that stops the simulation (sc_stop
  /// ends the kernel's loop, not the calendar's running ahead).
  void stop() { stopped_ = true; }

  /// The simulated time as the modules see it: the kernel's, or the calendar's instant
  /// while it runs ahead of the kernel.
  static sc_core::sc_time now() {
    return ahead_ != nullptr ? ahead_->now_ : sc_core::sc_time_stamp();
  }
  /// `delay` after now(), as a delay from the kernel's time (for kernel notifications).
  static sc_core::sc_time kernel_delay(const sc_core::sc_time& delay) {
    kernel_touched_ = true;
    return ahead_ != nullptr ? delay + (ahead_->now_ - sc_core::sc_time_stamp()) : delay;
  }
  /// Notifies `event` at now(): immediately when that is the kernel's time.
  static void notify_now(sc_core::sc_event& event) {
    kernel_touched_ = true;
    if (ahead_ != nullptr) {
      event.notify(kernel_delay(sc_core::SC_ZERO_TIME));
    } else {
      event.notify();
    }
  }

 private:
  EventCalendar();
  static EventCalendar& make_current();
  void fire();
  void fire_due();
  void prefetch_next();
  bool may_run_ahead_to(const sc_core::sc_time& at);
  void arm();

  // Key: the instant (ps) in the high half, the scheduling order in the low half, so one
  // unsigned compare orders entries by time, then first scheduled first (branch-free: a
  // heap's comparisons are unpredictable).
  __extension__ using Key = unsigned __int128;
  struct Entry {
    Key key;
    Client* client;
    const void* hint;  // prefetched with the client (fills the key's alignment padding)
  };
  static sc_core::sc_time instant_of(const Entry& entry) {
    return sc_core::sc_time::from_value(static_cast<std::uint64_t>(entry.key >> 64));
  }
  // The entry's fields in registers, not an Entry in memory: a 16-byte load of a key just
  // stored as two halves cannot be forwarded from the store buffer and waits for every
  // store before it (at hundreds of sites, stores to cold lines).
  // Inline, so that the entry goes from registers to the queue's memory.
  void push(Key key, Client* client, const void* hint) {
    queue_.push(Entry{key, client, hint});
    if (!firing_) arm();
  }

  // A client that schedules itself again during its callback (a link with more in flight)
  // is held here and handed over after it: the heap then re-keys its top in place.
  CalendarQueue<Entry> queue_;
  Client* firing_client_ = nullptr;
  bool rescheduled_ = false;
  std::uint64_t rescheduled_at_ = 0, rescheduled_order_ = 0;
  const void* rescheduled_hint_ = nullptr;
  std::uint64_t next_order_ = 0;
  sc_core::sc_event event_;
  sc_core::sc_event catch_up_;  // no process waits on it: it only makes the kernel advance
  sc_core::sc_time armed_at_ = sc_core::SC_ZERO_TIME;
  bool armed_ = false;
  bool firing_ = false;
  bool run_ahead_enabled_ = false, run_ahead_forbidden_ = false;
  bool stopped_ = false;
  sc_core::sc_time now_;
  sc_core::sc_time horizon_ = sc_core::sc_max_time();
  // The kernel's next activity, valid until a client notifies a kernel event.
  sc_core::sc_time kernel_next_;
  static bool kernel_touched_;
  static EventCalendar* ahead_;  // the calendar running ahead of the kernel, if any
  // One calendar per simulation context; a context is never torn down while the process
  // runs, so neither is its calendar.
  static EventCalendar* current_;
  static sc_core::sc_simcontext* current_context_;
};

}  // namespace aggnet
