// Reading a user's input file (platform, schedule, sweep spec) whole, with the checks any
// such file gets before it is parsed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aggnet {

/// The largest input file aggnet reads: far above any platform it can simulate (a full
/// mesh of 500 sites is ~8 MB of YAML), far below the memory of a machine that runs it.
inline constexpr std::uint64_t kMaxInputFileBytes = 64ull << 20;

/// The text of `path`, which should be `kind` ("a YAML file"). Errors: ConfigError(path,
/// line, "", ...) for a missing file (check_input_exists), a directory, a file that cannot
/// be read, one longer than kMaxInputFileBytes (read up to that much only, so /dev/zero
/// ends quickly) or one that is not UTF-8 text (named by its line and byte).
std::string read_input_file(const std::string& path, const std::string& kind = "a YAML file");

/// Nothing if `path` exists. Errors: ConfigError(path, 0, "", "cannot read file: No such
/// file or directory"), with a did-you-mean naming the file closest in name in its
/// directory or else in one of `more_dirs` (e.g. the shipped platforms).
void check_input_exists(const std::string& path, const std::vector<std::string>& more_dirs = {});

/// The existing file a missing `path` most likely meant: the one of `path`'s directory,
/// else of the first of `more_dirs` that has one, whose name is closest (closest_match),
/// or that has the name itself; spelt as its directory was given. "" when none is close.
std::string closest_existing_file(const std::string& path,
                                  const std::vector<std::string>& more_dirs = {});

/// 0 if `text` is valid UTF-8, else the 1-based line of its first invalid byte, and that
/// byte's value in `bad`.
int invalid_utf8_line(const std::string& text, unsigned char& bad);

}  // namespace aggnet
