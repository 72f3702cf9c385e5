// Calendar hints learnt from deliveries (EventCalendar::schedule's hint).
#pragma once

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
  /// `hot` becomes the hint of the delivery under way, if it has none yet.
  static void claim(const void* hot) {
    if (pending_ == nullptr) return;
    *pending_ = hot;
    pending_ = nullptr;
  }

 private:
  static inline const void** pending_ = nullptr;
};

}  // namespace aggnet
