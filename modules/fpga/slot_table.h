// A map from aggregation keys ((step << 32) | chunk) to per-slot state, laid out for the
// FPGA's access pattern: the chunks held at once are mostly a window of consecutive
// indices, so a direct-mapped array indexed by the chunk index holds them without
// hashing and without a node allocation per chunk.
#pragma once

#include <algorithm>
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
///
/// Side words: each held key has `side_words()` 64-bit words besides its value (0 until
/// `widen_side`), zeroed by `insert`. An array entry's words lie in a second array at
/// the entry's index, so their address follows from the key alone, as the entry's does:
/// both are fetched at once, where a block named by the value would be a second miss
/// after the first.
// An entry is its key and value, the key ~0 marking it free; an entry of 16, 32 or 64
// bytes is aligned to its size, so that reading one reads one cache line.
template <typename V>
class SlotTable {
 public:
  /// A held key's value and side words.
  struct Found {
    V* value;
    std::uint64_t* side;
  };

  /// `max_capacity`: the array never grows beyond it (rounded down to a power of two).
  explicit SlotTable(std::size_t max_capacity) : entries_(kInitialCapacity) {
    while (max_capacity_ * 2 <= max_capacity) max_capacity_ *= 2;
  }

  /// The value of `key`, which must not be held (precondition); its side words are zero.
  V& insert(std::uint64_t key) {
    ++size_;
    while (key != kFree && entries_[index(key)].key != kFree && entries_.size() < max_capacity_)
      grow();
    return place(key);
  }
  /// `key`'s value and side words, or {nullptr, nullptr}.
  Found find_with_side(std::uint64_t key) {
    const std::size_t i = index(key);
    Entry& e = entries_[i];
    if (e.key == key && key != kFree) return {&e.value, side_.data() + i * side_stride_};
    if (overflow_.empty()) return {nullptr, nullptr};
    auto it = overflow_.find(key);
    if (it == overflow_.end()) return {nullptr, nullptr};
    return {&it->second.value, it->second.side.data()};
  }
  V* find(std::uint64_t key) { return find_with_side(key).value; }
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

  std::size_t side_words() const { return side_stride_; }
  /// At least `words` side words per key from now on, the held keys' words kept (the
  /// new ones zero).
  void widen_side(std::size_t words) {
    if (words <= side_stride_) return;
    std::vector<std::uint64_t> wider(entries_.size() * words, 0);
    for (std::size_t i = 0; i < entries_.size(); ++i)
      std::copy_n(side_.begin() + i * side_stride_, side_stride_, wider.begin() + i * words);
    side_.swap(wider);
    side_stride_ = words;
    for (auto& kv : overflow_) kv.second.side.resize(words, 0);
  }

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
  struct Spilled {
    V value{};
    std::vector<std::uint64_t> side;
  };
  std::size_t index(std::uint64_t key) const {
    const std::uint64_t step = key >> 32, chunk = key & 0xffffffffu;
    return static_cast<std::size_t>((chunk + step * 0x9E3779B9u) & (entries_.size() - 1));
  }
  // `key`'s value, its side words zeroed.
  V& place(std::uint64_t key) {
    const std::size_t i = index(key);
    Entry& e = entries_[i];
    if (e.key != kFree || key == kFree) {
      Spilled& spilled = overflow_[key];
      spilled.side.assign(side_stride_, 0);
      return spilled.value;
    }
    e.key = key;
    std::fill_n(side_.begin() + i * side_stride_, side_stride_, 0);
    return e.value;
  }
  void grow() {
    std::vector<Entry> old(entries_.size() * 2);
    old.swap(entries_);
    std::vector<std::uint64_t> old_side(entries_.size() * side_stride_, 0);
    old_side.swap(side_);
    std::unordered_map<std::uint64_t, Spilled> spilled;
    spilled.swap(overflow_);
    for (std::size_t i = 0; i < old.size(); ++i)
      if (old[i].key != kFree)
        move_in(old[i].key, std::move(old[i].value), old_side.data() + i * side_stride_);
    for (auto& kv : spilled) move_in(kv.first, std::move(kv.second.value), kv.second.side.data());
  }
  void move_in(std::uint64_t key, V&& value, const std::uint64_t* side) {
    place(key) = std::move(value);
    std::copy_n(side, side_stride_, find_with_side(key).side);
  }

  // What a look-up reads first: the array's address and size, the side words' address
  // and stride.
  std::vector<Entry> entries_;
  std::vector<std::uint64_t> side_;  // side_stride_ words per entry of entries_
  std::size_t side_stride_ = 0;
  std::size_t max_capacity_ = kInitialCapacity, size_ = 0;
  std::unordered_map<std::uint64_t, Spilled> overflow_;
};

}  // namespace aggnet
