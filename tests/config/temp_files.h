// Files the config tests write for the loaders to read: in a directory of the test
// process's own (ctest runs a file's tests in parallel processes), removed when the
// process exits (not when a forked child, such as a death test's, does).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace aggnet::test {

class TempDirectory {
 public:
  TempDirectory() {
    std::string pattern = testing::TempDir() + "aggnet_config_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("cannot make a directory from " + pattern);
    path_ = pattern;
  }
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;
  ~TempDirectory() {
    if (::getpid() != owner_) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  pid_t owner_ = ::getpid();
};

/// `text` in the file `name` of this process's directory; returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  static const TempDirectory directory;
  const std::string path = (directory.path() / name).string();
  std::ofstream(path) << text;
  return path;
}

}  // namespace aggnet::test
