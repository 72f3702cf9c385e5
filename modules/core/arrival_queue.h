// A payload event queue for transactions that mature in time order (a FIFO link's
// arrivals, a serial pipeline's outputs): O(1) per transaction.
//
// tlm_utils::peq_with_cb_and_phase keeps a time-ordered linked list and inserts by a
// linear scan, which costs O(n) per chunk when thousands are in flight on a long link.
#pragma once

#include <deque>
#include <functional>
#include <stdexcept>
#include <string>
#include <systemc>
#include <tlm>
#include <utility>

#include "modules/core/chunk.h"
#include "modules/core/event_calendar.h"

namespace aggnet {

/// ArrivalQueue: `notify(trans, delay)` calls the callback with `trans` at now + delay.
/// Times must not decrease between calls (std::logic_error otherwise). The queue has no
/// SystemC process of its own: the simulation's EventCalendar fires it.
class ArrivalQueue : private EventCalendar::Client {
 public:
  using Callback = std::function<void(tlm::tlm_generic_payload&)>;

  /// `name` names the queue in errors.
  ArrivalQueue(std::string name, Callback callback)
      : name_(std::move(name)),
        callback_(std::move(callback)),
        calendar_(EventCalendar::current()) {}
  ArrivalQueue(const ArrivalQueue&) = delete;
  ArrivalQueue& operator=(const ArrivalQueue&) = delete;

  void notify(tlm::tlm_generic_payload& trans, const sc_core::sc_time& delay) {
    const sc_core::sc_time at = EventCalendar::now() + delay;
    if (!queue_.empty() && at < queue_.back().first) {
      throw std::logic_error(name_ + ": arrivals out of time order");
    }
    queue_.emplace_back(at, &trans);
    if (!scheduled_) schedule(at);
  }
  std::size_t size() const { return queue_.size(); }

 private:
  // A callback may notify this queue again; what is due by now is delivered in this call.
  void on_calendar() override {
    scheduled_ = false;
    const sc_core::sc_time now = EventCalendar::now();
    while (!queue_.empty() && queue_.front().first <= now) {
      auto* trans = queue_.front().second;
      queue_.pop_front();
      callback_(*trans);
    }
    if (queue_.empty() || scheduled_) return;
    schedule(queue_.front().first);
    prefetch(queue_.front().second);
  }
  void schedule(const sc_core::sc_time& at) {
    scheduled_ = true;
    calendar_.schedule(*this, at);
  }

  // The next transaction to mature has been idle (propagating) for long and is likely out
  // of cache; the next firing starts by reading it.
  static void prefetch(const tlm::tlm_generic_payload* trans) {
    const char* p = reinterpret_cast<const char*>(trans);
    for (std::size_t at = 0; at < kPooledBytes; at += 64) __builtin_prefetch(p + at);
  }
  // A ChunkPool transaction: the payload and its extension in one block (chunk.cpp).
  static constexpr std::size_t kPooledBytes = sizeof(ChunkTransaction) + sizeof(ChunkExtension);

  std::string name_;
  Callback callback_;
  EventCalendar& calendar_;
  bool scheduled_ = false;
  std::deque<std::pair<sc_core::sc_time, tlm::tlm_generic_payload*>> queue_;
};

}  // namespace aggnet
