// A FIFO in one power-of-two array that doubles when full.
//
// An ArrivalQueue is read and written once per link crossing, long after its last use: a
// std::deque's 80-byte header (two four-pointer iterators) and its block map cost cache
// misses there, this header is 24 bytes and the items are contiguous.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>

namespace aggnet {

/// RingFifo<T>: push_back, front, back, pop_front in O(1) (amortised for push_back).
/// T must be default-constructible and copy- or move-assignable. Errors: std::length_error
/// beyond 2^31 items.
template <typename T>
class RingFifo {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  /// Precondition for front, back and pop_front: !empty().
  T& front() { return items_[head_]; }
  const T& front() const { return items_[head_]; }
  const T& back() const { return items_[(head_ + size_ - 1) & mask_]; }
  void push_back(const T& item) {
    if (size_ == capacity()) grow();
    items_[(head_ + size_) & mask_] = item;
    ++size_;
  }
  // Emptied, the queue starts again at the array's first item: a link holding a few items
  // at a time then keeps to the first line or two of its array instead of cycling through
  // all of them, and a 243-site ring's hot state comes closer to fitting in the L2 cache
  // (docs/performance.md, step 11). A branch, not arithmetic: a queue that streams (most of
  // a 9-site run's) predicts it, and a head computed from the size lengthens every pop.
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    if (--size_ == 0) head_ = 0;
  }

 private:
  static constexpr std::uint32_t kInitialCapacity = 16;
  static constexpr std::uint32_t kMaxCapacity = std::uint32_t{1} << 31;

  std::uint32_t capacity() const { return items_ ? mask_ + 1 : 0; }
  void grow() {
    const std::uint32_t old = capacity();
    if (old == kMaxCapacity) throw std::length_error("RingFifo: more than 2^31 items");
    const std::uint32_t fresh = old == 0 ? kInitialCapacity : 2 * old;
    auto items = std::make_unique<T[]>(fresh);
    for (std::uint32_t i = 0; i < size_; ++i) items[i] = std::move(items_[(head_ + i) & mask_]);
    items_ = std::move(items);
    head_ = 0;
    mask_ = fresh - 1;
  }

  std::unique_ptr<T[]> items_;
  std::uint32_t head_ = 0, size_ = 0, mask_ = 0;
};

}  // namespace aggnet
