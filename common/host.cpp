#include "common/host.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "common/config_error.h"
#include "common/units.h"

namespace aggnet {

namespace {

// The start of the file at `path` in `buffer` (NUL-terminated), read with one read(2):
// every `aggnet run` asks, and a stream with its locale costs more than the rest of the
// check. False when it cannot be read or is empty.
template <std::size_t N>
bool read_start(const char* path, char (&buffer)[N]) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::read(fd, buffer, N - 1);
  ::close(fd);
  if (n <= 0) return false;
  buffer[n] = '\0';
  return true;
}

// MemAvailable of /proc/meminfo (in kB there).
std::optional<std::uint64_t> meminfo_available_bytes() {
  char buffer[8192];
  if (!read_start("/proc/meminfo", buffer)) return std::nullopt;
  constexpr std::string_view kKey = "\nMemAvailable:";  // never the first line
  const char* at = std::strstr(buffer, kKey.data());
  if (!at) return std::nullopt;
  const char* digits = at + kKey.size();
  char* end = nullptr;
  const unsigned long long kib = std::strtoull(digits, &end, 10);
  if (end == digits) return std::nullopt;
  return static_cast<std::uint64_t>(kib) * 1024;
}

// The first number in the file at `path`; nullopt if none ("max").
std::optional<std::uint64_t> number_in(const std::string& path) {
  char buffer[256];
  if (!read_start(path.c_str(), buffer)) return std::nullopt;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(buffer, &end, 10);
  if (end == buffer) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}

std::uint64_t page_bytes() { return static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)); }

// What the process's own limits leave it: RLIMIT_AS minus the address space it maps now,
// RLIMIT_DATA minus its data segment (/proc/self/statm: size and data, in pages).
std::optional<std::uint64_t> rlimit_headroom_bytes() {
  std::optional<std::uint64_t> headroom;
  const auto statm = [](int field) -> std::uint64_t {
    char buffer[256];
    if (!read_start("/proc/self/statm", buffer)) return 0;
    char* at = buffer;
    unsigned long long v = 0;
    for (int i = 0; i <= field; ++i) v = std::strtoull(at, &at, 10);
    return static_cast<std::uint64_t>(v) * page_bytes();
  };
  for (const auto& [resource, field] : {std::pair{RLIMIT_AS, 0}, std::pair{RLIMIT_DATA, 5}}) {
    struct rlimit limit {};
    if (::getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) continue;
    const std::uint64_t cap = limit.rlim_cur, used = statm(field);
    const std::uint64_t left = cap > used ? cap - used : 0;
    headroom = std::min(headroom.value_or(left), left);
  }
  return headroom;
}

// The memory cgroup's limit minus its usage (v2 memory.max/current, v1
// memory.limit_in_bytes/usage_in_bytes), at the process's cgroup or the mount's root.
std::optional<std::uint64_t> cgroup_headroom_bytes() {
  constexpr std::uint64_t kNoLimit = 1ull << 60;  // v1 writes "no limit" as ~2^63
  const struct {
    const char *dir, *limit, *usage;
  } layouts[] = {{"/sys/fs/cgroup", "memory.max", "memory.current"},
                 {"/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes"}};
  for (const auto& l : layouts) {
    const auto limit = number_in(std::string(l.dir) + "/" + l.limit);
    if (!limit || *limit >= kNoLimit) continue;
    const std::uint64_t usage = number_in(std::string(l.dir) + "/" + l.usage).value_or(0);
    return *limit > usage ? *limit - usage : 0;
  }
  return std::nullopt;
}

}  // namespace

std::uint64_t memory_limit_bytes() {
  std::uint64_t limit = 0;
  if (const char* text = std::getenv("AGGNET_MEMORY_LIMIT"); text && *text) {
    try {
      limit = parse_bytes(text);
    } catch (const UnitError& e) {
      throw ConfigError("environment", 0, "AGGNET_MEMORY_LIMIT",
                        std::string("expected a size like '2GiB' (") + e.what() + ")", text);
    }
  } else if (const auto available = meminfo_available_bytes()) {
    limit = *available;
  } else {
    limit = static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) * page_bytes();
  }
  // The process's own limits bind whatever the machine has (an address-space limit once
  // ended a lossy run in bad_alloc before the guard saw anything).
  for (const auto& cap : {rlimit_headroom_bytes(), cgroup_headroom_bytes()})
    if (cap) limit = std::min(limit, *cap);
  return limit;
}

}  // namespace aggnet
