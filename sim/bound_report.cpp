#include "sim/bound_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/units.h"
#include "model/physical_bound.h"
#include "traffic/mixing.h"

namespace aggnet {

namespace {

// Collectives whose result is every member's sum (the others move data one way).
bool is_all_reduce(Collective c) {
  return c == Collective::kGroupAverage || c == Collective::kRing ||
         c == Collective::kParameterServer || c == Collective::kUnicastAllToAll ||
         c == Collective::kReductionTree;
}

// The compute time every site shares (slowed as `faults` say), or -1 when they differ.
double common_compute_s(const Platform& platform, const FaultPlan& faults) {
  const auto c = slowed_compute_ps(faults, platform, 0);
  for (int s = 1; s < static_cast<int>(platform.sites.size()); ++s)
    if (slowed_compute_ps(faults, platform, s) != c) return -1;
  return static_cast<double>(c) * 1e-12;
}

void add_efficiency(nlohmann::json& summary, const nlohmann::json& steps, const Platform& platform,
                    const Schedule& schedule, const FaultPlan& faults) {
  if (!is_all_reduce(schedule.collective)) return;
  const long rounds = rounds_to_exact(schedule, static_cast<int>(platform.sites.size()));
  const double compute_s = common_compute_s(platform, faults);
  if (rounds < 1 || static_cast<std::size_t>(rounds) > steps.size() || compute_s < 0) return;
  const double end_s = steps[static_cast<std::size_t>(rounds - 1)]["end_s"].get<double>();
  const double exact_s = end_s - static_cast<double>(rounds) * compute_s;
  summary["exact_average_time_s"] = exact_s;
  if (exact_s > 0) summary["efficiency"] = summary["bound_s"].get<double>() / exact_s;
}

}  // namespace

void add_bound(nlohmann::json& report, const Platform& platform, const Schedule& schedule,
               std::uint64_t gradient_bytes, const FaultPlan& faults) {
  if (platform.sites.size() < 2 || gradient_bytes == 0) return;
  const PhysicalBound b = physical_bound(platform, gradient_bytes);
  auto& summary = report["summary"];
  summary["bound_s"] = b.bound_s;
  report["bound"] = {{"bound_s", b.bound_s},
                     {"set_by", b.binding.describe(platform)},
                     {"path_s", b.path.time_s},
                     {"path", b.path.describe(platform)},
                     {"cut_s", b.cut.time_s},
                     {"cut", b.cut.describe(platform)},
                     {"method", bound_method_name(b.method)},
                     {"cuts_evaluated", b.cuts_evaluated}};
  if (platform.sites.size() <= static_cast<std::size_t>(kForestMaxSites)) {
    const double forest = forest_rate_bytes_per_s(platform);
    report["bound"]["forest_rate_gbps"] = forest * 8e-9;
    report["bound"]["forest_bandwidth_s"] = static_cast<double>(gradient_bytes) / forest;
  }
  add_efficiency(summary, report["steps"], platform, schedule, faults);
}

std::string bound_lines(const nlohmann::json& report) {
  if (!report.contains("bound")) return "";
  const auto& sm = report["summary"];
  const auto& b = report["bound"];
  std::string out = fmt::format("  physical bound           {} ({}; {})\n",
                                format_time_ps(b["bound_s"].get<double>() * 1e12),
                                b["set_by"].get<std::string>(), b["method"].get<std::string>());
  if (sm.contains("efficiency"))
    out += fmt::format(
        "  efficiency               {:.1f}% (bound / time to the exact average, {}, "
        "compute left out)\n",
        100 * sm["efficiency"].get<double>(),
        format_time_ps(sm["exact_average_time_s"].get<double>() * 1e12));
  return out;
}

}  // namespace aggnet
