// The FPGA's buffer memory, carved into aggregation slots of one chunk each.
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

#include "modules/core/statistics.h"
#include "modules/fpga/slot_table.h"

namespace aggnet {

/// BufferMemory: `capacity_bytes / slot_bytes` aggregation slots, each holding the
/// partial sum of one (step, chunk). Tracks occupancy in bytes (slots in use x
/// slot_bytes), its high-water mark and slot hold times. `slot_required` false: a buffer
/// that never sums (a pass-through FPGA's) may hold none.
/// Errors: std::invalid_argument if the capacity holds no slot and one is required.
class BufferMemory {
 public:
  BufferMemory(std::uint64_t capacity_bytes, std::uint64_t slot_bytes, bool slot_required = true);

  std::uint64_t num_slots() const { return num_slots_; }
  std::uint64_t slot_bytes() const { return slot_bytes_; }
  std::uint64_t capacity_bytes() const { return capacity_bytes_; }
  bool holds(std::uint64_t key) const { return slots_.contains(key); }
  bool full() const { return !overcommit_ && slots_.size() >= num_slots_; }
  /// Test-only: slots may be taken beyond the capacity (breaks the capacity invariant).
  void set_test_overcommit(bool on) { overcommit_ = on; }
  std::size_t slots_in_use() const { return slots_.size(); }
  /// Takes a slot for `key` at `now`. Precondition: !full() && !holds(key).
  void allocate(std::uint64_t key, const sc_core::sc_time& now);
  /// Frees `key`'s slot at `now` and records its hold time.
  void free(std::uint64_t key, const sc_core::sc_time& now);

  /// Bytes in use; stable address for VCD tracing.
  const std::uint64_t& occupancy_bytes() const { return occupancy_bytes_; }
  std::uint64_t high_water_bytes() const { return high_water_bytes_; }
  std::uint64_t allocations() const { return allocations_; }
  const Histogram& hold_time_ns() const { return hold_ns_; }

  /// Slots of `slot_bytes` in `capacity_bytes` (0 for no slot size).
  static std::uint64_t slots_in(std::uint64_t capacity_bytes, std::uint64_t slot_bytes) {
    return slot_bytes ? capacity_bytes / slot_bytes : 0;
  }
  /// Bound on the direct-mapped array of a slot table for `num_slots` slots.
  static std::size_t table_capacity(std::uint64_t num_slots);

 private:
  std::uint64_t capacity_bytes_, slot_bytes_, num_slots_;
  bool overcommit_ = false;            // next to num_slots_: full() reads both per contribution
  SlotTable<sc_core::sc_time> slots_;  // key -> allocation time
  std::uint64_t occupancy_bytes_ = 0, high_water_bytes_ = 0, allocations_ = 0;
  Histogram hold_ns_;
};

}  // namespace aggnet
