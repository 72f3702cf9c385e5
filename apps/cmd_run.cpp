// `aggnet run`: simulate one platform running one schedule and report the metrics.
#include <fmt/format.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <systemc>
#include <vector>

#include "config/platform_loader.h"
#include "apps/cli_options.h"
#include "apps/commands.h"
#include "common/atomic_file.h"
#include "common/config_error.h"
#include "common/units.h"
#include "sim/builder.h"
#include "sim/module_stats.h"
#include "sim/report.h"
#include "sim/waveform.h"
#include "traffic/mixing.h"
#include "config/schedule_io.h"

namespace aggnet {
namespace {

namespace po = boost::program_options;
namespace fs = std::filesystem;

const char* kWhere = "aggnet run";

struct RunCli {
  std::string platform, schedule, buffer, gradient, chunk, flow_control, round_start, alignment,
      multicast, aggregation, jitter, vcd, json;
  std::vector<std::string> sets;
  std::vector<std::string> trace;  // --trace items (platforms/waveform.h)
  std::string trace_from, trace_to, stats, stats_interval;
  int steps = 0;
  double eps = 1e-3;
  double pacing_margin = 0.02;
  std::uint64_t seed = 1;
  bool functional = false, colocated = true, quiet = false;
};

struct RunSetup {
  Platform platform;
  Schedule schedule;
  RunOptions options;
  RunCli cli;
  long rounds_to_eps = -1;  ///< from the mixing matrices; -1: never
  TraceSelection trace;
  std::uint64_t stats_interval_ps = 0;
};

po::options_description describe(RunCli& c) {
  po::options_description d("aggnet run: simulate a platform running a schedule");
  d.add_options()("help,h", "show this help")(
      "platform", po::value(&c.platform)->default_value(cli::default_platform_path()),
      "platform YAML file")(
      "schedule", po::value(&c.schedule)->default_value("triads"),
      "schedule name (all-to-all, triads, ring, pairs, rotating-K, random-K:SEED, hierarchical) "
      "or schedule YAML file")("buffer", po::value(&c.buffer),
                               "FPGA buffer memory at every site, e.g. 64MiB "
                               "(default: the platform's)")(
      "gradient", po::value(&c.gradient)->default_value("1GiB"), "gradient bytes per site (G)")(
      "chunk", po::value(&c.chunk)->default_value("1MiB"), "chunk = aggregation slot size")(
      "steps", po::value(&c.steps)->default_value(0),
      "training steps (0: enough to reach --eps consensus, at least one schedule period)")(
      "eps", po::value(&c.eps)->default_value(1e-3),
      "target consensus error: reports rounds_to_eps and the simulated time_to_eps_s")(
      "flow-control", po::value(&c.flow_control)->default_value("pacing"), "pacing | credit")(
      "round-start", po::value(&c.round_start)->default_value("auto"),
      "aligned (members exchange ready messages and start together) | immediate | auto "
      "(aligned with pacing, immediate with credit)")(
      "alignment", po::value(&c.alignment)->default_value("auto"),
      "with an aligned start: arrival (each member sends at its offset so contributions reach "
      "each receiver together) | none | auto (per group, offsets where they make it land "
      "earlier)")("pacing-margin", po::value(&c.pacing_margin)->default_value(0.02),
                  "pacing: fraction below the computed safe rate")(
      "multicast", po::value(&c.multicast)->default_value("on"), "on | off (unicast copies)")(
      "aggregation", po::value(&c.aggregation)->default_value("on"),
      "on | off (FPGAs pass contributions to the hosts)")(
      "jitter", po::value(&c.jitter)->default_value("off"), "on | off: apply the links' jitter")(
      "seed", po::value(&c.seed)->default_value(1), "random seed (jitter)")(
      "set", po::value(&c.sets)->composing(),
      "platform override PATH=VALUE, repeatable (e.g. defaults.link.bandwidth=10Gbps)")(
      "functional", po::bool_switch(&c.functional), "carry real data and check every sum")(
      "no-colocated", "skip the co-located reference simulation")("vcd", po::value(&c.vcd),
                                                                  "write a VCD waveform to FILE")(
      "trace", po::value(&c.trace)->composing(),
      "with --vcd: what to trace, e.g. \"sites=lon,tyo signals=buffer,links,slots,state\" "
      "(default: every site and signal; docs/waveforms.md)")(
      "trace-from", po::value(&c.trace_from), "with --vcd: record from this time, e.g. 1s")(
      "trace-to", po::value(&c.trace_to), "with --vcd: record until this time, e.g. 1.5s")(
      "stats", po::value(&c.stats),
      "write per-module statistics to FILE (.csv or .json: one row per module instance)")(
      "stats-interval", po::value(&c.stats_interval)->default_value("1ms"),
      "with --stats: occupancy time-series sampling interval")("json", po::value(&c.json),
                                                               "write the metrics as JSON to FILE")(
      "quiet,q", po::bool_switch(&c.quiet), "do not print the table");
  return d;
}

RunOptions run_options(const RunCli& c) {
  RunOptions o;
  o.gradient_bytes = cli::size_option(kWhere, "gradient", c.gradient);
  o.chunk_bytes = cli::size_option(kWhere, "chunk", c.chunk);
  if (c.steps < 0) throw ConfigError(kWhere, 0, "--steps", "expected 0 or a positive integer");
  o.steps = c.steps;
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
  o.multicast = cli::switch_option(kWhere, "multicast", c.multicast);
  o.aggregation = cli::switch_option(kWhere, "aggregation", c.aggregation);
  o.jitter = cli::switch_option(kWhere, "jitter", c.jitter);
  o.seed = c.seed;
  o.functional = c.functional;
  // Every chunk is a transaction: millions per site and round would take hours and GBs.
  constexpr std::uint64_t kMaxChunks = 1ull << 22;
  if ((o.gradient_bytes + o.chunk_bytes - 1) / o.chunk_bytes > kMaxChunks)
    throw ConfigError(kWhere, 0, "--chunk",
                      "expected at most 4194304 chunks per gradient (a larger --chunk or a "
                      "smaller --gradient)",
                      c.chunk);
  if (o.functional && o.gradient_bytes > (64ull << 20))
    throw ConfigError(kWhere, 0, "--functional",
                      "expected --gradient of at most 64MiB (functional mode holds every "
                      "site's data in memory)",
                      c.gradient);
  if (o.functional && (o.gradient_bytes % 4 || o.chunk_bytes % 4))
    throw ConfigError(kWhere, 0, "--functional",
                      "expected --gradient and --chunk to be whole numbers of floats (4 bytes)");
  return o;
}

// Every site's buffer must hold at least one aggregation slot (one chunk).
void check_buffers(const RunSetup& s) {
  if (!s.options.aggregation || s.schedule.collective == Collective::kRing) return;
  for (const auto& site : s.platform.sites) {
    if (site.fpga.buffer_bytes >= s.options.chunk_bytes) continue;
    const std::string expected =
        "expected a buffer of at least one chunk (" + format_bytes(s.options.chunk_bytes) + ")";
    const std::string got = format_bytes(site.fpga.buffer_bytes);
    if (!s.cli.buffer.empty()) throw ConfigError(kWhere, 0, "--buffer", expected, s.cli.buffer);
    for (const std::string& key :
         {"sites." + site.code + ".fpga.buffer", std::string("defaults.fpga.buffer")}) {
      auto it = s.platform.key_lines.find(key);
      if (it != s.platform.key_lines.end())
        throw ConfigError(s.platform.file, it->second, key, expected, got);
    }
    throw ConfigError(s.platform.file, 0, "fpga.buffer (module default)", expected, got);
  }
}

// --trace/--trace-from/--trace-to (need --vcd) and --stats/--stats-interval.
void prepare_trace_and_stats(RunSetup& s) {
  const auto& c = s.cli;
  if (c.vcd.empty() && (!c.trace.empty() || !c.trace_from.empty() || !c.trace_to.empty()))
    throw ConfigError(kWhere, 0, "--trace",
                      "expected --vcd FILE with --trace/--trace-from/--trace-to");
  s.trace = parse_trace_selection(c.trace);
  std::vector<std::string> codes;
  for (const auto& site : s.platform.sites) codes.push_back(site.code);
  check_trace_sites(s.trace, codes);
  if (!c.trace_from.empty()) s.trace.from_ps = cli::time_option(kWhere, "trace-from", c.trace_from);
  if (!c.trace_to.empty()) s.trace.to_ps = cli::time_option(kWhere, "trace-to", c.trace_to);
  if (s.trace.to_ps < s.trace.from_ps)
    throw ConfigError(kWhere, 0, "--trace-to", "expected a time not before --trace-from",
                      c.trace_to);
  s.stats_interval_ps = cli::time_option(kWhere, "stats-interval", c.stats_interval);
  if (s.stats_interval_ps == 0)
    throw ConfigError(kWhere, 0, "--stats-interval", "expected a positive time", c.stats_interval);
  if (!c.stats.empty()) {
    const auto ext = fs::path(c.stats).extension().string();
    if (ext != ".csv" && ext != ".json")
      throw ConfigError(kWhere, 0, "--stats", "expected a file name ending in .csv or .json",
                        c.stats);
    cli::check_output_path(kWhere, "stats", c.stats);
  }
}

// Mixing: rounds to eps-consensus; with --steps 0 the run simulates that many steps (at
// least one period, at most kMaxAutoSteps) so time_to_eps_s is measured, not projected.
void plan_steps(RunSetup& s) {
  constexpr long kMaxAutoSteps = 256;
  if (!(s.cli.eps > 0 && s.cli.eps < 1))
    throw ConfigError(kWhere, 0, "--eps", "expected a number in (0, 1)", std::to_string(s.cli.eps));
  const int n = static_cast<int>(s.platform.sites.size());
  s.rounds_to_eps = rounds_to_eps(s.schedule, n, s.cli.eps);
  if (s.options.steps > 0) return;
  const long period = static_cast<long>(std::max<std::size_t>(s.schedule.period(), 1));
  long steps = period;
  if (s.rounds_to_eps > period && s.rounds_to_eps <= kMaxAutoSteps) steps = s.rounds_to_eps;
  s.options.steps = static_cast<int>(steps);
}

// SystemC time is 64-bit picoseconds (it ends after ~1.8e7 s): refuse runs whose compute
// phases or whose gradient on the slowest link alone would come near that.
void check_horizon(const RunSetup& s) {
  constexpr double kLimitS = 1e6;
  double compute_s = 0, slowest_bps = 1e300;
  for (const auto& site : s.platform.sites) {
    compute_s = std::max(compute_s, static_cast<double>(site.cluster.compute_ps) * 1e-12);
    slowest_bps = std::min(slowest_bps, static_cast<double>(site.cluster.access_bandwidth_bps));
  }
  for (const auto& link : s.platform.links)
    slowest_bps = std::min(slowest_bps, static_cast<double>(link.params.bandwidth_bps));
  const double steps = static_cast<double>(s.options.steps);
  const double bound_s =
      steps * (compute_s + static_cast<double>(s.options.gradient_bytes) * 8 / slowest_bps);
  if (bound_s > kLimitS)
    throw ConfigError(
        kWhere, 0, "simulated time",
        fmt::format("expected a run shorter than {:.0e} s of simulated time (SystemC's "
                    "64-bit ps clock ends at 1.8e7 s); steps x (compute time + "
                    "gradient on the slowest link) is already {:.2e} s",
                    kLimitS, bound_s));
}

RunSetup prepare(int argc, char** argv, bool& help) {
  RunSetup s;
  auto desc = describe(s.cli);
  const po::variables_map vm = cli::parse(kWhere, argc, argv, desc);
  help = vm.count("help") > 0;
  if (help) {
    std::cout << desc;
    return s;
  }
  s.cli.colocated = vm.count("no-colocated") == 0;
  s.options = run_options(s.cli);
  s.platform = load_platform(s.cli.platform, cli::overrides(kWhere, s.cli.sets));
  if (!s.cli.buffer.empty()) {
    const auto bytes = cli::size_option(kWhere, "buffer", s.cli.buffer);
    for (auto& site : s.platform.sites) site.fpga.buffer_bytes = bytes;
  }
  s.schedule = make_schedule(s.cli.schedule, s.platform);
  plan_steps(s);
  check_horizon(s);
  check_buffers(s);
  cli::check_output_path(kWhere, "json", s.cli.json);
  cli::check_output_path(kWhere, "vcd", s.cli.vcd);
  prepare_trace_and_stats(s);
  return s;
}

nlohmann::json options_json(const RunSetup& s) {
  const auto& c = s.cli;
  return {{"platform", c.platform},
          {"schedule", c.schedule},
          {"buffer", c.buffer},
          {"gradient", c.gradient},
          {"chunk", c.chunk},
          {"steps", s.options.steps},
          {"flow_control", c.flow_control},
          {"round_start", s.options.aligned_start ? "aligned" : "immediate"},
          {"alignment", c.alignment},
          {"pacing_margin", c.pacing_margin},
          {"multicast", c.multicast},
          {"aggregation", c.aggregation},
          {"jitter", c.jitter},
          {"seed", c.seed},
          {"eps", c.eps},
          {"set", c.sets},
          {"functional", c.functional},
          {"colocated", c.colocated}};
}

// rounds_to_eps; when the run got that far, the simulated time at which every site has the
// eps-consensus result (end of step rounds_to_eps - 1, from t = 0, compute included) and
// the communication time to it (the sum of those rounds' round times).
void add_consensus(nlohmann::json& report, long rounds) {
  auto& summary = report["summary"];
  summary["rounds_to_eps"] = static_cast<double>(rounds);
  const auto& steps = report["steps"];
  if (rounds < 1 || static_cast<std::size_t>(rounds) > steps.size()) return;
  summary["time_to_eps_s"] = steps[static_cast<std::size_t>(rounds - 1)]["end_s"];
  // The brief's figure of merit: rounds needed x time per round, measured round by round.
  double comm = 0;
  for (long k = 0; k < rounds; ++k)
    comm += steps[static_cast<std::size_t>(k)]["round_time_s"].get<double>();
  summary["comm_time_to_eps_s"] = comm;
}

// Ctrl-C or a kill during a run must not leave the half-written waveform behind.
char g_partial_vcd[4096] = "";

extern "C" void remove_partial_and_exit(int signal) {
  if (g_partial_vcd[0]) ::unlink(g_partial_vcd);
  ::_exit(128 + signal);
}

void guard_partial(const std::string& path) {
  std::snprintf(g_partial_vcd, sizeof g_partial_vcd, "%s", path.c_str());
  std::signal(SIGINT, remove_partial_and_exit);
  std::signal(SIGTERM, remove_partial_and_exit);
}

int simulate(const RunSetup& s) {
  const auto wall_start = std::chrono::steady_clock::now();
  NetworkSystem wan("wan", s.platform, s.schedule, s.options);
  std::unique_ptr<NetworkSystem> colocated;
  if (s.cli.colocated) {
    colocated = std::make_unique<NetworkSystem>("colocated", s.platform.colocated_variant(),
                                                s.schedule, s.options);
  }
  std::unique_ptr<WindowedVcd> vcd;
  const std::string vcd_base = s.cli.vcd + ".partial";
  if (!s.cli.vcd.empty()) guard_partial(vcd_base + ".vcd");
  std::unique_ptr<OccupancySampler> sampler;
  if (!s.cli.stats.empty())
    sampler = std::make_unique<OccupancySampler>("stats_sampler", wan, s.stats_interval_ps);
  if (!s.cli.vcd.empty()) {
    // The kernel's info notes (e.g. the timescale) are noise in a user's terminal.
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    vcd = std::make_unique<WindowedVcd>(vcd_base, s.trace.from_ps, s.trace.to_ps);
    vcd->set_time_unit(1, sc_core::SC_PS);  // the kernel resolution: every event representable
    trace_selection(wan, vcd.get(), s.trace);
  }
  sc_core::sc_start();
  if (vcd) vcd->close();

  nlohmann::json report = collect_report(wan);
  if (colocated) add_colocated(report, collect_report(*colocated));
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  report["aggnet_version"] = AGGNET_VERSION;
  report["platform_file"] = s.platform.file;
  report["options"] = options_json(s);
  report["summary"]["wall_time_s"] = wall_s;
  add_consensus(report, s.rounds_to_eps);
  report["summary"]["events"] = static_cast<double>(sc_core::sc_delta_count());

  if (!s.cli.quiet) std::cout << format_report(report);
  if (!s.cli.json.empty()) write_file_atomically(s.cli.json, report.dump(2) + "\n");
  if (vcd) commit_file(vcd_base + ".vcd", s.cli.vcd);
  if (!s.cli.stats.empty()) {
    const auto rows = collect_module_stats(wan, sampler.get());
    write_file_atomically(s.cli.stats, fs::path(s.cli.stats).extension() == ".json"
                                           ? rows.dump(1) + "\n"
                                           : module_stats_csv(rows));
  }
  const bool exact = report["summary"]["functional_mismatches"].get<double>() == 0 &&
                     report["summary"]["duplicate_results"].get<double>() == 0;
  if (!exact) std::cerr << "aggnet run: functional check failed (see the report)\n";
  return exact ? 0 : 1;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  try {
    bool help = false;
    RunSetup setup = prepare(argc, argv, help);
    if (help) return 0;
    return simulate(setup);
  } catch (const ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "aggnet run: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace aggnet
