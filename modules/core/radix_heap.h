// A monotone priority queue (radix heap) on unique 128-bit keys.
//
// A discrete-event calendar only ever takes out its least key, and never adds one below
// the last taken: a radix heap keeps its items in 128 buckets by the highest bit where
// their key differs from the last one taken. Adding is an append; taking the least scans
// the lowest non-empty bucket once and spreads it over the buckets below. Each item
// moves down a few buckets over its life (about log2 of how many items are taken before
// it) instead of the log4(n) levels of a 4-ary heap at every taking: with hundreds of
// links in flight that is the difference (docs/performance.md, step 10).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace aggnet {

/// Item: has a member `key` of type unsigned __int128, unique among the items ever added.
/// push(item) requires item.key >= the key of the last item popped (std::logic_error).
template <typename Item>
class RadixHeap {
 public:
  __extension__ using Key = unsigned __int128;

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  void push(const Item& item) {
    if (item.key < last_) throw std::logic_error("RadixHeap: a key below the last one taken");
    const int b = bucket_of(item.key);
    auto& bucket = buckets_[static_cast<std::size_t>(b)];
    // Not push_back(item), which takes the item's address (for a reallocation): the item
    // then goes through memory, and an inlined caller's item built from registers is
    // stored in halves and loaded whole, which no store forwarding serves (the load waits
    // for every store before it).
    bucket.emplace_back();
    bucket.back() = item;
    nonempty_[b / 64] |= std::uint64_t{1} << (b % 64);
    ++size_;
    if (item.key < least_key_) set_least(b, bucket.size() - 1, item.key);
  }

  /// The item with the least key. Precondition: !empty().
  const Item& top() {
    if (!least_known_) find_least();
    return least();
  }

  /// Removes and returns the item with the least key. Precondition: !empty().
  // Every item left in the least item's bucket differs from the new last key below that
  // bucket's bit: they move down, below every other bucket, so the next least is among
  // them (found as they move) unless there are none.
  Item pop() {
    if (!least_known_) find_least();
    const int from = least_bucket_;
    auto& bucket = buckets_[static_cast<std::size_t>(from)];
    const Item taken = bucket[least_index_];
    last_ = taken.key;
    bucket[least_index_] = bucket.back();
    bucket.pop_back();
    nonempty_[from / 64] &= ~(std::uint64_t{1} << (from % 64));
    least_key_ = ~Key{0};
    for (const Item& item : bucket) {
      const int b = bucket_of(item.key);
      auto& to = buckets_[static_cast<std::size_t>(b)];
      to.push_back(item);
      nonempty_[b / 64] |= std::uint64_t{1} << (b % 64);
      if (item.key < least_key_) set_least(b, to.size() - 1, item.key);
    }
    least_known_ = !bucket.empty();
    if (!least_known_) forget_least();
    bucket.clear();
    --size_;
    return taken;
  }

  /// Makes the heap hold `items`, the last key taken being `last` (<= every item's key).
  void assign(Key last, const std::vector<Item>& items) {
    for (auto& bucket : buckets_) bucket.clear();
    nonempty_ = {};
    size_ = 0;
    forget_least();
    last_ = last;
    for (const Item& item : items) push(item);
  }

  /// Moves every item to the end of `out`, leaving the heap empty.
  void take_all(std::vector<Item>& out) {
    for (auto& bucket : buckets_) {
      out.insert(out.end(), bucket.begin(), bucket.end());
      bucket.clear();
    }
    nonempty_ = {};
    size_ = 0;
    forget_least();
  }

  /// Removes the first item `match` accepts, if any (a linear search, for rare events).
  template <typename Match>
  bool remove_if_first(Match match) {
    for (std::size_t b = 0; b < kBuckets; ++b) {
      auto& bucket = buckets_[b];
      for (std::size_t i = 0; i < bucket.size(); ++i) {
        if (!match(bucket[i])) continue;
        bucket[i] = bucket.back();
        bucket.pop_back();
        if (bucket.empty()) nonempty_[b / 64] &= ~(std::uint64_t{1} << (b % 64));
        --size_;
        forget_least();
        return true;
      }
    }
    return false;
  }

 private:
  static constexpr std::size_t kBuckets = 129;  // 0: equal to the last key taken

  // 0 if key == last_, else 1 + the index of the highest bit where they differ.
  int bucket_of(Key key) const {
    const Key diff = key ^ last_;
    const auto high = static_cast<std::uint64_t>(diff >> 64);
    const auto low = static_cast<std::uint64_t>(diff);
    if (high != 0) return 128 - __builtin_clzll(high);
    return low != 0 ? 64 - __builtin_clzll(low) : 0;
  }

  const Item& least() const {
    return buckets_[static_cast<std::size_t>(least_bucket_)][least_index_];
  }
  void set_least(int bucket, std::size_t index, Key key) {
    least_bucket_ = bucket;
    least_index_ = index;
    least_key_ = key;
  }
  // Unknown: no item is below the sentinel, so pushes leave it unknown.
  void forget_least() {
    least_known_ = false;
    least_key_ = 0;
  }

  void find_least() {
    int b = 0;
    for (int word = 0; word < 3; ++word) {
      if (nonempty_[word] != 0) {
        b = word * 64 + __builtin_ctzll(nonempty_[word]);
        break;
      }
    }
    const auto& bucket = buckets_[static_cast<std::size_t>(b)];
    std::size_t best = 0;
    Key best_key = bucket[0].key;
    for (std::size_t i = 1; i < bucket.size(); ++i) {
      if (bucket[i].key < best_key) {
        best = i;
        best_key = bucket[i].key;
      }
    }
    set_least(b, best, best_key);
    least_known_ = true;
  }

  std::array<std::vector<Item>, kBuckets> buckets_;
  std::array<std::uint64_t, 3> nonempty_{};
  Key last_ = 0;
  std::size_t size_ = 0;
  // The least item, while least_known_; otherwise least_key_ is 0.
  bool least_known_ = false;
  int least_bucket_ = 0;
  std::size_t least_index_ = 0;
  Key least_key_ = 0;
};

}  // namespace aggnet
