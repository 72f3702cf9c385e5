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

// Per tree, the steady spacing of its chunks at every FPGA it crosses, in ps: its pacing
// interval, or longer where a resource it crosses (a link, an access link, an FPGA) needs
// more time per chunk of this tree for every tree's chunks it carries.
std::vector<double> chunk_spacing_ps(const Platform& platform, const Routing& routing,
                                     const Schedule& schedule, const ForestPlan& plan,
                                     std::uint64_t chunk) {
  const auto& forest = schedule.forest;
  TreeWork all, one_chunk;
  std::vector<TreeWork> own(forest.size());
  for (std::size_t t = 0; t < forest.size(); ++t) {
    const auto n = static_cast<double>(plan.ranges[t].size());
    add_tree_work(platform, routing, forest[t], plan.members, chunk, n, all, one_chunk);
    TreeWork ignored;
    add_tree_work(platform, routing, forest[t], plan.members, chunk, 1, own[t], ignored);
  }
  std::vector<double> spacing(forest.size(), 0);
  for (std::size_t t = 0; t < forest.size(); ++t) {
    const auto n = static_cast<double>(plan.ranges[t].size());
    if (n == 0) continue;
    spacing[t] = static_cast<double>(forest[t].pacing_interval_ps);
    for (const auto& [resource, ps] : own[t]) spacing[t] = std::max(spacing[t], all[resource] / n);
  }
  return spacing;
}

// Tree t's share of site u's bound: the slots its chunks hold at u on average (Little's
// law), its first chunk's hold at u (the skew of u's inputs, their services and the
// pipeline latency) over the tree's chunk spacing.
void bound_tree_at(const TreeChunkTimes& times, double spacing_ps, int t, int inputs, int u,
                   double chunk, SiteAnalytic& a, double& slots) {
  const auto su = static_cast<std::size_t>(u);
  const std::uint64_t hold_ps = times.sum_done_ps[su] - times.first_input_ps[su];
  const double rate = chunk / spacing_ps * 1e12;
  slots += static_cast<double>(hold_ps) / spacing_ps;
  a.unconstrained_rate_bytes_per_s += rate;
  a.access_bytes_per_s += 2.0 * inputs * rate;  // each input written and read once
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
      chunk_spacing_ps(platform, routing, schedule, plan, o.chunk_bytes);
  std::vector<SiteAnalytic> out(n);
  std::vector<double> slots(n, 0);
  for (int i = 0; i < n; ++i) out[i].site = i;
  for (std::size_t t = 0; t < schedule.forest.size(); ++t) {
    if (plan.ranges[t].size() == 0) continue;
    const ReductionTree& tree = schedule.forest[t];
    const auto times =
        tree_chunk_times(platform, routing, tree, plan.members, plan.offset_ps[t], o.chunk_bytes);
    const auto children = tree_children(tree);
    for (int u : tree_sites(tree)) {
      const auto su = static_cast<std::size_t>(u);
      const bool member =
          std::find(plan.members.begin(), plan.members.end(), u) != plan.members.end();
      const int inputs = static_cast<int>(children[su].size()) + (member ? 1 : 0);
      if (inputs == 0) continue;
      bound_tree_at(times, spacing[t], static_cast<int>(t), inputs, u,
                    static_cast<double>(o.chunk_bytes), out[su], slots[su]);
    }
  }
  for (int i = 0; i < n; ++i) {
    auto& a = out[i];
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
