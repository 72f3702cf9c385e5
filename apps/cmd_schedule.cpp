// `aggnet schedule`: search schedules for the least time to eps-consensus on a platform,
// print the ranked table, write the winner as a schedule file, and (--verify) compare the
// analytic round times with the SystemC simulation, one `aggnet run` process per schedule.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "common/config_error.h"
#include "common/units.h"
#include "config/platform_loader.h"
#include "model/routing.h"
#include "traffic/optimizer.h"
#include "config/schedule_io.h"

namespace aggnet {
namespace {

namespace po = boost::program_options;
namespace fs = std::filesystem;

const char* kWhere = "aggnet schedule";

struct ScheduleCli {
  std::string platform, buffer, gradient, chunk, flow_control, multicast, aggregation, out,
      schedules, round_start, alignment;
  std::vector<std::string> sets;
  double eps = 1e-3, pacing_margin = 0.02;
  int top = 10, steps = 0, jobs = 2;
  bool verify = false, group_average_only = false;
};

po::options_description describe(ScheduleCli& c) {
  po::options_description d(
      "aggnet schedule: rank schedules by analytic time to eps-consensus (and --verify them "
      "against the simulation)");
  d.add_options()("help,h", "show this help")(
      "platform", po::value(&c.platform)->default_value(cli::default_platform_path()),
      "platform YAML file")("set", po::value(&c.sets)->composing(),
                            "platform override PATH=VALUE, repeatable")(
      "buffer", po::value(&c.buffer),
      "FPGA buffer at every site, e.g. 64MiB (default: platform's)")(
      "gradient", po::value(&c.gradient)->default_value("1GiB"), "gradient bytes per site (G)")(
      "chunk", po::value(&c.chunk)->default_value("1MiB"), "chunk = aggregation slot size")(
      "eps", po::value(&c.eps)->default_value(1e-3),
      "target consensus error ||W_r...W_1 - J||_2, in (0, 1)")(
      "top", po::value(&c.top)->default_value(10), "rows of the ranked table")(
      "out", po::value(&c.out), "write the winner as a schedule YAML file")(
      "schedules", po::value(&c.schedules),
      "comma-separated schedule names or files to rank instead of searching")(
      "flow-control", po::value(&c.flow_control)->default_value("pacing"), "pacing | credit")(
      "pacing-margin", po::value(&c.pacing_margin)->default_value(0.02),
      "pacing: fraction below the computed safe rate")(
      "multicast", po::value(&c.multicast)->default_value("on"), "on | off")(
      "aggregation", po::value(&c.aggregation)->default_value("on"), "on | off")(
      "round-start", po::value(&c.round_start)->default_value("auto"),
      "aligned | immediate | auto (aligned with pacing, immediate with credit)")(
      "alignment", po::value(&c.alignment)->default_value("auto"),
      "arrival | none | auto (per group, arrival-aligned offsets where they make it land "
      "earlier)")("group-average-only", po::bool_switch(&c.group_average_only),
                  "leave the host-based ring all-reduce baseline out of the ranking")(
      "verify", po::bool_switch(&c.verify),
      "run the listed schedules through the SystemC simulation (aggnet run --json) and "
      "print analytic vs simulated round time")("steps", po::value(&c.steps)->default_value(0),
                                                "--verify: steps per run (0: one schedule period)")(
      "jobs", po::value(&c.jobs)->default_value(2), "--verify: simulations run in parallel");
  return d;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string fmt_time(double s) {
  if (!std::isfinite(s)) return "never";
  return format_time_ps(s * 1e12);
}

std::string shapes(const Candidate& c, int n) {
  std::string out;
  for (std::size_t r = 0; r < c.schedule.rounds.size(); ++r) {
    if (r == 3 && c.schedule.rounds.size() > 4) {
      out += fmt::format(" | ... ({} rounds)", c.schedule.rounds.size());
      break;
    }
    out += (r ? " | " : "") + round_shape(c.schedule.rounds[r], n);
  }
  if (c.schedule.collective == Collective::kRing) out += " ring";
  return out;
}

void print_table(const std::vector<Candidate>& cs, int top, int n, const Platform& p) {
  const char* row = "{:>4}  {:<24} {:<15} {:<26} {:>9} {:>7} {:>12} {:>12} {:>12}\n";
  std::cout << fmt::format(row, "rank", "schedule", "family", "groups per round", "rho", "rounds",
                           "round time", "rounds x rt", "time to eps");
  const int rows = std::min<int>(top, cs.size());
  for (int i = 0; i < rows; ++i) {
    const auto& c = cs[i];
    std::cout << fmt::format(
        row, i + 1, c.schedule.name, c.family, shapes(c, n), fmt::format("{:.2e}", c.mixing.rho),
        c.rounds_to_eps < 0 ? std::string("never") : std::to_string(c.rounds_to_eps),
        fmt_time(c.timing.mean_round_s), fmt_time(c.isolated_time_to_eps_s),
        fmt_time(c.time_to_eps_s));
  }
  std::cout << "(round time: period average, members start at the agreed start plus their send "
               "offsets; rounds x rt: rounds to eps "
               "x round time; time to eps: wall clock until every site has the eps-consensus "
               "result, each site starting its next round when its own result is complete)\n";
  std::cout << "\nRounds (round time, slowest group's binding limit, its residual / unaligned "
               "arrival skew and longest send-offset wait):\n";
  for (int i = 0; i < rows; ++i) {
    const auto& c = cs[i];
    std::cout << fmt::format("{:>4}  {}\n", i + 1, c.schedule.name);
    for (std::size_t r = 0; r < c.schedule.rounds.size() && r < 9; ++r) {
      const auto& re = c.timing.rounds[r];
      std::string limit;
      if (re.limiting_group >= 0) {
        const auto& g = re.groups[re.limiting_group];
        limit = g.limit == "ring" ? "ring" : fmt::format("{} {}", g.limit, format_rate(g.rate * 8));
        if (g.limit != "ring") {
          const double wait =
              g.waiting_s.empty() ? 0.0 : *std::max_element(g.waiting_s.begin(), g.waiting_s.end());
          limit += fmt::format(", skew {}/{}, wait {}", fmt_time(g.skew_max_s),
                               fmt_time(g.unaligned_skew_max_s), fmt_time(wait));
        }
      }
      std::cout << fmt::format("        r{} {:>11}  {:<56} {}\n", r, fmt_time(re.time_s), limit,
                               format_round(c.schedule.rounds[r], p));
    }
  }
}

struct Job {
  int index = 0;
  std::string yaml, json, log;
  pid_t pid = -1;
  int status = -1;
};

pid_t spawn(const std::vector<std::string>& args, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::FILE* f = std::fopen(log.c_str(), "w");
    if (f) {
      dup2(fileno(f), 1);
      dup2(fileno(f), 2);
    }
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    std::perror("execv");
    _exit(127);
  }
  return pid;
}

int verify(const ScheduleCli& c, const Platform& platform, const Routing& routing,
           const std::vector<Candidate>& cs, const RunParams& run) {
  const int rows = std::min<int>(c.top, cs.size());
  char tmpl[] = "/tmp/aggnet-schedule-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("cannot create a temporary directory");
  const fs::path dir = tmpl;
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  std::vector<Job> jobs(rows);
  for (int i = 0; i < rows; ++i) {
    jobs[i].index = i;
    jobs[i].yaml = (dir / fmt::format("s{}.yaml", i)).string();
    jobs[i].json = (dir / fmt::format("s{}.json", i)).string();
    jobs[i].log = (dir / fmt::format("s{}.log", i)).string();
    save_schedule(cs[i].schedule, platform, jobs[i].yaml);
  }
  auto args_of = [&](const Job& j) {
    std::vector<std::string> a = {self,
                                  "run",
                                  "--platform",
                                  c.platform,
                                  "--schedule",
                                  j.yaml,
                                  "--gradient",
                                  c.gradient,
                                  "--chunk",
                                  c.chunk,
                                  "--steps",
                                  std::to_string(c.steps),
                                  "--json",
                                  j.json,
                                  "--no-colocated",
                                  "--quiet",
                                  "--flow-control",
                                  c.flow_control,
                                  "--pacing-margin",
                                  fmt::format("{}", c.pacing_margin),
                                  "--multicast",
                                  c.multicast,
                                  "--aggregation",
                                  c.aggregation};
    if (!c.buffer.empty()) a.insert(a.end(), {"--buffer", c.buffer});
    if (c.round_start != "auto") a.insert(a.end(), {"--round-start", c.round_start});
    if (c.alignment != "auto") a.insert(a.end(), {"--alignment", c.alignment});
    for (const auto& s : c.sets) a.insert(a.end(), {"--set", s});
    return a;
  };
  std::cout << fmt::format(
      "\nVerifying {} schedules with the SystemC simulation ({} at a time, "
      "files in {})...\n",
      rows, std::max(1, c.jobs), dir.string());
  std::cout.flush();
  std::size_t next = 0;
  int running = 0;
  while (next < jobs.size() || running > 0) {
    while (next < jobs.size() && running < std::max(1, c.jobs)) {
      jobs[next].pid = spawn(args_of(jobs[next]), jobs[next].log);
      ++next;
      ++running;
    }
    int status = 0;
    const pid_t done = waitpid(-1, &status, 0);
    if (done < 0) break;
    for (auto& j : jobs)
      if (j.pid == done) j.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    --running;
  }
  std::cout << fmt::format("{:>4}  {:<24} {:>6} {:>13} {:>13} {:>13} {:>8}  {}\n", "rank",
                           "schedule", "steps", "analytic", "(isolated)", "simulated", "error",
                           "worst step");
  double worst = 0;
  std::string worst_name;
  int failures = 0;
  for (const auto& j : jobs) {
    const auto& cand = cs[j.index];
    nlohmann::json report;
    std::ifstream in(j.json);
    if (j.status != 0 || !in) {
      std::cout << fmt::format("{:>4}  {:<24} simulation failed (exit {}), see {}\n", j.index + 1,
                               cand.schedule.name, j.status, j.log);
      ++failures;
      continue;
    }
    in >> report;
    const auto& steps = report.at("steps");
    const int n_steps = static_cast<int>(steps.size());
    const auto analytic = estimate_step_round_times(platform, routing, cand.schedule, run, n_steps);
    double sim_sum = 0, ana_sum = 0, iso_sum = 0, step_worst = 0;
    std::string per_step;
    for (int k = 0; k < n_steps; ++k) {
      const double sim = steps[k].at("round_time_s").get<double>();
      if (k < 12)
        per_step += fmt::format(" {:.3f}/{:.3f}/{:.3f}", analytic[k],
                                cand.timing.rounds[k % cand.timing.rounds.size()].time_s, sim);
      sim_sum += sim;
      ana_sum += analytic[k];
      iso_sum += cand.timing.rounds[k % cand.timing.rounds.size()].time_s;
      if (sim > 0) step_worst = std::max(step_worst, std::abs(analytic[k] - sim) / sim);
    }
    const double err = sim_sum > 0 ? (ana_sum - sim_sum) / sim_sum : 0;
    std::cout << fmt::format("{:>4}  {:<24} {:>6} {:>13} {:>13} {:>13} {:>+7.1f}%  {:.1f}%\n",
                             j.index + 1, cand.schedule.name, n_steps, fmt_time(ana_sum / n_steps),
                             fmt_time(iso_sum / n_steps), fmt_time(sim_sum / n_steps), err * 100,
                             step_worst * 100);
    std::cout << "        per step, analytic/isolated/simulated (s):" << per_step << "\n";
    if (std::abs(err) >= worst) {
      worst = std::abs(err);
      worst_name = cand.schedule.name;
    }
  }
  std::cout << fmt::format(
      "worst |error| of the mean round time: {:.1f}% ({}){}\n"
      "(analytic = staggered-start model per step, as the simulation measures it; isolated = "
      "all members start together)\n",
      worst * 100, worst_name.empty() ? "-" : worst_name,
      failures ? fmt::format("; {} simulation(s) failed", failures) : "");
  return failures ? 1 : 0;
}

int run_schedule(int argc, char** argv) {
  ScheduleCli c;
  auto desc = describe(c);
  const po::variables_map vm = cli::parse(kWhere, argc, argv, desc);
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  if (!(c.eps > 0 && c.eps < 1))
    throw ConfigError(kWhere, 0, "--eps", "expected a number in (0, 1)", std::to_string(c.eps));
  if (c.top < 1) throw ConfigError(kWhere, 0, "--top", "expected a positive integer");
  if (c.steps < 0) throw ConfigError(kWhere, 0, "--steps", "expected 0 or a positive integer");
  if (!c.out.empty()) {
    const fs::path parent = fs::path(c.out).parent_path();
    if (!parent.empty() && !fs::is_directory(parent))
      throw ConfigError(kWhere, 0, "--out", "expected a file in an existing directory", c.out);
  }
  OptimizerOptions opt;
  opt.eps = c.eps;
  RunParams& run = opt.run;
  run.gradient_bytes = cli::size_option(kWhere, "gradient", c.gradient);
  run.chunk_bytes = cli::size_option(kWhere, "chunk", c.chunk);
  if (!c.buffer.empty()) run.buffer_bytes = cli::size_option(kWhere, "buffer", c.buffer);
  if (c.flow_control == "pacing") {
    run.flow_control = FlowControl::kPacing;
  } else if (c.flow_control == "credit") {
    run.flow_control = FlowControl::kCredit;
  } else {
    throw ConfigError(kWhere, 0, "--flow-control", "expected pacing or credit", c.flow_control);
  }
  if (!(c.pacing_margin >= 0 && c.pacing_margin < 1))
    throw ConfigError(kWhere, 0, "--pacing-margin", "expected a number in [0, 1)");
  run.pacing_margin = c.pacing_margin;
  const auto start = cli::round_start_option(kWhere, c.round_start, c.alignment,
                                             run.flow_control == FlowControl::kPacing);
  run.aligned_start = start.aligned_start;
  run.alignment = start.alignment;
  run.multicast = cli::switch_option(kWhere, "multicast", c.multicast);
  run.aggregation = cli::switch_option(kWhere, "aggregation", c.aggregation);

  const std::vector<Override> overrides = cli::overrides(kWhere, c.sets);
  Platform platform = load_platform(c.platform, overrides);
  if (run.buffer_bytes)
    for (auto& site : platform.sites) site.fpga.buffer_bytes = run.buffer_bytes;
  if (run.aggregation) {
    for (const auto& site : platform.sites)
      if (site.fpga.buffer_bytes < 2 * run.chunk_bytes)
        throw ConfigError(kWhere, 0, "--buffer", "expected a buffer of at least two chunks",
                          format_bytes(site.fpga.buffer_bytes));
  }
  const Routing routing(platform);
  const int n = static_cast<int>(platform.sites.size());

  std::vector<Candidate> cs;
  if (!c.schedules.empty()) {
    for (const auto& name : split_commas(c.schedules))
      cs.push_back(score_schedule(platform, routing, make_schedule(name, platform), "given", opt));
    rank_candidates(cs);
  } else {
    cs = optimize_schedules(platform, routing, opt);
  }
  if (c.group_average_only) {
    cs.erase(std::remove_if(
                 cs.begin(), cs.end(),
                 [](const Candidate& x) { return x.schedule.collective == Collective::kRing; }),
             cs.end());
  }
  std::cout << fmt::format(
      "Platform {} ({} sites), gradient {}, chunk {}, buffer {}, {}, eps {}: {} candidates\n\n",
      platform.name, n, format_bytes(run.gradient_bytes), format_bytes(run.chunk_bytes),
      c.buffer.empty() ? std::string("platform's") : format_bytes(run.buffer_bytes), c.flow_control,
      c.eps, cs.size());
  print_table(cs, c.top, n, platform);
  for (const auto& cand : cs) {
    if (cand.schedule.collective != Collective::kGroupAverage) continue;
    if (&cand != &cs.front()) {
      std::cout << fmt::format(
          "\nbest group-average (multicast + in-line aggregation) schedule: {} ({}), time to "
          "eps {}\n",
          cand.schedule.name, cand.family, fmt_time(cand.time_to_eps_s));
    }
    break;
  }
  if (!c.out.empty() && !cs.empty()) {
    save_schedule(cs.front().schedule, platform, c.out);
    std::cout << fmt::format("\nwrote the winner '{}' to {}\n", cs.front().schedule.name, c.out);
  }
  if (c.verify) return verify(c, platform, routing, cs, run);
  return 0;
}

}  // namespace

int cmd_schedule(int argc, char** argv) {
  try {
    return run_schedule(argc, argv);
  } catch (const ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "aggnet schedule: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace aggnet
