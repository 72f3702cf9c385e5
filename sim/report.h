// Collects a finished simulation's measurements into the JSON document that
// `aggnet run --json` writes (layout: docs/run-json.md) and the table it prints.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/builder.h"

namespace aggnet {

/// Measurements of one NetworkSystem after sc_start() returned: `steps`, `sites`,
/// `links` arrays and a flat `summary` of numbers (keys carry units).
/// Errors: std::runtime_error if a cluster did not finish its steps (a deadlock).
nlohmann::json collect_report(const NetworkSystem& system);

/// Adds the co-located reference's numbers to `report` (colocated_step_time_s_mean and
/// slowdown_vs_colocated in the summary, the reference's own summary under "colocated").
void add_colocated(nlohmann::json& report, const nlohmann::json& colocated);

/// Writes every number of `document` as its key's unit says (keys carry units,
/// docs/run-json.md): a time (a key with a token s, ms, us, ns or ps, or a member of a
/// time-keyed object) rounded to whole ps and stored as the double nearest that exact
/// decimal (no 34.855000000000004); a whole count (tokens bytes, chunks, steps, ...) as an
/// integer. Rates and fractions stay as they are.
void tidy_numbers(nlohmann::json& document);

/// The human-readable table of a report (per-step rounds, sites, busiest links, summary).
std::string format_report(const nlohmann::json& report, std::size_t busiest_links = 8);

}  // namespace aggnet
