// The one way to run child processes (common/subprocess.h): exit statuses and signals,
// redirects, timeouts that end the whole process group, children that die with their
// parent, and a pool that runs at most N at a time.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/subprocess.h"

namespace aggnet {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

Command shell(const std::string& script) {
  Command c;
  c.argv = {"/bin/sh", "-c", script};
  c.out = Redirect::capture();
  c.err = Redirect::capture();
  return c;
}

/// A process that exists and is not a zombie (an orphan may wait for a reaper).
bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const auto paren = stat.rfind(')');
  const char state = paren + 2 < stat.size() ? stat[paren + 2] : '?';
  return state != 'Z' && state != 'X';
}

/// Waits up to 5 s for `pid` to be gone.
bool gone_soon(pid_t pid) {
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (alive(pid) && Clock::now() < until) std::this_thread::sleep_for(Millis(10));
  return !alive(pid);
}

/// Process ids printed one per line.
std::vector<pid_t> pids_in(const std::string& text) {
  std::vector<pid_t> pids;
  std::istringstream in(text);
  long p;
  while (in >> p) pids.push_back(static_cast<pid_t>(p));
  return pids;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() /
                       ("aggnet-test-subprocess-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// ---------------------------------------------------------------------------------------
// Exit statuses, signals, redirects

TEST(Subprocess, ReportsExitStatus) {
  const ProcessResult ok = run_process(shell("exit 0"));
  EXPECT_TRUE(ok.started);
  EXPECT_TRUE(ok.exited);
  EXPECT_TRUE(ok.success());
  EXPECT_EQ(ok.code(), 0);
  const ProcessResult three = run_process(shell("exit 3"));
  EXPECT_TRUE(three.exited);
  EXPECT_EQ(three.exit_code, 3);
  EXPECT_FALSE(three.success());
  EXPECT_EQ(three.code(), 3);
  EXPECT_EQ(three.describe(), "exit status 3");
}

TEST(Subprocess, ReportsTheSignalThatEndedTheChild) {
  const ProcessResult r = run_process(shell("kill -SEGV $$"));
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.exited);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.code(), -SIGSEGV);
  EXPECT_FALSE(r.success());
  EXPECT_NE(r.describe().find("killed by signal 11"), std::string::npos) << r.describe();
}

TEST(Subprocess, CapturesStdoutAndStderrSeparatelyOrTogether) {
  const ProcessResult apart = run_process(shell("echo out; echo err >&2"));
  EXPECT_EQ(apart.out, "out\n");
  EXPECT_EQ(apart.err, "err\n");
  Command c = shell("echo out; echo err >&2");
  c.err = Redirect::to_stdout();
  const ProcessResult together = run_process(c);
  EXPECT_EQ(together.out, "out\nerr\n");
  EXPECT_EQ(together.err, "");
}

TEST(Subprocess, CapturesMoreThanAPipeBuffer) {
  const ProcessResult r = run_process(shell("head -c 1000000 /dev/zero"));
  EXPECT_TRUE(r.success());
  EXPECT_EQ(r.out.size(), 1000000u);
}

TEST(Subprocess, WritesToFilesAndReadsStdinFromDevNull) {
  const fs::path dir = scratch("files");
  Command c;
  c.argv = {"sh", "-c", "cat; echo done; echo oops >&2"};  // found in PATH
  c.out = Redirect::file((dir / "out.txt").string());
  c.err = Redirect::file((dir / "err.txt").string());
  EXPECT_TRUE(run_process(c).success());  // cat ends at once: stdin is /dev/null
  std::ifstream out(dir / "out.txt"), err(dir / "err.txt");
  std::stringstream o, e;
  o << out.rdbuf();
  e << err.rdbuf();
  EXPECT_EQ(o.str(), "done\n");
  EXPECT_EQ(e.str(), "oops\n");
  fs::remove_all(dir);
}

// A log replaces what was at its path: a link there is not written through, nor is a
// second (hard-linked) name of a file emptied.
TEST(Subprocess, AFileRedirectReplacesLinksInsteadOfWritingThroughThem) {
  const fs::path dir = scratch("links");
  std::ofstream(dir / "precious.txt") << "precious\n";
  std::ofstream(dir / "kept.txt") << "kept\n";
  fs::create_hard_link(dir / "precious.txt", dir / "hard.log");
  fs::create_symlink(dir / "kept.txt", dir / "soft.log");
  for (const char* log : {"hard.log", "soft.log"}) {
    Command c = shell("echo run");
    c.out = Redirect::file((dir / log).string());
    ASSERT_TRUE(run_process(c).success()) << log;
    std::ifstream in(dir / log);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), "run\n") << log;
    EXPECT_FALSE(fs::is_symlink(dir / log)) << log;
  }
  for (const char* kept : {"precious.txt", "kept.txt"}) {
    std::ifstream in(dir / kept);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, fs::path(kept).stem().string()) << kept;
  }
  fs::remove_all(dir);
}

