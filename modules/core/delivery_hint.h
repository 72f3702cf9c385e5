// Calendar hints learnt from deliveries (EventCalendar::schedule's hint).
#pragma once

#include <cstdint>

namespace aggnet {

/// A queue's calendar hint learnt from its deliveries: the hot state of the first module
/// that, during the queue's delivery, names its own (the next link a chunk is handed to,
/// a switch that forwards it on a tree), likely what its next delivery reaches too.
class DeliveryHint {
 public:
  /// While it lives, the first claim sets `*hint`.
  class Delivering {
   public:
    explicit Delivering(const void** hint) { pending_ = hint; }
    Delivering(const Delivering&) = delete;
    Delivering& operator=(const Delivering&) = delete;
    ~Delivering() { pending_ = nullptr; }  // however the delivery ends (an exception too)
  };
  /// `hot` (three lines from it) becomes the hint of the delivery under way, if it has
  /// none yet.
  static void claim(const void* hot) {
    if (pending_ == nullptr) return;
    *pending_ = hot;
    pending_ = nullptr;
  }
  /// As claim, for one line: `line` aligned to 64 bytes, tagged (start_of and one_line
  /// read the tag back).
  static void claim_line(const void* line) { claim(static_cast<const char*>(line) + kOneLine); }
  /// A hint's start and whether it is one line only.
  static const char* start_of(const void* hint) {
    return reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(hint) & ~kOneLine);
  }
  static bool one_line(const void* hint) {
    return (reinterpret_cast<std::uintptr_t>(hint) & kOneLine) != 0;
  }

 private:
  static constexpr std::uintptr_t kOneLine = 1;
  static inline const void** pending_ = nullptr;
};

}  // namespace aggnet
