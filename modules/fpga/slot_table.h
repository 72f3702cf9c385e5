// A map from aggregation keys ((step << 32) | chunk) to per-slot state, laid out for the
// FPGA's access pattern: the chunks held at once are mostly a window of consecutive
// indices, so a direct-mapped array indexed by the chunk index holds them without
// hashing and without a node allocation per chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace aggnet {

/// SlotTable<V>: `insert`, `find`, `erase` by 64-bit key. A key lives in array entry
/// (chunk + step x 0x9E3779B9) mod capacity (a power of two). A key whose entry is taken
/// doubles the array (rehashing) while it is below `max_capacity`, and goes to an overflow
/// hash map beyond. An erased entry keeps its value object, so a V holding a vector keeps
/// its capacity when the entry is reused: `insert` returns the old value, the caller
/// resets what it uses. Memory follows the keys held at once, not `max_capacity`.
// An entry is its key and value, the key ~0 marking it free; an entry of 16, 32 or 64
// bytes is aligned to its size, so that reading one reads one cache line.
template <typename V>
class SlotTable {
 public:
  /// `max_capacity`: the array never grows beyond it (rounded down to a power of two).
  explicit SlotTable(std::size_t max_capacity) : entries_(kInitialCapacity) {
    while (max_capacity_ * 2 <= max_capacity) max_capacity_ *= 2;
  }

  /// The value of `key`, which must not be held (precondition).
  V& insert(std::uint64_t key) {
    ++size_;
    while (key != kFree && entries_[index(key)].key != kFree && entries_.size() < max_capacity_)
      grow();
    return place(key);
  }
  V* find(std::uint64_t key) {
    Entry& e = entries_[index(key)];
    if (e.key == key && key != kFree) return &e.value;
    if (overflow_.empty()) return nullptr;
    auto it = overflow_.find(key);
    return it == overflow_.end() ? nullptr : &it->second;
  }
  const V* find(std::uint64_t key) const { return const_cast<SlotTable*>(this)->find(key); }
  bool contains(std::uint64_t key) const { return find(key) != nullptr; }
  /// Removes `key`; returns whether it was held.
  bool erase(std::uint64_t key) {
    Entry& e = entries_[index(key)];
    if (e.key == key && key != kFree) {
      e.key = kFree;
    } else if (overflow_.erase(key) == 0) {
      return false;
    }
    --size_;
    return true;
  }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return entries_.size(); }
  /// Keys held in the overflow map (their array entry was taken at full capacity).
  std::size_t overflowed() const { return overflow_.size(); }

 private:
  static constexpr std::size_t kInitialCapacity = 16;
  static constexpr std::uint64_t kFree = ~std::uint64_t{0};  // a key kept in overflow_
  static constexpr std::size_t entry_alignment() {
    const std::size_t packed = sizeof(std::uint64_t) + sizeof(V);
    const std::size_t natural = alignof(V) > alignof(std::uint64_t) ? alignof(V) : 8;
    const bool line_fraction = packed <= 64 && (packed & (packed - 1)) == 0;
    return line_fraction && packed > natural ? packed : natural;
  }
  struct alignas(entry_alignment()) Entry {
    std::uint64_t key = kFree;
    V value{};
  };
  std::size_t index(std::uint64_t key) const {
    const std::uint64_t step = key >> 32, chunk = key & 0xffffffffu;
    return static_cast<std::size_t>((chunk + step * 0x9E3779B9u) & (entries_.size() - 1));
  }
  V& place(std::uint64_t key) {
    Entry& e = entries_[index(key)];
    if (e.key != kFree || key == kFree) return overflow_[key];
    e.key = key;
    return e.value;
  }
  void grow() {
    std::vector<Entry> old(entries_.size() * 2);
    old.swap(entries_);
    std::unordered_map<std::uint64_t, V> spilled;
    spilled.swap(overflow_);
    for (Entry& e : old)
      if (e.key != kFree) place(e.key) = std::move(e.value);
    for (auto& kv : spilled) place(kv.first) = std::move(kv.second);
  }

  std::vector<Entry> entries_;
  std::size_t max_capacity_ = kInitialCapacity, size_ = 0;
  std::unordered_map<std::uint64_t, V> overflow_;
};

}  // namespace aggnet
