// Reduction trees (Collective::kReductionTree) as SimGrid S4U actors, chunk by chunk
// (docs/validation.md, "Reduction trees"): the same forest, chunk ranges, offsets and pacing
// as aggnet's control plane (plan_forest), each cluster, FPGA and switch an actor, each
// directed link a FIFO port.
#pragma once

#include <map>
#include <memory>

#include "validation/scenario.h"

namespace aggnet::validation {

struct TreeRun;

/// Builds the platform and the actors of `scenario` (a reduction-tree schedule) in the
/// engine already created; engine.run() then runs them. The scenario must outlive the run.
/// Errors: ConfigError for a plan the control plane rejects.
std::shared_ptr<TreeRun> start_reduction_trees(const Scenario& scenario);

/// After engine.run(): per member site, when its last result reached its cluster, in s.
const std::map<int, double>& tree_done_s(const TreeRun& run);

}  // namespace aggnet::validation
