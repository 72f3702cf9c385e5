// `aggnet schedule`: search schedules for the least time to eps-consensus on a platform,
// print the ranked table, write the winner as a schedule file, and (--verify) compare the
// analytic round times with the SystemC simulation, one `aggnet run` process per schedule.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "common/atomic_file.h"
#include "common/config_error.h"
#include "common/subprocess.h"
#include "common/temp_dir.h"
#include "common/units.h"
#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "model/routing.h"
#include "options/option_values.h"
#include "traffic/load_aware.h"
#include "traffic/optimizer.h"

namespace aggnet {
namespace {

namespace fs = std::filesystem;
using options::OptionValues;

const char* kCaption =
    "aggnet schedule: rank schedules by analytic time to eps-consensus (and --verify them "
    "against the simulation). Send offsets (--alignment auto/arrival): for every group of "
    "every candidate up to 128 sites (exact); beyond, a screened search (a heuristic, stated "
    "in the output): the offsets of groups beyond the closed form (4 or more members) only for "
    "candidates within 2x the best time without them";

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

// Prints `rows` (the first one the header) in columns as wide as their widest cell:
// right-aligned where `right[c]`, two spaces apart.
void print_columns(const std::vector<std::vector<std::string>>& rows,
                   const std::vector<bool>& right) {
  std::vector<std::size_t> width(right.size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += c == 0 ? "" : "  ";
      line += fmt::format(right[c] ? "{:>{}}" : "{:<{}}", row[c], width[c]);
    }
    std::cout << line << "\n";
  }
}

// Completes (complete_candidate) and prints the first `top` rows.
void print_table(std::vector<Candidate>& cs, int top, const Platform& p, const Routing& routing,
                 const OptimizerOptions& opt) {
  const int n = static_cast<int>(p.sites.size());
  std::vector<std::vector<std::string>> table = {{"rank", "schedule", "family", "groups per round",
                                                  "rho", "rounds", "round time", "rounds x rt",
                                                  "time to eps", "w/ compute"}};
  const int rows = std::min<int>(top, cs.size());
  for (int i = 0; i < rows; ++i) {
    auto& c = cs[i];
    complete_candidate(c, p, routing, opt);
    table.push_back({fmt::format("{}{}", i + 1, c.unaligned_estimate ? "*" : ""), c.schedule.name,
                     c.family, shapes(c, n),
                     c.mixing ? fmt::format("{:.2e}", c.mixing->rho) : std::string("n/a"),
                     c.rounds_to_eps < 0 ? std::string("never") : std::to_string(c.rounds_to_eps),
                     fmt_time(c.timing.mean_round_s), fmt_time(c.isolated_time_to_eps_s),
                     fmt_time(c.comm_time_to_eps_s), fmt_time(c.time_to_eps_s)});
  }
  print_columns(table, {true, false, false, false, true, true, true, true, true, true});
  std::cout << "(round time: period average, members start at the agreed start plus their send "
               "offsets; rounds x rt: the round times of the rounds to eps, summed (rounds "
               "x round time when every round takes the same); time to eps: from a common start "
               "until every site has the "
               "eps-consensus result, each site starting its next step when its own result is "
               "complete, without compute (the ranking key; aggnet run's comm_time_to_eps_s) "
               "and with it (time_to_eps_s); rho: the consensus error of one period, n/a for a "
               "collective that leaves no site the average (p2p, reduce-scatter, all-gather: no "
               "mixing matrix, never at eps))\n";
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
        // Host collectives and reduction trees: a closed form, no group's link rate or skew.
        const bool host =
            g.limit == "ring" || g.limit == "closed form" || g.limit == "in-network reduction";
        limit = host ? g.limit : fmt::format("{} {}", g.limit, format_rate(g.rate * 8));
        if (!host) {
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
  ProcessResult result;  // how its simulation ended
};

// One job per listed schedule, its YAML written to `dir`.
std::vector<Job> make_jobs(const fs::path& dir, const std::vector<Candidate>& cs, int rows,
                           const Platform& platform) {
  std::vector<Job> jobs(rows);
  for (int i = 0; i < rows; ++i) {
    jobs[i].index = i;
    jobs[i].yaml = (dir / fmt::format("s{}.yaml", i)).string();
    jobs[i].json = (dir / fmt::format("s{}.json", i)).string();
    jobs[i].log = (dir / fmt::format("s{}.log", i)).string();
    save_schedule(cs[i].schedule, platform, jobs[i].yaml);
  }
  return jobs;
}

// `aggnet run` of one job: this command's run options (the option table's shared rows).
std::vector<std::string> run_args(const OptionValues& values, const Job& j) {
  std::vector<std::string> a = {cli::self_executable(), "run", "--schedule", j.yaml};
  const auto shared = values.run_args();
  a.insert(a.end(), shared.begin(), shared.end());
  a.insert(a.end(), {"--json", j.json, "--no-colocated", "--quiet"});
  return a;
}

// A verification run that takes longer is stopped and reported as failed (as a sweep's
// point is, by the sweep's default per-point timeout).
constexpr Millis kVerifyTimeout = std::chrono::minutes(10);

// Runs the jobs, `parallel` at a time (the shared process pool); records how each ended.
void run_jobs(const OptionValues& values, std::vector<Job>& jobs, int parallel) {
  ProcessPool pool(static_cast<std::size_t>(parallel));
  for (const Job& j : jobs) {
    Command run;
    run.argv = run_args(values, j);
    run.out = Redirect::file(j.log);
    run.err = Redirect::to_stdout();
    run.timeout = kVerifyTimeout;
    pool.submit(std::move(run));  // ids 0, 1, ...: the jobs' order
  }
  for (auto& done : pool.wait_all()) jobs[done.id].result = std::move(done.result);
}

// One verified schedule's row; returns its relative error of the mean round time.
double report_job(const Candidate& cand, const Job& j, const nlohmann::json& report,
                  const Platform& platform, const Routing& routing, const RunOptions& run) {
  const auto& steps = report.at("steps");
  const int n_steps = static_cast<int>(steps.size());
  const auto analytic = estimate_step_round_times(platform, routing, cand.schedule, run, n_steps);
  double sim_sum = 0, ana_sum = 0, iso_sum = 0, step_worst = 0;
  std::string per_step;
  for (int k = 0; k < n_steps; ++k) {
    const double sim = steps[k].at("round_time_s").get<double>();
    const double isolated = cand.timing.rounds[k % cand.timing.rounds.size()].time_s;
    if (k < 12) per_step += fmt::format(" {:.3f}/{:.3f}/{:.3f}", analytic[k], isolated, sim);
    sim_sum += sim;
    ana_sum += analytic[k];
    iso_sum += isolated;
    if (sim > 0) step_worst = std::max(step_worst, std::abs(analytic[k] - sim) / sim);
  }
  const double err = sim_sum > 0 ? (ana_sum - sim_sum) / sim_sum : 0;
  std::cout << fmt::format("{:>4}  {:<24} {:>6} {:>13} {:>13} {:>13} {:>+7.1f}%  {:.1f}%\n",
                           j.index + 1, cand.schedule.name, n_steps, fmt_time(ana_sum / n_steps),
                           fmt_time(iso_sum / n_steps), fmt_time(sim_sum / n_steps), err * 100,
                           step_worst * 100);
  std::cout << "        per step, analytic/isolated/simulated (s):" << per_step << "\n";
  return err;
}

// The last lines of a failed simulation's output (its log goes with the scratch dir).
std::string log_tail(const std::string& log, std::size_t lines = 3) {
  std::ifstream in(log);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) all.push_back(line);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += "        " + all[i] + "\n";
  return out;
}

int verify(const OptionValues& values, const Platform& platform, const Routing& routing,
           const std::vector<Candidate>& cs, const RunOptions& run) {
  const int rows = std::min<int>(static_cast<int>(values.integer("top")), cs.size());
  const int parallel = cli::workers(values);
  const TempDir scratch("aggnet-schedule");
  const fs::path& dir = scratch.path();
  std::vector<Job> jobs = make_jobs(dir, cs, rows, platform);
  std::cout << fmt::format(
      "\nVerifying {} schedules with the SystemC simulation ({} at a time)...\n", rows, parallel);
  std::cout.flush();
  run_jobs(values, jobs, parallel);
  std::cout << fmt::format("{:>4}  {:<24} {:>6} {:>13} {:>13} {:>13} {:>8}  {}\n", "rank",
                           "schedule", "steps", "analytic", "(isolated)", "simulated", "error",
                           "worst step");
  double worst = 0;
  std::string worst_name;
  int failures = 0;
  for (const auto& j : jobs) {
    const auto& cand = cs[j.index];
    std::ifstream in(j.json);
    if (!j.result.success() || !in) {
      std::cout << fmt::format("{:>4}  {:<24} simulation failed ({}):\n{}", j.index + 1,
                               cand.schedule.name, j.result.describe(), log_tail(j.log));
      ++failures;
      continue;
    }
    nlohmann::json report;
    in >> report;
    const double err = report_job(cand, j, report, platform, routing, run);
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

// The given --schedules, or the optimizer's search; ranked, rings left out on request.
// A schedule of --schedules: config/ names an error in the name --schedule, run's option.
Schedule listed_schedule(const std::string& name, const Platform& platform, const RunOptions& run) {
  try {
    return make_schedule(name, platform, PlanInputs{run.gradient_bytes, transaction_bytes(run)});
  } catch (const ConfigError& e) {
    if (e.file() != kCommandLine || e.key() != "schedule") throw;
    throw ConfigError(kCommandLine, 0, "schedules", e.detail());
  }
}

std::vector<Candidate> candidates(const OptionValues& values, const Platform& platform,
                                  const Routing& routing, const OptimizerOptions& opt) {
  std::vector<Candidate> cs;
  if (values.has("schedules")) {
    const std::vector<std::string> names = split_commas(values.text("schedules"));
    std::vector<Schedule> listed;
    for (const auto& name : names) listed.push_back(listed_schedule(name, platform, opt.run));
    // --group-average-only keeps the group-average ones: with none listed there is nothing
    // to rank (it printed an empty table and wrote no --out, exit 0).
    const bool any_group_average = std::any_of(listed.begin(), listed.end(), [](const Schedule& x) {
      return x.collective == Collective::kGroupAverage;
    });
    if (values.flag("group-average-only") && !any_group_average)
      values.fail("group-average-only",
                  "expected a group-average schedule in --schedules (none of them is one, so no "
                  "group-average schedule is left to rank)",
                  values.text("schedules"));
    for (std::size_t i = 0; i < names.size(); ++i) {
      const Schedule& schedule = listed[i];
      cli::check_buffers(values, platform, opt.run, schedule.collective);
      try {
        cs.push_back(score_schedule(platform, routing, schedule, "given", opt));
      } catch (const std::invalid_argument& e) {  // a host collective without a closed form
        values.fail("schedules",
                    std::string("a schedule the analytic model can time (") + e.what() +
                        "; `aggnet run` simulates it)",
                    names[i]);
      }
    }
    rank_candidates(cs);
  } else {
    cs = optimize_schedules(platform, routing, opt);
  }
  if (values.flag("group-average-only")) {
    cs.erase(std::remove_if(cs.begin(), cs.end(),
                            [](const Candidate& x) {
                              return x.schedule.collective != Collective::kGroupAverage;
                            }),
             cs.end());
  }
  return cs;
}

// The best group-average schedule when the winner is not one (a host-based baseline won).
const Candidate* best_group_average(const std::vector<Candidate>& cs) {
  for (const auto& cand : cs)
    if (cand.schedule.collective == Collective::kGroupAverage)
      return &cand == &cs.front() ? nullptr : &cand;
  return nullptr;
}

// --out writes rank 1 of the table, the schedule the ranking recommends; when that is a
// host-based baseline, the text says so and how to get the best group-average one.
// While alive (and `on`), std::cout writes to the standard error; write_stdout reaches the
// real standard output.
class TableToStderr {
 public:
  explicit TableToStderr(bool on) : saved_(on ? std::cout.rdbuf(std::cerr.rdbuf()) : nullptr) {}
  ~TableToStderr() {
    if (saved_) std::cout.rdbuf(saved_);
  }
  TableToStderr(const TableToStderr&) = delete;
  TableToStderr& operator=(const TableToStderr&) = delete;
  void write_stdout(const std::string& text) const {
    std::ostream out(saved_ ? saved_ : std::cout.rdbuf());
    out << text << std::flush;
    if (!out) throw std::runtime_error("cannot write the standard output");
  }

 private:
  std::streambuf* saved_;
};

void write_winner(const std::vector<Candidate>& cs, const Platform& platform,
                  const std::string& out, const TableToStderr& table) {
  const Candidate& winner = cs.front();
  if (is_stdout(out)) {
    table.write_stdout(schedule_to_yaml(winner.schedule, platform));
  } else {
    save_schedule(winner.schedule, platform, out);
  }
  std::cout << fmt::format("\nwrote rank 1, '{}' ({}), to {}\n", winner.schedule.name,
                           winner.family, is_stdout(out) ? "the standard output" : out);
  if (best_group_average(cs))
    std::cout << fmt::format(
        "(rank 1 is {}, not a group-average schedule; --group-average-only ranks and writes "
        "the group-average schedules only)\n",
        winner.schedule.collective == Collective::kReductionTree ? "an in-network reduction"
                                                                 : "a host-based baseline");
}

// `--routing load-aware`: the link metrics planned for the one schedule --schedules names
// (metrics are per schedule, so the search over many candidates does not take them).
void plan_routing(const OptionValues& values, const Platform& platform, RunOptions& run) {
  if (!run.load_aware_routing) return;
  const std::vector<std::string> names =
      values.has("schedules") ? split_commas(values.text("schedules")) : std::vector<std::string>{};
  if (names.size() != 1)
    values.fail("routing",
                "--schedules naming one group schedule with load-aware routing (link metrics "
                "are planned per schedule)",
                "load-aware");
  const Schedule schedule =
      make_schedule(names[0], platform, PlanInputs{run.gradient_bytes, transaction_bytes(run)});
  if (schedule.collective != Collective::kGroupAverage)
    values.fail("routing", "a group-average schedule in --schedules with load-aware routing",
                "load-aware");
  const LoadAwarePlan plan = plan_load_aware_routing(platform, schedule, run);
  run.link_metric = plan.link_metric;
  std::cout << fmt::format(
      "Load-aware routing for {}: busiest link {} -> {} streams per round, analytic mean round "
      "{} -> {}\n",
      schedule.name, plan.busiest_round_load_before, plan.busiest_round_load_after,
      fmt_time(plan.time_before_s), fmt_time(plan.time_after_s));
}

int run_schedule(const OptionValues& values) {
  OptimizerOptions opt;
  opt.run = options::to_run_options(values);
  opt.exact_rows = static_cast<std::size_t>(std::max<std::uint64_t>(1, values.integer("top")));
  const RunOptions& run = opt.run;
  cli::check_outputs(values);
  // `--out -`: the schedule YAML is the standard output, the table goes to stderr.
  const TableToStderr table_to_stderr(is_stdout(values.text("out")));
  const Platform platform = cli::load_platform(values, run);
  // The search ranks group schedules; listed ones are checked each (candidates).
  if (!values.has("schedules")) cli::check_buffers(values, platform, run);
  plan_routing(values, platform, opt.run);
  const Routing routing(platform, run.link_metric);
  const int n = static_cast<int>(platform.sites.size());
  std::vector<Candidate> cs = candidates(values, platform, routing, opt);
  std::cout << fmt::format(
      "Platform {} ({} sites), gradient {}, chunk {}, buffer {}, {}, eps {}: {} candidates\n",
      platform.name, n, format_bytes(run.gradient_bytes), format_bytes(run.chunk_bytes),
      run.buffer_bytes ? format_bytes(run.buffer_bytes) : std::string("platform's"),
      values.text("flow-control"), run.eps, cs.size());
  if (!values.has("schedules") && screened_search(n, opt))
    std::cout << fmt::format(
        "(screened search, a heuristic beyond {} sites: every candidate timed without the "
        "send offsets of its groups beyond the closed form, those within {}x the best "
        "group-average time timed again with them and ranked exactly; rows marked * keep the "
        "time without them)\n",
        opt.exhaustive_alignment_sites, opt.alignment_window);
  if (!values.has("schedules") && n > opt.every_group_size_sites)
    std::cout << fmt::format(
        "(group sizes, a heuristic beyond {} sites: rotating-k and sequential-k for k <= 8, the "
        "divisors of {} and a ladder growing by 1.25x, not every k)\n",
        opt.every_group_size_sites, n);
  std::cout << "\n";
  print_table(cs, static_cast<int>(values.integer("top")), platform, routing, opt);
  if (const Candidate* best = best_group_average(cs)) {
    std::cout << fmt::format(
        "\nbest group-average (multicast + in-line aggregation) schedule: {} ({}), time to "
        "eps {}; rank 1 '{}' is faster\n",
        best->schedule.name, best->family, fmt_time(best->comm_time_to_eps_s),
        cs.front().schedule.name);
  }
  const std::string& out = values.text("out");
  if (!out.empty() && !cs.empty()) write_winner(cs, platform, out, table_to_stderr);
  if (values.flag("verify")) return verify(values, platform, routing, cs, run);
  return 0;
}

}  // namespace

int cmd_schedule(int argc, char** argv) {
  return cli::run_command("aggnet schedule", options::kSchedule, kCaption, argc, argv,
                          run_schedule);
}

}  // namespace aggnet
