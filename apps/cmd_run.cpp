// `aggnet run`: simulate one platform running one schedule and report the metrics.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <systemc>
#include <vector>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "apps/run_report.h"
#include "common/atomic_file.h"
#include "common/config_error.h"
#include "common/host.h"
#include "common/strings.h"
#include "common/subprocess.h"
#include "common/units.h"
#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "model/faults.h"
#include "model/network_math.h"
#include "modules/core/event_calendar.h"
#include "modules/core/hand_over_log.h"
#include "options/option_values.h"
#include "sim/bound_report.h"
#include "sim/builder.h"
#include "sim/gtkw_view.h"
#include "sim/invariants.h"
#include "sim/module_stats.h"
#include "sim/report.h"
#include "sim/watchdog.h"
#include "sim/waveform.h"
#include "traffic/load_aware.h"
#include "traffic/mixing.h"
#include "traffic/time_model.h"

namespace aggnet {
namespace {

namespace fs = std::filesystem;

const char* kWhere = "aggnet run";
const char* kCaption = "aggnet run: simulate a platform running a schedule";

using options::OptionValues;

struct RunSetup {
  explicit RunSetup(OptionValues v) : values(std::move(v)) {}
  OptionValues values;  ///< the command line, checked
  RunOptions options;
  Platform platform;
  Schedule schedule;
  long rounds_to_eps = -1;  ///< from the mixing matrices; -1: never
  TraceSelection trace;
  std::uint64_t stats_interval_ps = 0;
  bool colocated = true;
  bool quiet = false;
  std::optional<LoadAwarePlan> routing_plan;  ///< `--routing load-aware`
};

// The GTKWave view's file: --gtkw FILE, else the waveform's name with .gtkw; "" for none
// (no view of /dev/null in /dev, nor of the standard output).
std::string view_path(const OptionValues& v) {
  if (v.has("gtkw")) return v.text("gtkw");
  const std::string& waveform = v.text("vcd");
  if (waveform.empty() || is_special_file(waveform)) return "";
  return fs::path(waveform).replace_extension(".gtkw").string();
}

bool writes_fst(const OptionValues& v) { return fs::path(v.text("vcd")).extension() == ".fst"; }

// Whether `program` is an executable in PATH.
bool in_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  for (const auto& dir : split(path ? path : "", ':', EmptyFields::kSkip))
    if (::access((fs::path(dir) / program).c_str(), X_OK) == 0) return true;
  return false;
}

// Whether the file at `view` is aggnet's GTKWave view of the waveform `waveform`: the one
// file a run's view may replace.
bool is_view_of(const std::string& view, const std::string& waveform) {
  std::ifstream in(view);
  std::stringstream text;
  text << in.rdbuf();
  const std::string ours = fmt::format("[dumpfile] \"{}\"\n", fs::absolute(waveform).string());
  return text.str().rfind("[*]\n[*] aggnet ", 0) == 0 && text.str().find(ours) != std::string::npos;
}

// --vcd FILE.fst needs vcd2fst; the view, derived or --gtkw FILE, never replaces a file that
// is not aggnet's view of this same waveform (a hand-made view of it, or a view of another
// file); --gtkw needs a waveform file to name, so not --vcd - (the standard output).
void check_waveform_outputs(const OptionValues& v) {
  if (!v.has("vcd")) return;
  if (writes_fst(v) && !in_path("vcd2fst"))
    v.fail("vcd",
           "expected a .vcd file: FST needs vcd2fst (Debian package gtkwave), not found in PATH",
           v.text("vcd"));
  if (v.has("gtkw") && is_stdout(v.text("vcd")))
    v.fail("gtkw",
           "expected --vcd FILE, not --vcd - (the view names its waveform's file, and the "
           "standard output is none)",
           v.text("gtkw"));
  const std::string view = view_path(v);
  if (view.empty() || is_stdout(view)) return;
  const bool given = v.has("gtkw");
  if (!given) cli::check_output_path(kWhere, "vcd", view);  // the view too: a regular file or none
  if (!fs::exists(view) || is_view_of(view, v.text("vcd"))) return;
  if (given)
    v.fail("gtkw",
           "expected a new file or aggnet's view of this waveform (the GTKWave view would "
           "replace one that is not)",
           view);
  v.fail("vcd",
         "expected no other file at " + view +
             " (its GTKWave view would replace one that is not aggnet's view of this "
             "waveform; name the view with --gtkw FILE)",
         v.text("vcd"));
}

// Every file a run writes, derived names included (the waveform's view, the report's
// figures), is a different file: one output never replaces another.
void check_distinct_outputs(const OptionValues& v) {
  struct Output {
    std::string path, key, what;  // what: the output of --key that goes to path
  };
  std::vector<Output> files;
  for (const char* key : {"json", "vcd", "stats", "journey", "report"})
    if (v.has(key) && !is_stdout(v.text(key))) files.push_back({v.text(key), key, "its output"});
  const std::string view = view_path(v);
  if (!view.empty() && !v.has("gtkw")) files.push_back({view, "vcd", "its GTKWave view"});
  if (v.has("gtkw")) files.push_back({view, "gtkw", "its output"});
  if (v.has("report")) {
    const auto figures = report_paths(v.text("report"));
    for (auto it = figures.begin() + 1; it != figures.end(); ++it)
      files.push_back({*it, "report", "its figure"});
  }
  std::map<fs::path, const Output*> seen;
  for (const Output& out : files) {
    const auto [it, fresh] = seen.emplace(cli::file_identity(out.path), &out);
    if (!fresh)
      throw ConfigError(kWhere, 0, "--" + out.key,
                        "expected " + out.what + " in a file other than --" + it->second->key +
                            "'s " + it->second->what.substr(4),
                        out.path);
  }
}

// --trace/--trace-from/--trace-to (need --vcd) and --stats/--stats-interval.
void prepare_trace_and_stats(RunSetup& s) {
  const auto& v = s.values;
  if (!v.has("vcd") && (v.has("trace") || v.has("trace-from") || v.has("trace-to")))
    v.fail("trace", "expected --vcd FILE with --trace/--trace-from/--trace-to");
  if (!v.has("vcd") && v.has("gtkw")) v.fail("gtkw", "expected --vcd FILE with --gtkw");
  s.trace = parse_trace_selection(v.list("trace"));
  std::vector<std::string> codes;
  for (const auto& site : s.platform.sites) codes.push_back(site.code);
  check_trace_sites(s.trace, codes);
  if (v.has("trace-from")) s.trace.from_ps = v.time_ps("trace-from");
  if (v.has("trace-to")) s.trace.to_ps = v.time_ps("trace-to");
  if (s.trace.to_ps < s.trace.from_ps)
    v.fail("trace-to", "expected a time not before --trace-from", v.text("trace-to"));
  s.stats_interval_ps = v.time_ps("stats-interval");
  const std::string& stats = v.text("stats");
  const auto ext = fs::path(stats).extension().string();
  if (!stats.empty() && !is_stdout(stats) && ext != ".csv" && ext != ".json")
    v.fail("stats", "expected a file name ending in .csv or .json (or - for CSV on stdout)", stats);
  check_report_paths(kWhere, v.text("report"));
  check_waveform_outputs(v);
  check_distinct_outputs(v);
}

// The default --stats interval, where its series would not fit in memory, becomes the
// finest that does (an interval given is kept: check_run_footprint refuses it, naming
// the finest that fits).
void coarsen_default_stats_interval(RunSetup& s) {
  if (!(s.values.has("stats") || s.values.has("report")) || s.values.given("stats-interval"))
    return;
  const std::uint64_t fits =
      stats_interval_that_fits(s.platform, s.options, s.colocated, s.stats_interval_ps);
  if (fits <= s.stats_interval_ps) return;
  const RunFootprint f =
      estimate_run_footprint(s.platform, s.options, s.colocated, s.stats_interval_ps);
  std::cerr << fmt::format(
      "aggnet run: --stats-interval {}: at the default, {}, the series would take {}, more "
      "than a quarter of the {} available with the run (AGGNET_MEMORY_LIMIT overrides)\n",
      interval_text(fits), interval_text(s.stats_interval_ps), format_bytes(f.stats_bytes),
      format_bytes(memory_limit_bytes()));
  s.stats_interval_ps = fits;
}

// Mixing: rounds to eps-consensus; with --steps 0 the run simulates that many steps (at
// least one period, at most kMaxAutoSteps) so time_to_eps_s is measured, not projected.
void plan_steps(RunSetup& s) {
  constexpr long kMaxAutoSteps = 256;
  const int n = static_cast<int>(s.platform.sites.size());
  s.rounds_to_eps = rounds_to_eps(s.schedule, n, s.options.eps);
  if (s.options.steps > 0) return;
  const long period = static_cast<long>(std::max<std::size_t>(s.schedule.period(), 1));
  long steps = period;
  if (s.rounds_to_eps > period && s.rounds_to_eps <= kMaxAutoSteps) steps = s.rounds_to_eps;
  s.options.steps = static_cast<int>(steps);
}

// The platform key that sets a horizon term, where the file wrote it (its own key, else
// the defaults'), or its own key at line 0 (a module default or --set).
ConfigError platform_key_error(const Platform& p, const std::vector<std::string>& keys,
                               const std::string& expected, const std::string& got) {
  for (const auto& key : keys) {
    const auto it = p.key_lines.find(key);
    if (it != p.key_lines.end()) return ConfigError(p.file, it->second, key, expected, got);
  }
  return ConfigError(p.file, 0, keys.front(), expected, got);
}

// SystemC time is 64-bit picoseconds (it ends after ~1.8e7 s): refuse runs whose compute
// phases or whose gradient on the slowest link alone would come near that, naming the
// key of the term that decides it.
void check_horizon(const RunSetup& s) {
  constexpr double kLimitS = 1e6;
  const Platform& p = s.platform;
  double compute_s = 0, slowest_bps = 1e300;
  std::vector<std::string> compute_keys, slowest_keys;
  for (std::size_t i = 0; i < p.sites.size(); ++i) {
    const std::string& code = p.sites[i].code;
    const double site_s =
        static_cast<double>(slowed_compute_ps(s.options.faults, p, static_cast<int>(i))) * 1e-12;
    if (site_s > compute_s) {
      compute_s = site_s;
      compute_keys = {"sites." + code + ".cluster.compute_time", "defaults.cluster.compute_time"};
    }
    const auto access = static_cast<double>(p.sites[i].cluster.access_bandwidth_bps);
    if (access < slowest_bps) {
      slowest_bps = access;
      slowest_keys = {"sites." + code + ".cluster.access_bandwidth",
                      "defaults.cluster.access_bandwidth"};
    }
  }
  for (const auto& link : p.links) {
    if (static_cast<double>(link.params.bandwidth_bps) >= slowest_bps) continue;
    slowest_bps = static_cast<double>(link.params.bandwidth_bps);
    const std::string &a = p.sites[link.a].code, &b = p.sites[link.b].code;
    slowest_keys = {"links." + a + "-" + b + ".bandwidth", "links." + b + "-" + a + ".bandwidth",
                    "defaults.link.bandwidth"};
  }
  const auto fabric_bps = static_cast<double>(p.colocated.link.bandwidth_bps);
  if (s.colocated && fabric_bps < slowest_bps) {
    slowest_bps = fabric_bps;
    slowest_keys = {"colocated.link.bandwidth"};
  }
  const double steps = static_cast<double>(s.options.steps);
  const double transfer_s = static_cast<double>(s.options.gradient_bytes) * 8 / slowest_bps;
  const double bound_s = steps * (compute_s + transfer_s);
  if (bound_s <= kLimitS) return;
  const std::string expected = fmt::format(
      "expected a run shorter than {:.0e} s of simulated time (SystemC's 64-bit ps clock ends "
      "at 1.8e7 s); steps x (compute time + gradient on the slowest link) is already {:.2e} s",
      kLimitS, bound_s);
  if (s.values.given("steps") && compute_s + transfer_s <= kLimitS)  // one step would fit
    s.values.fail("steps", expected, s.values.text("steps"));
  const auto& keys = transfer_s >= compute_s ? slowest_keys : compute_keys;
  for (const std::string& set : s.values.list("set"))  // a --set gave the deciding value
    if (std::find(keys.begin(), keys.end(), set.substr(0, set.find('='))) != keys.end())
      s.values.fail("set", expected, set);
  throw platform_key_error(
      p, keys, expected,
      transfer_s >= compute_s ? format_rate(slowest_bps) : fmt::format("{:.3g} s", compute_s));
}

// The option that brought the losses in: --fault, --loss, a --set of a link's loss or
// faults, else the platform file.
std::string lossy_option(const RunSetup& s) {
  if (s.values.has("fault")) return "fault";
  if (s.options.faults.wan_loss_rate > 0) return "loss";
  for (const auto& set : s.values.list("set")) {
    const std::string key = set.substr(0, set.find('='));
    const auto last = key.substr(key.rfind('.') + 1);
    if (key.rfind("links.", 0) == 0 && (last == "loss" || last.rfind("down", 0) == 0)) return "set";
  }
  return "platform";
}

// The platform's link faults, then the --fault specs, against the platform; loss recovery
// covers group-average rounds only.
void prepare_faults(RunSetup& s) {
  for (const auto& link : s.platform.links)
    for (const auto& spec : link.faults) add_fault_spec(s.options.faults, spec);  // checked
  try {
    for (const auto& spec : s.values.list("fault")) add_fault_spec(s.options.faults, spec);
    check_faults(s.options.faults, s.platform);
  } catch (const FaultSpecError& e) {  // "--fault: expected ..., got 'SPEC'"
    s.values.fail("fault", e.expected(), e.spec());
  } catch (const std::invalid_argument& e) {
    s.values.fail("fault", e.what());
  }
  if (s.options.faults.lossy() && s.schedule.collective != Collective::kGroupAverage) {
    const bool tree = s.schedule.collective == Collective::kReductionTree;
    s.values.fail(lossy_option(s),
                  "expected a group-average schedule with losses (loss recovery covers "
                  "multicast + in-line aggregation rounds; the " +
                      std::string(tree ? "in-network " : "host-based ") +
                      collective_name(s.schedule.collective) + " would wait forever)");
  }
  cli::check_flow_control(s.values, s.schedule.collective, s.options);
}

// The ring collectives split the gradient into segments of whole 4-byte floats: below one
// float nothing moves (round time 0), and the bytes past the last whole float never did.
void check_ring_gradient(const RunSetup& s) {
  const std::uint64_t g = s.options.gradient_bytes;
  if (!is_ring_collective(s.schedule.collective) || (g >= 4 && g % 4 == 0)) return;
  s.values.fail("gradient",
                "expected a whole number of 4-byte floats, at least 4B, with the " +
                    collective_name(s.schedule.collective) + " (its segments are whole floats)",
                s.values.text("gradient"));
}

// `--routing load-aware`: the link metrics for this schedule and these options.
void plan_routing(RunSetup& s) {
  if (!s.options.load_aware_routing) return;
  if (s.schedule.collective != Collective::kGroupAverage)
    s.values.fail("routing",
                  "expected a group-average schedule with load-aware routing (" +
                      collective_name(s.schedule.collective) + " routes its own paths)",
                  "load-aware");
  s.routing_plan = plan_load_aware_routing(s.platform, s.schedule, s.options);
  s.options.link_metric = s.routing_plan->link_metric;
}

// The report's `routing` section (load-aware routing only): each link's delay and metric,
// and the busiest link's load before (delay routing) and after.
nlohmann::json routing_json(const RunSetup& s) {
  const LoadAwarePlan& p = *s.routing_plan;
  nlohmann::json links = nlohmann::json::array();
  for (std::size_t i = 0; i < s.platform.links.size(); ++i) {
    const LinkSpec& l = s.platform.links[i];
    links.push_back({{"link", s.platform.sites[l.a].code + "-" + s.platform.sites[l.b].code},
                     {"delay_s", static_cast<double>(l.params.delay_ps) * 1e-12},
                     {"metric_s", static_cast<double>(p.link_metric[i]) * 1e-12}});
  }
  const auto before_after = [](auto before, auto after) {
    return nlohmann::json{{"before", before}, {"after", after}};
  };
  return {{"mode", "load-aware"},
          {"links", links},
          {"busiest_round_streams",
           before_after(p.busiest_round_load_before, p.busiest_round_load_after)},
          {"busiest_period_load_per_gradient",
           before_after(p.busiest_period_load_before, p.busiest_period_load_after)},
          {"analytic_mean_round_s", before_after(p.time_before_s, p.time_after_s)},
          {"search_evaluations", p.evaluations}};
}

RunSetup prepare(OptionValues values) {
  RunSetup s(std::move(values));
  s.options = options::to_run_options(s.values);
  s.colocated = !s.values.flag("no-colocated");
  // An output on the standard output replaces the table there.
  s.quiet = s.values.flag("quiet") || is_stdout(s.values.text("json")) ||
            is_stdout(s.values.text("journey")) || is_stdout(s.values.text("vcd")) ||
            is_stdout(s.values.text("gtkw")) || is_stdout(s.values.text("stats"));
  s.platform = cli::load_platform(s.values, s.options);
  s.schedule = make_schedule(s.values.text("schedule"), s.platform,
                             PlanInputs{s.options.gradient_bytes, transaction_bytes(s.options)});
  // The co-located fabric joins every site through one switch: a tree has no direct links
  // to run on there, so a reduction-tree run has no co-located reference.
  if (s.schedule.collective == Collective::kReductionTree) s.colocated = false;
  check_ring_gradient(s);
  prepare_faults(s);
  plan_steps(s);
  check_horizon(s);
  cli::check_buffers(s.values, s.platform, s.options, s.schedule.collective);
  const auto c = s.schedule.collective;
  if (s.options.functional && c != Collective::kGroupAverage && c != Collective::kRing &&
      c != Collective::kReductionTree)
    s.values.fail("functional", "expected a group-average, ring or reduction-tree schedule (the " +
                                    collective_name(c) + " carries no averaged data to check)");
  plan_routing(s);
  cli::check_outputs(s.values);
  prepare_trace_and_stats(s);
  coarsen_default_stats_interval(s);
  check_run_footprint(kWhere, s.platform, s.options, s.colocated,
                      s.values.has("stats") || s.values.has("report") ? s.stats_interval_ps : 0,
                      &s.schedule);
  return s;
}

// The options the command line gave, as it gave them (names and text as typed; flags
// true; repeatable options as lists). The runner's own options (outputs, tracing, -q)
// change no result and are left out, so the same inputs give the same file.
nlohmann::json given_options(const OptionValues& v) {
  nlohmann::json given = nlohmann::json::object();
  for (const options::OptionSpec* spec : options::options_of(options::kRun)) {
    if (options::runner_owned(*spec) || !v.given(spec->name)) continue;
    if (spec->form == options::Form::kFlag)
      given[spec->name] = true;
    else if (spec->repeatable)
      given[spec->name] = v.list(spec->name);
    else
      given[spec->name] = v.text(spec->name);
  }
  return given;
}

// Every fault of the run: the platform's links' (with --set), then --fault's.
std::vector<std::string> fault_specs(const RunSetup& s) {
  std::vector<std::string> specs;
  for (const auto& link : s.platform.links)
    specs.insert(specs.end(), link.faults.begin(), link.faults.end());
  const auto given = s.values.list("fault");
  specs.insert(specs.end(), given.begin(), given.end());
  return specs;
}

// Every run option as the run used it: defaults filled in, `--steps 0` and
// `--round-start auto` decided, sizes in bytes and times in seconds (null: decided per
// group, see docs/run-json.md).
nlohmann::json resolved_options(const RunSetup& s, const NetworkSystem& wan) {
  const auto& v = s.values;
  const auto& o = s.options;
  nlohmann::json buffers = nlohmann::json::object();
  for (const auto& site : s.platform.sites) buffers[site.code] = site.fpga.buffer_bytes;
  const bool recovery = loss_recovery(o.faults, o.flow_control);
  const auto seconds = [](std::uint64_t ps) { return static_cast<double>(ps) * 1e-12; };
  return {{"platform", v.text("platform")},
          {"schedule", v.text("schedule")},
          {"buffer_bytes", buffers},
          {"gradient_bytes", o.gradient_bytes},
          {"chunk_bytes", o.chunk_bytes},
          {"burst_chunks", o.burst_chunks},
          {"steps", o.steps},
          {"eps", o.eps},
          {"flow_control", v.text("flow-control")},
          {"round_start", ready_exchange(o, s.schedule.collective) ? "aligned" : "immediate"},
          {"alignment", v.text("alignment")},
          {"pacing_margin", o.pacing_margin},
          {"multicast", o.multicast},
          {"aggregation", o.aggregation},
          {"jitter", o.jitter},
          {"seed", o.seed},
          {"set", v.list("set")},
          {"functional", o.functional},
          {"colocated", s.colocated},
          {"loss_rate", o.faults.wan_loss_rate},
          {"faults", fault_specs(s)},
          {"loss_recovery", recovery},
          {"retransmit_timeout_s", o.faults.retransmit_timeout_ps
                                       ? nlohmann::json(seconds(o.faults.retransmit_timeout_ps))
                                       : nlohmann::json()},
          {"watchdog_s",
           recovery ? nlohmann::json(seconds(wan.watchdog().window().value())) : nlohmann::json()}};
}

nlohmann::json options_json(const RunSetup& s, const NetworkSystem& wan) {
  nlohmann::json resolved = resolved_options(s, wan);
  // Only when not the default, so runs without it keep their recorded JSON (the goldens).
  if (s.options.load_aware_routing) resolved["routing"] = "load-aware";
  return {{"given", given_options(s.values)}, {"resolved", std::move(resolved)}};
}

// rounds_to_eps; when the run got that far, the decision metric (traffic/time_model.h):
// the simulated time at which every site holds the eps-consensus result (end of step
// rounds_to_eps - 1, from t = 0, compute included) and the same without compute.
void add_consensus(nlohmann::json& report, long rounds, const RunSetup& s) {
  auto& summary = report["summary"];
  summary["rounds_to_eps"] = rounds;
  const auto& steps = report["steps"];
  if (rounds < 1 || static_cast<std::size_t>(rounds) > steps.size()) return;
  const double tte_s = steps[static_cast<std::size_t>(rounds - 1)]["end_s"].get<double>();
  summary["time_to_eps_s"] = tte_s;
  summary["comm_time_to_eps_s"] =
      time_to_eps_without_compute_s(tte_s, rounds_compute_s(rounds, s.platform, s.options.faults));
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

// The GTKWave view of the waveform: --gtkw FILE, else the VCD's name with .gtkw.
void write_view(const RunSetup& s, const NetworkSystem& wan, const WindowedVcd& vcd,
                const std::vector<TracedSignal>& traced, OutputBatch& outputs) {
  const std::string& vcd_path = s.values.text("vcd");
  const std::string path = view_path(s.values);
  if (path.empty()) return;
  GtkwView view;
  view.title = fmt::format("aggnet {}: {} on {}", AGGNET_VERSION, s.values.text("schedule"),
                           fs::path(s.platform.file).filename().string());
  view.vcd_path = fs::absolute(vcd_path).string();
  view.start_ps = s.trace.from_ps;
  view.end_ps = std::max(std::min(s.trace.to_ps, system_end_ps(wan)), view.start_ps + 1);
  for (const auto& t : traced)
    view.signals.push_back(
        {t.site, t.vcd_name, t.label, t.bytes, t.source ? vcd.range(t.source).max : 0});
  outputs.add(path, gtkw_text(view));
}

// The waveform of --vcd: written, while the run lasts, to a partial file named from `base`.
struct Waveform {
  std::string base;
  std::unique_ptr<WindowedVcd> vcd;
  std::vector<TracedSignal> traced;
};

// The finished waveform for --vcd FILE, as a temporary file: FILE.fst gets `vcd` (the
// waveform written while the run lasted) converted by vcd2fst.
std::string finished_waveform(const OptionValues& v, const std::string& vcd) {
  const std::string& path = v.text("vcd");
  if (!writes_fst(v)) return vcd;
  const std::string fst = temporary_path_for(path, ".partial.fst");
  Command convert;
  convert.argv = {"vcd2fst", vcd, fst};
  convert.out = Redirect::null();
  convert.err = Redirect::capture();
  const ProcessResult result = run_process(convert);
  std::remove(vcd.c_str());
  if (!result.success()) {
    std::remove(fst.c_str());
    throw std::runtime_error("vcd2fst could not convert the waveform (" + result.describe() +
                             "): " + trim(result.err));
  }
  return fst;
}

// The JSON, the waveform and its view, and the statistics the command line asks for: all
// of them or none (a full device for one leaves no other written).
void write_outputs(const RunSetup& s, const nlohmann::json& report, const NetworkSystem& wan,
                   const OccupancySampler* sampler, const Waveform& waveform,
                   const HandOverLog* journey) {
  const std::string& json_path = s.values.text("json");
  const std::string& stats_path = s.values.text("stats");
  const std::string& report_path = s.values.text("report");
  OutputBatch outputs;
  if (waveform.vcd) {
    outputs.adopt(finished_waveform(s.values, waveform.base + ".vcd"), s.values.text("vcd"));
    write_view(s, wan, *waveform.vcd, waveform.traced, outputs);
  }
  if (!json_path.empty()) outputs.add(json_path, report.dump(2) + "\n");
  if (journey) outputs.add(s.values.text("journey"), journey_text(*journey));
  nlohmann::json rows;
  if (!stats_path.empty() || !report_path.empty()) {
    rows = collect_module_stats(wan, sampler);
    tidy_numbers(rows);
  }
  if (!stats_path.empty())
    outputs.add(stats_path, fs::path(stats_path).extension() == ".json" ? rows.dump(1) + "\n"
                                                                        : module_stats_csv(rows));
  if (!report_path.empty()) stage_report(report_path, report, rows, outputs);
  outputs.commit();
}

// The systems of the run. A simulation context cannot elaborate again after sc_start, so
// they live until the process exits, and are not torn down: destroying ~100 SystemC
// objects took a tenth of the CPU time of a short run.
struct Systems {
  NetworkSystem* wan = nullptr;
  NetworkSystem* colocated = nullptr;
};

Systems build_systems(const RunSetup& s) {
  // Never destroyed (no exit-time destructor either); reachable, so not a leak.
  static auto* const kept = new std::vector<NetworkSystem*>();
  Systems systems;
  systems.wan = kept->emplace_back(new NetworkSystem("wan", s.platform, s.schedule, s.options));
  if (s.colocated) {
    RunOptions reference = s.options;  // the co-located reference has no WAN faults
    reference.faults = FaultPlan{};
    reference.link_metric.clear();  // one switch joins every site: a single path each
    const ColocatedReference ref = colocated_reference(s.platform, s.schedule, reference);
    systems.colocated =
        kept->emplace_back(new NetworkSystem("colocated", ref.platform, ref.schedule, reference));
  }
  return systems;
}

Waveform open_waveform(const RunSetup& s, const NetworkSystem& wan) {
  Waveform w;
  if (!s.values.has("vcd")) return w;
  // A new file of a name unique to the run (never one planted there): SystemC's writer
  // opens `base`.vcd.
  const std::string partial = temporary_path_for(s.values.text("vcd"), ".partial.vcd");
  guard_partial(partial);
  w.base = partial.substr(0, partial.size() - 4);
  // The kernel's info notes (e.g. the timescale) are noise in a user's terminal.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  const auto& t = s.trace;
  const std::string header = fmt::format(
      "aggnet {} run, platform {}, options {}, trace {} from {} ps to {}", AGGNET_VERSION,
      s.platform.file, options_json(s, wan).dump(), nlohmann::json(s.values.list("trace")).dump(),
      t.from_ps, t.to_ps == TraceSelection{}.to_ps ? "the end" : std::to_string(t.to_ps) + " ps");
  w.vcd = std::make_unique<WindowedVcd>(w.base, s.trace.from_ps, s.trace.to_ps, header);
  w.vcd->set_time_unit(1, sc_core::SC_PS);  // the kernel resolution: every event representable
  w.traced = trace_selection(wan, w.vcd.get(), s.trace);
  return w;
}

// Backstop of check_horizon (an estimate): stop before SystemC's 64-bit ps clock could
// wrap (1.8e7 s), which hung runs; every delay term is at most 1000 s (kMaxDelayPs).
constexpr double kHorizonS = 1e7;

void run_to_horizon() {
  const sc_core::sc_time horizon(kHorizonS, sc_core::SC_SEC);
  EventCalendar::current().set_horizon(horizon);
  sc_core::sc_start(horizon, sc_core::SC_EXIT_ON_STARVATION);
}

// A run that stopped progressing: the watchdog's diagnosis (or, out of events, where every
// unfinished site stands) on stderr, and true; false for a run that finished or reached
// the horizon.
bool report_stall(const Systems& systems) {
  for (const NetworkSystem* system : {systems.wan, systems.colocated}) {
    if (!system) continue;
    const bool fired = system->watchdog().fired();
    if (!fired && sc_core::sc_pending_activity()) continue;  // the horizon
    const std::string stalled = fired ? system->watchdog().diagnosis() : stall_diagnosis(*system);
    if (stalled.empty()) continue;
    std::cerr << "aggnet run: the run "
              << (fired ? system->watchdog().stop_reason() : "stopped progressing") << " at "
              << format_time_ps(static_cast<double>(
                     (fired ? system->watchdog().fired_at() : sc_core::sc_time_stamp()).value()))
              << " (" << system->basename() << "): " << stalled << "\n";
    return true;
  }
  return false;
}

// A trace window that opens after the run ended records nothing but the end state.
void warn_if_window_after_end(const RunSetup& s, const NetworkSystem& wan) {
  const std::uint64_t end_ps = system_end_ps(wan);
  if (s.trace.from_ps <= end_ps) return;
  std::cerr << fmt::format(
      "aggnet run: warning: --trace-from {} is after the run's end at {}: the waveform holds "
      "only the values at the end\n",
      format_time_ps(static_cast<double>(s.trace.from_ps)),
      format_time_ps(static_cast<double>(end_ps)));
}

nlohmann::json run_report(const RunSetup& s, const Systems& systems,
                          const std::vector<InvariantResult>& invariants) {
  const NetworkSystem& wan = *systems.wan;
  nlohmann::json report = collect_report(wan);
  if (systems.colocated) add_colocated(report, collect_report(*systems.colocated));
  report["aggnet_version"] = AGGNET_VERSION;
  report["platform_file"] = s.platform.file;
  report["options"] = options_json(s, wan);
  add_consensus(report, s.rounds_to_eps, s);
  add_bound(report, s.platform, s.schedule, s.options.gradient_bytes, s.options.faults);
  if (s.routing_plan) report["routing"] = routing_json(s);
  for (const auto& inv : invariants)
    report["invariants"][inv.name] = inv.holds() ? "holds" : inv.violation;
  report["summary"]["events"] = static_cast<std::uint64_t>(sc_core::sc_delta_count());
  tidy_numbers(report);
  return report;
}

int simulate(const RunSetup& s) {
  // Opened before the start of simulation, where the initiators resolve their sinks.
  std::unique_ptr<HandOverLog> journey;
  if (s.values.has("journey")) journey = std::make_unique<HandOverLog>();
  const Systems systems = build_systems(s);
  const NetworkSystem& wan = *systems.wan;
  std::unique_ptr<OccupancySampler> sampler;
  if (s.values.has("stats") || s.values.has("report"))
    sampler = std::make_unique<OccupancySampler>("stats_sampler", wan, s.stats_interval_ps);
  Waveform waveform = open_waveform(s, wan);
  run_to_horizon();
  const bool stalled = report_stall(systems);
  if (stalled || sc_core::sc_pending_activity()) {
    if (waveform.vcd) std::remove((waveform.base + ".vcd").c_str());  // no half-written outputs
    if (stalled) return kStalledRunExit;  // exit status 3 and no outputs
    throw ConfigError(kWhere, 0, "simulated time",
                      fmt::format("expected a run that ends within {:.0e} s of simulated time "
                                  "(SystemC's 64-bit ps clock ends at 1.8e7 s); it had not",
                                  kHorizonS));
  }
  if (waveform.vcd) {
    waveform.vcd->close();
    warn_if_window_after_end(s, wan);
  }
  const auto invariants = check_invariants(wan);
  const nlohmann::json report = run_report(s, systems, invariants);
  if (!s.quiet) std::cout << format_report(report);
  write_outputs(s, report, wan, sampler.get(), waveform, journey.get());
  // Duplicate results break the exactly-once invariant, reported below.
  const bool exact = report["summary"]["functional_mismatches"].get<double>() == 0;
  if (!exact) std::cerr << "aggnet run: functional check failed (see the report)\n";
  const std::string broken = violations(invariants);
  if (!broken.empty()) std::cerr << "aggnet run: " << broken << "\n";
  return exact && broken.empty() ? 0 : 1;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  return cli::run_command(kWhere, options::kRun, kCaption, argc, argv,
                          [](OptionValues values) { return simulate(prepare(std::move(values))); });
}

}  // namespace aggnet
