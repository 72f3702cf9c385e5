#include "common/temp_dir.h"

#include <stdlib.h>

#include <stdexcept>
#include <system_error>

namespace aggnet {

namespace fs = std::filesystem;

TempDir::TempDir(const std::string& prefix) {
  std::string pattern = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data()))
    throw std::runtime_error("cannot create a temporary folder in " +
                             fs::temp_directory_path().string());
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

}  // namespace aggnet
