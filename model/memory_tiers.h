// The memory technology an FPGA aggregation buffer needs (`aggnet size-buffers`): tiers
// from on-chip SRAM (UltraRAM / block RAM) to HBM and DDR, each with a capacity, a peak
// bandwidth, a cost and an access energy. Defaults and their sources: docs/memory-tiers.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aggnet {

struct GroupPlan;  // model/control_plane.h, which needs the platform, which holds the tiers
struct RoundPlan;

struct MemoryTier {
  std::string name;                  ///< "on-chip", "HBM", "DDR"
  std::uint64_t capacity_bytes = 0;  ///< per FPGA
  double bandwidth_bytes_per_s = 0;  ///< peak, reads and writes together
  double cost_usd_per_gib = 0;       ///< of the buffer's size
  double energy_pj_per_bit = 0;      ///< per bit read or written
  std::string key;                   ///< under `memory_tiers:` in a platform file ("hbm")
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

/// Several sites' choices together: the costliest tier any needs (-1 once one fits none),
/// the costs and powers summed.
TierChoice total_of(const std::vector<TierChoice>& choices);

/// The chosen tier's name, or "none fits".
std::string tier_name(const std::vector<MemoryTier>& tiers, const TierChoice& choice);

/// The rate each member of `group` sends at when no buffer limits it, payload bytes/s:
/// (1 - margin) x the smallest of its link, pipeline and access limits (the pacing rate
/// of an unlimited buffer; margin 0 for credit flow control).
double unconstrained_stream_bytes_per_s(const GroupPlan& group, double margin);

/// Per site (indexed like Platform::sites): the largest buffer access rate over the groups
/// of two or more members it belongs to in `plans`, each group's streams at their
/// unconstrained rate; 0 for a site that aggregates in no round.
std::vector<double> peak_access_bytes_per_s(const std::vector<RoundPlan>& plans, std::size_t sites,
                                            double margin);

}  // namespace aggnet
