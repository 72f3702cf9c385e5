#include "fuzz/harness.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "apps/cli_options.h"
#include "common/config_error.h"
#include "common/strings.h"
#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "model/network_math.h"
#include "options/option_values.h"
#include "options/run_option_table.h"

namespace aggnet::fuzz {
namespace {

std::string nine_city(const std::string& source_dir) {
  return source_dir + "/platforms/nine_city.yaml";
}

// The fuzzer's platform file, one per process, removed when the process exits.
struct ScratchFile {
  std::string path = "/tmp/aggnet-fuzz-" + std::to_string(::getpid()) + ".yaml";
  ~ScratchFile() { std::remove(path.c_str()); }
};

void platform_yaml(const std::string& text) {
  static const ScratchFile scratch;
  const std::string& path = scratch.path;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  load_platform(path);
}

void schedule_yaml(const std::string& text, const std::string& source_dir) {
  static const Platform platform = load_platform(nine_city(source_dir));
  parse_schedule(text, platform, "fuzz.yaml");
}

/// Options that would write files or read other files than the platform.
bool dropped(const std::string& arg) {
  for (const char* option : {"--json", "--vcd", "--stats", "--csv", "--out", "--platform"}) {
    if (arg.rfind(option, 0) == 0) return true;
  }
  return false;
}

void run_command_line(const std::string& text, const std::string& source_dir) {
  std::vector<std::string> args = {"aggnet-run"};
  for (const std::string& arg : split(text, '\n')) {
    if (dropped(arg)) continue;
    if (!args.empty() && (args.back() == "--schedule") && arg.find('/') != std::string::npos)
      continue;
    args.push_back(arg);
  }
  args.push_back("--platform=" + nine_city(source_dir));
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  auto values =
      cli::read("aggnet run", options::kRun, "fuzz", static_cast<int>(argv.size()), argv.data());
  if (!values) return;  // --help
  const RunOptions run = options::to_run_options(*values);
  const Platform platform = cli::load_platform(*values, run);
  const std::string schedule = values->text("schedule");
  if (schedule.find('/') == std::string::npos) make_schedule(schedule, platform);
  cli::check_buffers(*values, platform, run);
  check_run_footprint("aggnet run", platform, run, true, 0);
}

}  // namespace

void run_one(const std::uint8_t* data, std::size_t size, const std::string& source_dir) {
  if (size == 0) return;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 3) {
      case 0:
        return platform_yaml(text);
      case 1:
        return schedule_yaml(text, source_dir);
      default:
        return run_command_line(text, source_dir);
    }
  } catch (const ConfigError&) {
    // The one error users may see: one line naming file, line and key.
  }
}

}  // namespace aggnet::fuzz
