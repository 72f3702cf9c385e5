// Process-per-point runner: fork/exec of `aggnet run`, each child in its own process
// group (so a timeout kills everything it started) and tied to the runner's life with
// PR_SET_PDEATHSIG (a SIGKILLed sweep leaves no orphans writing results).
#include "sweeps/runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace aggnet::sweeps {
namespace {

using Clock = std::chrono::steady_clock;

volatile sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int sig) { g_stop_signal = sig; }

/// Installs SIGINT/SIGTERM handlers for the runner's lifetime and restores the old ones.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

struct Job {
  const Point* point = nullptr;
  Clock::time_point start;
  std::string json_tmp, json_final, log;
  bool timed_out = false;
  bool stopped = false;  ///< terminated because the sweep was interrupted
  std::optional<Clock::time_point> term_sent;
};

/// Last non-empty lines of a log file, joined into one line of at most `max_chars`.
std::string log_tail(const std::string& path, std::size_t max_chars = 400) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    auto b = line.find_first_not_of(" \t\r");
    if (b != std::string::npos) lines.push_back(line.substr(b));
  }
  std::string out;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::string cand = out.empty() ? *it : *it + " | " + out;
    if (cand.size() > max_chars) {
      if (out.empty()) out = it->substr(0, max_chars);
      break;
    }
    out = cand;
    if (lines.rend() - it >= 3) break;  // at most 3 lines
  }
  return out;
}

pid_t spawn(const std::string& exe, const std::vector<std::string>& args, const std::string& log,
            std::string& error) {
  std::vector<std::string> argv_s = {exe, "run"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    error = fmt::format("fork failed: {}", std::strerror(errno));
    return -1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    execv(exe.c_str(), argv.data());
    dprintf(STDERR_FILENO, "cannot execute %s: %s\n", exe.c_str(), std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);  // also in the parent, so the group exists before any kill()
  return pid;
}

/// The progress bar (stderr). On a terminal it redraws one line; otherwise it prints a
/// line every 10% or 10 s so logs stay short.
class Progress {
 public:
  Progress(std::size_t todo, bool enabled)
      : todo_(todo), enabled_(enabled), tty_(isatty(STDERR_FILENO)), start_(Clock::now()) {}

  void update(std::size_t done, std::size_t ok, std::size_t failed, std::size_t running,
              bool force = false) {
    if (!enabled_ || todo_ == 0) return;
    if (force && done == last_done_ && running == last_running_ && drawn_any_) return;
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (tty_) {
      if (!force && now - last_ < std::chrono::milliseconds(200)) return;
    } else {
      const std::size_t decile = done * 10 / todo_;
      const bool due = decile != last_decile_ || now - last_ > std::chrono::seconds(10);
      if (!force && !due) return;
      last_decile_ = decile;
    }
    last_ = now;
    last_done_ = done;
    last_running_ = running;
    drawn_any_ = true;
    const int width = 30;
    const int filled = static_cast<int>(width * done / todo_);
    std::string bar(filled, '=');
    if (filled < width) bar += '>' + std::string(width - filled - 1, ' ');
    std::string eta = "--";
    if (done > 0 && done < todo_) eta = format_duration(elapsed / done * (todo_ - done));
    if (done == todo_) eta = "0s";
    std::string line = fmt::format(
        "[{}] {}/{} {:3d}%  ok {}  failed {}  running {}  elapsed {}  ETA {}", bar, done, todo_,
        static_cast<int>(100 * done / todo_), ok, failed, running, format_duration(elapsed), eta);
    if (tty_) {
      std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
      drawn_ = true;
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }

  void finish() {
    if (drawn_) std::fprintf(stderr, "\n");
    drawn_ = false;
  }

 private:
  std::size_t todo_;
  bool enabled_, tty_;
  bool drawn_ = false;
  Clock::time_point start_, last_{};
  std::size_t last_decile_ = static_cast<std::size_t>(-1);
  std::size_t last_done_ = 0, last_running_ = 0;
  bool drawn_any_ = false;
};

}  // namespace

std::string format_duration(double seconds) {
  if (seconds < 0) seconds = 0;
  long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02d}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02d}s", s / 60, s % 60);
  if (seconds < 10) return fmt::format("{:.1f}s", seconds);
  return fmt::format("{}s", s);
}

bool read_run_json(const std::string& path, PointResult& result, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "the run exited 0 but wrote no JSON file";
    return false;
  }
  nlohmann::json j;
  try {
    in >> j;
  } catch (const std::exception& e) {
    error = fmt::format("the run's JSON does not parse: {}", e.what());
    return false;
  }
  if (!j.is_object() || !j.contains("summary") || !j["summary"].is_object()) {
    error = "the run's JSON has no `summary` object";
    return false;
  }
  result.metrics.clear();
  for (const auto& [key, value] : j["summary"].items()) {
    if (value.is_number()) result.metrics.emplace_back(key, value.get<double>());
    if (value.is_boolean()) result.metrics.emplace_back(key, value.get<bool>() ? 1.0 : 0.0);
  }
  if (j.contains("aggnet_version") && j["aggnet_version"].is_string()) {
    result.aggnet_version = j["aggnet_version"].get<std::string>();
  }
  return true;
}

