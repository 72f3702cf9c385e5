// Runs sweep points, each in its own `aggnet run` process (a SystemC design elaborates
// once per process), with N workers, a per-point timeout and a progress bar with ETA.
// RunPool, the pool of `aggnet run` children under it, also drives the simulations of
// `aggnet size-buffers` (sizing/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/subprocess.h"
#include "sweeps/spec.h"
#include "sweeps/store.h"

namespace aggnet::sweeps {

/// One `aggnet run` child: its arguments after `run` (with its --json file) and the file
/// that takes its stdout and stderr.
struct RunTask {
  std::vector<std::string> args;
  std::string log_path;
};

/// How an `aggnet run` child ended, in the terms of the results database (README.md).
struct RunEnd {
  /// ok (exit 0 in time; its JSON is not checked here), bad_input (exit 2), failed (other
  /// exit, or it could not start), crashed (a signal), timeout.
  std::string status;
  std::string reason;    ///< "" when ok; "exit status 1", "killed by signal 11 (...)",
                         ///< "timeout after 5.0s", "cannot execute ..."
  std::string log_tail;  ///< when not ok: the log's last lines joined into one line
  int exit_code = 0;     ///< exit status; -signal when killed; -1 when it did not start
  double elapsed_s = 0;  ///< wall time of the child
  bool stopped = false;  ///< ended by RunPool::stop (an interrupted sweep)

  /// reason, plus ": " and the log tail when there is one.
  std::string error() const;
};

/// Classifies a finished `aggnet run` child (`timeout_ms`: its timeout, for the message;
/// `log_path`: its log, for the tail).
RunEnd classify_run(const ProcessResult& result, std::uint64_t timeout_ms,
                    const std::string& log_path);

/// `aggnet run` children on a ProcessPool (common/subprocess.h): at most `workers` at
/// once, in submission order, each `AGGNET run ARGS` in its own process group with stdin
/// from /dev/null and stdout+stderr in its log, SIGTERM past `timeout_ms` (0: none) and
/// SIGKILL 2 s later, killed with the runner (PR_SET_PDEATHSIG). Not thread-safe.
class RunPool {
 public:
  struct Done {
    std::size_t id = 0;  ///< from submit()
    RunEnd end;
  };

  RunPool(std::string aggnet, std::size_t workers, std::uint64_t timeout_ms);

  /// Queues a child; returns its id (0, 1, 2, ... in submission order).
  std::size_t submit(RunTask task);
  /// Starts queued children while fewer than `workers` run and returns those that ended,
  /// waiting up to `max_wait` for one.
  std::vector<Done> wait_any(Millis max_wait);
  /// Forgets the queued children (they never start; nothing is returned for them).
  void drop_queued() { pool_.drop_queued(); }
  /// drop_queued(); SIGTERM every running child now, SIGKILL after `grace`. They are
  /// returned by wait_any() with `stopped` set.
  void stop(Millis grace) { pool_.stop(grace); }

  std::size_t running() const { return pool_.running(); }
  bool idle() const { return pool_.idle(); }

 private:
  std::string aggnet_;
  std::uint64_t timeout_ms_;
  std::vector<std::string> logs_;  ///< by id
  ProcessPool pool_;
};

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
