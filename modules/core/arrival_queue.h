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
#include <type_traits>
#include <utility>

#include "modules/core/chunk.h"
#include "modules/core/event_calendar.h"

namespace aggnet {

struct NoRecord {};

/// ArrivalQueue: `notify(trans, delay)` calls the callback with `trans` at now + delay.
/// Times must not decrease between calls (std::logic_error otherwise). The queue has no
/// SystemC process of its own: the simulation's EventCalendar fires it.
/// BasicArrivalQueue<Record> also keeps a Record per transaction (what its owner would
/// otherwise keep in a second FIFO of its own) and hands it to the callback.
template <typename Record>
class BasicArrivalQueue : private EventCalendar::Client {
  static_assert(std::is_class_v<Record>, "a Record is a struct (stored as a base of the item)");

 public:
  static constexpr bool kHasRecord = !std::is_same_v<Record, NoRecord>;
  using Callback =
      std::conditional_t<kHasRecord, std::function<void(tlm::tlm_generic_payload&, const Record&)>,
                         std::function<void(tlm::tlm_generic_payload&)>>;

  /// `name` names the queue in errors.
  BasicArrivalQueue(std::string name, Callback callback)
      : callback_(std::move(callback)),
        calendar_(EventCalendar::current()),
        name_(std::move(name)) {}
  BasicArrivalQueue(const BasicArrivalQueue&) = delete;
  BasicArrivalQueue& operator=(const BasicArrivalQueue&) = delete;

  void notify(tlm::tlm_generic_payload& trans, const sc_core::sc_time& delay,
              const Record& record = {}) {
    const sc_core::sc_time at = EventCalendar::now() + delay;
    if (!queue_.empty() && at < queue_.back().at) {
      throw std::logic_error(name_ + ": arrivals out of time order");
    }
    queue_.push_back({record, at, &trans});
    if (!scheduled_) schedule(at);
  }
  std::size_t size() const { return queue_.size(); }

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
    prefetch(queue_.front().trans);
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

  // What each firing reads first; the name only for errors.
  Callback callback_;
  EventCalendar& calendar_;
  bool scheduled_ = false;
  std::deque<Item> queue_;
  std::string name_;
};

using ArrivalQueue = BasicArrivalQueue<NoRecord>;

}  // namespace aggnet
