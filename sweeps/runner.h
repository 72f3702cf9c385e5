// Runs sweep points, each in its own `aggnet run` process (a SystemC design elaborates
// once per process), with N workers, a per-point timeout and a progress bar with ETA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sweeps/spec.h"
#include "sweeps/store.h"

namespace aggnet::sweeps {

/// How to run the points.
struct RunnerOptions {
  std::string aggnet;            ///< path of the aggnet executable (children run `aggnet run`)
  std::size_t workers = 1;       ///< concurrent children
  std::uint64_t timeout_ms = 0;  ///< per-point timeout; 0 = none
  std::string out_dir;           ///< per-point JSON in out_dir/runs, logs in out_dir/logs
  bool progress = true;          ///< progress bar with ETA on stderr
};

/// What a run of the runner did.
struct RunSummary {
  std::size_t total = 0;    ///< points given
  std::size_t skipped = 0;  ///< already finished (resume)
  std::size_t ok = 0;
  std::size_t failed = 0;
  bool interrupted = false;  ///< SIGINT/SIGTERM: running points were stopped, not recorded
  double elapsed_s = 0;
  /// Failed points: description ("buffer=64KiB schedule=triads [id]") and error text.
  std::vector<std::pair<std::string, std::string>> failures;
};

/// Runs `points` that are not in `skip_ids` and records each result in `store` as soon
/// as its process ends. Returns when all are done or on SIGINT/SIGTERM (then the running
/// children are terminated and `interrupted` is set). Errors: StoreError.
RunSummary run_points(const SweepSpec& spec, const std::vector<Point>& points,
                      const std::set<std::string>& skip_ids, ResultStore& store,
                      const RunnerOptions& options);

/// Reads a finished point's JSON file into `result` (metrics and version). Returns false
/// and sets `error` when the file is missing or has no numeric `summary` object.
bool read_run_json(const std::string& path, PointResult& result, std::string& error);

/// "1h02m", "3m05s", "12s" for progress and summaries.
std::string format_duration(double seconds);

}  // namespace aggnet::sweeps
