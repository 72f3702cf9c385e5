#include "model/memory_tiers.h"

namespace aggnet {

namespace {
constexpr std::uint64_t kMiB = 1ull << 20, kGiB = 1ull << 30;
}  // namespace

const std::vector<MemoryTier>& default_memory_tiers() {
  // Sources and which values are assumptions: docs/memory-tiers.md.
  static const std::vector<MemoryTier> tiers = {
      {"on-chip", 32 * kMiB, 4e12, 1000.0, 1.0},
      {"HBM", 8 * kGiB, 460e9, 30.0, 7.0},
      {"DDR", 64 * kGiB, 77e9, 5.0, 28.0},
  };
  return tiers;
}

double aggregation_access_bytes_per_s(int members, double stream_bytes_per_s) {
  return 2.0 * members * stream_bytes_per_s;
}

TierChoice choose_memory_tier(const std::vector<MemoryTier>& tiers, std::uint64_t buffer_bytes,
                              double access_bytes_per_s) {
  TierChoice choice;
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    const MemoryTier& t = tiers[i];
    if (buffer_bytes > t.capacity_bytes || access_bytes_per_s > t.bandwidth_bytes_per_s) continue;
    choice.tier = static_cast<int>(i);
    choice.cost_usd = t.cost_usd_per_gib * static_cast<double>(buffer_bytes) / kGiB;
    choice.power_w = t.energy_pj_per_bit * 1e-12 * access_bytes_per_s * 8;
    return choice;
  }
  return choice;
}

}  // namespace aggnet
