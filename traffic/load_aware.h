// Load-aware routing: link metrics (IGP weights) chosen for one group schedule so that its
// multicast trees spread over the trunks, in the style of Fortz & Thorup's OSPF weight
// setting (local search on the weights, each candidate judged by the analytic time model).
// Plain C++, no SystemC.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "model/run_options.h"
#include "model/schedule.h"

namespace aggnet {

struct Platform;
class Routing;

/// Streams (multicast trees, or unicast copies without multicast) that cross each
/// platform link in one direction, summed over the schedule's rounds: the bytes a link
/// carries per schedule period per byte of G. [link][0]: a -> b, [link][1]: b -> a.
std::vector<std::array<int, 2>> link_stream_loads(const Platform& platform, const Routing& routing,
                                                  const Schedule& schedule, bool multicast);

/// The most streams any link carries in one direction in any one round.
int busiest_round_load(const Platform& platform, const Routing& routing, const Schedule& schedule,
                       bool multicast);

struct LoadAwarePlan {
  std::vector<std::uint64_t> link_metric;  ///< per platform link; starts as its delay_ps
  double time_before_s = 0;                ///< analytic mean round time with delay routing
  double time_after_s = 0;                 ///< the same with link_metric
  int busiest_round_load_before = 0, busiest_round_load_after = 0;    ///< busiest_round_load
  int busiest_period_load_before = 0, busiest_period_load_after = 0;  ///< max link_stream_loads
  int evaluations = 0;  ///< time-model evaluations the search made
};

/// Plans link metrics for a group-average schedule. Start: every link's metric = its
/// delay (today's routes). Each iteration tries, for the kBusiest most loaded links (by
/// the schedule's per-round stream load), doubling and quadrupling its metric, and for
/// every other link halving it; the candidate with the lowest (analytic mean round time,
/// sum over links and directions of the squared period load) wins if that pair drops
/// (the second key lets it cross plateaus where one of several equally busy links moved);
/// it stops after kMaxIterations or when no candidate improves. Deterministic; the time
/// never rises (time_after_s <= time_before_s). Candidates are timed with `options` as given
/// (send offsets included), whose link_metric is ignored.
/// Errors: std::invalid_argument for a schedule that is not a group average.
LoadAwarePlan plan_load_aware_routing(const Platform& platform, const Schedule& schedule,
                                      const RunOptions& options);

}  // namespace aggnet
