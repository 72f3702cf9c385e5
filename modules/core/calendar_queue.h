// The event calendar's pending entries: a 4-ary heap while few, a radix heap while many.
//
// A link with more in flight fires, then schedules itself again. With a few dozen entries
// the heap does that best: the entry being fired stays at the top and is re-keyed in
// place, one sift of a couple of levels. With hundreds (a ring or an all-to-all of hundreds
// of sites) every sift goes four or five levels deep, while the radix heap's cost hardly
// grows; its short, variable loops cost more branch mispredictions than the heap's sift at
// a dozen entries (docs/performance.md, step 10). Both take entries in exactly key order,
// so which one holds them changes no result.
#pragma once

#include <cstddef>
#include <vector>

#include "modules/core/radix_heap.h"

namespace aggnet {

/// Entry: a unique unsigned __int128 `key` and a `client` pointer.
/// Firing protocol: top() is the least entry; begin_firing() before its callback,
/// end_firing() after. Entries pushed meanwhile have larger keys than the one firing.
template <typename Entry>
class CalendarQueue {
 public:
  __extension__ using Key = unsigned __int128;

  bool empty() const { return radix_ ? radix_heap_.empty() : heap_.empty(); }
  std::size_t size() const { return radix_ ? radix_heap_.size() : heap_.size(); }
  bool in_radix_form() const { return radix_; }
  const Entry& top() { return radix_ ? radix_heap_.top() : heap_.front(); }

  void push(const Entry& entry) {
    if (radix_) {
      radix_heap_.push(entry);
      return;
    }
    heap_.emplace_back();  // not push_back(entry): see RadixHeap::push
    rise(heap_.size() - 1, entry);
  }

  /// The top entry is being fired: the heap keeps it at its top meanwhile (nothing pushed
  /// is earlier), the radix heap takes it out.
  void begin_firing() {
    fired_key_ = top().key;
    if (radix_) radix_heap_.pop();
  }

  /// The entry most likely fired next (to prefetch what it reads), or null.
  const Entry* next_entry() {
    if (radix_) return radix_heap_.empty() ? nullptr : &radix_heap_.top();
    if (heap_.size() < 5) return nullptr;  // in cache anyway
    const std::size_t a = 1 + (earlier(heap_[2], heap_[1]) ? 1 : 0);
    const std::size_t b = 3 + (earlier(heap_[4], heap_[3]) ? 1 : 0);
    return &heap_[earlier(heap_[b], heap_[a]) ? b : a];
  }

  /// After the callback: `rescheduled` is the fired client's new entry, if any.
  void end_firing(const Entry* rescheduled) {
    if (radix_) {
      if (rescheduled != nullptr) radix_heap_.push(*rescheduled);
    } else if (rescheduled != nullptr) {
      sink(0, *rescheduled);
    } else {
      pop_top();
    }
    if (!radix_ && heap_.size() >= kToRadix) {
      radix_heap_.assign(fired_key_, heap_);  // every key now or later exceeds the fired one
      heap_.clear();
      radix_ = true;
    } else if (radix_ && radix_heap_.size() <= kToHeap) {
      radix_heap_.take_all(heap_);
      for (std::size_t i = 1; i < heap_.size(); ++i) sift_up(i);
      radix_ = false;
    }
  }

  /// Removes `client`'s entry, if any; `firing`: the heap's top is being fired, skip it.
  template <typename Client>
  bool remove(const Client* client, bool firing) {
    if (radix_)
      return radix_heap_.remove_if_first([client](const Entry& e) { return e.client == client; });
    for (std::size_t i = firing ? 1 : 0; i < heap_.size(); ++i) {
      if (heap_[i].client != client) continue;
      heap_[i] = heap_.back();
      heap_.pop_back();
      if (i < heap_.size()) sift_down(i);  // rises again if it belongs higher
      return true;
    }
    return false;
  }

 private:
  // Hysteresis: a size moving about one threshold does not move the entries every time.
  static constexpr std::size_t kToRadix = 128, kToHeap = 48;

  static bool earlier(const Entry& a, const Entry& b) { return a.key < b.key; }

  // Nothing pushed during a callback is earlier than the entry being fired (its time is
  // now, its order the smallest), so that entry stays at index 0 meanwhile.
  void sift_up(std::size_t i) { rise(i, Entry(heap_[i])); }

  // Puts `entry` at the hole i or above it.
  void rise(std::size_t i, const Entry entry) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!earlier(entry, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = entry;
  }

  // Bottom-up: the hole at i follows the smaller child down to a leaf, then the entry
  // rises from there. An entry re-keyed at the top usually belongs near the bottom (its
  // next instant is later than most), so this skips the unpredictable "stop here?" test
  // of every level; the child selection is branch-free.
  void sift_down(std::size_t i) { sink(i, Entry(heap_[i])); }

  // Puts `entry` at the hole i or below it.
  void sink(std::size_t i, const Entry entry) {
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
      for (std::size_t c = first + 1; c < size; ++c)
        best = earlier(heap_[c], heap_[best]) ? c : best;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = entry;
    sift_up(i);
  }

  void pop_top() {
    heap_[0] = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
  }

  bool radix_ = false;
  std::vector<Entry> heap_;  // a 4-ary min-heap on key (radix_ false)
  RadixHeap<Entry> radix_heap_;
  Key fired_key_ = 0;
};

}  // namespace aggnet
