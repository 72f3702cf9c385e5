// The analytic buffer bound of a reduction-tree schedule (docs/buffer-sizing.md,
// "Reduction trees"): per site, the slots its FPGA holds at once for the trees it sums.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "model/network_math.h"
#include "model/reduction_forest.h"
#include "sizing/buffer_sizing.h"

namespace aggnet {
namespace {

// Tree t's share of site u's bound: the slots its chunks hold at u on average (Little's
// law), its first chunk's hold at u (the skew of u's inputs, their services and the
// pipeline latency) over the tree's chunk spacing.
void bound_tree_at(const TreeChunkTimes& times, double spacing_ps, int t, int u, double chunk,
                   SiteAnalytic& a, double& slots) {
  const auto su = static_cast<std::size_t>(u);
  const std::uint64_t hold_ps = times.sum_done_ps[su] - times.first_input_ps[su];
  const double rate = chunk / spacing_ps * 1e12;
  slots += static_cast<double>(hold_ps) / spacing_ps;
  a.unconstrained_rate_bytes_per_s += rate;
  if (a.in_a_group && hold_ps <= a.hold_ps) return;
  a.in_a_group = true;
  a.round = t;
  a.hold_ps = hold_ps;
  a.skew_ps = times.last_input_ps[su] - times.first_input_ps[su];
  a.early_sender = times.first_from[su];
  a.late_sender = times.last_from[su];
}

}  // namespace

std::vector<SiteAnalytic> analytic_tree_bounds(const Platform& platform, const Schedule& schedule,
                                               const RunOptions& options) {
  const int n = static_cast<int>(platform.sites.size());
  const Routing routing(platform);
  const RunOptions o = per_transaction(options);
  const ForestPlan plan = plan_forest(platform, routing, schedule, o);
  const std::vector<double> spacing =
      tree_chunk_spacing_ps(platform, routing, schedule.forest, plan, o.chunk_bytes);
  const std::vector<double> access =
      tree_access_bytes_per_s(platform, routing, schedule.forest, plan, o.chunk_bytes);
  std::vector<SiteAnalytic> out(n);
  std::vector<double> slots(n, 0);
  for (int i = 0; i < n; ++i) out[i].site = i;
  for (std::size_t t = 0; t < schedule.forest.size(); ++t) {
    if (plan.ranges[t].size() == 0) continue;
    const ReductionTree& tree = schedule.forest[t];
    const auto times =
        tree_chunk_times(platform, routing, tree, plan.members, plan.offset_ps[t], o.chunk_bytes);
    const auto inputs = tree_inputs(tree, plan.members);
    for (int u : tree_sites(tree)) {
      const auto su = static_cast<std::size_t>(u);
      if (inputs[su] == 0) continue;
      bound_tree_at(times, spacing[t], static_cast<int>(t), u, static_cast<double>(o.chunk_bytes),
                    out[su], slots[su]);
    }
  }
  for (int i = 0; i < n; ++i) {
    auto& a = out[i];
    a.access_bytes_per_s = access[static_cast<std::size_t>(i)];
    if (a.in_a_group) a.group = plan.members;
    // The trees pace at their plan's interval whatever the buffer: a smaller one stalls
    // their inputs (no lower rate to trade for memory), so the bound is the full rate's.
    a.required_rate_bytes_per_s = a.unconstrained_rate_bytes_per_s;
    const auto s = static_cast<std::uint64_t>(std::ceil(slots[i] - 1e-9)) + 1;
    a.analytic_bytes = a.full_rate_bytes = s * o.chunk_bytes;
  }
  return out;
}

}  // namespace aggnet