RunSummary run_points(const SweepSpec& spec, const std::vector<Point>& points,
                      const std::set<std::string>& skip_ids, ResultStore& store,
                      const RunnerOptions& opt) {
  RunSummary sum;
  sum.total = points.size();
  std::vector<const Point*> queue;
  for (const auto& p : points) {
    if (skip_ids.count(p.id)) {
      ++sum.skipped;
    } else {
      queue.push_back(&p);
    }
  }
  const fs::path runs = fs::path(opt.out_dir) / "runs";
  const fs::path logs = fs::path(opt.out_dir) / "logs";
  fs::create_directories(runs);
  fs::create_directories(logs);
  // Partial JSON files of a sweep that was killed (its points were not recorded).
  for (const auto& entry : fs::directory_iterator(runs)) {
    if (entry.path().filename().string().find(".part-") != std::string::npos) {
      std::error_code ec;
      fs::remove(entry.path(), ec);
    }
  }

  StopSignals signals;
  Progress progress(queue.size(), opt.progress);
  const auto t0 = Clock::now();
  const std::size_t workers = std::max<std::size_t>(1, opt.workers);
  std::map<pid_t, Job> running;
  std::size_t next = 0, done = 0;
  bool stopping = false;
  Clock::time_point kill_at{};
  unsigned long serial = 0;

  auto record_failure = [&](const Point& p, PointResult& r) {
    store.record(spec, p, r);
    ++sum.failed;
    ++done;
    sum.failures.emplace_back(fmt::format("{} [{}]", p.describe(spec), p.id), r.error);
  };

  progress.update(0, 0, 0, 0, true);
  while (next < queue.size() || !running.empty()) {
    if (g_stop_signal && !stopping) {
      stopping = true;
      sum.interrupted = true;
      for (auto& [pid, job] : running) {
        kill(-pid, SIGTERM);
        job.stopped = true;
      }
      kill_at = Clock::now() + std::chrono::seconds(3);
    }
    if (stopping && running.empty()) break;

    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      auto it = running.find(pid);
      if (it == running.end()) continue;
      Job job = std::move(it->second);
      running.erase(it);
      const Point& p = *job.point;
      kill(-pid, SIGKILL);  // anything the run left behind in its group
      PointResult r;
      r.elapsed_s = std::chrono::duration<double>(Clock::now() - job.start).count();
      r.aggnet_version = AGGNET_VERSION;
      const bool exited = WIFEXITED(status);
      r.exit_code = exited ? WEXITSTATUS(status) : -WTERMSIG(status);
      std::error_code ec;
      if (exited && r.exit_code == 0 && !job.timed_out) {
        std::string err;
        if (read_run_json(job.json_tmp, r, err)) {
          fs::rename(job.json_tmp, job.json_final, ec);
          store.record(spec, p, r);
          ++sum.ok;
          ++done;
        } else {
          r.status = "failed";
          r.error = err;
          record_failure(p, r);
        }
        continue;
      }
      fs::remove(job.json_tmp, ec);
      if (job.stopped) continue;  // interrupted: not recorded, rerun with --resume
      const std::string tail = log_tail(job.log);
      if (job.timed_out) {
        r.status = "timeout";
        r.error = fmt::format("timeout after {}", format_duration(opt.timeout_ms / 1000.0));
      } else if (!exited) {
        r.status = "crashed";
        r.error =
            fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
      } else {
        r.status = r.exit_code == 2 ? "bad_input" : "failed";
        r.error = fmt::format("exit status {}", r.exit_code);
      }
      if (!tail.empty()) r.error += ": " + tail;
      record_failure(p, r);
    }

    const auto now = Clock::now();
    for (auto& [cpid, job] : running) {
      if (opt.timeout_ms > 0 && !job.timed_out && !job.stopped &&
          now - job.start > std::chrono::milliseconds(opt.timeout_ms)) {
        job.timed_out = true;
        job.term_sent = now;
        kill(-cpid, SIGTERM);
      }
      if (job.term_sent && now - *job.term_sent > std::chrono::seconds(2)) kill(-cpid, SIGKILL);
      if (stopping && now > kill_at) kill(-cpid, SIGKILL);
    }
    while (!stopping && running.size() < workers && next < queue.size()) {
      const Point& p = *queue[next++];
      Job job;
      job.point = &p;
      job.json_final = (runs / (p.id + ".json")).string();
      job.json_tmp = (runs / fmt::format("{}.part-{}-{}.json", p.id, getpid(), serial++)).string();
      job.log = (logs / (p.id + ".log")).string();
      std::error_code ec;
      fs::remove(job.json_tmp, ec);
      std::string err;
      job.start = Clock::now();
      pid_t pid = spawn(opt.aggnet, p.run_args(job.json_tmp, spec.dir), job.log, err);
      if (pid < 0) {
        PointResult r;
        r.status = "failed";
        r.error = err;
        r.exit_code = -1;
        record_failure(p, r);
        continue;
      }
      running.emplace(pid, std::move(job));
    }

    progress.update(done, sum.ok, sum.failed, running.size());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  progress.update(done, sum.ok, sum.failed, 0, true);
  progress.finish();
  sum.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return sum;
}

}  // namespace aggnet::sweeps
