// What the host machine offers a run (memory), read once per check.
#pragma once

#include <cstdint>

namespace aggnet {

/// The memory a run may use, in bytes: the environment variable AGGNET_MEMORY_LIMIT (a
/// size like "2GiB", for tests and shared machines) when set, else MemAvailable of
/// /proc/meminfo, else the physical memory; at most what the process's limits leave it
/// (RLIMIT_AS, RLIMIT_DATA, its memory cgroup). Errors: ConfigError for a malformed
/// variable.
std::uint64_t memory_limit_bytes();

}  // namespace aggnet
