// A payload event queue for transactions that mature in time order (a FIFO link's
// arrivals, a serial pipeline's outputs): O(1) per transaction.
//
// tlm_utils::peq_with_cb_and_phase keeps a time-ordered linked list and inserts by a
// linear scan, which costs O(n) per chunk when thousands are in flight on a long link.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <systemc>
#include <tlm>
#include <type_traits>
#include <utility>

#include "modules/core/chunk.h"
#include "modules/core/event_calendar.h"
#include "modules/core/ring_fifo.h"

namespace aggnet {

struct NoRecord {};

/// What a queue calls by default: a std::function taking the transaction (and its Record).
template <typename Record>
using QueueFunction =
    std::conditional_t<std::is_same_v<Record, NoRecord>,
                       std::function<void(tlm::tlm_generic_payload&)>,
                       std::function<void(tlm::tlm_generic_payload&, const Record&)>>;

/// ArrivalQueue: `notify(trans, delay)` calls the callback with `trans` at now + delay.
/// Times must not decrease between calls (std::logic_error otherwise). The queue has no
/// SystemC process of its own: the simulation's EventCalendar fires it.
/// BasicArrivalQueue<Record> also keeps a Record per transaction (what its owner would
/// otherwise keep in a second FIFO of its own) and hands it to the callback.
/// A Callback other than the std::function (a small function object calling its owner)
/// saves the owner a cache line and an indirect call per delivery.
template <typename Record, typename Callback = QueueFunction<Record>>
class BasicArrivalQueue : private EventCalendar::Client {
  static_assert(std::is_class_v<Record>, "a Record is a struct (stored as a base of the item)");

 public:
  static constexpr bool kHasRecord = !std::is_same_v<Record, NoRecord>;

  /// `name` names the queue in errors.
  BasicArrivalQueue(std::string name, Callback callback)
      : callback_(std::move(callback)),
        name_(std::make_unique<const std::string>(std::move(name))) {
    EventCalendar::current();  // made at elaboration, before any queue is scheduled
  }
  BasicArrivalQueue(const BasicArrivalQueue&) = delete;
  BasicArrivalQueue& operator=(const BasicArrivalQueue&) = delete;

  void notify(tlm::tlm_generic_payload& trans, const sc_core::sc_time& delay,
              const Record& record = {}) {
    const sc_core::sc_time at = EventCalendar::now() + delay;
    if (!queue_.empty() && at < queue_.back().at) {
      throw std::logic_error(*name_ + ": arrivals out of time order");
    }
    queue_.push_back({record, at, &trans});
    // Unscheduled with a backlog only inside this queue's own firing (a callback notifying
    // it again): the earliest item waiting sets the next instant, not the new one.
    if (!scheduled_) schedule(queue_.front().at);
  }
  std::size_t size() const { return queue_.size(); }
  /// What the calendar fetches, three lines, just before this queue fires (besides the
  /// queue's own line): e.g. where its deliveries went last. Null: nothing.
  void set_hint(const void* hint) { hint_ = hint; }
  const void* hint() const { return hint_; }
  /// Removes every transaction waiting, oldest first, handing each (and its Record, if the
  /// queue keeps one) to `each` instead of the callback; the queue is then empty and
  /// unscheduled, and takes any time again.
  template <typename Each>
  void clear(Each&& each) {
    while (!queue_.empty()) {
      const Item item = queue_.front();
      queue_.pop_front();
      if constexpr (kHasRecord) {
        each(*item.trans, static_cast<const Record&>(item));
      } else {
        each(*item.trans);
      }
    }
    if (scheduled_) EventCalendar::current().cancel(*this);
    scheduled_ = false;
  }

 private:
  // The record as a base: no space when there is none.
  struct Item : Record {
    sc_core::sc_time at;
    tlm::tlm_generic_payload* trans;
  };

  // A callback may notify this queue again; what is due by now is delivered in this call.
  void on_calendar() override {
    scheduled_ = false;
    const sc_core::sc_time now = EventCalendar::now();
    while (!queue_.empty() && queue_.front().at <= now) {
      const Item item = queue_.front();
      queue_.pop_front();
      if constexpr (kHasRecord) {
        callback_(*item.trans, item);
      } else {
        callback_(*item.trans);
      }
    }
    if (queue_.empty() || scheduled_) return;
    schedule(queue_.front().at);
    prefetch_chunk(queue_.front().trans);
  }
  void schedule(const sc_core::sc_time& at) {
    scheduled_ = true;
    EventCalendar::current().schedule(*this, at, hint_);
  }

  // What each firing reads first; the name only for errors.
  Callback callback_;
  const void* hint_ = nullptr;
  RingFifo<Item> queue_;
  bool scheduled_ = false;
  std::unique_ptr<const std::string> name_;  // 8 bytes, not a string's 32
};

using ArrivalQueue = BasicArrivalQueue<NoRecord>;

}  // namespace aggnet
