// A monotone priority queue (radix heap) on unique 128-bit keys whose high half is an
// instant.
//
// A discrete-event calendar only ever takes out its least key, and never adds one below
// the last taken: a radix heap keeps its items in buckets by the highest bit where their
// instant differs from the last instant taken. Adding is an append; taking the least,
// once the items at that instant are all taken, scans the lowest non-empty bucket once
// and spreads the rest of it over the buckets below. Each item moves down a few buckets
// over its life (about log2 of the time between its adding and its taking, in units of
// the events between) instead of the log4(n) levels of a 4-ary heap at every taking:
// with hundreds of links in flight that is the difference (docs/performance.md, step 10).
//
// The buckets go by the instant alone. The items due at the instant reached (often
// hundreds at once, when links run in step) are kept in key order as they come, which
// is key order but for a firing client's own next entry (placed by a short backward
// scan), and taken from the front: ties are not spread by their order bits.
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
    ++size_;
    const int b = bucket_of(instant_of(item.key));
    if (b == 0) return due_insert(item);
    auto& bucket = buckets_[static_cast<std::size_t>(b)];
    // Not push_back(item), which takes the item's address (for a reallocation): the item
    // then goes through memory, and an inlined caller's item built from registers is
    // stored in halves and loaded whole, which no store forwarding serves (the load waits
    // for every store before it).
    bucket.emplace_back();
    bucket.back() = item;
    nonempty_[b / 64] |= std::uint64_t{1} << (b % 64);
    if (item.key < least_key_) set_least(b, bucket.size() - 1, item.key);
  }

  /// The item with the least key. Precondition: !empty().
  const Item& top() {
    if (due_head_ < due_.size()) return due_[due_head_];
    if (!least_known_) find_least();
    return buckets_[static_cast<std::size_t>(least_bucket_)][least_index_];
  }

  /// Removes and returns the item with the least key. Precondition: !empty().
  Item pop() {
    if (due_head_ == due_.size()) return pop_least_bucket();
    const Item taken = due_[due_head_++];
    if (due_head_ == due_.size()) clear_due();
    last_ = taken.key;
    --size_;
    return taken;
  }

  /// Makes the heap hold `items`, the last key taken being `last` (<= every item's key).
  void assign(Key last, const std::vector<Item>& items) {
    for (auto& bucket : buckets_) bucket.clear();
    clear_due();
    nonempty_ = {};
    size_ = 0;
    forget_least();
    last_ = last;
    instant_ = instant_of(last);
    for (const Item& item : items) push(item);
  }

  /// Moves every item to the end of `out`, leaving the heap empty.
  void take_all(std::vector<Item>& out) {
    out.insert(out.end(), due_.begin() + static_cast<std::ptrdiff_t>(due_head_), due_.end());
    clear_due();
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
    for (std::size_t i = due_head_; i < due_.size(); ++i) {
      if (!match(due_[i])) continue;
      due_.erase(due_.begin() + static_cast<std::ptrdiff_t>(i));  // keeps the key order
      if (due_head_ == due_.size()) clear_due();
      --size_;
      return true;
    }
    for (std::size_t b = 1; b < kBuckets; ++b) {
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
  static constexpr std::size_t kBuckets = 65;  // 0 (due_): at the instant reached

  static std::uint64_t instant_of(Key key) { return static_cast<std::uint64_t>(key >> 64); }

  // 0 if at == instant_, else 1 + the index of the highest bit where they differ.
  int bucket_of(std::uint64_t at) const {
    const std::uint64_t diff = at ^ instant_;
    return diff != 0 ? 64 - __builtin_clzll(diff) : 0;
  }

  void clear_due() {
    due_.clear();
    due_head_ = 0;
  }

  // Into the items due at the instant reached, in key order: they come in it (the
  // calendar's keys grow as they are made) but for a firing's own next entry, added after
  // the entries its callback made.
  void due_insert(const Item& item) {
    due_.emplace_back();
    std::size_t i = due_.size() - 1;
    for (; i > due_head_ && item.key < due_[i - 1].key; --i) due_[i] = due_[i - 1];
    due_[i] = item;
  }

  // Nothing is due at the instant reached: the least item is taken from its bucket, its
  // instant is reached, and the rest of the bucket spread over the lower ones (each
  // differs from that instant below the bucket's bit), those at that instant into due_;
  // the least of the others is found as they move, below every other bucket's items.
  Item pop_least_bucket() {
    if (!least_known_) find_least();
    const int from = least_bucket_;
    auto& bucket = buckets_[static_cast<std::size_t>(from)];
    const Item taken = bucket[least_index_];
    bucket[least_index_] = bucket.back();
    bucket.pop_back();
    nonempty_[from / 64] &= ~(std::uint64_t{1} << (from % 64));
    last_ = taken.key;
    instant_ = instant_of(taken.key);
    --size_;
    least_key_ = ~Key{0};
    for (const Item& item : bucket) {
      const int b = bucket_of(instant_of(item.key));
      if (b == 0) {
        due_insert(item);
        continue;
      }
      auto& to = buckets_[static_cast<std::size_t>(b)];
      to.push_back(item);
      nonempty_[b / 64] |= std::uint64_t{1} << (b % 64);
      if (item.key < least_key_) set_least(b, to.size() - 1, item.key);
    }
    bucket.clear();
    least_known_ = least_key_ != ~Key{0};
    if (!least_known_) forget_least();
    return taken;
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

  // The least item of the lowest non-empty bucket (due_ is empty).
  void find_least() {
    int b = 0;
    for (int word = 0; word < 2; ++word) {
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

  std::vector<Item> due_;  // from due_head_ on: the items at instant_, in key order
  std::size_t due_head_ = 0;
  std::array<std::vector<Item>, kBuckets> buckets_;  // [0] unused
  std::array<std::uint64_t, 2> nonempty_{};
  Key last_ = 0;
  std::uint64_t instant_ = 0;  // the instant reached: of the last item taken
  std::size_t size_ = 0;
  // The least item outside due_, while least_known_; otherwise least_key_ is 0.
  bool least_known_ = false;
  int least_bucket_ = 0;
  std::size_t least_index_ = 0;
  Key least_key_ = 0;
};

}  // namespace aggnet
