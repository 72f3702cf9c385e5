#include "modules/fpga/buffer_memory.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace aggnet {

BufferMemory::BufferMemory(std::uint64_t capacity_bytes, std::uint64_t slot_bytes)
    : capacity_bytes_(capacity_bytes),
      slot_bytes_(slot_bytes),
      num_slots_(slot_bytes ? capacity_bytes / slot_bytes : 0) {
  if (num_slots_ == 0) {
    throw std::invalid_argument("buffer of " + std::to_string(capacity_bytes) +
                                " bytes holds no aggregation slot of " +
                                std::to_string(slot_bytes) + " bytes");
  }
  slots_.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(num_slots_, 1u << 16)));
}

void BufferMemory::allocate(std::uint64_t key, const sc_core::sc_time& now) {
  if (holds(key)) throw std::logic_error("BufferMemory: slot already held for this chunk");
  if (full()) throw std::logic_error("BufferMemory: no free slot");
  slots_.emplace(key, now);
  ++allocations_;
  occupancy_bytes_ += slot_bytes_;
  high_water_bytes_ = std::max(high_water_bytes_, occupancy_bytes_);
}

void BufferMemory::free(std::uint64_t key, const sc_core::sc_time& now) {
  auto it = slots_.find(key);
  if (it == slots_.end()) return;
  hold_ns_.add((now - it->second).to_seconds() * 1e9);
  slots_.erase(it);
  occupancy_bytes_ -= slot_bytes_;
}

}  // namespace aggnet
