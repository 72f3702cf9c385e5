// `aggnet size-buffers`: the smallest FPGA buffer per site that keeps a schedule's rounds
// within a target fraction of their unconstrained speed (analytic bound, then a parallel
// bisection of `aggnet run` child processes). Logic: platforms/buffer_sizing.h.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "config/platform_loader.h"
#include "apps/cli_options.h"
#include "apps/commands.h"
#include "common/atomic_file.h"
#include "common/config_error.h"
#include "common/units.h"
#include "sizing/buffer_sizing.h"
#include "config/schedule_io.h"

namespace aggnet {
namespace {

namespace po = boost::program_options;
namespace fs = std::filesystem;

const char* kWhere = "aggnet size-buffers";

struct SizeCli {
  std::string platform, schedule, gradient, chunk, flow_control, round_start, alignment, jitter,
      json, csv;
  std::vector<std::string> sets;
  double target = 0.95, pacing_margin = 0.02;
  int workers = 0, steps = 0;
  bool heterogeneous = false, quiet = false;
};

po::options_description describe(SizeCli& c) {
  po::options_description d(
      "aggnet size-buffers: smallest FPGA buffer per site meeting a round-time target");
  d.add_options()("help,h", "show this help")(
      "platform", po::value(&c.platform)->default_value(cli::default_platform_path()),
      "platform YAML file")("schedule", po::value(&c.schedule)->default_value("triads"),
                            "group schedule name or YAML file (not ring)")(
      "gradient", po::value(&c.gradient)->default_value("1GiB"), "gradient bytes per site (G)")(
      "chunk", po::value(&c.chunk)->default_value("1MiB"), "chunk = aggregation slot size")(
      "target", po::value(&c.target)->default_value(0.95),
      "keep every group's round at least this fraction of its unconstrained speed "
      "(unconstrained round time / round time), in (0, 1]")(
      "flow-control", po::value(&c.flow_control)->default_value("pacing"), "pacing | credit")(
      "round-start", po::value(&c.round_start)->default_value("auto"),
      "aligned | immediate | auto (aligned with pacing, immediate with credit)")(
      "alignment", po::value(&c.alignment)->default_value("auto"),
      "arrival | none | auto (per group, offsets where they make it land earlier): the "
      "bound follows the residual skew the send offsets leave")(
      "pacing-margin", po::value(&c.pacing_margin)->default_value(0.02),
      "pacing: fraction below the computed safe rate")(
      "jitter", po::value(&c.jitter)->default_value("off"),
      "on | off: apply the links' jitter (adds a 3-sigma margin to the analytic bound)")(
      "steps", po::value(&c.steps)->default_value(0), "training steps (0: one schedule period)")(
      "heterogeneous", po::bool_switch(&c.heterogeneous),
      "also find one size per site (others unconstrained) and check them together")(
      "set", po::value(&c.sets)->composing(), "platform override PATH=VALUE, repeatable")(
      "workers", po::value(&c.workers)->default_value(0),
      "simulations in parallel (0: one per CPU)")("json", po::value(&c.json),
                                                  "write the result as JSON to FILE")(
      "csv", po::value(&c.csv), "write the per-site table as CSV to FILE")(
      "quiet,q", po::bool_switch(&c.quiet), "do not print the table or progress");
  return d;
}

SizingRequest prepare(SizeCli& c) {
  SizingRequest r;
  RunOptions& o = r.options;
  o.gradient_bytes = cli::size_option(kWhere, "gradient", c.gradient);
  o.chunk_bytes = cli::size_option(kWhere, "chunk", c.chunk);
  if (!(c.target > 0 && c.target <= 1))
    throw ConfigError(kWhere, 0, "--target", "expected a fraction in (0, 1]",
                      std::to_string(c.target));
  if (c.flow_control == "pacing") {
    o.flow_control = FlowControl::kPacing;
  } else if (c.flow_control == "credit") {
    o.flow_control = FlowControl::kCredit;
  } else {
    throw ConfigError(kWhere, 0, "--flow-control", "expected pacing or credit", c.flow_control);
  }
  const auto start = cli::round_start_option(kWhere, c.round_start, c.alignment,
                                             o.flow_control == FlowControl::kPacing);
  o.aligned_start = start.aligned_start;
  o.alignment = start.alignment;
  if (!(c.pacing_margin >= 0 && c.pacing_margin < 1))
    throw ConfigError(kWhere, 0, "--pacing-margin", "expected a number in [0, 1)",
                      std::to_string(c.pacing_margin));
  o.pacing_margin = c.pacing_margin;
  if (c.jitter != "on" && c.jitter != "off")
    throw ConfigError(kWhere, 0, "--jitter", "expected on or off", c.jitter);
  o.jitter = c.jitter == "on";
  if (c.steps < 0) throw ConfigError(kWhere, 0, "--steps", "expected 0 or a positive integer");
  o.steps = c.steps;
  if (c.workers < 0) throw ConfigError(kWhere, 0, "--workers", "expected 0 or a positive integer");
  r.workers = c.workers > 0 ? c.workers
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::vector<Override> overrides = cli::overrides(kWhere, c.sets);
  r.platform = load_platform(c.platform, overrides);
  r.schedule = make_schedule(c.schedule, r.platform);
  if (r.schedule.collective == Collective::kRing)
    throw ConfigError(kWhere, 0, "--schedule",
                      "expected a group schedule (a ring all-reduce uses no aggregation slots)",
                      c.schedule);
  cli::check_output_path(kWhere, "json", c.json);
  cli::check_output_path(kWhere, "csv", c.csv);
  r.target = c.target;
  r.heterogeneous = c.heterogeneous;
  r.progress = !c.quiet;
  r.aggnet_exe = cli::self_executable();
  r.run_args = {"--platform",      c.platform,
                "--schedule",      c.schedule,
                "--gradient",      c.gradient,
                "--chunk",         c.chunk,
                "--flow-control",  c.flow_control,
                "--round-start",   c.round_start,
                "--alignment",     c.alignment,
                "--jitter",        c.jitter,
                "--steps",         std::to_string(c.steps),
                "--pacing-margin", std::to_string(c.pacing_margin)};
  for (const auto& s : c.sets) r.run_args.push_back("--set=" + s);
  return r;
}

}  // namespace

int cmd_size_buffers(int argc, char** argv) {
  try {
    SizeCli cli;
    auto desc = describe(cli);
    const po::variables_map vm = cli::parse(kWhere, argc, argv, desc);
    if (vm.count("help")) {
      std::cout << desc;
      return 0;
    }
    const SizingRequest request = prepare(cli);
    const SizingResult result = size_buffers(request);
    if (!cli.quiet) std::cout << sizing_table(request, result);
    if (!cli.json.empty())
      write_file_atomically(cli.json, sizing_json(request, result).dump(2) + "\n");
    if (!cli.csv.empty()) write_file_atomically(cli.csv, sizing_csv(request, result));
    return 0;
  } catch (const ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << kWhere << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace aggnet
