// Reading a finished sweep: the crossover (the buffer size at which the best schedule
// changes) and a ranking table for sweeps without a buffer axis (e.g. the ablation).
#pragma once

#include <string>

#include "sweeps/store.h"

namespace aggnet::sweeps {

/// The verdict on a sweep's results, as printed by `aggnet sweep`.
struct Crossover {
  std::string text;    ///< table plus the verdict, several lines, ends with '\n'
  bool found = false;  ///< the best schedule changes at least once within the range
};

/// The metric a sweep's schedules are ranked by, and a note saying why when it is not the
/// spec's.
struct RankingMetric {
  std::string key;   ///< summary key (column) to rank by, lower is better
  std::string note;  ///< "" or one line ending in '\n', for the ranking's header
};

/// Time to eps-consensus rather than a per-step cost: when `metric` is a per-step time
/// (step or round time, exposed comm, GPU idle fraction, slowdown vs co-located),
/// `comm_time_to_eps_s` (the decision metric without compute, traffic/time_model.h) if
/// every "ok" row has it (a row without it counts when its
/// rounds_to_eps is -1: never reaches eps), else `metric` with a note; any other metric
/// (time_to_eps_s, comm_time_to_eps_s, buffer or link figures) as given. A per-step metric
/// ranks a schedule that needs many rounds to mix (hierarchical: rho 0.82) ahead of one
/// that mixes in two.
RankingMetric ranking_metric(ResultStore& store, const std::string& metric);

/// Compares the category axis (the `schedule` axis, else the first text axis) by
/// ranking_metric(store, spec_metric) (lower is better) at every value of the buffer axis
/// (option `buffer` or a `set:...fpga.buffer` path), separately for every combination of
/// the other axes (link rates apart). Says where the best category changes, or that it
/// does not and why (the buffer never binds in the range, or the winner's lead still
/// shrinks at the top of the range). Without a buffer axis it prints the categories ranked
/// by that metric. Only "ok" rows count.
Crossover analyze_crossover(ResultStore& store, const std::string& spec_metric);

}  // namespace aggnet::sweeps
