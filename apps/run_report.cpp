#include "apps/run_report.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "apps/cli_options.h"
#include "common/config_error.h"
#include "common/data_dir.h"
#include "common/strings.h"
#include "common/subprocess.h"
#include "common/temp_dir.h"

namespace aggnet {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFigures[] = {"occupancy", "links", "alignment"};

std::string report_script() {
  if (const char* env = std::getenv("AGGNET_REPORT_SCRIPT"); env && *env) return env;
  return (fs::path(data_dir()) / "scripts" / "run_report.py").string();
}

void write_json(const fs::path& path, const nlohmann::json& value) {
  write_file_atomically(path.string(), value.dump(1) + "\n");
}

}  // namespace

std::vector<std::string> report_paths(const std::string& report_md) {
  std::vector<std::string> paths{report_md};
  const fs::path stem = fs::path(report_md).replace_extension();
  for (const char* figure : kFigures) paths.push_back(stem.string() + "." + figure + ".png");
  return paths;
}

void check_report_paths(const std::string& where, const std::string& report_md) {
  if (report_md.empty()) return;
  if (fs::path(report_md).extension() != ".md")
    throw ConfigError(where, 0, "--report",
                      "expected a Markdown file name ending in .md (its figures are written "
                      "next to it)",
                      report_md);
  for (const auto& path : report_paths(report_md)) cli::check_output_path(where, "report", path);
}

void stage_report(const std::string& report_md, const nlohmann::json& run,
                  const nlohmann::json& stats, OutputBatch& outputs) {
  const TempDir scratch("aggnet-report");
  const fs::path run_json = scratch.path() / "run.json", stats_json = scratch.path() / "stats.json";
  write_json(run_json, run);
  write_json(stats_json, stats);
  const std::string name = fs::path(report_md).stem().string();
  const std::string script = report_script();
  Command command;
  command.argv = {fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3",
                  script,
                  "--run",
                  run_json.string(),
                  "--stats",
                  stats_json.string(),
                  "--out-dir",
                  scratch.path().string(),
                  "--name",
                  name};
  command.out = Redirect::capture();
  command.err = Redirect::capture();
  command.timeout = Millis(300'000);
  const ProcessResult result = run_process(command);
  if (!result.success())
    throw std::runtime_error(fmt::format("--report: {} failed ({}): {}", script, result.describe(),
                                         trim(result.err + result.out)));
  const auto paths = report_paths(report_md);
  for (const auto& path : paths) {
    const fs::path made = scratch.path() / fs::path(path).filename();
    // Moved out of the scratch folder before it goes: a temporary next to each target.
    const std::string staged = temporary_path_for(path, ".partial");
    commit_file(made.string(), staged);
    outputs.adopt(staged, path);
  }
}

}  // namespace aggnet
