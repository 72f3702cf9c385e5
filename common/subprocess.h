// Child processes, one way: a command is an argv (never a shell string). Every child
//  - runs in its own process group (its pid is the group id), so a signal reaches
//    everything it started;
//  - gets SIGKILL when the thread that started it dies (PR_SET_PDEATHSIG, checked after
//    the fork against the parent dying first): a killed parent leaves no orphans;
//  - reads stdin from /dev/null (or a file) and writes stdout / stderr to the parent's
//    streams, /dev/null, a file, or a capture buffer;
//  - past its timeout gets SIGTERM (the whole group), then SIGKILL after a grace period;
//  - when it ends, whatever is left of its group is SIGKILLed (the group cannot be
//    recycled meanwhile: the leader is checked with WNOWAIT before it is reaped).
// The end is reported as an exit status or a signal, with the elapsed wall time.
//
// Subprocess is one child; run_process runs one to the end; ProcessPool runs many, at
// most N at a time, with the same guarantees. None of them is thread-safe, and a child
// must be started from a thread that outlives it (PR_SET_PDEATHSIG follows the thread).
// Children are reaped by pid only: a waitpid(-1) elsewhere in the process would steal them.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace aggnet {

using Millis = std::chrono::milliseconds;

/// Where a child's standard output or standard error goes.
struct Redirect {
  enum class Kind {
    kInherit,   ///< the parent's stream
    kNull,      ///< /dev/null
    kFile,      ///< `path`, a new file (mode 0644) in place of what was there
    kCapture,   ///< read into ProcessResult::out / err
    kToStdout,  ///< stderr only: wherever stdout goes (2>&1)
  };
  Kind kind = Kind::kInherit;
  std::string path;

  static Redirect inherit() { return {}; }
  static Redirect null() { return {Kind::kNull, {}}; }
  static Redirect file(std::string p) { return {Kind::kFile, std::move(p)}; }
  static Redirect capture() { return {Kind::kCapture, {}}; }
  static Redirect to_stdout() { return {Kind::kToStdout, {}}; }
};

/// What to run and how.
struct Command {
  std::vector<std::string> argv;         ///< argv[0]: the program, looked up in PATH without a '/'
  Redirect out, err;                     ///< default: the parent's streams
  std::string stdin_path = "/dev/null";  ///< empty: the parent's stdin
  Millis timeout{0};        ///< 0: none; past it: SIGTERM to the group, SIGKILL after kill_grace
  Millis kill_grace{2000};  ///< SIGTERM to SIGKILL (timeout and terminate())
};

/// How a child ended.
struct ProcessResult {
  bool started = false;     ///< false: nothing ran (fork, exec or a redirect failed): `error`
  bool exited = false;      ///< ended by exit: `exit_code` holds the status
  int exit_code = -1;       ///< exit status when `exited`
  int signal = 0;           ///< the signal that ended it when started and not `exited`
  bool timed_out = false;   ///< the timeout sent it SIGTERM (and maybe SIGKILL)
  bool terminated = false;  ///< terminate() (ProcessPool::stop) sent it SIGTERM
  Millis timeout{0};        ///< the command's timeout (for describe())
  double elapsed_s = 0;     ///< wall time from the fork to the end
  std::string out, err;     ///< captured output (Redirect::capture())
  std::string error;        ///< why it did not start, e.g. "cannot execute x: No such file..."

  /// Exited with status 0 before any timeout.
  bool success() const { return started && exited && exit_code == 0 && !timed_out; }
  /// The exit status; -signal when a signal ended it; -1 when it did not start.
  int code() const;
  /// One line: "exit status 3", "killed by signal 11 (Segmentation fault)",
  /// "timed out after 5000 ms (killed by signal 15 (Terminated))", or `error`.
  std::string describe() const;
};

/// One child process; started by the constructor.
class Subprocess {
 public:
  /// Starts `command`. When it cannot start, finished() is true at once and
  /// result().error says why (no exception).
  explicit Subprocess(const Command& command);
  /// A child still running gets SIGKILL (its whole group) and is reaped.
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  /// The child's pid and process group id; -1 when it did not start.
  pid_t pid() const { return pid_; }
  /// Non-blocking: reads captured output, applies the timeout and the kill deadline,
  /// reaps the child when it has ended. True once finished.
  bool poll();
  /// Blocks until the child has ended (its timeout still applies).
  const ProcessResult& wait();
  /// SIGTERM to the group now, SIGKILL after `grace` (sent by poll()/wait()).
  /// No effect once finished.
  void terminate(Millis grace);
  bool finished() const { return finished_; }
  const ProcessResult& result() const { return result_; }
  /// Open capture pipes, to wait on with poll(2).
  std::vector<int> capture_fds() const;

 private:
  void start(const Command& command);
  void apply_deadlines();
  void drain();
  void finish(int wait_status);
  void close_pipes();

  pid_t pid_ = -1;
  int out_pipe_ = -1, err_pipe_ = -1;
  bool finished_ = false;
  Millis kill_grace_{0};
  std::chrono::steady_clock::time_point start_{}, timeout_at_{}, kill_at_{};
  bool has_timeout_ = false, kill_pending_ = false;
  ProcessResult result_;
};

/// Runs `command` to the end and returns how it ended.
ProcessResult run_process(const Command& command);

/// Runs commands, at most `max_running` at a time, in submission order. Each child has the
/// guarantees of Subprocess; the pool's destructor SIGKILLs and reaps those still running.
class ProcessPool {
 public:
  /// A finished command: its id (from submit) and how it ended.
  struct Finished {
    std::size_t id = 0;
    ProcessResult result;
  };

  explicit ProcessPool(std::size_t max_running);  ///< 0 counts as 1
  ~ProcessPool();
  ProcessPool(const ProcessPool&) = delete;
  ProcessPool& operator=(const ProcessPool&) = delete;

  /// Queues a command; it starts in a later wait_any(). Returns its id: 0, 1, 2, ... in
  /// submission order.
  std::size_t submit(Command command);
  /// Starts queued commands while fewer than `max_running` run and returns the commands
  /// that finished, waiting up to `max_wait` for one (returns at once when idle). A
  /// command that could not start is returned as finished (result.started false).
  std::vector<Finished> wait_any(Millis max_wait);
  /// Waits for every submitted command; returns those not returned before, in finishing
  /// order.
  std::vector<Finished> wait_all();
  /// Forgets the queued commands (they never start, nothing is returned for them).
  void drop_queued();
  /// drop_queued() and terminate(grace) every running child; they are returned by
  /// wait_any() as they end, with result.terminated set.
  void stop(Millis grace);

  std::size_t running() const { return running_.size(); }
  std::size_t queued() const { return queue_.size(); }
  bool idle() const { return running_.empty() && queue_.empty(); }
  std::size_t max_running() const { return max_running_; }

 private:
  struct Queued {
    std::size_t id;
    Command command;
  };
  struct Running {
    std::size_t id;
    std::unique_ptr<Subprocess> process;
  };
  void start_queued(std::vector<Finished>& done);
  void reap(std::vector<Finished>& done);

  std::size_t max_running_;
  std::size_t next_id_ = 0;
  std::deque<Queued> queue_;
  std::vector<Running> running_;
};

}  // namespace aggnet
