#include "modules/fpga/buffer_memory.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "modules/core/time.h"

namespace aggnet {

std::size_t BufferMemory::table_capacity(std::uint64_t num_slots) {
  // Room for every slot with few collisions, bounded: an overcommitted or huge buffer
  // spills into the table's overflow map instead.
  return static_cast<std::size_t>(std::min<std::uint64_t>(num_slots, 1u << 15) * 2);
}

BufferMemory::BufferMemory(std::uint64_t capacity_bytes, std::uint64_t slot_bytes,
                           bool slot_required)
    : capacity_bytes_(capacity_bytes),
      slot_bytes_(slot_bytes),
      num_slots_(slots_in(capacity_bytes, slot_bytes)),
      slots_(table_capacity(num_slots_)) {
  if (num_slots_ == 0 && slot_required) {
    throw std::invalid_argument("buffer of " + std::to_string(capacity_bytes) +
                                " bytes holds no aggregation slot of " +
                                std::to_string(slot_bytes) + " bytes");
  }
}

void BufferMemory::allocate(std::uint64_t key, const sc_core::sc_time& now) {
  if (holds(key)) throw std::logic_error("BufferMemory: slot already held for this chunk");
  if (full()) throw std::logic_error("BufferMemory: no free slot");
  slots_.insert(key) = now;
  ++allocations_;
  occupancy_bytes_ += slot_bytes_;
  high_water_bytes_ = std::max(high_water_bytes_, occupancy_bytes_);
}

void BufferMemory::free(std::uint64_t key, const sc_core::sc_time& now) {
  const sc_core::sc_time* since = slots_.find(key);
  if (since == nullptr) return;
  hold_ns_.add(to_ns(now - *since));
  slots_.erase(key);
  occupancy_bytes_ -= slot_bytes_;
}

}  // namespace aggnet
