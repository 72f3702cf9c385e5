#include "common/subprocess.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/strings.h"

namespace aggnet {
namespace {

using Clock = std::chrono::steady_clock;

constexpr Millis kTick{2};  // longest sleep between two looks at the running children

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

/// The file to exec: `name` itself when it holds a '/', else the first executable file of
/// that name in PATH. Empty when there is none.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* env = std::getenv("PATH");
  for (const auto& dir : split(env ? env : "/usr/local/bin:/usr/bin:/bin", ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (is_executable_file(candidate)) return candidate;
  }
  return {};
}

/// Sleeps until one of `fds` is readable or `max_wait` has passed (a signal ends it early).
void wait_for_input(const std::vector<int>& fds, Millis max_wait) {
  std::vector<pollfd> p;
  for (int fd : fds) p.push_back({fd, POLLIN, 0});
  ::poll(p.data(), p.size(), static_cast<int>(std::max<Millis::rep>(0, max_wait.count())));
}

/// The child's standard streams, opened in the parent (close-on-exec) before the fork.
struct ChildStreams {
  int in = -1, out = -1, err = -1;  // -1: inherited
  bool err_to_out = false;

  ~ChildStreams() { close_all(); }
  void close_all() {
    close_fd(in);
    close_fd(out);
    close_fd(err);
  }
};

/// Opens the child's end of one redirect; `parent_end` gets the read end of a capture
/// pipe. Returns false and sets `error` on failure.
bool open_redirect(const Redirect& r, int& child_end, int& parent_end, std::string& error) {
  switch (r.kind) {
    case Redirect::Kind::kInherit:
    case Redirect::Kind::kToStdout:
      return true;
    case Redirect::Kind::kNull:
      child_end = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
      break;
    case Redirect::Kind::kFile:
      // A new file: truncating in place would write through a link or empty a file's other
      // (hard-linked) name, perhaps outside the directory the log belongs to.
      if (::unlink(r.path.c_str()) != 0 && errno != ENOENT) break;
      child_end =
          ::open(r.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      break;
    case Redirect::Kind::kCapture: {
      int p[2];
      if (::pipe2(p, O_CLOEXEC) != 0) break;
      parent_end = p[0];
      child_end = p[1];
      ::fcntl(parent_end, F_SETFL, O_NONBLOCK);
      return true;
    }
  }
  if (child_end >= 0) return true;
  error = fmt::format("cannot open {}: {}", r.kind == Redirect::Kind::kFile ? r.path : "/dev/null",
                      std::strerror(errno));
  return false;
}

bool open_streams(const Command& c, ChildStreams& s, int& out_pipe, int& err_pipe,
                  std::string& error) {
  if (!c.stdin_path.empty()) {
    s.in = ::open(c.stdin_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (s.in < 0) {
      error = fmt::format("cannot open {}: {}", c.stdin_path, std::strerror(errno));
      return false;
    }
  }
  s.err_to_out = c.err.kind == Redirect::Kind::kToStdout;
  return open_redirect(c.out, s.out, out_pipe, error) &&
         open_redirect(c.err, s.err, err_pipe, error);
}

// ---- In the child, between fork and exec: async-signal-safe calls only. ----

/// Makes `fd` the child's descriptor `target` (kept open across exec).
void move_fd(int fd, int target) {
  if (fd < 0) return;
  if (fd == target) {
    ::fcntl(fd, F_SETFD, 0);
  } else {
    ::dup2(fd, target);
  }
}

/// Default dispositions (ignored signals would survive exec) and an empty signal mask.
void reset_signals() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

[[noreturn]] void exec_child(const char* program, char* const* argv, const ChildStreams& s,
                             pid_t parent, int report_fd) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(126);  // the parent died before prctl took effect
  reset_signals();
  move_fd(s.in, STDIN_FILENO);
  move_fd(s.out, STDOUT_FILENO);
  if (s.err_to_out) {
    ::dup2(STDOUT_FILENO, STDERR_FILENO);
  } else {
    move_fd(s.err, STDERR_FILENO);
  }
  ::execv(program, argv);
  const int e = errno;
  [[maybe_unused]] const auto n = ::write(report_fd, &e, sizeof e);
  ::_exit(127);
}

// ---- Back in the parent. ----

/// errno of a failed exec, read from the report pipe (closed by a successful exec); 0
/// when the exec succeeded.
int exec_errno(int report_fd) {
  int e = 0;
  ssize_t n;
  do n = ::read(report_fd, &e, sizeof e);
  while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof e) ? e : 0;
}

void reap(pid_t pid, int* status) {
  while (::waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
}

void read_available(int& fd, std::string& into) {
  char buf[65536];
  while (fd >= 0) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      into.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      close_fd(fd);  // end of file
    } else if (errno != EINTR) {
      return;  // EAGAIN: nothing more for now
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------
// ProcessResult

int ProcessResult::code() const {
  if (!started) return -1;
  if (exited) return exit_code;
  return signal > 0 ? -signal : -1;
}

std::string ProcessResult::describe() const {
  if (!started) return error;
  std::string how = error;
  if (exited) {
    how = fmt::format("exit status {}", exit_code);
  } else if (signal > 0) {
    how = fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  }
  if (timed_out) return fmt::format("timed out after {} ms ({})", timeout.count(), how);
  return how;
}

// ---------------------------------------------------------------------------------------
// Subprocess

Subprocess::Subprocess(const Command& command) {
  result_.timeout = command.timeout;
  kill_grace_ = command.kill_grace;
  start(command);
  if (!result_.started) {
    close_pipes();
    finished_ = true;
  }
}

Subprocess::~Subprocess() {
  if (!finished_ && pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    reap(pid_, nullptr);
  }
  close_pipes();
}

void Subprocess::start(const Command& c) {
  if (c.argv.empty()) {
    result_.error = "cannot execute an empty command";
    return;
  }
  const std::string program = find_program(c.argv[0]);
  if (program.empty()) {
    result_.error = fmt::format("cannot execute {}: not found in PATH", c.argv[0]);
    return;
  }
  ChildStreams streams;
  if (!open_streams(c, streams, out_pipe_, err_pipe_, result_.error)) return;
  std::vector<char*> argv;
  for (const auto& a : c.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    result_.error = fmt::format("cannot start {}: {}", c.argv[0], std::strerror(errno));
    return;
  }
  const pid_t parent = ::getpid();
  start_ = Clock::now();
  pid_ = ::fork();
  if (pid_ == 0) exec_child(program.c_str(), argv.data(), streams, parent, report[1]);
  const int fork_errno = errno;
  streams.close_all();
  ::close(report[1]);
  if (pid_ < 0) {
    ::close(report[0]);
    result_.error = fmt::format("cannot start {}: fork: {}", c.argv[0], std::strerror(fork_errno));
    return;
  }
  ::setpgid(pid_, pid_);  // also here, so the group exists before any kill(-pid)
  const int e = exec_errno(report[0]);
  ::close(report[0]);
  if (e != 0) {
    reap(pid_, nullptr);
    pid_ = -1;
    result_.error = fmt::format("cannot execute {}: {}", program, std::strerror(e));
    return;
  }
  result_.started = true;
  has_timeout_ = c.timeout.count() > 0;
  timeout_at_ = start_ + c.timeout;
}

std::vector<int> Subprocess::capture_fds() const {
  std::vector<int> fds;
  for (int fd : {out_pipe_, err_pipe_})
    if (fd >= 0) fds.push_back(fd);
  return fds;
}

void Subprocess::drain() {
  read_available(out_pipe_, result_.out);
  read_available(err_pipe_, result_.err);
}

void Subprocess::close_pipes() {
  close_fd(out_pipe_);
  close_fd(err_pipe_);
}

void Subprocess::apply_deadlines() {
  const auto now = Clock::now();
  if (has_timeout_ && !result_.timed_out && now >= timeout_at_) {
    result_.timed_out = true;
    ::kill(-pid_, SIGTERM);
    if (!kill_pending_ || now + kill_grace_ < kill_at_) kill_at_ = now + kill_grace_;
    kill_pending_ = true;
  }
  if (kill_pending_ && now >= kill_at_) {
    ::kill(-pid_, SIGKILL);
    kill_pending_ = false;
  }
}

void Subprocess::terminate(Millis grace) {
  if (finished_) return;
  result_.terminated = true;
  ::kill(-pid_, SIGTERM);
  const auto at = Clock::now() + grace;
  if (!kill_pending_ || at < kill_at_) kill_at_ = at;
  kill_pending_ = true;
  apply_deadlines();
}

bool Subprocess::poll() {
  if (finished_) return true;
  drain();
  apply_deadlines();
  siginfo_t info{};
  int rc;
  do rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
  while (rc < 0 && errno == EINTR);
  if (rc < 0) {  // ECHILD: reaped by someone else's waitpid(-1)
    result_.error = "the child was reaped elsewhere";
    finish(-1);
    return true;
  }
  if (info.si_pid == 0) return false;
  // The leader is a zombie, so its group id cannot be reused yet: end what is left of it.
  ::kill(-pid_, SIGKILL);
  int status = 0;
  reap(pid_, &status);
  finish(status);
  return true;
}

void Subprocess::finish(int wait_status) {
  drain();
  close_pipes();
  if (wait_status != -1 && WIFEXITED(wait_status)) {
    result_.exited = true;
    result_.exit_code = WEXITSTATUS(wait_status);
  } else if (wait_status != -1 && WIFSIGNALED(wait_status)) {
    result_.signal = WTERMSIG(wait_status);
  }
  result_.elapsed_s = std::chrono::duration<double>(Clock::now() - start_).count();
  finished_ = true;
}

const ProcessResult& Subprocess::wait() {
  while (!poll()) wait_for_input(capture_fds(), kTick);
  return result_;
}

ProcessResult run_process(const Command& command) {
  Subprocess p(command);
  return p.wait();
}

// ---------------------------------------------------------------------------------------
// ProcessPool

ProcessPool::ProcessPool(std::size_t max_running)
    : max_running_(std::max<std::size_t>(1, max_running)) {}

ProcessPool::~ProcessPool() = default;  // ~Subprocess kills and reaps

std::size_t ProcessPool::submit(Command command) {
  queue_.push_back({next_id_, std::move(command)});
  return next_id_++;
}

void ProcessPool::drop_queued() { queue_.clear(); }

void ProcessPool::stop(Millis grace) {
  drop_queued();
  for (auto& r : running_) r.process->terminate(grace);
}

void ProcessPool::start_queued(std::vector<Finished>& done) {
  while (running_.size() < max_running_ && !queue_.empty()) {
    Queued q = std::move(queue_.front());
    queue_.pop_front();
    auto process = std::make_unique<Subprocess>(q.command);
    if (process->finished()) {
      done.push_back({q.id, process->result()});
    } else {
      running_.push_back({q.id, std::move(process)});
    }
  }
}

void ProcessPool::reap(std::vector<Finished>& done) {
  std::vector<Running> still_running;
  for (auto& r : running_) {
    if (r.process->poll()) {
      done.push_back({r.id, r.process->result()});
    } else {
      still_running.push_back(std::move(r));
    }
  }
  running_ = std::move(still_running);
}

std::vector<ProcessPool::Finished> ProcessPool::wait_any(Millis max_wait) {
  std::vector<Finished> done;
  const auto until = Clock::now() + max_wait;
  while (true) {
    start_queued(done);
    reap(done);
    const auto now = Clock::now();
    if (!done.empty() || idle() || now >= until) return done;
    std::vector<int> fds;
    for (const auto& r : running_) {
      for (int fd : r.process->capture_fds()) fds.push_back(fd);
    }
    wait_for_input(fds, std::min(kTick, std::chrono::duration_cast<Millis>(until - now)));
  }
}

std::vector<ProcessPool::Finished> ProcessPool::wait_all() {
  std::vector<Finished> all;
  while (!idle()) {
    for (auto& f : wait_any(Millis(100))) all.push_back(std::move(f));
  }
  return all;
}

}  // namespace aggnet
