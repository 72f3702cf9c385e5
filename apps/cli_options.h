// Option parsing shared by the aggnet subcommands. Every error is a ConfigError whose
// "file" is the command (e.g. "aggnet run") and whose key is the option ("--buffer"),
// so the user sees one line: `aggnet run: --buffer: expected ..., got '...'`.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "config/platform_loader.h"
#include "model/routing.h"
#include "model/run_options.h"

namespace aggnet::cli {

/// Parses argv against `desc`; stray positional words are errors.
/// Errors: ConfigError(where) with program_options' message.
boost::program_options::variables_map parse(
    const std::string& where, int argc, char** argv,
    const boost::program_options::options_description& desc);

/// platforms/nine_city.yaml in the working directory if present, else in the source tree.
std::string default_platform_path();

/// A positive size such as "64MiB". Errors: ConfigError(where, --key).
std::uint64_t size_option(const std::string& where, const std::string& key,
                          const std::string& value);

/// A time such as "1.5s" (a unit is required). Errors: ConfigError(where, --key).
std::uint64_t time_option(const std::string& where, const std::string& key,
                          const std::string& value);

/// "on"/"true" or "off"/"false". Errors: ConfigError(where, --key).
bool switch_option(const std::string& where, const std::string& key, const std::string& value);

/// How group members start a round, from `--round-start auto|aligned|immediate` and
/// `--alignment auto|arrival|none`.
struct RoundStart {
  bool aligned_start = true;  ///< exchange ready messages, start at one agreed time
  SendAlignment alignment = SendAlignment::kAuto;  ///< per-member send offsets
};

/// Round start `auto` is aligned with pacing and immediate with credit. Alignment
/// `arrival` always uses send offsets, `none` never, `auto` per group where they make it
/// land earlier; `arrival` needs an aligned start.
/// Errors: ConfigError(where, --round-start or --alignment).
RoundStart round_start_option(const std::string& where, const std::string& round_start,
                              const std::string& alignment, bool pacing);

/// `--set PATH=VALUE` items as platform overrides. Errors: ConfigError(where, --set).
std::vector<Override> overrides(const std::string& where, const std::vector<std::string>& sets);

/// An output path whose directory exists (checked before any work, so a bad path loses
/// nothing). Empty paths pass. Errors: ConfigError(where, --key).
void check_output_path(const std::string& where, const std::string& key, const std::string& path);

/// This executable's path (/proc/self/exe), for commands that run `aggnet run` children.
/// Errors: std::runtime_error.
std::string self_executable();

}  // namespace aggnet::cli
