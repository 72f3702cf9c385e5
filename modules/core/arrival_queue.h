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
#include "modules/core/delivery_hint.h"
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

namespace detail {
/// An ArrivalQueue's FIFO item: the record as a base (no space when there is none).
template <typename Record>
struct ArrivalItem : Record {
  sc_core::sc_time at;
  tlm::tlm_generic_payload* trans;
};

// Optional callback hooks (WanLink's): refill() pushes the next transaction when the FIFO
// runs dry during a firing (with notify_at, which then schedules nothing), or returns
// false; scheduled(bool) follows the queue's scheduled flag.
template <typename Callback, typename = void>
struct Refills : std::false_type {};
template <typename Callback>
struct Refills<Callback, std::void_t<decltype(std::declval<Callback&>().refill())>>
    : std::true_type {};
template <typename Callback, typename = void>
struct WatchesSchedule : std::false_type {};
template <typename Callback>
struct WatchesSchedule<Callback,
                       std::void_t<decltype(std::declval<const Callback&>().scheduled(true))>>
    : std::true_type {};
}  // namespace detail

/// ArrivalQueue: `notify(trans, delay)` calls the callback with `trans` at now + delay.
/// Times must not decrease between calls (std::logic_error otherwise). The queue has no
/// SystemC process of its own: the simulation's EventCalendar fires it.
/// BasicArrivalQueue<Record> also keeps a Record per transaction (what its owner would
/// otherwise keep in a second FIFO of its own) and hands it to the callback.
/// A Callback other than the std::function (a small function object calling its owner)
/// saves the owner a cache line and an indirect call per delivery.
// The FIFO is a base, not a member, so that the flag packs into its tail padding: with an
// 8-byte callback the queue's header is one cache line, the last instant included.
template <typename Record, typename Callback = QueueFunction<Record>>
class BasicArrivalQueue : private EventCalendar::Client,
                          private RingFifo<detail::ArrivalItem<Record>> {
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

  // The time-order check reads the last instant from the header, not from the FIFO's last
  // item: that is in the items' array, a cache line of its own and cold at hundreds of
  // sites.
  void notify(tlm::tlm_generic_payload& trans, const sc_core::sc_time& delay,
              const Record& record = {}) {
    notify_at(trans, EventCalendar::now() + delay, record);
  }
  /// notify at the absolute instant `at` (not before now).
  void notify_at(tlm::tlm_generic_payload& trans, const sc_core::sc_time& at,
                 const Record& record = {}) {
    if (!fifo().empty() && at < last_at_) {
      throw std::logic_error(*name_ + ": arrivals out of time order");
    }
    fifo().push_back({record, at, &trans});
    last_at_ = at;
    // Unscheduled with a backlog only inside this queue's own firing (a callback notifying
    // it again): the earliest item waiting sets the next instant, not the new one.
    if (!scheduled_ && !refilling_) schedule(fifo().front().at);
  }
  std::size_t size() const { return fifo().size(); }
  bool scheduled() const { return scheduled_; }
  /// What the calendar fetches, three lines, just before this queue fires (besides the
  /// queue's own line): e.g. where its deliveries went last. Null: nothing.
  void set_hint(const void* hint) { hint_ = hint; }
  const void* hint() const { return hint_; }
  /// Sets the hint to what the delivery under way reaches first (DeliveryHint).
  DeliveryHint::Delivering delivering() { return DeliveryHint::Delivering(&hint_); }
  /// Removes every transaction waiting, oldest first, handing each (and its Record, if the
  /// queue keeps one) to `each` instead of the callback; the queue is then empty and
  /// unscheduled, and takes any time again.
  template <typename Each>
  void clear(Each&& each) {
    while (!fifo().empty()) {
      const Item item = fifo().front();
      fifo().pop_front();
      if constexpr (kHasRecord) {
        each(*item.trans, static_cast<const Record&>(item));
      } else {
        each(*item.trans);
      }
    }
    if (scheduled_) EventCalendar::current().cancel(*this);
    set_scheduled(false);
  }

 private:
  using Item = detail::ArrivalItem<Record>;
  using Fifo = RingFifo<Item>;
  Fifo& fifo() { return *this; }
  const Fifo& fifo() const { return *this; }

  // A callback may notify this queue again; what is due by now is delivered in this call.
  void on_calendar() override {
    set_scheduled(false);
    const sc_core::sc_time now = EventCalendar::now();
    while ((!fifo().empty() || refill()) && fifo().front().at <= now) {
      const Item item = fifo().front();
      fifo().pop_front();
      if constexpr (kHasRecord) {
        callback_(*item.trans, item);
      } else {
        callback_(*item.trans);
      }
    }
    if (fifo().empty() || scheduled_) return;
    schedule(fifo().front().at);
    prefetch_chunk(fifo().front().trans);
  }
  void schedule(const sc_core::sc_time& at) {
    set_scheduled(true);
    EventCalendar::current().schedule(*this, at, hint_);
  }
  void set_scheduled(bool on) {
    scheduled_ = on;
    if constexpr (detail::WatchesSchedule<Callback>::value) callback_.scheduled(on);
  }
  bool refill() {
    if constexpr (detail::Refills<Callback>::value) {
      refilling_ = true;
      const bool pushed = callback_.refill();
      refilling_ = false;
      return pushed;
    } else {
      return false;
    }
  }

  // What each firing reads first; the name only for errors. The flags first: they fill the
  // FIFO's tail padding.
  bool scheduled_ = false;
  bool refilling_ = false;  // inside refill(): what it pushes schedules nothing
  Callback callback_;
  const void* hint_ = nullptr;
  sc_core::sc_time last_at_;                 // the last item's instant, while the FIFO holds any
  std::unique_ptr<const std::string> name_;  // 8 bytes, not a string's 32
};

using ArrivalQueue = BasicArrivalQueue<NoRecord>;

}  // namespace aggnet
