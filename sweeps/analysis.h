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

/// Compares the category axis (the `schedule` axis, else the first text axis) by
/// `metric` (lower is better) at every value of the buffer axis (option `buffer` or a
/// `set:...fpga.buffer` path), separately for every combination of the other axes. Says
/// where the best category changes, or that it does not and why (the buffer never binds
/// in the range, or the winner's lead still shrinks at the top of the range). Without a
/// buffer axis it prints the categories ranked by the metric. Only "ok" rows count.
Crossover analyze_crossover(ResultStore& store, const std::string& metric);

}  // namespace aggnet::sweeps
