// A run's physical bound (model/physical_bound.h) and its efficiency against it, in the run
// report (JSON summary and table).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "model/faults.h"
#include "model/platform.h"
#include "model/schedule.h"

namespace aggnet {

/// Adds report["bound"] (bound_s; set_by, the cut or path that sets it, in one line; the
/// largest path and cut terms; the method and the cuts evaluated) and to
/// report["summary"]: bound_s; and, for an all-reduce schedule that reaches the exact average
/// within the steps simulated and whose sites share one compute time c (`faults` included: a
/// slowed site has its own), exact_average_time_s (the
/// end of the step that completes it, less the r compute phases before it: with c = 0, the time
/// from the common start until every site holds the exact average) and efficiency = bound_s /
/// exact_average_time_s. Call after the steps are in the report.
void add_bound(nlohmann::json& report, const Platform& platform, const Schedule& schedule,
               std::uint64_t gradient_bytes, const FaultPlan& faults);

/// The table's lines for the bound ("" when the report has none).
std::string bound_lines(const nlohmann::json& report);

}  // namespace aggnet
