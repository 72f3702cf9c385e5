// Reading a user's input file (platform, schedule, sweep spec) whole, with the checks any
// such file gets before it is parsed.
#pragma once

#include <cstdint>
#include <string>

namespace aggnet {

/// The largest input file aggnet reads: far above any platform it can simulate (a full
/// mesh of 500 sites is ~8 MB of YAML), far below the memory of a machine that runs it.
inline constexpr std::uint64_t kMaxInputFileBytes = 64ull << 20;

/// The text of `path`. Errors: ConfigError(path, line, "", ...) for a directory, a file
/// that cannot be read, one longer than kMaxInputFileBytes (read up to that much only, so
/// /dev/zero ends quickly) or one that is not UTF-8 text (named by its line and byte).
std::string read_input_file(const std::string& path);

/// 0 if `text` is valid UTF-8, else the 1-based line of its first invalid byte, and that
/// byte's value in `bad`.
int invalid_utf8_line(const std::string& text, unsigned char& bad);

}  // namespace aggnet
