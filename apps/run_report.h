// `aggnet run --report FILE.md`: a Markdown report of the run with its PNG figures next
// to it, drawn by scripts/run_report.py from the run's JSON and module statistics
// (docs/run-report.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/atomic_file.h"

namespace aggnet {

/// The files one report writes: FILE.md, then STEM.occupancy.png, STEM.links.png and
/// STEM.alignment.png next to it (STEM: FILE without its extension).
std::vector<std::string> report_paths(const std::string& report_md);

/// Checks the report's paths up front: FILE ends in .md, and every path of it is a
/// regular file or new, in an existing directory. Errors: ConfigError naming --report.
void check_report_paths(const std::string& where, const std::string& report_md);

/// Runs scripts/run_report.py ($AGGNET_REPORT_SCRIPT overrides it) on the run's JSON and
/// statistics in a temporary folder next to the report and stages what it wrote into
/// `outputs` (nothing reaches the report's paths before outputs.commit()).
/// Errors: std::runtime_error naming the script and how it ended.
void stage_report(const std::string& report_md, const nlohmann::json& run,
                  const nlohmann::json& stats, OutputBatch& outputs);

}  // namespace aggnet
