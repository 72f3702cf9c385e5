#include "model/memory_tiers.h"

#include <algorithm>

#include "model/control_plane.h"

namespace aggnet {

namespace {
constexpr std::uint64_t kMiB = 1ull << 20, kGiB = 1ull << 30;
}  // namespace

const std::vector<MemoryTier>& default_memory_tiers() {
  // Sources and which values are assumptions: docs/memory-tiers.md.
  static const std::vector<MemoryTier> tiers = {
      {"on-chip", 32 * kMiB, 4e12, 1000.0, 1.0, "on_chip"},
      {"HBM", 8 * kGiB, 460e9, 30.0, 7.0, "hbm"},
      {"DDR", 64 * kGiB, 77e9, 5.0, 28.0, "ddr"},
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

TierChoice total_of(const std::vector<TierChoice>& choices) {
  TierChoice total{0};
  for (const TierChoice& c : choices) {
    total.tier = total.tier < 0 || c.tier < 0 ? -1 : std::max(total.tier, c.tier);
    total.cost_usd += c.cost_usd;
    total.power_w += c.power_w;
  }
  return total;
}

std::string tier_name(const std::vector<MemoryTier>& tiers, const TierChoice& choice) {
  return choice.tier < 0 ? "none fits" : tiers.at(static_cast<std::size_t>(choice.tier)).name;
}

double unconstrained_stream_bytes_per_s(const GroupPlan& group, double margin) {
  return (1.0 - margin) * std::min({group.link_rate, group.pipeline_rate, group.access_rate});
}

std::vector<double> peak_access_bytes_per_s(const std::vector<RoundPlan>& plans, std::size_t sites,
                                            double margin) {
  std::vector<double> peak(sites, 0.0);
  for (const RoundPlan& plan : plans) {
    for (const GroupPlan& g : plan.groups) {
      if (g.members.size() < 2) continue;
      const double access = aggregation_access_bytes_per_s(
          static_cast<int>(g.members.size()), unconstrained_stream_bytes_per_s(g, margin));
      for (int m : g.members) {
        double& p = peak.at(static_cast<std::size_t>(m));
        p = std::max(p, access);
      }
    }
  }
  return peak;
}

}  // namespace aggnet
