#include "common/host.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "common/units.h"

namespace aggnet {

namespace {

// MemAvailable of /proc/meminfo (in kB there), read with one read(2): every `aggnet run`
// asks, and a stream with its locale costs more than the rest of the check.
std::optional<std::uint64_t> meminfo_available_bytes() {
  const int fd = ::open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buffer[8192];
  const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buffer[n] = '\0';
  constexpr std::string_view kKey = "\nMemAvailable:";  // never the first line
  const char* at = std::strstr(buffer, kKey.data());
  if (!at) return std::nullopt;
  const char* digits = at + kKey.size();
  char* end = nullptr;
  const unsigned long long kib = std::strtoull(digits, &end, 10);
  if (end == digits) return std::nullopt;
  return static_cast<std::uint64_t>(kib) * 1024;
}

}  // namespace

std::uint64_t memory_limit_bytes() {
  if (const char* limit = std::getenv("AGGNET_MEMORY_LIMIT"); limit && *limit) {
    try {
      return parse_bytes(limit);
    } catch (const UnitError& e) {
      throw UnitError(std::string("AGGNET_MEMORY_LIMIT: ") + e.what() + ", got '" + limit + "'");
    }
  }
  if (const auto available = meminfo_available_bytes()) return *available;
  return static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
         static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace aggnet
