// Process-per-point runner: every point is an `aggnet run` child on a RunPool, which runs
// it through common/subprocess.h (own process group, so a timeout kills everything it
// started; PR_SET_PDEATHSIG, so a SIGKILLed sweep leaves no orphans writing results).
#include "sweeps/runner.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/host.h"

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

/// Last non-empty lines of a log file, joined into one line of at most `max_chars`.
std::string last_log_lines(const std::string& path, std::size_t max_chars = 400) {
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

namespace {
/// The flat fields (text, numbers, booleans as 0/1) of every object in array `key`.
std::vector<Record> read_records(const nlohmann::json& j, const char* key) {
  std::vector<Record> out;
  if (!j.contains(key) || !j[key].is_array()) return out;
  for (const auto& item : j[key]) {
    if (!item.is_object()) continue;
    Record rec;
    for (const auto& [field, value] : item.items()) {
      FieldValue v;
      if (value.is_string()) {
        v.is_text = true;
        v.text = value.get<std::string>();
      } else if (value.is_number()) {
        v.number = value.get<double>();
      } else if (value.is_boolean()) {
        v.number = value.get<bool>() ? 1 : 0;
      } else {
        continue;  // nested values stay in runs/*.json
      }
      rec.emplace_back(field, std::move(v));
    }
    // The fields that name the site or link first, so a table reads naturally.
    std::stable_partition(rec.begin(), rec.end(), [](const auto& f) {
      return f.first == "site" || f.first == "from" || f.first == "to" || f.first == "kind";
    });
    out.push_back(std::move(rec));
  }
  return out;
}
}  // namespace

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
  result.sites = read_records(j, "sites");
  result.links = read_records(j, "links");
  if (j.contains("aggnet_version") && j["aggnet_version"].is_string()) {
    result.aggnet_version = j["aggnet_version"].get<std::string>();
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// RunPool

std::string RunEnd::error() const { return log_tail.empty() ? reason : reason + ": " + log_tail; }

RunEnd classify_run(const ProcessResult& p, std::uint64_t timeout_ms, const std::string& log_path) {
  RunEnd e;
  e.elapsed_s = p.elapsed_s;
  e.exit_code = p.code();
  e.stopped = p.terminated;
  if (p.success()) {
    e.status = "ok";
  } else if (!p.started) {
    e.status = "failed";
    e.reason = p.error;
  } else if (p.timed_out) {
    e.status = "timeout";
    e.reason = fmt::format("timeout after {}", format_duration(timeout_ms / 1000.0));
  } else if (!p.exited) {
    e.status = "crashed";
    e.reason = fmt::format("killed by signal {} ({})", p.signal, strsignal(p.signal));
  } else {
    e.status = p.exit_code == 2 ? "bad_input" : "failed";
    e.reason = fmt::format("exit status {}", p.exit_code);
  }
  if (e.status != "ok" && p.started) e.log_tail = last_log_lines(log_path);
  return e;
}

RunPool::RunPool(std::string aggnet, std::size_t workers, std::uint64_t timeout_ms)
    // A bare name is a file in the working directory here, not a PATH search.
    : aggnet_(aggnet.find('/') == std::string::npos ? "./" + aggnet : std::move(aggnet)),
      timeout_ms_(timeout_ms),
      pool_(workers) {}

std::size_t RunPool::submit(RunTask task) {
  Command c;
  c.argv = {aggnet_, "run"};
  c.argv.insert(c.argv.end(), task.args.begin(), task.args.end());
  c.out = Redirect::file(task.log_path);
  c.err = Redirect::to_stdout();
  c.timeout = Millis(timeout_ms_);
  c.kill_grace = std::chrono::seconds(2);
  logs_.push_back(std::move(task.log_path));
  return pool_.submit(std::move(c));
}

std::vector<RunPool::Done> RunPool::wait_any(Millis max_wait) {
  std::vector<Done> done;
  for (const auto& f : pool_.wait_any(max_wait)) {
    done.push_back({f.id, classify_run(f.result, timeout_ms_, logs_.at(f.id))});
  }
  return done;
}

// ---------------------------------------------------------------------------------------
// run_points

namespace {

/// Where one point's files go.
struct Job {
  const Point* point = nullptr;
  std::string json_tmp, json_final, log;
};

/// Creates out_dir/runs and out_dir/logs and removes the partial JSON files of a sweep
/// that was killed (its points were not recorded).
void prepare_dirs(const fs::path& runs, const fs::path& logs) {
  fs::create_directories(runs);
  fs::create_directories(logs);
  for (const auto& entry : fs::directory_iterator(runs)) {
    if (entry.path().filename().string().find(".part-") != std::string::npos) {
      std::error_code ec;
      fs::remove(entry.path(), ec);
    }
  }
}

/// Records finished points in the store and counts them.
class Recorder {
 public:
  Recorder(const SweepSpec& spec, ResultStore& store, RunSummary& sum)
      : spec_(spec), store_(store), sum_(sum) {}

  std::size_t done() const { return done_; }

  /// One ended child. A point stopped by an interrupt is not recorded (rerun on resume).
  void finish(const Job& job, const RunEnd& end) {
    PointResult r;
    r.wall_time_s = end.elapsed_s;
    r.aggnet_version = AGGNET_VERSION;
    r.exit_code = end.exit_code;
    std::error_code ec;
    std::string err;
    if (end.status == "ok" && read_run_json(job.json_tmp, r, err)) {
      fs::rename(job.json_tmp, job.json_final, ec);
      store_.record(spec_, *job.point, r);
      ++sum_.ok;
      ++done_;
    } else if (end.status == "ok") {
      failure(*job.point, r, "failed", err);  // exit 0 without a usable JSON
    } else {
      fs::remove(job.json_tmp, ec);
      if (!end.stopped) failure(*job.point, r, end.status, end.error());
    }
  }

 private:
  void failure(const Point& p, PointResult& r, const std::string& status,
               const std::string& error) {
    r.status = status;
    r.error = error;
    store_.record(spec_, p, r);
    ++sum_.failed;
    ++done_;
    sum_.failures.emplace_back(fmt::format("{} [{}]", p.describe(spec_), p.id), r.error);
  }

  const SweepSpec& spec_;
  ResultStore& store_;
  RunSummary& sum_;
  std::size_t done_ = 0;
};

/// Queues the points not in `skip_ids` (counted in `skipped`) on the pool; returns their
/// jobs, indexed by pool id.
std::vector<Job> submit_points(const SweepSpec& spec, const std::vector<Point>& points,
                               const std::set<std::string>& skip_ids, const std::string& out_dir,
                               RunPool& pool, std::size_t& skipped) {
  const fs::path runs = fs::path(out_dir) / "runs";
  const fs::path logs = fs::path(out_dir) / "logs";
  prepare_dirs(runs, logs);
  std::vector<Job> jobs;
  for (const auto& p : points) {
    if (skip_ids.count(p.id)) {
      ++skipped;
      continue;
    }
    Job job{&p, (runs / fmt::format("{}.part-{}-{}.json", p.id, getpid(), jobs.size())).string(),
            (runs / (p.id + ".json")).string(), (logs / (p.id + ".log")).string()};
    std::error_code ec;
    fs::remove(job.json_tmp, ec);
    pool.submit({p.run_args(job.json_tmp, spec.dir), job.log});
    jobs.push_back(std::move(job));
  }
  return jobs;
}

// Points running at once share the machine: each may use an equal share of the memory
// (aggnet run's limits, docs/simulation-semantics.md "Limits"), unless the user set it.
void share_memory(std::size_t at_once) {
  if (const char* set = std::getenv("AGGNET_MEMORY_LIMIT"); set != nullptr && *set != '\0') return;
  const std::uint64_t share = memory_limit_bytes() / std::max<std::size_t>(at_once, 1);
  ::setenv("AGGNET_MEMORY_LIMIT", (std::to_string(share) + "B").c_str(), 1);
}

}  // namespace

RunSummary run_points(const SweepSpec& spec, const std::vector<Point>& points,
                      const std::set<std::string>& skip_ids, ResultStore& store,
                      const RunnerOptions& opt) {
  RunSummary sum;
  sum.total = points.size();
  const auto to_run = static_cast<std::size_t>(std::count_if(
      points.begin(), points.end(), [&](const Point& p) { return skip_ids.count(p.id) == 0; }));
  share_memory(std::min(opt.workers, to_run));
  RunPool pool(opt.aggnet, opt.workers, opt.timeout_ms);
  const std::vector<Job> jobs =
      submit_points(spec, points, skip_ids, opt.out_dir, pool, sum.skipped);
  StopSignals signals;
  Progress progress(jobs.size(), opt.progress);
  Recorder recorder(spec, store, sum);
  const auto t0 = Clock::now();
  progress.update(0, 0, 0, 0, true);
  while (!pool.idle()) {
    if (g_stop_signal && !sum.interrupted) {
      sum.interrupted = true;
      pool.stop(std::chrono::seconds(3));  // the running points are not recorded
    }
    for (const auto& d : pool.wait_any(Millis(50))) recorder.finish(jobs[d.id], d.end);
    progress.update(recorder.done(), sum.ok, sum.failed, pool.running());
  }
  progress.update(recorder.done(), sum.ok, sum.failed, 0, true);
  progress.finish();
  sum.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return sum;
}

}  // namespace aggnet::sweeps
