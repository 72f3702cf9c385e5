#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace aggnet {
namespace {

namespace fs = std::filesystem;

/// The file a write to `path` lands in: a symbolic link's final target, else `path`.
std::string resolve_links(const std::string& path) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(path, ec))) return path;
  const fs::path target = fs::weakly_canonical(path, ec);
  if (ec) throw std::runtime_error("cannot resolve the symbolic link " + path);
  return target.string();
}

void check_not_directory(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw std::runtime_error("cannot write " + path + ": a directory");
}

/// Writes all of `content` to the open descriptor `fd`, then closes it; false on an error.
bool write_and_close(int fd, const std::string& content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return ::close(fd) == 0;
}

/// A new temporary holding `content` (create_temporary's name). Errors: std::runtime_error
/// naming `path`, the output it is for.
std::string stage(const std::string& prefix, const std::string& content, const std::string& path) {
  int fd = -1;
  const std::string temporary = create_temporary(prefix, "", &fd);
  if (!write_and_close(fd, content)) {
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot write " + path);
  }
  return temporary;
}

/// Writes `content` into the existing non-regular file `path` (device, FIFO) in place.
void write_through(const std::string& path, const std::string& content) {
  if (is_stdout(path)) {  // through std::cout, in order with what the command prints
    std::cout << content;
    std::cout.flush();
    if (!std::cout) throw std::runtime_error("cannot write the standard output");
    return;
  }
  std::ofstream out(path, std::ios::binary | std::ios::out);
  if (!out) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  out << content;
  out.flush();
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

std::string create_temporary(const std::string& prefix, const std::string& suffix, int* fd) {
  static std::atomic<std::uint64_t> counter{0};
  const auto clock =
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::uint64_t unique = (clock + counter++ * 0x9E3779B97F4A7C15ull) % 1'000'000'007ull;
    const std::string name =
        prefix + std::to_string(::getpid()) + "." + std::to_string(unique) + suffix;
    // O_EXCL: an existing name, a link planted there included, is never opened.
    const int opened = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                              0666);  // less the umask, as any new output
    if (opened >= 0) {
      if (fd != nullptr) {
        *fd = opened;
      } else {
        ::close(opened);
      }
      return name;
    }
    if (errno != EEXIST) break;
  }
  throw std::runtime_error("cannot create a temporary file " + prefix + "*" + suffix + ": " +
                           std::strerror(errno));
}

bool is_special_file(const std::string& path) {
  if (is_stdout(path)) return true;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // follows links
  return fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st);
}

void commit_file(const std::string& temporary, const std::string& path) {
  check_not_directory(path);
  if (is_special_file(path)) {
    std::ifstream in(temporary, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    std::remove(temporary.c_str());
    if (!in) throw std::runtime_error("cannot read " + temporary);
    write_through(path, content.str());
    return;
  }
  const std::string target = resolve_links(path);
  if (std::rename(temporary.c_str(), target.c_str()) == 0) return;
  // A link may point to another file system: copy next to the target, then rename.
  if (errno == EXDEV) {
    std::ifstream in(temporary, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    std::remove(temporary.c_str());
    const std::string near = stage(target + ".tmp.", content.str(), path);
    if (std::rename(near.c_str(), target.c_str()) == 0) return;
    std::remove(near.c_str());
    throw std::runtime_error("cannot move " + temporary + " to " + path);
  }
  std::remove(temporary.c_str());
  throw std::runtime_error("cannot move " + temporary + " to " + path);
}

std::string temporary_path_for(const std::string& path, const std::string& suffix) {
  if (!is_special_file(path)) return create_temporary(path + ".", suffix);
  return create_temporary((fs::temp_directory_path() / "aggnet-").string(), suffix);
}

void write_file_atomically(const std::string& path, const std::string& content) {
  check_not_directory(path);
  if (is_special_file(path)) return write_through(path, content);
  const std::string target = resolve_links(path);
  commit_file(stage(target + ".tmp.", content, path), target);
}

OutputBatch::~OutputBatch() {
  for (const auto& s : staged_) std::remove(s.temporary.c_str());
}

void OutputBatch::add(const std::string& path, const std::string& content) {
  check_not_directory(path);
  const bool special = is_special_file(path);
  const std::string prefix =
      special ? (fs::temp_directory_path() / "aggnet-").string() : resolve_links(path) + ".tmp.";
  staged_.push_back({stage(prefix, content, path), path, special});
}

void OutputBatch::adopt(const std::string& temporary, const std::string& path) {
  staged_.push_back({temporary, path, is_special_file(path)});
}

void OutputBatch::commit() {
  std::stable_partition(staged_.begin(), staged_.end(), [](const Staged& s) { return s.special; });
  while (!staged_.empty()) {
    const Staged next = staged_.front();
    staged_.erase(staged_.begin());
    commit_file(next.temporary, next.path);  // removes the temporary, also on failure
  }
}

}  // namespace aggnet
