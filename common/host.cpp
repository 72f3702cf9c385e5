#include "common/host.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/units.h"

namespace aggnet {

std::uint64_t memory_limit_bytes() {
  if (const char* limit = std::getenv("AGGNET_MEMORY_LIMIT"); limit && *limit) {
    try {
      return parse_bytes(limit);
    } catch (const UnitError& e) {
      throw UnitError(std::string("AGGNET_MEMORY_LIMIT: ") + e.what() + ", got '" + limit + "'");
    }
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
         static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace aggnet
