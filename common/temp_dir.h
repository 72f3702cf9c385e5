// A private temporary directory, removed with everything in it however its owner ends.
#pragma once

#include <filesystem>
#include <string>

namespace aggnet {

class TempDir {
 public:
  /// Creates $TMPDIR/PREFIX-XXXXXX (mkdtemp). Throws std::runtime_error naming the folder
  /// it could not create it in.
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace aggnet
