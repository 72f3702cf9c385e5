// A payload event queue for transactions that mature in time order (a FIFO link's
// arrivals, a serial pipeline's outputs): O(1) per transaction.
//
// tlm_utils::peq_with_cb_and_phase keeps a time-ordered linked list and inserts by a
// linear scan, which costs O(n) per chunk when thousands are in flight on a long link.
#pragma once

#include <deque>
#include <functional>
#include <stdexcept>
#include <systemc>
#include <tlm>
#include <utility>

#include "modules/core/chunk.h"

namespace aggnet {

/// ArrivalQueue: `notify(trans, delay)` calls the callback with `trans` at now + delay.
/// Times must not decrease between calls (std::logic_error otherwise).
class ArrivalQueue : public sc_core::sc_module {
 public:
  using Callback = std::function<void(tlm::tlm_generic_payload&)>;

  ArrivalQueue(sc_core::sc_module_name name, Callback callback)
      : sc_module(name), callback_(std::move(callback)) {
    SC_HAS_PROCESS(ArrivalQueue);
    SC_METHOD(fire);
    sensitive << event_;
    dont_initialize();
  }

  void notify(tlm::tlm_generic_payload& trans, const sc_core::sc_time& delay) {
    const sc_core::sc_time at = sc_core::sc_time_stamp() + delay;
    if (!queue_.empty() && at < queue_.back().first) {
      throw std::logic_error(std::string(name()) + ": arrivals out of time order");
    }
    queue_.emplace_back(at, &trans);
    if (queue_.size() == 1) event_.notify(delay);
  }
  std::size_t size() const { return queue_.size(); }

 private:
  void fire() {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    while (!queue_.empty() && queue_.front().first <= now) {
      auto* trans = queue_.front().second;
      queue_.pop_front();
      callback_(*trans);
    }
    if (queue_.empty()) return;
    event_.notify(queue_.front().first - now);
    prefetch(queue_.front().second);
  }

  // The next transaction to mature has been idle (propagating) for long and is likely out
  // of cache; the next firing starts by reading it.
  static void prefetch(const tlm::tlm_generic_payload* trans) {
    const char* p = reinterpret_cast<const char*>(trans);
    for (std::size_t at = 0; at < kPooledBytes; at += 64) __builtin_prefetch(p + at);
  }
  // A ChunkPool transaction: the payload and its extension in one block (chunk.cpp).
  static constexpr std::size_t kPooledBytes = sizeof(ChunkTransaction) + sizeof(ChunkExtension);

  Callback callback_;
  sc_core::sc_event event_;
  std::deque<std::pair<sc_core::sc_time, tlm::tlm_generic_payload*>> queue_;
};

}  // namespace aggnet
