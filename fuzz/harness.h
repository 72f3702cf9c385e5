// One fuzz input through aggnet's input loaders: the fuzz target (fuzz_loaders.cpp, built
// with -DAGGNET_FUZZ=ON) and the regression replay (tests/config/test_fuzz_regressions.cpp)
// share it, so every input the fuzzer ever crashed on stays a test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace aggnet::fuzz {

/// Feeds `data` to one loader, chosen by its first byte (mod 3), the rest being its input:
///  0: a platform YAML file (config/platform_loader.h);
///  1: a schedule YAML file read against platforms/nine_city.yaml (config/schedule_io.h);
///  2: an `aggnet run` command line, one argument per line (apps/cli_options.h), then the
///     platform with its --set overrides, the --schedule and the run's checks. Output
///     options, --platform and schedule file paths are dropped (no file is written or
///     read beyond the platform).
/// Returns when the input is accepted or rejected with a ConfigError (the one error a
/// user may see); any other exception escapes, and the fuzzer reports it as a crash.
void run_one(const std::uint8_t* data, std::size_t size, const std::string& source_dir);

}  // namespace aggnet::fuzz
