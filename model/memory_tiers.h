// The memory technology an FPGA aggregation buffer needs (`aggnet size-buffers`): tiers
// from on-chip SRAM (UltraRAM / block RAM) to HBM and DDR, each with a capacity, a peak
// bandwidth, a cost and an access energy. Defaults and their sources: docs/memory-tiers.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aggnet {

struct MemoryTier {
  std::string name;
  std::uint64_t capacity_bytes = 0;  ///< per FPGA
  double bandwidth_bytes_per_s = 0;  ///< peak, reads and writes together
  double cost_usd_per_gib = 0;       ///< of the buffer's size
  double energy_pj_per_bit = 0;      ///< per bit read or written
};

/// On-chip SRAM, HBM, DDR, in the order they are tried (docs/memory-tiers.md).
const std::vector<MemoryTier>& default_memory_tiers();

/// Memory traffic of an aggregation buffer fed by `members` streams of
/// `stream_bytes_per_s` each: every contribution is read and written back into its slot
/// (the first only written), and the sum is read out once: 2 x members accesses per chunk.
double aggregation_access_bytes_per_s(int members, double stream_bytes_per_s);

/// The first tier that holds `buffer_bytes` and sustains `access_bytes_per_s`, with what
/// that buffer costs and draws in it.
struct TierChoice {
  int tier = -1;  ///< index into the tiers; -1: none fits
  double cost_usd = 0;
  double power_w = 0;  ///< access energy x access rate
};
TierChoice choose_memory_tier(const std::vector<MemoryTier>& tiers, std::uint64_t buffer_bytes,
                              double access_bytes_per_s);

}  // namespace aggnet