TEST(Subprocess, ArgumentsAreNotInterpretedByAShell) {
  Command c;
  c.argv = {"printf", "%s|", "a b", "$HOME", "'q'", ";ls"};
  c.out = Redirect::capture();
  EXPECT_EQ(run_process(c).out, "a b|$HOME|'q'|;ls|");
}

TEST(Subprocess, ACommandThatCannotStartIsReportedNotThrown) {
  Command missing;
  missing.argv = {"aggnet-no-such-program"};
  const ProcessResult a = run_process(missing);
  EXPECT_FALSE(a.started);
  EXPECT_EQ(a.code(), -1);
  EXPECT_NE(a.describe().find("not found in PATH"), std::string::npos) << a.describe();
  Command not_executable;
  not_executable.argv = {"/dev/null"};
  const ProcessResult b = run_process(not_executable);
  EXPECT_FALSE(b.started);
  EXPECT_NE(b.error.find("cannot execute /dev/null"), std::string::npos) << b.error;
  Command bad_log = shell("true");
  bad_log.out = Redirect::file("/nonexistent-dir/x.log");
  EXPECT_FALSE(run_process(bad_log).started);
}

TEST(Subprocess, ResetsIgnoredSignalsOfTheParent) {
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGTERM, &ignore, &old);
  const ProcessResult r = run_process(shell("kill -TERM $$; sleep 5"));
  sigaction(SIGTERM, &old, nullptr);
  EXPECT_EQ(r.signal, SIGTERM);
}

// ---------------------------------------------------------------------------------------
// Timeouts and the process group

TEST(Subprocess, TimeoutKillsTheChildAndItsGrandchild) {
  Command c = shell("sleep 30 & echo $!; wait");
  c.timeout = Millis(300);
  const auto t0 = Clock::now();
  const ProcessResult r = run_process(c);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.exited);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_NE(r.describe().find("timed out after 300 ms"), std::string::npos) << r.describe();
  const auto pids = pids_in(r.out);
  ASSERT_EQ(pids.size(), 1u) << r.out;
  EXPECT_TRUE(gone_soon(pids[0])) << "the grandchild sleep survived the timeout";
}

TEST(Subprocess, TimeoutEscalatesToSigkill) {
  // The shell and its sleep ignore SIGTERM: only the SIGKILL after the grace ends them.
  Command c = shell("trap '' TERM; sleep 30 & echo $!; wait; wait");
  c.timeout = Millis(200);
  c.kill_grace = Millis(200);
  const ProcessResult r = run_process(c);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  const auto pids = pids_in(r.out);
  ASSERT_EQ(pids.size(), 1u) << r.out;
  EXPECT_TRUE(gone_soon(pids[0]));
}

TEST(Subprocess, WhatTheChildLeftInItsGroupIsKilledWhenItEnds) {
  const ProcessResult r = run_process(shell("sleep 30 & echo $!"));
  EXPECT_TRUE(r.success());
  const auto pids = pids_in(r.out);
  ASSERT_EQ(pids.size(), 1u) << r.out;
  EXPECT_TRUE(gone_soon(pids[0]));
}

TEST(Subprocess, RunsInItsOwnProcessGroup) {
  Subprocess p(shell("cut -d' ' -f5 /proc/$$/stat"));  // field 5: the process group
  const ProcessResult& r = p.wait();
  ASSERT_TRUE(r.success()) << r.err;
  EXPECT_EQ(pids_in(r.out), std::vector<pid_t>{p.pid()});
  EXPECT_NE(p.pid(), ::getpgrp());
}

TEST(Subprocess, TerminateSendsSigterm) {
  Subprocess p(shell("sleep 30"));
  EXPECT_FALSE(p.poll());
  p.terminate(Millis(2000));
  const ProcessResult& r = p.wait();
  EXPECT_TRUE(r.terminated);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.signal, SIGTERM);
}

TEST(Subprocess, DestructorKillsARunningChild) {
  pid_t pid = -1;
  {
    Command c;
    c.argv = {"sleep", "30"};
    Subprocess p(c);
    pid = p.pid();
    EXPECT_TRUE(alive(pid));
  }
  EXPECT_FALSE(alive(pid));
}

