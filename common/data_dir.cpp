#include "common/data_dir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace aggnet {

namespace fs = std::filesystem;

std::string data_dir() {
  if (const char* env = std::getenv("AGGNET_DATA_DIR"); env && *env) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path installed = exe.parent_path().parent_path() / "share" / "aggnet";
  if (fs::is_directory(installed / "platforms", ec)) return installed.string();
  for (fs::path dir = exe.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_regular_file(dir / "platforms" / "nine_city.yaml", ec)) return dir.string();
    if (dir == dir.root_path()) break;
  }
  return {};
}

}  // namespace aggnet
