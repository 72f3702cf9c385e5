// Slurm back end: the sweep as a job array, one shard per array task, each task running
// `aggnet sweep SPEC --out DIR/shard-K --shard K/N`; then `aggnet sweep merge`.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/subprocess.h"

namespace aggnet::sweeps {

/// sbatch/squeue missing, failing or hanging. what() is one line.
class SlurmError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What the job array runs.
struct SlurmJob {
  std::string aggnet;      ///< absolute path of the aggnet executable
  std::string spec;        ///< absolute path of the spec file
  std::string out_dir;     ///< absolute output directory (shards in out_dir/shard-K)
  std::string workdir;     ///< the tasks' working directory (relative spec paths resolve here)
  std::size_t shards = 2;  ///< array tasks 0..shards-1
  std::size_t workers_per_task = 1;      ///< --workers of each task (and --cpus-per-task)
  std::string timeout;                   ///< per-point timeout passed on ("10m"), may be empty
  std::vector<std::string> sbatch_args;  ///< extra sbatch options, one per entry
};

/// Writes out_dir/sweep.sbatch and returns its path. Errors: SlurmError.
std::string write_sbatch_script(const SlurmJob& job);

/// Submits a script with `sbatch --parsable` and returns the job id. Errors: SlurmError
/// with sbatch's message.
std::string submit_sbatch(const std::string& script);

/// Blocks until no task of the job is pending or running (polls squeue). Errors:
/// SlurmError when squeue keeps failing.
void wait_for_job(const std::string& job_id, double poll_s = 1.0);

/// Results databases of the shards that exist, in shard order.
std::vector<std::string> shard_databases(const std::string& out_dir, std::size_t shards);

/// Runs a program (argv[0] looked up in PATH; no shell) through common/subprocess.h,
/// killing it (its whole process group) after `timeout` (0: none). Returns its exit
/// status (128 + signal when a signal ended it, -1 when it could not start) and its
/// stdout+stderr (or why it could not start, or that it timed out) in `output`.
int run_program(const std::vector<std::string>& argv, std::string& output,
                Millis timeout = Millis(0));

/// run_program of `/bin/sh -c command`, for callers that build a shell command line
/// (quote every word with shell_quote). Prefer run_program with an argv.
int run_command(const std::string& command, std::string& output);

/// Quotes a string for /bin/sh.
std::string shell_quote(const std::string& s);

}  // namespace aggnet::sweeps