TEST(Subprocess, ChildDiesWhenItsParentDies) {
  // A helper process starts a long child, reports its pid and exits without cleaning up
  // (_exit: no destructor): PR_SET_PDEATHSIG must end the orphan.
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const pid_t helper = ::fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {
    ::close(report[0]);
    Command c;
    c.argv = {"sleep", "30"};
    auto* orphan = new Subprocess(c);  // never destroyed
    const pid_t pid = orphan->pid();
    [[maybe_unused]] auto n = ::write(report[1], &pid, sizeof pid);
    ::_exit(0);
  }
  ::close(report[1]);
  pid_t child = -1;
  ASSERT_EQ(::read(report[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  ::close(report[0]);
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(helper, &status, 0), helper);
  EXPECT_TRUE(gone_soon(child)) << "the child of a dead parent is still running";
}

// ---------------------------------------------------------------------------------------
// ProcessPool

/// Start and end times (ns since the epoch) each child printed.
std::pair<long long, long long> interval(const std::string& out) {
  std::istringstream in(out);
  long long a = 0, b = 0;
  in >> a >> b;
  return {a, b};
}

TEST(ProcessPool, RunsAtMostNAtOnce) {
  ProcessPool pool(2);
  for (int i = 0; i < 6; ++i) pool.submit(shell("date +%s%N; sleep 0.3; date +%s%N"));
  EXPECT_EQ(pool.queued(), 6u);
  std::vector<std::pair<long long, long long>> spans;
  std::set<std::size_t> ids;
  std::size_t most = 0;
  while (!pool.idle()) {
    for (const auto& f : pool.wait_any(Millis(50))) {
      ASSERT_TRUE(f.result.success()) << f.result.describe() << f.result.err;
      spans.push_back(interval(f.result.out));
      ids.insert(f.id);
    }
    most = std::max(most, pool.running());
  }
  EXPECT_EQ(ids, (std::set<std::size_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_LE(most, 2u);
  // Overlap measured by the children's own clocks: never 3, and 2 (they do run in
  // parallel).
  std::size_t peak = 0;
  for (const auto& s : spans) {
    const auto overlapping = std::count_if(spans.begin(), spans.end(), [&](const auto& o) {
      return o.first <= s.first && s.first < o.second;
    });
    peak = std::max(peak, static_cast<std::size_t>(overlapping));
  }
  EXPECT_EQ(peak, 2u);
}

TEST(ProcessPool, StartsInSubmissionOrder) {
  ProcessPool pool(1);
  for (int i = 0; i < 4; ++i) pool.submit(shell("date +%s%N"));
  std::vector<std::pair<std::size_t, long long>> starts;
  for (const auto& f : pool.wait_all()) starts.emplace_back(f.id, interval(f.result.out).first);
  ASSERT_EQ(starts.size(), 4u);
  for (std::size_t i = 0; i < starts.size(); ++i) EXPECT_EQ(starts[i].first, i);
  EXPECT_TRUE(std::is_sorted(starts.begin(), starts.end(),
                             [](const auto& a, const auto& b) { return a.second < b.second; }));
}

TEST(ProcessPool, TimeoutsApplyPerCommandAndFailuresToStartAreReturned) {
  ProcessPool pool(3);
  Command slow = shell("sleep 30");
  slow.timeout = Millis(200);
  Command missing;
  missing.argv = {"aggnet-no-such-program"};
  const auto slow_id = pool.submit(slow);
  const auto missing_id = pool.submit(missing);
  const auto fast_id = pool.submit(shell("exit 4"));
  std::map<std::size_t, ProcessResult> got;
  for (auto& f : pool.wait_all()) got[f.id] = f.result;
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(got[slow_id].timed_out);
  EXPECT_FALSE(got[missing_id].started);
  EXPECT_EQ(got[fast_id].exit_code, 4);
}

TEST(ProcessPool, StopTerminatesRunningAndDropsQueued) {
  ProcessPool pool(2);
  for (int i = 0; i < 5; ++i) pool.submit(shell("sleep 30"));
  EXPECT_TRUE(pool.wait_any(Millis(50)).empty());
  EXPECT_EQ(pool.running(), 2u);
  pool.stop(Millis(2000));
  EXPECT_EQ(pool.queued(), 0u);
  const auto done = pool.wait_all();
  ASSERT_EQ(done.size(), 2u);
  for (const auto& f : done) {
    EXPECT_TRUE(f.result.terminated);
    EXPECT_EQ(f.result.signal, SIGTERM);
  }
}

TEST(ProcessPool, DestructorKillsRunningChildren) {
  const fs::path dir = scratch("pool");
  const fs::path pid_file = dir / "pid";
  pid_t pid = -1;
  {
    ProcessPool pool(1);
    pool.submit(shell("echo $$ > " + pid_file.string() + ".tmp; mv " + pid_file.string() + ".tmp " +
                      pid_file.string() + "; exec sleep 30"));
    const auto until = Clock::now() + std::chrono::seconds(5);
    while (!fs::exists(pid_file) && Clock::now() < until) pool.wait_any(Millis(10));
    std::ifstream(pid_file) >> pid;
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(alive(pid));
  }
  EXPECT_FALSE(alive(pid));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace aggnet
