#include "common/atomic_file.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
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
  std::error_code ec;
  const std::string near = target + ".tmp." + std::to_string(::getpid());
  if (errno == EXDEV && fs::copy_file(temporary, near, fs::copy_options::overwrite_existing, ec) &&
      std::rename(near.c_str(), target.c_str()) == 0) {
    std::remove(temporary.c_str());
    return;
  }
  std::remove(near.c_str());
  std::remove(temporary.c_str());
  throw std::runtime_error("cannot move " + temporary + " to " + path);
}

std::string temporary_path_for(const std::string& path, const std::string& suffix) {
  if (!is_special_file(path)) return path + suffix;
  return (fs::temp_directory_path() / ("aggnet-" + std::to_string(::getpid()) + suffix)).string();
}

void write_file_atomically(const std::string& path, const std::string& content) {
  check_not_directory(path);
  if (is_special_file(path)) return write_through(path, content);
  const std::string target = resolve_links(path);
  const std::string temporary = target + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw std::runtime_error("cannot write " + path);
    }
  }
  commit_file(temporary, target);
}

OutputBatch::~OutputBatch() {
  for (const auto& s : staged_) std::remove(s.temporary.c_str());
}

void OutputBatch::add(const std::string& path, const std::string& content) {
  check_not_directory(path);
  const std::string suffix =
      ".tmp." + std::to_string(::getpid()) + "." + std::to_string(staged_.size());
  const bool special = is_special_file(path);
  const std::string temporary =
      special ? temporary_path_for(path, suffix) : resolve_links(path) + suffix;
  staged_.push_back({temporary, path, special});
  std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
  out << content;
  out.flush();
  if (!out) throw std::runtime_error("cannot write " + path);
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
