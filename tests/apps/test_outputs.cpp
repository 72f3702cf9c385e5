// What the commands print and write, read as an architect reads it (issue 10): the run
// JSON's numbers mean one thing (counts are integers, times are whole picoseconds without
// float noise, no pacing rate in credit mode), the run summary's invariants hold, the
// tables echo their inputs, and the command line names options one way with one-line
// errors (did-you-mean, no wrapped negative counts) and readable --help.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Output {
  int status;
  std::string out, err;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Outputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("aggnet_outputs_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));  // other checkouts may run the same test
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `aggnet ARGS` in `cwd` (default: the test's directory) with `env` prefixed.
  Output aggnet(const std::string& args, const std::string& env = "", fs::path cwd = {}) {
    if (cwd.empty()) cwd = dir_;
    const auto out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string cmd = "cd '" + cwd.string() + "' && " + env + " " + AGGNET_BINARY + " " +
                            args + " > '" + out.string() + "' 2> '" + err.string() + "'";
    const int raw = std::system(cmd.c_str());
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_text(out), read_text(err)};
  }
  // `aggnet run ARGS --json` (small gradient, no co-located reference) and its report.
  json run(const std::string& args) {
    const auto path = dir_ / "run.json";
    const Output o =
        aggnet("run --gradient 16MiB --no-colocated -q --json " + path.string() + " " + args);
    EXPECT_EQ(o.status, 0) << args << "\n" << o.err;
    return json::parse(read_text(path));
  }

  fs::path dir_;
};

TEST_F(Outputs, AStandardOutputThatCannotBeWrittenIsAnError) {
  const auto err = dir_ / "stderr.txt";
  const std::string cmd =
      std::string(AGGNET_BINARY) + " params > /dev/full 2> '" + err.string() + "'";
  const int raw = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(raw));
  EXPECT_EQ(WEXITSTATUS(raw), 1);
  EXPECT_EQ(read_text(err), "aggnet: cannot write the standard output\n");
}

// The picoseconds per unit of a key's time unit ("round_time_s" -> 1e12), 0 for no time.
double ps_per_unit(const std::string& key) {
  static const std::map<std::string, double> units = {
      {"s", 1e12}, {"ms", 1e9}, {"us", 1e6}, {"ns", 1e3}, {"ps", 1}};
  std::stringstream ss(key);
  for (std::string token; std::getline(ss, token, '_');)
    if (auto it = units.find(token); it != units.end()) return it->second;
  return 0;
}

// Every time value under `value` (key with a unit token, or a member of a time-keyed
// object) as (path, value in ps per unit).
void times_of(const json& value, const std::string& path, double unit,
              std::vector<std::tuple<std::string, double, double>>& out) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      const double own = ps_per_unit(key);
      times_of(child, path + "." + key, own > 0 ? own : unit, out);
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i)
      times_of(value[i], path + "[" + std::to_string(i) + "]", unit, out);
  } else if (value.is_number() && unit > 0) {
    out.emplace_back(path, value.get<double>(), unit);
  }
}

// Digits after the decimal point of a number as the JSON text writes it ("34.855" -> 3).
int decimals(const json& number) {
  const std::string text = number.dump();
  const auto dot = text.find('.');
  if (dot == std::string::npos || text.find('e') != std::string::npos) return 0;
  return static_cast<int>(text.size() - dot - 1);
}

void expect_ps_exact(const json& report) {
  std::vector<std::tuple<std::string, double, double>> times;
  times_of(report, "$", 0, times);
  ASSERT_GT(times.size(), 50u);
  for (const auto& [path, value, unit] : times) {
    if (path.find("wall_time_s") != std::string::npos) continue;
    const double ps = value * unit;
    // Whole picoseconds, and no more decimals than a picosecond needs in this unit:
    // 34.855000000000004 s (noise in the 15th digit) would have 15.
    EXPECT_NEAR(ps, std::round(ps), 1e-3 * std::max(1.0, std::fabs(ps) * 1e-12)) << path;
    EXPECT_LE(decimals(json(value)), static_cast<int>(std::lround(std::log10(unit)))) << path;
  }
}

TEST_F(Outputs, RunJsonCountsAreIntegersAndTimesWholePicoseconds) {
  // Jitter and unaligned sends: times that are not round numbers of any unit.
  const json r = run("--schedule triads --steps 3 --jitter on --seed 5 --alignment none");
  expect_ps_exact(r);
  for (const char* key : {"steps", "rounds_to_eps", "events", "slot_stalls_total",
                          "buffer_high_water_bytes_max", "functional_checks"})
    EXPECT_TRUE(r["summary"][key].is_number_integer()) << key << " " << r["summary"][key];
  for (const auto& site : r["sites"])
    for (const char* key : {"high_water_bytes", "buffer_bytes", "slot_stalls", "contributions",
                            "reduced_chunks", "slots", "steps"})
      EXPECT_TRUE(site[key].is_number_integer()) << key << " " << site[key];
  for (const auto& link : r["links"])
    for (const char* key : {"payload_bytes", "wire_bytes", "chunks"})
      EXPECT_TRUE(link[key].is_number_integer()) << key << " " << link[key];
  // Rates and fractions stay decimal numbers.
  EXPECT_TRUE(r["links"][0]["bandwidth_gbps"].is_number_float());
  EXPECT_TRUE(r["summary"]["gpu_idle_fraction"].is_number_float());
}

// A JSON key names one thing: the pacing rate exists only where senders are paced.
TEST_F(Outputs, PacingRateOnlyInPacingMode) {
  for (const std::string mode : {"pacing", "credit"}) {
    const json r = run("--schedule triads --steps 1 --flow-control " + mode);
    const std::string text = r.dump();
    if (mode == "credit") {
      EXPECT_EQ(text.find("pacing_rate_gbps"), std::string::npos);
    } else {
      EXPECT_TRUE(r["steps"][0]["groups"][0]["pacing_rate_gbps"].get<double>() > 0);
      EXPECT_TRUE(r["alignment"][0]["pacing_rate_gbps"].get<double>() > 0);
    }
  }
}

// The run summary's invariants, for start modes and compute times where the members of a
// group become ready at different times (the summary's numbers derived independently from
// the per-step and per-site arrays).
TEST_F(Outputs, RunSummaryInvariantsHold) {
  const std::vector<std::string> cases = {
      "--schedule triads --steps 4",
      "--schedule triads --steps 4 --flow-control credit",
      "--schedule pairs --steps 4 --round-start immediate --jitter on",
      "--schedule triads --steps 6 --set defaults.cluster.compute_time=1ms",
      "--schedule hierarchical --steps 4 --set defaults.cluster.compute_time=1us "
      "--flow-control credit",
      "--schedule ring --steps 1"};
  constexpr double kPs = 1e-12;
  for (const auto& args : cases) {
    SCOPED_TRACE(args);
    const json r = run(args + " --eps 0.5");
    const auto& sm = r["summary"];
    const auto& steps = r["steps"];
    ASSERT_EQ(steps.size(), sm["steps"].get<std::size_t>());
    double last_end = 0, round_max = 0, step_max = 0;
    for (const auto& s : steps) {
      // Every site: step (its ready-to-result included) >= its own ready-to-result time;
      // the step entry holds the slowest site of each.
      EXPECT_GE(s["step_time_s"].get<double>(), s["comm_time_s"].get<double>()) << s["step"];
      EXPECT_GE(s["comm_time_s"].get<double>(), 0.0);
      EXPECT_GE(s["end_s"].get<double>(), last_end);
      last_end = s["end_s"].get<double>();
      double slowest_group = 0;
      for (const auto& g : s["groups"])
        slowest_group = std::max(slowest_group, g["round_time_s"].get<double>());
      EXPECT_DOUBLE_EQ(s["round_time_s"].get<double>(), slowest_group);
      round_max = std::max(round_max, s["round_time_s"].get<double>());
      step_max = std::max(step_max, s["step_time_s"].get<double>());
    }
    EXPECT_DOUBLE_EQ(sm["total_time_s"].get<double>(), last_end);
    EXPECT_DOUBLE_EQ(sm["round_time_s_max"].get<double>(), round_max);
    EXPECT_DOUBLE_EQ(sm["step_time_s_max"].get<double>(), step_max);
    // A site's steps run back to back from t = 0: its compute plus exposed communication
    // is when it finished; the last site to finish ends the run.
    double latest_site = 0, compute = 0, exposed = 0;
    for (const auto& site : r["sites"]) {
      const double total = site["compute_time_s"].get<double>() + site["idle_time_s"].get<double>();
      EXPECT_LE(total, last_end + kPs) << site["site"];
      latest_site = std::max(latest_site, total);
      compute += site["compute_time_s"].get<double>();
      exposed += site["idle_time_s"].get<double>();
    }
    EXPECT_NEAR(latest_site, last_end, 2 * kPs);
    const double site_steps = static_cast<double>(r["sites"].size() * steps.size());
    EXPECT_NEAR(sm["compute_time_s_mean"].get<double>(), compute / site_steps, kPs);
    EXPECT_NEAR(sm["exposed_comm_time_s_mean"].get<double>(), exposed / site_steps, kPs);
    EXPECT_NEAR(
        sm["step_time_s_mean"].get<double>(),
        sm["compute_time_s_mean"].get<double>() + sm["exposed_comm_time_s_mean"].get<double>(),
        kPs);
    // A site's step is at least its compute and at most the slowest site's step.
    EXPECT_GE(sm["step_time_s_mean"].get<double>(), sm["compute_time_s_mean"].get<double>());
    EXPECT_LE(sm["step_time_s_mean"].get<double>(), step_max + kPs);
    // Consensus: the time to eps is the end of step rounds_to_eps; without compute it is
    // that less rounds_to_eps compute phases of the slowest site (its per-step compute from
    // the sites[] totals).
    const long rounds = sm["rounds_to_eps"].get<long>();
    if (rounds >= 1 && rounds <= static_cast<long>(steps.size())) {
      EXPECT_DOUBLE_EQ(sm["time_to_eps_s"].get<double>(), steps[rounds - 1]["end_s"].get<double>());
      double slowest_compute = 0;
      for (const auto& site : r["sites"])
        slowest_compute = std::max(slowest_compute, site["compute_time_s"].get<double>() /
                                                        static_cast<double>(steps.size()));
      EXPECT_NEAR(sm["comm_time_to_eps_s"].get<double>(),
                  sm["time_to_eps_s"].get<double>() - static_cast<double>(rounds) * slowest_compute,
                  kPs * static_cast<double>(rounds));
    } else {
      EXPECT_FALSE(sm.contains("time_to_eps_s"));
    }
  }
}

// Which number of the table follows `label` ("  rounds to eps 0.5        3").
std::string after(const std::string& text, const std::string& label) {
  const auto at = text.find(label);
  if (at == std::string::npos) return "";
  const auto end = text.find('\n', at);
  return text.substr(at + label.size(), end - at - label.size());
}

TEST_F(Outputs, RunTableEchoesItsInputsAndTheConsensus) {
  const std::string args =
      "run --gradient 16MiB --chunk 512KiB --buffer 8MiB --schedule triads --steps 1 "
      "--flow-control credit --alignment none --eps 0.01 --no-colocated "
      "--set defaults.link.bandwidth=10Gbps --set sites.lon.fpga.buffer=4MiB --json r.json";
  const Output o = aggnet(args);
  ASSERT_EQ(o.status, 0) << o.err;
  const json r = json::parse(read_text(dir_ / "r.json"));
  EXPECT_NE(o.out.find("platform      nine_city ("), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("gradient      16MiB, chunk 512KiB, buffer 8MiB at every site"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("link rate     WAN 10 Gbps"), std::string::npos) << o.out;
  // The link table says what its utilization counts (wire bytes), beside the payload.
  EXPECT_NE(o.out.find("Busiest links (utilization: busy time / run time, wire bytes with "
                       "headers and control; payload: gradient bytes only)"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("schedule      triads, 1 steps, eps 0.01"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("flow control  credit, round start immediate, alignment none"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("overrides     --set defaults.link.bandwidth=10Gbps, "
                       "--set sites.lon.fpga.buffer=4MiB"),
            std::string::npos)
      << o.out;
  // Rounds to eps as the JSON has them; one step simulated is fewer than needed.
  const long rounds = r["summary"]["rounds_to_eps"].get<long>();
  ASSERT_GT(rounds, 1);
  EXPECT_EQ(std::stol(after(o.out, "rounds to eps 0.01")), rounds) << o.out;
  EXPECT_NE(after(o.out, "time to eps").find("not measured: the run simulated 1 step "),
            std::string::npos)
      << o.out;
  // With enough steps the table shows the time the JSON has.
  const Output full = aggnet("run --gradient 16MiB --schedule triads --eps 0.01 --no-colocated");
  ASSERT_EQ(full.status, 0) << full.err;
  const std::string time = after(full.out, "time to eps");
  EXPECT_NE(time.find(" s (every site has the eps-consensus result"), std::string::npos) << time;
}

// Burst mode is echoed (table and JSON options) only when on; links count chunks, not
// bursts, and carry the same payload bytes.
TEST_F(Outputs, BurstIsEchoedAndCountsChunks) {
  const std::string base = "--schedule triads --steps 1 --buffer 8MiB --chunk 512KiB";
  const json exact = run(base);
  EXPECT_FALSE(exact["options"]["given"].contains("burst"));
  EXPECT_EQ(exact["options"]["resolved"]["burst_chunks"].get<int>(), 1);
  const Output o = aggnet("run --gradient 16MiB --no-colocated " + base + " --burst 4 --json " +
                          (dir_ / "b.json").string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("chunk 512KiB in bursts of 4 (timed per burst), buffer 8MiB"),
            std::string::npos)
      << o.out;
  const json burst = json::parse(read_text(dir_ / "b.json"));
  EXPECT_EQ(burst["options"]["given"]["burst"], "4");
  EXPECT_EQ(burst["options"]["resolved"]["burst_chunks"].get<int>(), 4);
  ASSERT_EQ(burst["links"].size(), exact["links"].size());
  for (std::size_t i = 0; i < exact["links"].size(); ++i) {
    EXPECT_EQ(burst["links"][i]["chunks"], exact["links"][i]["chunks"]) << i;
    EXPECT_EQ(burst["links"][i]["payload_bytes"], exact["links"][i]["payload_bytes"]) << i;
  }
}

// Boost's errors carry the option, a mistyped option a suggestion; counts never wrap.
TEST_F(Outputs, OptionErrorsNameTheOption) {
  struct Case {
    std::string args, expected;
  };
  const std::vector<Case> cases = {
      {"run --buffers 8MiB", "aggnet run: --buffers: unknown option (did you mean '--buffer'?)\n"},
      {"run --gradiant 8MiB",
       "aggnet run: --gradiant: unknown option (did you mean '--gradient'?)\n"},
      {"schedule --wrokers 2",
       "aggnet schedule: --wrokers: unknown option (did you mean '--workers'?)\n"},
      {"run --zzzzzz 1", "aggnet run: --zzzzzz: unknown option, see --help\n"},
      {"run --buffer", "aggnet run: --buffer: expected a value after it\n"},
      {"run --functional=yes", "aggnet run: --functional: expected no value (it is a flag)\n"},
      {"run --steps 1 --steps 2", "aggnet run: --steps: expected the option once\n"},
      {"run stray", "aggnet run: expected only options, each starting with --\n"},
      {"run --seed -1", "aggnet run: --seed: expected an integer >= 0, got '-1'\n"},
      {"run --seed=-1", "aggnet run: --seed: expected an integer >= 0, got '-1'\n"},
      {"size-buffers --workers -1",
       "aggnet size-buffers: --workers: expected an integer >= 0, got '-1'\n"},
      {"schedule --workers=-1", "aggnet schedule: --workers: expected an integer >= 0, got '-1'\n"},
  };
  for (const auto& c : cases) {
    const Output o = aggnet(c.args);
    EXPECT_EQ(o.status, 2) << c.args;
    EXPECT_EQ(o.err, c.expected) << c.args;
  }
  // The sweep's counts too (checked before anything runs; --dry-run runs nothing anyway).
  const std::string spec = std::string(AGGNET_SOURCE_DIR) + "/sweeps/ablation.yaml";
  for (const std::string bad : {"--workers=-1", "--workers=0", "--workers=x"}) {
    const Output o = aggnet("sweep " + spec + " --dry-run " + bad);
    EXPECT_EQ(o.status, 2) << bad << o.out;
    EXPECT_NE(o.err.find("--workers: expected a whole number from 1"), std::string::npos) << o.err;
  }
  const Output typo = aggnet("sweep " + spec + " --dry-run --wrkers 2");
  EXPECT_EQ(typo.status, 2);
  EXPECT_NE(typo.err.find("--wrkers: unknown option (did you mean '--workers'?)"),
            std::string::npos)
      << typo.err;
}

// One name for the simulations in parallel: --workers everywhere; `schedule --jobs`, its
// old name, still works with a note.
TEST_F(Outputs, WorkersIsTheOneNameForParallelSimulations) {
  for (const std::string command : {"schedule", "size-buffers"}) {
    const Output o = aggnet(command + " --help");
    EXPECT_NE(o.out.find("  --workers arg (=0)"), std::string::npos) << o.out;
    EXPECT_EQ(o.out.find("--jobs"), std::string::npos) << o.out;
  }
  const Output jobs =
      aggnet("schedule --schedules triads --gradient 16MiB --top 1 --verify --jobs 1");
  EXPECT_EQ(jobs.status, 0) << jobs.err;
  EXPECT_EQ(jobs.err, "aggnet schedule: --jobs is deprecated, use --workers\n");
  EXPECT_NE(jobs.out.find("(1 at a time)"), std::string::npos) << jobs.out;
}

// --help: every word of the option table's help text intact (never split across lines),
// lines within 100 columns, no float noise, and the default platform named by its place
// in the shipped data even from a directory that holds no platforms/.
TEST_F(Outputs, HelpIsReadable) {
  const fs::path elsewhere = dir_ / "elsewhere";
  fs::create_directories(elsewhere);
  static const std::regex noise(R"(\d\.\d*(0{6,}|9{6,})\d)");
  for (const std::string command : {"run", "schedule", "size-buffers", "sweep", "params"}) {
    SCOPED_TRACE(command);
    const Output o = aggnet(command + " --help", "", elsewhere);
    ASSERT_EQ(o.status, 0) << o.err;
    std::set<std::string> words;
    std::istringstream lines(o.out);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_LE(line.size(), 100u) << line;
      std::istringstream ws(line);
      for (std::string w; ws >> w;) words.insert(w);
    }
    EXPECT_FALSE(std::regex_search(o.out, noise)) << o.out;
    for (const char* word : {"defaults.link.bandwidth=10Gbps)", "||W_r...W_1", "3-sigma",
                             "random-K:SEED,", "(unconstrained"}) {
      const bool in_help = o.out.find(word) != std::string::npos;
      if (in_help) {
        EXPECT_TRUE(words.count(word)) << word << " split in\n" << o.out;
      }
    }
    if (command != "sweep" && command != "params") {
      EXPECT_NE(o.out.find("--platform arg (=platforms/nine_city.yaml)"), std::string::npos)
          << o.out;
    }
  }
  EXPECT_NE(aggnet("size-buffers --help").out.find("--target arg (=0.95)"), std::string::npos);
}

// --group-average-only with --schedules naming no group-average schedule leaves nothing to
// rank: refused up front (it printed an empty table, exit 0, and wrote no --out).
TEST_F(Outputs, GroupAverageOnlyWithNoGroupScheduleIsRefused) {
  for (const std::string schedules : {"ring", "ring,reduce-scatter"}) {
    const Output o = aggnet("schedule --gradient 16MiB --schedules " + schedules +
                            " --group-average-only --out ga.yaml");
    EXPECT_EQ(o.status, 2) << schedules;
    EXPECT_EQ(o.err,
              "aggnet schedule: --group-average-only: expected a group-average schedule in "
              "--schedules (none of them is one, so no group-average schedule is left to "
              "rank), got '" +
                  schedules + "'\n");
    EXPECT_EQ(o.out, "");
    EXPECT_FALSE(fs::exists(dir_ / "ga.yaml"));
  }
  // One group-average schedule among them: ranked and written.
  const Output o = aggnet(
      "schedule --gradient 16MiB --schedules ring,triads --group-average-only --out ga.yaml");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(read_text(dir_ / "ga.yaml").find("collective: group-average"), std::string::npos);
}

// --out writes what the text says it writes: rank 1 of the table, named, and the best
// group-average schedule with --group-average-only. --verify cleans up its scratch files.
TEST_F(Outputs, ScheduleOutIsTheScheduleTheTextNames) {
  const std::string out = (dir_ / "best.yaml").string();
  // At 1 GiB the host ring all-reduce ranks first on nine_city (analytic ranking only).
  const std::string base =
      "schedule --schedules ring,triads,all-to-all --gradient 1GiB --out " + out;
  for (const std::string extra : {"", " --group-average-only"}) {
    SCOPED_TRACE(extra);
    const Output o = aggnet(base + extra);
    ASSERT_EQ(o.status, 0) << o.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(o.out, m, std::regex("\\n +1  (\\S+)"))) << o.out;
    const std::string rank1 = m[1];
    EXPECT_NE(o.out.find("wrote rank 1, '" + rank1 + "'"), std::string::npos) << o.out;
    const std::string yaml = read_text(out);
    EXPECT_NE(yaml.find(rank1), std::string::npos) << yaml;
    if (extra.empty()) {
      EXPECT_EQ(rank1, "ring");
      EXPECT_NE(o.out.find("best group-average (multicast + in-line aggregation) schedule: "),
                std::string::npos);
      EXPECT_NE(o.out.find("(rank 1 is a host-based baseline, not a group-average schedule; "
                           "--group-average-only ranks and writes"),
                std::string::npos)
          << o.out;
    } else {
      EXPECT_NE(rank1, "ring");
      EXPECT_NE(yaml.find("collective: group-average"), std::string::npos) << yaml;
    }
  }
  // A reduction tree ranked first is in-network, not host-based; its rounds name no link
  // rate (its time is its trees' closed form).
  const Output tree = aggnet("schedule --schedules reduction-forest,triads --out " + out);
  ASSERT_EQ(tree.status, 0) << tree.err;
  EXPECT_NE(tree.out.find("(rank 1 is an in-network reduction, not a group-average schedule"),
            std::string::npos)
      << tree.out;
  EXPECT_TRUE(std::regex_search(tree.out, std::regex("r0 +\\S+ ms  in-network reduction +\\{")))
      << tree.out;
  const fs::path scratch = dir_ / "tmp";
  fs::create_directories(scratch);
  const Output v = aggnet("schedule --schedules triads,pairs --gradient 16MiB --verify",
                          "TMPDIR=" + scratch.string());
  ASSERT_EQ(v.status, 0) << v.err;
  EXPECT_NE(v.out.find("worst |error|"), std::string::npos);
  EXPECT_TRUE(fs::is_empty(scratch)) << fs::directory_iterator(scratch)->path();
}

// The ranking's "rounds x rt" is the round times of the rounds to eps summed, as the
// legend says: sequential-3's rounds differ (r0-r8 listed under the table), and its 6
// rounds to eps are the first six of them, not 6 x the period's average.
TEST_F(Outputs, ScheduleRoundsTimesRoundTimeIsTheRoundsSummed) {
  const Output o = aggnet("schedule --schedules sequential-3");
  ASSERT_EQ(o.status, 0) << o.err;
  const auto seconds = [](const std::string& value, const std::string& unit) {
    return std::stod(value) * (unit == "s" ? 1.0 : unit == "ms" ? 1e-3 : 1e-6);
  };
  std::smatch row;
  const std::regex timed("(\\d+) +([0-9.]+) (m?s) +([0-9.]+) (m?s) +[0-9.]+ m?s +[0-9.]+ m?s\\n");
  ASSERT_TRUE(std::regex_search(o.out, row, timed)) << o.out;
  const int rounds = std::stoi(row[1]);
  const double average = seconds(row[2], row[3]), summed = seconds(row[4], row[5]);
  std::vector<double> round_s;
  const std::regex listed("\\n +r(\\d+) +([0-9.]+) (m?s)  ");
  for (auto it = std::sregex_iterator(o.out.begin(), o.out.end(), listed);
       it != std::sregex_iterator(); ++it)
    round_s.push_back(seconds((*it)[2], (*it)[3]));
  ASSERT_GE(round_s.size(), static_cast<std::size_t>(rounds)) << o.out;
  double first = 0;
  for (int r = 0; r < rounds; ++r) first += round_s[r];
  EXPECT_NEAR(summed, first, 1e-3) << o.out;  // 1.802 s: printed to the millisecond
  EXPECT_GT(std::abs(summed - rounds * average), 0.01) << "the example no longer tells them apart";
}

// The ranking's columns line up whatever their cells hold: "reduction-forest" (16
// characters) and sequential-3's "3+6 out | ... (12 rounds)" are wider than a fixed
// layout's family and groups columns. Every row ends where the header does (the last
// column is right-aligned), and each column starts (left-aligned) or ends
// (right-aligned) where its title does.
TEST_F(Outputs, ScheduleTableColumnsLineUp) {
  const Output o = aggnet("schedule --schedules reduction-forest,sequential-3,ring,triads");
  ASSERT_EQ(o.status, 0) << o.err;
  std::vector<std::string> lines;
  std::istringstream in(o.out);
  for (std::string line; std::getline(in, line) && line.rfind("(round time", 0) != 0;)
    if (!lines.empty() || line.rfind("rank", 0) == 0) lines.push_back(line);
  ASSERT_EQ(lines.size(), 5u) << o.out;
  ASSERT_NE(o.out.find("reduction-forest"), std::string::npos) << o.out;
  const std::string& header = lines[0];
  for (const std::string& row : std::vector<std::string>(lines.begin() + 1, lines.end())) {
    EXPECT_EQ(row.size(), header.size()) << row;
    for (const char* left : {"schedule", "family", "groups per round"}) {
      const std::size_t at = header.find(left);
      EXPECT_TRUE(row[at - 1] == ' ' && row[at] != ' ') << left << ": " << row;
    }
    for (const char* right : {"rho", "rounds", "time to eps"}) {
      const std::size_t end = header.find(right) + std::string(right).size();
      EXPECT_TRUE(row[end - 1] != ' ' && row[end] == ' ') << right << ": " << row;
    }
  }
}

// rho applies where a round has a mixing matrix: a one-way transfer, a reduce-scatter and
// an all-gather average nothing, so their rho is "n/a" (it read 0.00e+00, an exact average,
// for the last two and 1.00e+00 for p2p), while the averaging collectives keep theirs.
TEST_F(Outputs, ScheduleRhoIsNotApplicableWithoutAMixingMatrix) {
  const Output o = aggnet(
      "schedule --schedules reduce-scatter,all-gather,p2p:lon-nyc,ring,triads,hierarchical "
      "--gradient 72MiB");
  ASSERT_EQ(o.status, 0) << o.err;
  std::istringstream in(o.out);
  std::string header;
  while (std::getline(in, header) && header.rfind("rank", 0) != 0) {
  }
  ASSERT_EQ(header.rfind("rank", 0), 0u) << o.out;
  const std::size_t schedule_at = header.find("schedule"), rho_end = header.find("rho") + 3;
  std::map<std::string, std::string> rho;  // schedule -> its rho cell
  for (std::string row; std::getline(in, row) && row.rfind("(round time", 0) != 0;) {
    ASSERT_GE(row.size(), rho_end) << row;
    std::istringstream name(row.substr(schedule_at));
    std::string schedule;
    name >> schedule;
    const std::string left = row.substr(0, rho_end);
    rho[schedule] = left.substr(left.find_last_of(' ') + 1);
  }
  const std::map<std::string, std::string> expected = {
      {"reduce-scatter", "n/a"}, {"all-gather", "n/a"},  {"p2p:lon-nyc", "n/a"},
      {"ring", "0.00e+00"},      {"triads", "0.00e+00"}, {"hierarchical", "8.16e-01"}};
  EXPECT_EQ(rho, expected) << o.out;
  EXPECT_NE(o.out.find("rho: the consensus error of one period, n/a for a collective that "
                       "leaves no site the average"),
            std::string::npos)
      << o.out;
}

// The buffer is the summing FPGA's: a ring's FPGA passes its chunks through and holds no
// slot, so a buffer below one chunk changes nothing of its run (was "holds no aggregation
// slot", exit 1); a reduction tree's relays sum even with --aggregation off, so there the
// same buffer is refused, naming --buffer (exit 2). An FPGA that sums nothing reports no
// memory access (it reported the group's as if it summed).
TEST_F(Outputs, OnlyAnFpgaThatSumsNeedsASlot) {
  const json small = run("--schedule ring --chunk 64KiB --buffer 16KiB");
  const json large = run("--schedule ring --chunk 64KiB");
  ASSERT_FALSE(small.empty());
  ASSERT_FALSE(large.empty());
  EXPECT_EQ(small["summary"]["step_time_s_mean"], large["summary"]["step_time_s_mean"]);
  EXPECT_EQ(small["summary"]["total_time_s"], large["summary"]["total_time_s"]);
  EXPECT_EQ(small["summary"]["events"], large["summary"]["events"]);
  // `schedule` ranks the ring with that buffer too, and refuses it for a group schedule.
  EXPECT_EQ(aggnet("schedule --schedules ring --chunk 64KiB --buffer 16KiB").status, 0);
  EXPECT_EQ(aggnet("schedule --schedules ring,triads --chunk 64KiB --buffer 16KiB").status, 2);
  // Without aggregation a group schedule's FPGAs sum nothing: no access rate, no power.
  const json off = run("--schedule triads --aggregation off");
  for (const auto& site : off["sites"]) EXPECT_EQ(site["memory_access_gbps"], 0.0) << site;
  EXPECT_EQ(off["summary"]["memory_power_w"], 0.0);
  EXPECT_GT(run("--schedule triads")["summary"]["memory_power_w"].get<double>(), 0.0);
  const Output tree =
      aggnet("run --schedule reduction-tree --aggregation off --chunk 64KiB --buffer 16KiB -q");
  EXPECT_EQ(tree.status, 2) << tree.err;
  EXPECT_EQ(tree.err,
            "aggnet run: --buffer: expected a buffer of at least one chunk (64.0 KiB), got "
            "'16KiB'\n");
}

// A bad name in --schedules is named against --schedules, not run's --schedule.
TEST_F(Outputs, ScheduleBlamesItsOwnOptionForABadListedName) {
  const Output o = aggnet("schedule --schedules ring:greedy");
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(o.err,
            "aggnet schedule: --schedules: a ring step rule (receive, sendrecv, barrier) after "
            "'ring:', got 'greedy'\n");
}

// size-buffers: one title per column, no column repeating one value, the rate named for
// what it is; progress lines with the estimated total and time left.
TEST_F(Outputs, SizeBuffersTableAndProgress) {
  const std::string line3 = std::string(AGGNET_SOURCE_DIR) + "/tests/workflow/data/line3.yaml";
  const Output o = aggnet("size-buffers --platform " + line3 +
                          " --schedule all-to-all --gradient 16MiB --chunk 256KiB --workers 2 "
                          "--heterogeneous");
  ASSERT_EQ(o.status, 0) << o.err;
  std::istringstream lines(o.out);
  std::string title, line;
  std::getline(lines, title);
  std::getline(lines, line);
  const std::string header = line;
  for (const char* column : {"unconstr. rate", "analytic", "uniform HW", "per-site", "per-site HW"})
    EXPECT_NE(header.find(column), std::string::npos) << column << "\n" << header;
  EXPECT_EQ(header.find("simulated"), std::string::npos) << header;
  EXPECT_EQ(header.find(" rate"), header.find(" unconstr. rate") + 10) << header;
  // Titles are unique: split at runs of 2+ spaces.
  std::set<std::string> titles;
  static const std::regex cell(R"((\S+(?: \S+)*))");
  for (std::sregex_iterator it(header.begin(), header.end(), cell), end; it != end; ++it)
    EXPECT_TRUE(titles.insert((*it)[1]).second) << "duplicate title " << (*it)[1];
  static const std::regex progress(
      R"(size-buffers: (batch \d+|per-site scaling): \d+ of about \d+ simulations, [0-9.]+ s elapsed, about [0-9.]+ s left; )");
  std::istringstream err(o.err);
  int progress_lines = 0;
  for (std::string l; std::getline(err, l);) {
    EXPECT_TRUE(std::regex_search(l, progress)) << l;
    ++progress_lines;
  }
  EXPECT_GE(progress_lines, 2) << o.err;
}

// The run options each name one resolved key (a new option without one fails below).
const std::map<std::string, std::string> kResolvedKey = {
    {"platform", "platform"},
    {"schedule", "schedule"},
    {"buffer", "buffer_bytes"},
    {"gradient", "gradient_bytes"},
    {"chunk", "chunk_bytes"},
    {"burst", "burst_chunks"},
    {"steps", "steps"},
    {"eps", "eps"},
    {"flow-control", "flow_control"},
    {"round-start", "round_start"},
    {"alignment", "alignment"},
    {"pacing-margin", "pacing_margin"},
    {"multicast", "multicast"},
    {"aggregation", "aggregation"},
    {"jitter", "jitter"},
    {"seed", "seed"},
    {"set", "set"},
    {"functional", "functional"},
    {"no-colocated", "colocated"},
    {"loss", "loss_rate"},
    {"fault", "faults"},
    {"retransmit-timeout", "retransmit_timeout_s"},
    {"watchdog", "watchdog_s"},
    {"routing", "routing"}};
// Resolved keys written only when the option is not its default (the goldens predate them).
const std::set<std::string> kOnlyWhenNotDefault = {"routing"};
// `aggnet run`'s own options: outputs and tracing, no input of the results.
const std::set<std::string> kRunnerOptions = {"vcd",      "gtkw",  "trace",          "trace-from",
                                              "trace-to", "stats", "stats-interval", "report",
                                              "journey",  "json",  "quiet"};

// The long option names of `aggnet run --help`.
std::set<std::string> run_option_names(const std::string& help) {
  std::set<std::string> names;
  static const std::regex option(R"(^  (?:-\w, )?--([a-z-]+))");
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, option) && m[1] != "help") names.insert(m[1]);
  }
  return names;
}

// Issue 34: the options as given and as resolved, apart, and every run option in both.
TEST_F(Outputs, OptionsGivenAndResolvedApartAndComplete) {
  const std::set<std::string> names = run_option_names(aggnet("run --help").out);
  std::set<std::string> inputs;
  for (const auto& n : names)
    if (!kRunnerOptions.count(n)) inputs.insert(n);
  std::set<std::string> mapped;
  for (const auto& [option, key] : kResolvedKey) mapped.insert(option);
  EXPECT_EQ(inputs, mapped) << "every input option of aggnet run needs a resolved key";

  const json r =
      run("--steps 0 --round-start auto --buffer 8MiB --loss 0.001 --fault stall:tyo@0.5s-0.6s "
          "--retransmit-timeout 200ms --watchdog 30s --set defaults.link.bandwidth=40Gbps");
  const json& given = r["options"]["given"];
  const json expected_given = {{"gradient", "16MiB"},
                               {"no-colocated", true},
                               {"steps", "0"},
                               {"round-start", "auto"},
                               {"buffer", "8MiB"},
                               {"loss", "0.001"},
                               {"fault", {"stall:tyo@0.5s-0.6s"}},
                               {"retransmit-timeout", "200ms"},
                               {"watchdog", "30s"},
                               {"set", {"defaults.link.bandwidth=40Gbps"}}};
  EXPECT_EQ(given, expected_given) << given.dump(1);
  const json& res = r["options"]["resolved"];
  std::set<std::string> keys;
  for (const auto& [key, value] : res.items()) keys.insert(key);
  std::set<std::string> expected_keys = {"loss_recovery"};
  for (const auto& [option, key] : kResolvedKey)
    if (!kOnlyWhenNotDefault.count(key)) expected_keys.insert(key);
  EXPECT_EQ(keys, expected_keys);
  // --steps 0 becomes the steps simulated, auto the aligned start of pacing.
  EXPECT_EQ(res["steps"].get<std::size_t>(), r["steps"].size());
  EXPECT_GT(res["steps"].get<int>(), 0);
  EXPECT_EQ(res["round_start"], "aligned");
  for (const auto& site : r["sites"])
    EXPECT_EQ(res["buffer_bytes"][site["site"].get<std::string>()].get<std::uint64_t>(), 8u << 20);
  EXPECT_EQ(res["gradient_bytes"].get<std::uint64_t>(), 16u << 20);
  EXPECT_EQ(res["chunk_bytes"].get<std::uint64_t>(), 1u << 20);  // the default, 1MiB
  EXPECT_EQ(res["loss_rate"].get<double>(), 0.001);
  EXPECT_EQ(res["faults"], json({"stall:tyo@0.5s-0.6s"}));
  EXPECT_EQ(res["retransmit_timeout_s"].get<double>(), 0.2);
  EXPECT_EQ(res["watchdog_s"].get<double>(), 30.0);
  EXPECT_TRUE(res["loss_recovery"].get<bool>());
  EXPECT_FALSE(res["colocated"].get<bool>());
  EXPECT_EQ(res["flow_control"], "pacing");
  EXPECT_TRUE(res["multicast"].get<bool>());

  // Credit flow control resolves `auto` to an immediate start; without losses there is no
  // watchdog and the timeout is per group; the platform's buffers are the resolved ones.
  const json credit = run("--steps 1 --flow-control credit");
  EXPECT_EQ(credit["options"]["given"], json({{"gradient", "16MiB"},
                                              {"no-colocated", true},
                                              {"steps", "1"},
                                              {"flow-control", "credit"}}));
  const json& c = credit["options"]["resolved"];
  EXPECT_EQ(c["round_start"], "immediate");
  EXPECT_TRUE(c["watchdog_s"].is_null());
  EXPECT_TRUE(c["retransmit_timeout_s"].is_null());
  EXPECT_FALSE(c["loss_recovery"].get<bool>());
  EXPECT_EQ(c["buffer_bytes"]["lon"].get<std::uint64_t>(), 64u << 20);  // nine_city.yaml
}

// Issue 34: --stats JSON writes counts as integers and times to the picosecond, as the run
// JSON does.
TEST_F(Outputs, StatsJsonCountsAreIntegersAndTimesWholePicoseconds) {
  const Output o = aggnet(
      "run --gradient 16MiB --no-colocated -q --schedule triads --steps 2 --jitter on "
      "--alignment none --stats s.json");
  ASSERT_EQ(o.status, 0) << o.err;
  const json rows = json::parse(read_text(dir_ / "s.json"));
  expect_ps_exact(rows);
  int counts = 0;
  for (const auto& row : rows)
    for (const auto& [key, value] : row["statistics"].items())
      for (const char* word : {"forwarded", "replicated", "chunks", "contributions", "steps"})
        if (key == word || key.find(std::string(word) + "_") == 0 ||
            key.find("_" + std::string(word)) != std::string::npos) {
          EXPECT_TRUE(value.is_number_integer()) << row["instance"] << " " << key << " " << value;
          ++counts;
        }
  EXPECT_GT(counts, 20);
}

// Issue 34: a size without its unit is an error (as a rate or a time is), in every size
// option, a --set size and a platform file.
TEST_F(Outputs, SizesNeedAUnit) {
  const std::string line3 = std::string(AGGNET_SOURCE_DIR) + "/tests/workflow/data/line3.yaml";
  struct Case {
    std::string args, expected;
  };
  const std::vector<Case> cases = {
      {"run --gradient 64",
       "aggnet run: --gradient: expected a size with its unit, like '64MiB' or '64B', got "
       "'64'\n"},
      {"run --buffer 8",
       "aggnet run: --buffer: expected a size with its unit, like '8MiB' or "
       "'8B', got '8'\n"},
      {"run --chunk 1.5",
       "aggnet run: --chunk: expected a size with its unit, like '1.5MiB' or "
       "'1.5B', got '1.5'\n"},
      {"schedule --gradient 64",
       "aggnet schedule: --gradient: expected a size with its unit, like '64MiB' or '64B', got "
       "'64'\n"},
      {"size-buffers --gradient 64",
       "aggnet size-buffers: --gradient: expected a size with its unit, like '64MiB' or '64B', "
       "got '64'\n"},
      {"run --set defaults.fpga.buffer=64",
       "aggnet run: --set defaults.fpga.buffer: expected a size like '64MiB' or '2048B' (a unit "
       "is required), got '64'\n"},
      {"run --set defaults.link.mtu=9000",
       "aggnet run: --set defaults.link.mtu: expected a size like '64MiB' or '2048B' (a unit is "
       "required), got '9000'\n"},
  };
  for (const auto& c : cases) {
    const Output o = aggnet(c.args);
    EXPECT_EQ(o.status, 2) << c.args;
    EXPECT_EQ(o.err, c.expected) << c.args;
  }
  std::string platform = read_text(line3);
  platform.replace(platform.find("cluster: {compute_time: 10ms}"), 29,
                   "cluster: {compute_time: 10ms}\n  fpga: {buffer: 64}");
  std::ofstream(dir_ / "bare.yaml") << platform;
  const Output file = aggnet("run --platform bare.yaml --gradient 16MiB");
  EXPECT_EQ(file.status, 2);
  EXPECT_EQ(file.err,
            "bare.yaml:8: defaults.fpga.buffer: expected a size like '64MiB' or '2048B' (a unit is "
            "required), got '64'\n");
  std::ofstream(dir_ / "sweep.yaml") << "name: s\nbase:\n  gradient: 64\naxes:\n"
                                        "  - option: buffer\n    values: [8MiB]\n";
  const Output sweep = aggnet("sweep sweep.yaml --dry-run");
  EXPECT_EQ(sweep.status, 2);
  EXPECT_NE(sweep.err.find("sweep.yaml:3: base.gradient: "), std::string::npos) << sweep.err;
  EXPECT_NE(sweep.err.find("got '64'"), std::string::npos) << sweep.err;
}

// The timestamps of a VCD ("#<ps>" lines).
std::vector<std::string> vcd_times(const std::string& text) {
  std::vector<std::string> times;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] == '#') times.push_back(line);
  return times;
}

// Issue 34: the VCD writes each timestamp once (its last one was written twice), and
// GTKWave's converter reads it.
TEST_F(Outputs, VcdEndsWithOneFinalTimestamp) {
  for (const std::string window : {"", " --trace-to 1.1s", " --trace-from 1s"}) {
    SCOPED_TRACE(window);
    const Output o =
        aggnet("run --gradient 16MiB --steps 1 --no-colocated -q --vcd r.vcd" + window);
    ASSERT_EQ(o.status, 0) << o.err;
    const auto times = vcd_times(read_text(dir_ / "r.vcd"));
    ASSERT_GT(times.size(), 10u);
    for (std::size_t i = 1; i < times.size(); ++i)
      EXPECT_LT(std::stoull(times[i - 1].substr(1)), std::stoull(times[i].substr(1)))
          << times[i - 1] << " then " << times[i];
    EXPECT_EQ(
        std::system(("cd '" + dir_.string() + "' && vcd2fst r.vcd r.fst > /dev/null").c_str()), 0);
  }
  // A window that ends after the run: the file ends at the window's end.
  ASSERT_EQ(aggnet("run --gradient 16MiB --steps 1 --no-colocated -q --vcd r.vcd --trace-to "
                   "1.1s")
                .status,
            0);
  EXPECT_EQ(vcd_times(read_text(dir_ / "r.vcd")).back(), "#1100000000000");
}

// exact_average_time_s needs one compute time at every site, a slowed one's counted: with
// lon slowed it used lon's unslowed second and read 5.5 % efficient where it is 34 %.
TEST_F(Outputs, TheExactAverageNeedsOneComputeTimeSlowedSitesIncluded) {
  const json plain = run("");
  const auto& sm = plain["summary"];
  ASSERT_EQ(sm["rounds_to_eps"], 2);  // triads: exact after two rounds
  const double exact = plain["steps"][1]["end_s"].get<double>() - 2 * 1.0;  // compute_time 1s
  EXPECT_NEAR(sm["exact_average_time_s"].get<double>(), exact, 1e-12);
  EXPECT_NEAR(sm["efficiency"].get<double>(), sm["bound_s"].get<double>() / exact, 1e-12);
  const json one = run("--fault slow:lon=2");
  EXPECT_FALSE(one["summary"].contains("exact_average_time_s")) << one["summary"].dump();
  EXPECT_FALSE(one["summary"].contains("efficiency"));
  // Every site slowed alike: one compute time again, 2 s, and the same communication.
  std::string all;
  for (const auto& site : {"ams", "bom", "chi", "fra", "lax", "lon", "nyc", "sin", "tyo"})
    all += std::string(" --fault slow:") + site + "=2";
  const json slowed = run(all);
  EXPECT_NEAR(slowed["summary"]["exact_average_time_s"].get<double>(),
              slowed["steps"][1]["end_s"].get<double>() - 2 * 2.0, 1e-12);
  EXPECT_NEAR(slowed["summary"]["exact_average_time_s"].get<double>(), exact, 1e-9);
}

// The table's time to eps names its second figure for what it is, comm_time_to_eps_s
// (it said "its round times summed": the rounds' times sum to more).
TEST_F(Outputs, TimeToEpsLineShowsTheTimeWithoutCompute) {
  const Output o = aggnet("run --gradient 16MiB --no-colocated --json r.json");
  ASSERT_EQ(o.status, 0) << o.err;
  const json r = json::parse(read_text(dir_ / "r.json"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(o.out, m, std::regex(R"(without compute ([0-9.]+) ms)"))) << o.out;
  EXPECT_NEAR(std::stod(m[1]), r["summary"]["comm_time_to_eps_s"].get<double>() * 1e3, 1e-3);
  const int rounds = r["summary"]["rounds_to_eps"].get<int>();
  double rounds_s = 0;
  for (int i = 0; i < rounds; ++i) rounds_s += r["steps"][i]["round_time_s"].get<double>();
  EXPECT_GT(rounds_s, r["summary"]["comm_time_to_eps_s"].get<double>() + 1e-3);
  EXPECT_EQ(o.out.find("round times summed"), std::string::npos);
}

// A loss rate of 0 loses nothing: it turns no loss recovery on (the triads' events and
// timing are the plain run's) and a ring takes it, as it takes --loss 0. The faults the
// run used are listed whatever brought them in; a refusal names the option that did.
TEST_F(Outputs, ZeroLossIsNoLossAndLossesAreNamedWhereTheyCameFrom) {
  const json plain = run("");
  const json zero = run("--fault loss:nyc-lon=0");
  EXPECT_EQ(zero["summary"]["events"], plain["summary"]["events"]);
  EXPECT_EQ(zero["steps"], plain["steps"]);
  EXPECT_EQ(zero["options"]["resolved"]["loss_recovery"], false);
  EXPECT_EQ(zero["options"]["resolved"]["faults"], json::array({"loss:nyc-lon=0"}));
  EXPECT_EQ(run("--schedule ring --fault loss:nyc-lon=0")["options"]["resolved"]["loss_recovery"],
            false);
  const json set = run("--set links.nyc-lon.loss=0.001");
  EXPECT_EQ(set["options"]["resolved"]["faults"], json::array({"loss:nyc-lon=0.001"}));
  EXPECT_EQ(set["options"]["resolved"]["loss_recovery"], true);
  const Output ring = aggnet("run --schedule ring -q --set links.nyc-lon.loss=0.001");
  EXPECT_EQ(ring.status, 2);
  EXPECT_EQ(ring.err.rfind("aggnet run: --set: expected a group-average schedule", 0), 0u)
      << ring.err;
  const Output tree = aggnet("run --schedule reduction-forest -q --loss 0.01");
  EXPECT_EQ(tree.status, 2);
  EXPECT_NE(tree.err.find("the in-network reduction-tree would wait forever"), std::string::npos)
      << tree.err;
}

// The waveform is written, while the run lasts, to a file of its own next to it: one
// planted at the name it had (FILE.partial.vcd) is neither written through nor moved.
TEST_F(Outputs, AWaveformNeverGoesThroughALinkAtItsPartialName) {
  std::ofstream(dir_ / "victim.txt") << "keep\n";
  fs::create_symlink(dir_ / "victim.txt", dir_ / "w.vcd.partial.vcd");
  const Output o = aggnet("run --gradient 4MiB --steps 1 --no-colocated -q --vcd w.vcd");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(read_text(dir_ / "victim.txt"), "keep\n");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir_ / "w.vcd")));
  EXPECT_NE(read_text(dir_ / "w.vcd").find("$enddefinitions"), std::string::npos) << "not a VCD";
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_)) names.insert(entry.path().filename());
  EXPECT_EQ(names, (std::set<std::string>{"w.vcd", "w.gtkw", "w.vcd.partial.vcd", "victim.txt",
                                          "stdout.txt", "stderr.txt"}));
}

// aggnet params --out DIR: each page is an output like any other (no link, no device),
// checked before any is written; a wrong format or directory is named as such.
TEST_F(Outputs, ParamsPagesAreCheckedOutputs) {
  std::ofstream(dir_ / "victim.txt") << "keep\n";
  fs::create_directories(dir_ / "pages");
  fs::create_symlink(dir_ / "victim.txt", dir_ / "pages" / "README.md");
  const Output linked = aggnet("params --format markdown --out pages");
  EXPECT_EQ(linked.status, 2);
  EXPECT_NE(linked.err.find("--out"), std::string::npos) << linked.err;
  EXPECT_NE(linked.err.find("not a symbolic link"), std::string::npos) << linked.err;
  EXPECT_EQ(std::count(linked.err.begin(), linked.err.end(), '\n'), 1) << linked.err;
  EXPECT_EQ(read_text(dir_ / "victim.txt"), "keep\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "pages"), fs::directory_iterator()), 1);
  fs::remove(dir_ / "pages" / "README.md");
  ASSERT_EQ(aggnet("params --format markdown --out pages").status, 0);
  EXPECT_TRUE(fs::is_regular_file(dir_ / "pages" / "README.md"));
  const Output table = aggnet("params --out pages");
  EXPECT_EQ(table.status, 2);
  EXPECT_NE(table.err.find("expected --format markdown"), std::string::npos) << table.err;
  const Output typo = aggnet("params --format mardown");
  EXPECT_EQ(typo.status, 2);
  EXPECT_NE(typo.err.find("did you mean 'markdown'"), std::string::npos) << typo.err;
}

// Issue 34: --vcd FILE.fst writes FST (through vcd2fst) with its view next to it, or
// refuses without vcd2fst; a derived view never replaces a file that is not aggnet's view
// of that waveform.
TEST_F(Outputs, FstWaveformsAndViewsNeverReplaceAnotherFile) {
  const std::string base = "run --gradient 16MiB --steps 1 --no-colocated -q ";
  const Output fst = aggnet(base + "--vcd run.fst");
  ASSERT_EQ(fst.status, 0) << fst.err;
  const std::string bytes = read_text(dir_ / "run.fst");
  ASSERT_GT(bytes.size(), 100u);
  EXPECT_NE(bytes.substr(0, 4), "$com");  // not VCD text
  EXPECT_EQ(std::system(("fst2vcd '" + (dir_ / "run.fst").string() + "' > '" +
                         (dir_ / "back.vcd").string() + "'")
                            .c_str()),
            0);
  EXPECT_GT(vcd_times(read_text(dir_ / "back.vcd")).size(), 10u);
  EXPECT_NE(read_text(dir_ / "run.gtkw").find("[dumpfile] \"" + (dir_ / "run.fst").string()),
            std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "run.fst.partial.vcd"));
  // Again over its own view: allowed.
  EXPECT_EQ(aggnet(base + "--vcd run.fst").status, 0);
  // run.gtkw is the view of run.fst, not of run.vcd.
  const Output other = aggnet(base + "--vcd run.vcd");
  EXPECT_EQ(other.status, 2);
  EXPECT_EQ(other.err,
            "aggnet run: --vcd: expected no other file at run.gtkw (its GTKWave view would "
            "replace one that is not aggnet's view of this waveform; name the view with --gtkw "
            "FILE), got 'run.vcd'\n");
  EXPECT_FALSE(fs::exists(dir_ / "run.vcd"));
  std::ofstream(dir_ / "mine.gtkw") << "my own view\n";
  EXPECT_EQ(aggnet(base + "--vcd mine.vcd").status, 2);
  EXPECT_EQ(read_text(dir_ / "mine.gtkw"), "my own view\n");
  EXPECT_EQ(aggnet(base + "--vcd mine.vcd --gtkw mine2.gtkw").status, 0);
  EXPECT_EQ(read_text(dir_ / "mine.gtkw"), "my own view\n");
  // Without vcd2fst: refused before the run.
  const Output none = aggnet(base + "--vcd x.fst", "PATH=/nonexistent");
  EXPECT_EQ(none.status, 2);
  EXPECT_EQ(none.err,
            "aggnet run: --vcd: expected a .vcd file: FST needs vcd2fst (Debian package "
            "gtkwave), not found in PATH, got 'x.fst'\n");
  EXPECT_FALSE(fs::exists(dir_ / "x.fst"));
}

// An explicit --gtkw FILE follows the derived view's rule: it replaces aggnet's view of the
// same waveform only (it overwrote a hand-made view, and a view of another waveform); with
// --vcd - a view has no waveform file to name, so --gtkw is refused (it wrote a view of a
// file named '-').
TEST_F(Outputs, AGivenViewNeverReplacesAnotherFile) {
  const std::string base = "run --gradient 16MiB --steps 1 --no-colocated -q ";
  const std::string refused =
      "aggnet run: --gtkw: expected a new file or aggnet's view of this waveform (the GTKWave "
      "view would replace one that is not), got ";
  std::ofstream(dir_ / "view.gtkw") << "my view";
  const Output mine = aggnet(base + "--vcd a.vcd --gtkw view.gtkw");
  EXPECT_EQ(mine.status, 2);
  EXPECT_EQ(mine.err, refused + "'view.gtkw'\n");
  EXPECT_EQ(read_text(dir_ / "view.gtkw"), "my view");
  EXPECT_FALSE(fs::exists(dir_ / "a.vcd"));
  // aggnet's view of a.vcd: replaced by another run of a.vcd, kept from a run of b.vcd.
  ASSERT_EQ(aggnet(base + "--vcd a.vcd --gtkw ours.gtkw").status, 0);
  const std::string ours = read_text(dir_ / "ours.gtkw");
  EXPECT_EQ(ours.rfind("[*]\n[*] aggnet ", 0), 0u) << ours;
  EXPECT_EQ(aggnet(base + "--vcd a.vcd --gtkw ours.gtkw").status, 0);
  const Output other = aggnet(base + "--vcd b.vcd --gtkw ours.gtkw");
  EXPECT_EQ(other.status, 2);
  EXPECT_EQ(other.err, refused + "'ours.gtkw'\n");
  EXPECT_EQ(read_text(dir_ / "ours.gtkw"), ours);
  EXPECT_FALSE(fs::exists(dir_ / "b.vcd"));
  // The waveform on the standard output: no view of it.
  const Output piped = aggnet(base + "--vcd - --gtkw v.gtkw");
  EXPECT_EQ(piped.status, 2);
  EXPECT_EQ(piped.err,
            "aggnet run: --gtkw: expected --vcd FILE, not --vcd - (the view names its "
            "waveform's file, and the standard output is none), got 'v.gtkw'\n");
  EXPECT_EQ(piped.out, "");
  EXPECT_FALSE(fs::exists(dir_ / "v.gtkw"));
}

// Outputs go to regular files (or "-"): a link, a FIFO or a device is refused before the
// run, and so is one output's file that another output, or a name derived from one (the
// waveform's view, the report's figures), would write. Nothing is written then.
TEST_F(Outputs, OutputsAreRegularFilesNoneReplacingAnother) {
  const std::string base = "run --gradient 16MiB --steps 1 --no-colocated -q ";
  std::ofstream(dir_ / "precious.txt") << "precious\n";
  fs::create_symlink(dir_ / "precious.txt", dir_ / "link.json");
  fs::create_symlink(dir_ / "nowhere.json", dir_ / "dangling.json");
  ASSERT_EQ(::mkfifo((dir_ / "pipe.json").c_str(), 0600), 0);
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"--json link.json",
       "--json: expected a regular file or a new one, not a symbolic link, "
       "got 'link.json'"},
      {"--stats dangling.json",
       "--stats: expected a regular file or a new one, not a symbolic "
       "link, got 'dangling.json'"},
      {"--journey pipe.json", "--journey: expected a regular file or a new one, got 'pipe.json'"},
      {"--vcd /dev/null", "--vcd: expected a regular file or a new one, got '/dev/null'"},
      {"--json w.gtkw --vcd w.vcd",
       "--vcd: expected its GTKWave view in a file other than "
       "--json's output, got 'w.gtkw'"},
      {"--journey r.links.png --report r.md",
       "--report: expected its figure in a file other "
       "than --journey's output, got 'r.links.png'"},
      {"--vcd r.alignment.png --gtkw v.gtkw --report r.md",
       "--report: expected its figure in a file other than --vcd's output, got "
       "'r.alignment.png'"},
  };
  for (const auto& [args, error] : refused) {
    const Output o = aggnet(base + args);
    EXPECT_EQ(o.status, 2) << args;
    EXPECT_EQ(o.err, "aggnet run: " + error + "\n") << args;
  }
  EXPECT_EQ(read_text(dir_ / "precious.txt"), "precious\n");
  EXPECT_FALSE(fs::exists(dir_ / "nowhere.json"));
  for (const char* name : {"w.gtkw", "w.vcd", "r.md", "r.links.png", "r.alignment.png", "v.gtkw"})
    EXPECT_FALSE(fs::exists(dir_ / name)) << name;
  EXPECT_TRUE(fs::is_fifo(dir_ / "pipe.json"));
  // One file however it is spelt, an input as an output, a derived view that is a link or
  // a FIFO, and the other commands' outputs.
  fs::copy_file(std::string(AGGNET_SOURCE_DIR) + "/platforms/nine_city.yaml", dir_ / "p.yaml");
  fs::create_symlink(dir_ / "precious.txt", dir_ / "v.gtkw");
  ASSERT_EQ(::mkfifo((dir_ / "f.gtkw").c_str(), 0600), 0);
  std::ofstream(dir_ / "x.db") << "not a database\n";
  const std::vector<std::pair<std::string, std::string>> more = {
      {"run --gradient 16MiB --steps 1 --no-colocated -q --json a.json --stats ./a.json",
       "aggnet run: --json: expected a file other than --stats's, got 'a.json'"},
      {"run --gradient 16MiB --steps 1 --no-colocated -q --platform p.yaml --json ./p.yaml",
       "aggnet run: --json: expected a file other than the --platform input, got './p.yaml'"},
      {"run --gradient 16MiB --steps 1 --no-colocated -q --vcd v.vcd",
       "aggnet run: --vcd: expected a regular file or a new one, not a symbolic link, got "
       "'v.gtkw'"},
      {"run --gradient 16MiB --steps 1 --no-colocated -q --vcd f.vcd",
       "aggnet run: --vcd: expected a regular file or a new one, got 'f.gtkw'"},
      {"schedule --platform p.yaml --out p.yaml",
       "aggnet schedule: --out: expected a file other than the --platform input, got 'p.yaml'"},
      {"sweep export x.db --csv ./x.db",
       "aggnet sweep export: --csv: expected a file other than the database x.db, got './x.db'"},
      {"sweep export x.db --csv link.json",
       "aggnet sweep export: --csv: expected a regular file or a new one, not a symbolic link, "
       "got 'link.json'"},
  };
  for (const auto& [args, error] : more) {
    const Output o = aggnet(args);
    EXPECT_EQ(o.status, 2) << args;
    EXPECT_EQ(o.err, error + "\n") << args;
  }
  EXPECT_EQ(read_text(dir_ / "precious.txt"), "precious\n");
  EXPECT_EQ(read_text(dir_ / "x.db"), "not a database\n");
  for (const char* name : {"a.json", "v.vcd", "f.vcd"})
    EXPECT_FALSE(fs::exists(dir_ / name)) << name;
  // The same outputs, apart: written.
  const Output apart = aggnet(base + "--json w.json --vcd w.vcd --report r.md --journey j.txt");
  EXPECT_EQ(apart.status, 0) << apart.err;
  for (const char* name : {"w.json", "w.vcd", "w.gtkw", "r.md", "r.links.png", "j.txt"})
    EXPECT_TRUE(fs::is_regular_file(dir_ / name)) << name;
}

// Issue 34: "-" is the standard output for every output; the table then stays off it.
TEST_F(Outputs, DashIsTheStandardOutput) {
  const std::string base = "run --gradient 16MiB --steps 1 --no-colocated ";
  const Output j = aggnet(base + "--json -");
  ASSERT_EQ(j.status, 0) << j.err;
  const json r = json::parse(j.out);  // the JSON alone
  EXPECT_EQ(r["summary"]["steps"].get<int>(), 1);
  EXPECT_FALSE(fs::exists(dir_ / "-"));
  const Output stats = aggnet(base + "--stats -");
  ASSERT_EQ(stats.status, 0) << stats.err;
  EXPECT_EQ(stats.out.rfind("instance,", 0), 0u) << stats.out.substr(0, 200);
  const Output vcd = aggnet(base + "--vcd -");
  ASSERT_EQ(vcd.status, 0) << vcd.err;
  EXPECT_EQ(vcd.out.rfind("$comment", 0), 0u) << vcd.out.substr(0, 200);
  EXPECT_FALSE(fs::exists(dir_ / "-"));
  EXPECT_FALSE(fs::exists(dir_ / "-.gtkw"));
  const Output two = aggnet(base + "--json - --stats -");
  EXPECT_EQ(two.status, 2);
  EXPECT_EQ(two.err, "aggnet run: --json: expected a file other than --stats's, got '-'\n");
  const std::string line3 = std::string(AGGNET_SOURCE_DIR) + "/tests/workflow/data/line3.yaml";
  const Output sizing =
      aggnet("size-buffers --platform " + line3 +
             " --schedule all-to-all --gradient 16MiB --chunk 256KiB -q --json -");
  ASSERT_EQ(sizing.status, 0) << sizing.err;
  EXPECT_NO_THROW(json::parse(sizing.out)) << sizing.out;
  // schedule --out -: the winner's YAML is the standard output (a schedule `run` loads),
  // the ranking table goes to stderr.
  const Output winner = aggnet("schedule --platform " + line3 + " --gradient 16MiB --out -");
  ASSERT_EQ(winner.status, 0) << winner.err;
  EXPECT_NE(winner.err.find("rank"), std::string::npos) << winner.err;
  EXPECT_EQ(winner.out.find("rank"), std::string::npos) << winner.out;
  std::ofstream(dir_ / "winner.yaml") << winner.out;
  EXPECT_EQ(aggnet("run --platform " + line3 + " --schedule winner.yaml --steps 1 -q").status, 0);
  EXPECT_FALSE(fs::exists(dir_ / "-"));
}

// Issue 34: a duplicate key names the line of its first occurrence too.
TEST_F(Outputs, DuplicateYamlKeyNamesBothLines) {
  const std::string line3 = std::string(AGGNET_SOURCE_DIR) + "/tests/workflow/data/line3.yaml";
  std::string platform = read_text(line3);
  platform.replace(platform.find("name: line3"), 11, "name: line3\nname: again");
  std::ofstream(dir_ / "dup.yaml") << platform;
  const Output o = aggnet("run --platform dup.yaml");
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(o.err, "dup.yaml:5: name: duplicate key (first given on line 4)\n");
  std::ofstream(dir_ / "s.yaml") << "name: s\nbase:\n  gradient: 8MiB\n  gradient: 16MiB\naxes:\n"
                                    "  - option: buffer\n    values: [8MiB]\n";
  const Output sweep = aggnet("sweep s.yaml --dry-run");
  EXPECT_EQ(sweep.status, 2);
  EXPECT_NE(sweep.err.find("s.yaml:4: base.gradient: duplicate key (first given on line 3)"),
            std::string::npos)
      << sweep.err;
}

// Issue 34: did-you-mean for choices, schedules, commands and sweep-spec keys.
TEST_F(Outputs, DidYouMeanEverywhere) {
  struct Case {
    std::string args, expected;
  };
  const std::vector<Case> cases = {
      {"run --flow-control credits", "(did you mean 'credit'?)"},
      {"run --schedule all2all", "(did you mean 'all-to-all'?)"},
      {"run --alignment arival", "(did you mean 'arrival'?)"},
      {"rnu", "aggnet: rnu: unknown command (did you mean 'run'?)\n"},
      {"size-buffer", "aggnet: size-buffer: unknown command (did you mean 'size-buffers'?)\n"},
  };
  for (const auto& c : cases) {
    const Output o = aggnet(c.args);
    EXPECT_EQ(o.status, 2) << c.args;
    EXPECT_NE(o.err.find(c.expected), std::string::npos) << c.args << "\n" << o.err;
  }
  // --fault: a link's unknown site names the closest link, else the closest site; one line.
  const std::vector<Case> faults = {
      {"run --fault down:lon-nyk@1s",
       "aggnet run: --fault: down: unknown site 'nyk' in lon-nyk (did you mean 'lon-nyc'?)\n"},
      {"run --fault down:lon-chicago@1s",
       "aggnet run: --fault: down: unknown site 'chicago' in lon-chicago (did you mean 'chi'?)\n"},
      {"run --fault stall:london@1s-2s",
       "aggnet run: --fault: stall: unknown site 'london' (did you mean 'lon'?)\n"},
  };
  for (const auto& c : faults) {
    const Output o = aggnet(c.args);
    EXPECT_EQ(o.status, 2) << c.args;
    EXPECT_EQ(o.err, c.expected) << c.args;
  }
  std::ofstream(dir_ / "axis.yaml") << "name: s\naxes:\n  - option: bufer\n    values: [8MiB]\n";
  const Output axis = aggnet("sweep axis.yaml --dry-run");
  EXPECT_EQ(axis.status, 2);
  EXPECT_NE(axis.err.find("axis.yaml:3: axes[0].option: unknown run option (did you mean "
                          "'buffer'?)"),
            std::string::npos)
      << axis.err;
  std::ofstream(dir_ / "base.yaml") << "name: s\nbase:\n  bufer: 8MiB\naxes:\n"
                                       "  - option: schedule\n    values: [ring]\n";
  const Output base = aggnet("sweep base.yaml --dry-run");
  EXPECT_NE(base.err.find("base.bufer: unknown run option (did you mean 'buffer'?)"),
            std::string::npos)
      << base.err;
  std::ofstream(dir_ / "top.yaml") << "name: s\naxis:\n  - option: schedule\n";
  EXPECT_NE(aggnet("sweep top.yaml --dry-run").err.find("(did you mean 'axes'?)"),
            std::string::npos);
}

// Issue 34: one error convention. A command-line error reads
// "aggnet <command>: --<option>[ <item>]: expected ..." whoever raised it (the option
// table, the platform loader for --set, the schedule parser, --trace, the sweep runner).
TEST_F(Outputs, ErrorPrefixesAreOneConvention) {
  const std::string spec = std::string(AGGNET_SOURCE_DIR) + "/sweeps/ablation.yaml";
  struct Case {
    std::string args, prefix;
  };
  const std::vector<Case> cases = {
      {"run --set defaults.link.bandwidth=fast", "aggnet run: --set defaults.link.bandwidth: "},
      {"run --set defaults.link.bandwith=1Gbps", "aggnet run: --set defaults.link.bandwith: "},
      {"run --schedule rotating-0", "aggnet run: --schedule: expected"},
      {"run --schedule p2p:lon-nycx0", "aggnet run: --schedule: "},
      {"run --schedule nonsense", "aggnet run: --schedule: expected"},
      {"run --vcd v.vcd --trace foo", "aggnet run: --trace foo: expected"},
      {"run --fault loss:lon-nyc=2", "aggnet run: --fault: expected"},
      {"run --vcd v.vcd --trace sites=xyz", "aggnet run: --trace sites: expected"},
      {"schedule --set defaults.link.delay=1", "aggnet schedule: --set defaults.link.delay: "},
      {"size-buffers --schedule all2all", "aggnet size-buffers: --schedule: expected"},
      {"sweep " + spec + " --dry-run --timeout 0s", "aggnet sweep: --timeout: expected"},
      {"sweep " + spec + " --dry-run --metric nope", "aggnet sweep: --metric: "},
  };
  for (const auto& c : cases) {
    const Output o = aggnet(c.args);
    EXPECT_EQ(o.status, 2) << c.args;
    EXPECT_EQ(o.err.rfind(c.prefix, 0), 0u) << c.args << "\n" << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  }
}

// The keys `doc` lists between its "keys" markers, by object path ("" for the top level,
// "steps[].groups[]").
std::map<std::string, std::set<std::string>> documented_keys(const std::string& name) {
  const std::string doc = read_text(std::string(AGGNET_SOURCE_DIR) + "/" + name);
  const auto begin = doc.find("<!-- keys: begin -->"), end = doc.find("<!-- keys: end -->");
  EXPECT_NE(begin, std::string::npos);
  EXPECT_NE(end, std::string::npos);
  std::string block = doc.substr(begin, end - begin);
  std::map<std::string, std::set<std::string>> keys;
  static const std::regex item(R"(\n- ([^:]+):)"), word("`([^`]+)`");
  std::vector<std::pair<std::size_t, std::string>> starts;
  for (std::sregex_iterator it(block.begin(), block.end(), item), e; it != e; ++it) {
    std::string path = (*it)[1];
    path.erase(std::remove(path.begin(), path.end(), '`'), path.end());
    starts.emplace_back(it->position() + it->length(), path == "top level" ? "" : path);
  }
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const std::size_t stop =
        i + 1 < starts.size() ? block.rfind("\n-", starts[i + 1].first) : block.size();
    std::string text = block.substr(starts[i].first, stop - starts[i].first);
    // `colocated`: the keys after the last colon (the ones before it are left out).
    if (starts[i].second == "colocated") text = text.substr(text.rfind(':'));
    for (std::sregex_iterator it(text.begin(), text.end(), word), e; it != e; ++it)
      keys[starts[i].second].insert((*it)[1]);
  }
  return keys;
}

// Every key of `value` by object path; objects keyed by data are not entered.
void collect_keys(const json& value, const std::string& path,
                  std::map<std::string, std::set<std::string>>& out) {
  static const std::set<std::string> data_keyed = {"options.given", "options.resolved.buffer_bytes",
                                                   "alignment[].members[].send_offset_ms"};
  if (value.is_array()) {
    for (const auto& child : value) collect_keys(child, path + "[]", out);
    return;
  }
  if (!value.is_object() || data_keyed.count(path)) return;
  for (const auto& [key, child] : value.items()) {
    out[path].insert(key);
    if (path != "invariants") collect_keys(child, path.empty() ? key : path + "." + key, out);
  }
}

// --routing load-aware: the triads' planned metrics, against delay routing's five trees on
// the busiest hop of a nine-city triad round (docs/findings.md, point 3); refused, exit 2
// and no report, for a schedule that does not route multicast trees.
TEST_F(Outputs, LoadAwareRoutingReportsItsMetricsOrRefuses) {
  // Bandwidth-bound (at 16 MiB the latencies dominate and no metric pays off).
  ASSERT_EQ(aggnet("run --gradient 256MiB --buffer 16MiB --schedule triads --steps 1 -q "
                   "--no-colocated --routing load-aware --json la.json")
                .status,
            0);
  const json r = json::parse(read_text(dir_ / "la.json"));
  const json& routing = r["routing"];
  EXPECT_EQ(r["options"]["resolved"]["routing"], "load-aware");
  std::size_t wan_directions = 0;
  for (const auto& l : r["links"]) wan_directions += l["kind"] == "wan";
  EXPECT_EQ(routing["links"].size() * 2, wan_directions);  // one metric per WAN link
  EXPECT_EQ(routing["busiest_round_streams"]["before"].get<int>(), 5);
  EXPECT_LT(routing["busiest_round_streams"]["after"].get<int>(), 5);
  EXPECT_LE(routing["analytic_mean_round_s"]["after"].get<double>(),
            routing["analytic_mean_round_s"]["before"].get<double>());
  const Output o = aggnet("run --schedule ring --routing load-aware -q --json refused.json");
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(o.err,
            "aggnet run: --routing: expected a group-average schedule with load-aware routing "
            "(ring routes its own paths), got 'load-aware'\n");
  EXPECT_FALSE(fs::exists(dir_ / "refused.json"));
}

// Every key `written` has is in `doc`'s list, and every listed key is written.
void expect_documented(const std::map<std::string, std::set<std::string>>& written,
                       const std::string& doc) {
  const auto documented = documented_keys(doc);
  for (const auto& [path, keys] : written) {
    ASSERT_TRUE(documented.count(path)) << "object '" << path << "' is not in " << doc;
    for (const auto& key : keys)
      EXPECT_TRUE(documented.at(path).count(key)) << path << ": '" << key << "' undocumented";
  }
  for (const auto& [path, keys] : documented) {
    for (const auto& key : keys)
      EXPECT_TRUE(written.count(path) && written.at(path).count(key))
          << path << ": '" << key << "' documented but never written";
  }
}

// Issue 34: docs/run-json.md lists every key the run JSON has, and only those.
TEST_F(Outputs, RunJsonKeysAreDocumented) {
  std::map<std::string, std::set<std::string>> written;
  const std::vector<std::string> runs = {
      "run --gradient 16MiB --steps 2 -q --json k.json --loss 0.01 --fault "
      "down:lon-nyc@1.05s-1.2s --fault stall:tyo@0.5s-0.6s",
      "run --gradient 16MiB --steps 1 -q --no-colocated --json k.json --flow-control credit "
      "--routing load-aware",
      "run --gradient 16MiB -q --no-colocated --json k.json --schedule ring:sendrecv",
      "run --gradient 16MiB -q --no-colocated --json k.json --schedule p2p:lon-nyc",
      "run --gradient 16MiB -q --no-colocated --json k.json --schedule parameter-server:lon"};
  for (const auto& args : runs) {
    const Output o = aggnet(args);
    ASSERT_EQ(o.status, 0) << args << "\n" << o.err;
    collect_keys(json::parse(read_text(dir_ / "k.json")), "", written);
  }
  expect_documented(written, "docs/run-json.md");
}

// docs/buffer-sizing.md lists every key the size-buffers JSON has, and only those: three
// sites in one group, --heterogeneous with jitter (one run has every key). The memory tier of
// each site's size as the run JSON gives it (docs/memory-tiers.md): the answer, whole
// slots of 256 KiB, fits on-chip (1000 USD/GiB, 1 pJ/bit), accessed at 2 x 3 x the
// group's unconstrained rate.
TEST_F(Outputs, SizingJsonKeysAreDocumented) {
  std::map<std::string, std::set<std::string>> written;
  const std::string sizing = "size-buffers --platform " + std::string(AGGNET_SOURCE_DIR) +
                             "/tests/workflow/data/line3.yaml --schedule all-to-all --gradient "
                             "2MiB --chunk 256KiB --workers 2 -q --json k.json";
  {
    const Output o = aggnet(sizing + " --heterogeneous --jitter on");
    ASSERT_EQ(o.status, 0) << o.err;
    const json r = json::parse(read_text(dir_ / "k.json"));
    collect_keys(r, "", written);
    double cost = 0, power = 0;
    for (const auto& site : r["sites"]) {
      const double gbps = 6 * site["unconstrained_rate_gbps"].get<double>();
      const double usd = 1000.0 * r["uniform"]["simulated_bytes"].get<double>() / (1 << 30);
      EXPECT_EQ(site["memory_tier"], "on-chip");
      EXPECT_NEAR(site["memory_access_gbps"].get<double>(), gbps, 1e-9 * gbps);
      EXPECT_DOUBLE_EQ(site["memory_cost_usd"].get<double>(), usd);
      EXPECT_NEAR(site["memory_power_w"].get<double>(), 1e-12 * gbps * 1e9, 1e-12);
      cost += usd;
      power += 1e-12 * gbps * 1e9;
    }
    EXPECT_EQ(r["uniform"]["memory_tier"], "on-chip");
    EXPECT_DOUBLE_EQ(r["uniform"]["memory_cost_usd"].get<double>(), cost);
    EXPECT_NEAR(r["uniform"]["memory_power_w"].get<double>(), power, 1e-12);
  }
  expect_documented(written, "docs/buffer-sizing.md");
}

// docs/memory-tiers.md: the tier a run's buffer needs. With 4 GiB per site (past on-chip's
// 32 MiB, within HBM's 8 GiB) the buffer never limits the triads, so each site's access
// rate is 2 x 3 x its group's pacing rate; cost 30 USD/GiB x 4 GiB = 120 USD per site,
// power 7 pJ/bit x the access rate. With HBM set to 2 GiB: DDR, 5 USD/GiB x 4 = 20 USD.
TEST_F(Outputs, RunMemoryTier) {
  const std::string run =
      "run --schedule triads --gradient 16MiB --steps 1 --no-colocated -q "
      "--buffer 4GiB --json m.json";
  for (const auto& [set, tier, usd_per_gib, pj] :
       {std::tuple{"", "HBM", 30.0, 7.0},
        std::tuple{" --set memory_tiers.hbm.capacity=2GiB", "DDR", 5.0, 28.0}}) {
    const Output o = aggnet(run + set);
    ASSERT_EQ(o.status, 0) << o.err;
    const json j = json::parse(read_text(dir_ / "m.json"));
    std::map<std::string, double> peak_gbps;  // 2 x members x pacing rate, per site
    for (const auto& g : j["alignment"])
      for (const auto& m : g["members"]) {
        double& p = peak_gbps[m["site"].get<std::string>()];
        p = std::max(p, 2.0 * static_cast<double>(g["members"].size()) *
                            g["pacing_rate_gbps"].get<double>());
      }
    double cost = 0, power = 0;
    for (const auto& site : j["sites"]) {
      const double access = peak_gbps.at(site["site"].get<std::string>());
      EXPECT_EQ(site["memory_tier"], tier) << set;
      EXPECT_NEAR(site["memory_access_gbps"].get<double>(), access, 1e-9 * access);
      EXPECT_DOUBLE_EQ(site["memory_cost_usd"].get<double>(), usd_per_gib * 4);
      EXPECT_NEAR(site["memory_power_w"].get<double>(), pj * 1e-12 * access * 1e9, 1e-9);
      cost += usd_per_gib * 4;
      power += pj * 1e-12 * access * 1e9;
    }
    EXPECT_EQ(j["memory"]["tier"], tier);
    EXPECT_DOUBLE_EQ(j["summary"]["memory_cost_usd"].get<double>(), cost);
    EXPECT_NEAR(j["summary"]["memory_power_w"].get<double>(), power, 1e-9);
    EXPECT_EQ(j["memory"]["tiers"][1]["capacity_bytes"], set[0] ? 2ull << 30 : 8ull << 30);
  }
  const Output bad = aggnet("run --set memory_tiers.hmb.cost=1");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("memory_tiers.hmb.cost: unknown key 'hmb'"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("(did you mean 'hbm'?)"), std::string::npos) << bad.err;
}

// The run table's tier line: which sites need which tier and the sums. 16 MiB fits on-chip
// (1000 USD/GiB: 15.625 USD a site), 4 GiB needs HBM (30 USD/GiB: 120 USD): 7 x 15.625 +
// 2 x 120 = 349.375 USD; the power per site is its tier's energy x 2 x 3 x its group's
// pacing rate (1 pJ/bit on-chip, 7 in HBM), summed.
TEST_F(Outputs, RunTableMemoryTierLine) {
  const Output o = aggnet(
      "run --schedule triads --gradient 16MiB --steps 1 --no-colocated --json m.json --set "
      "defaults.fpga.buffer=16MiB --set sites.lon.fpga.buffer=4GiB --set "
      "sites.tyo.fpga.buffer=4GiB");
  ASSERT_EQ(o.status, 0) << o.err;
  const json j = json::parse(read_text(dir_ / "m.json"));
  std::map<std::string, double> peak_gbps;
  for (const auto& g : j["alignment"])
    for (const auto& m : g["members"]) {
      double& p = peak_gbps[m["site"].get<std::string>()];
      p = std::max(p, 6.0 * g["pacing_rate_gbps"].get<double>());
    }
  double power_w = 0;
  for (const auto& [site, gbps] : peak_gbps)
    power_w += (site == "lon" || site == "tyo" ? 7.0 : 1.0) * 1e-12 * gbps * 1e9;
  char expected[200];
  std::snprintf(expected, sizeof expected,
                "  memory tier              on-chip at nyc, chi, lax, ams, fra, sin, bom; HBM at "
                "lon, tyo; 349.38 USD, access power %.2f W\n",
                power_w);
  EXPECT_NE(o.out.find(expected), std::string::npos) << expected << "\n" << o.out;
  const Output same = aggnet(
      "run --schedule triads --gradient 16MiB --steps 1 --no-colocated "
      "--buffer 4GiB");
  EXPECT_NE(same.out.find("  memory tier              HBM at every site; 1080.00 USD"),
            std::string::npos)
      << same.out;
  // A buffer no tier holds has no price: unknown in the table, null in the JSON (not 0,
  // which a sweep ranking by cost would take for the cheapest).
  const Output none = aggnet(
      "run --schedule triads --gradient 16MiB --steps 1 --no-colocated --buffer 128GiB "
      "--json none.json");
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_NE(none.out.find("  memory tier              none fits at every site; cost and access "
                          "power unknown (no tier holds the buffer at its access rate)\n"),
            std::string::npos)
      << none.out;
  const json n = json::parse(read_text(dir_ / "none.json"));
  EXPECT_EQ(n["memory"]["tier"], "none fits");
  for (const json* v : {&n["memory"]["cost_usd"], &n["memory"]["power_w"],
                        &n["summary"]["memory_cost_usd"], &n["summary"]["memory_power_w"],
                        &n["sites"][0]["memory_cost_usd"], &n["sites"][0]["memory_power_w"]})
    EXPECT_TRUE(v->is_null()) << *v;
}

// A reduction tree has no co-located reference: the table says so instead of leaving the
// slowdown lines out silently, and the JSON has no slowdown.
TEST_F(Outputs, RunTableSaysWhenThereIsNoReference) {
  const Output o = aggnet("run --schedule reduction-forest --gradient 16MiB --json t.json");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("  co-located reference     none for reduction trees"), std::string::npos)
      << o.out;
  EXPECT_FALSE(
      json::parse(read_text(dir_ / "t.json"))["summary"].contains("slowdown_vs_colocated"));
  const Output group = aggnet("run --schedule triads --gradient 16MiB --steps 1");
  ASSERT_EQ(group.status, 0) << group.err;
  EXPECT_NE(group.out.find("  slowdown vs co-located   "), std::string::npos) << group.out;
  EXPECT_EQ(group.out.find("co-located reference     none"), std::string::npos) << group.out;
}

// aggnet compare: the inputs that differ and the numbers that differ, against the first
// run, B - A and (B - A) / A computed here from the two reports.
TEST_F(Outputs, CompareShowsWhichInputsAndNumbersDiffer) {
  const std::string base = "run --gradient 16MiB --no-colocated -q --steps 2 ";
  ASSERT_EQ(aggnet(base + "--buffer 8MiB --json a.json").status, 0);
  ASSERT_EQ(aggnet(base + "--buffer 32MiB --json b.json").status, 0);
  ASSERT_EQ(aggnet(base + "--buffer 8MiB --json c.json").status, 0);
  const json a = json::parse(read_text(dir_ / "a.json"));
  const json b = json::parse(read_text(dir_ / "b.json"));
  const Output o = aggnet("compare a.json b.json --json cmp.json");
  ASSERT_EQ(o.status, 0) << o.err;
  const json cmp = json::parse(read_text(dir_ / "cmp.json"));
  // Inputs: the given buffer and the nine resolved buffers, nothing else.
  std::set<std::string> inputs;
  for (const auto& row : cmp["inputs"]) inputs.insert(row["key"].get<std::string>());
  std::set<std::string> expected = {"options.given.buffer"};
  for (const auto& site : a["sites"])
    expected.insert("options.resolved.buffer_bytes." + site["site"].get<std::string>());
  EXPECT_EQ(inputs, expected);
  // Numbers: exactly the summary keys whose values differ, with their differences (the
  // kernel's cycles, `events`, with --all only).
  std::set<std::string> differing;
  for (const auto& [key, value] : a["summary"].items())
    if (value != b["summary"][key] && key != "events") differing.insert("summary." + key);
  std::set<std::string> listed;
  for (const auto& row : cmp["numbers"]) {
    const std::string key = row["key"];
    listed.insert(key);
    const double x = a["summary"][key.substr(8)].get<double>();
    const double y = b["summary"][key.substr(8)].get<double>();
    EXPECT_EQ(row["values"], json({a["summary"][key.substr(8)], b["summary"][key.substr(8)]}));
    EXPECT_TRUE(row["difference"][0].is_null());
    EXPECT_NEAR(row["difference"][1].get<double>(), y - x, 1e-9 * std::fabs(y - x) + 1e-15) << key;
    if (x != 0) {
      EXPECT_NEAR(row["relative"][1].get<double>(), (y - x) / x, 1e-9) << key;
    }
  }
  EXPECT_EQ(listed, differing);
  EXPECT_TRUE(differing.count("summary.buffer_high_water_bytes_max"));
  // The table names the runs and both sections.
  EXPECT_NE(o.out.find("  A  a.json: triads on nine_city"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Inputs that differ"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("summary.buffer_high_water_bytes_max"), std::string::npos) << o.out;
  // The same inputs: nothing differs (events included: the simulation is deterministic),
  // and compare says so in one line, exit 0 (it printed two section headers with nothing
  // under them).
  const Output same = aggnet("compare a.json c.json");
  ASSERT_EQ(same.status, 0) << same.err;
  EXPECT_EQ(same.out,
            "Runs a.json and c.json are identical (inputs and summary numbers; --all compares "
            "every number)\n");
  const Output same_all = aggnet("compare a.json c.json a.json --all");
  ASSERT_EQ(same_all.status, 0) << same_all.err;
  EXPECT_EQ(same_all.out,
            "Runs a.json, c.json and a.json are identical (inputs and every number)\n");
  // --all adds per-site numbers, named by site.
  const Output all = aggnet("compare a.json b.json --all");
  EXPECT_NE(all.out.find("sites[lon].high_water_bytes"), std::string::npos) << all.out;
  // Three runs: each against the first.
  const Output three = aggnet("compare a.json b.json c.json --json -");
  ASSERT_EQ(three.status, 0) << three.err;
  const json t = json::parse(three.out);
  EXPECT_EQ(t["runs"].size(), 3u);
  for (const auto& row : t["numbers"]) EXPECT_EQ(row["difference"].size(), 3u);
  // Bad input: one line, exit 2.
  const Output one = aggnet("compare a.json");
  EXPECT_EQ(one.status, 2);
  EXPECT_EQ(one.err, "aggnet compare: expected at least two run JSON files (aggnet run --json)\n");
  std::ofstream(dir_ / "x.json") << "{}";
  const Output bad = aggnet("compare a.json x.json");
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err, "x.json: expected a run JSON written by aggnet run --json\n");
  EXPECT_EQ(aggnet("compare a.json b.json --jsn x").err,
            "aggnet compare: --jsn: unknown option (did you mean '--json'?)\n");
}

// aggnet compare prints a section only for what differs: runs whose inputs differ and
// whose numbers do not get the inputs' section alone, and the other way round (each
// section printed its header, and its columns' header, with nothing under them).
TEST_F(Outputs, CompareLeavesOutSectionsWithoutDifferences) {
  const json a = run("--steps 1");
  std::ofstream(dir_ / "a.json") << a.dump();
  json slower = a, renamed = a;
  slower["summary"]["step_time_s_mean"] = 2 * a["summary"]["step_time_s_mean"].get<double>();
  std::ofstream(dir_ / "slower.json") << slower.dump();
  renamed["options"]["given"]["seed"] = "12345";
  std::ofstream(dir_ / "renamed.json") << renamed.dump();
  const auto lines_of = [](const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  };
  const std::string runs = "Runs\n  A  a.json: triads on nine_city\n";
  const Output numbers = aggnet("compare a.json slower.json");
  ASSERT_EQ(numbers.status, 0) << numbers.err;
  EXPECT_EQ(
      numbers.out.rfind(runs + "  B  slower.json: triads on nine_city\n\nNumbers that differ\n", 0),
      0u)
      << numbers.out;
  EXPECT_EQ(numbers.out.find("Inputs"), std::string::npos) << numbers.out;
  auto lines = lines_of(numbers.out);
  ASSERT_EQ(lines.size(), 7u) << numbers.out;  // Runs, A, B, blank, title, columns, the row
  EXPECT_EQ(lines[6].rfind("  summary.step_time_s_mean ", 0), 0u) << numbers.out;
  EXPECT_NE(lines[6].find("+100.00%"), std::string::npos) << numbers.out;
  const Output inputs = aggnet("compare a.json renamed.json");
  ASSERT_EQ(inputs.status, 0) << inputs.err;
  EXPECT_EQ(
      inputs.out.rfind(runs + "  B  renamed.json: triads on nine_city\n\nInputs that differ\n", 0),
      0u)
      << inputs.out;
  EXPECT_EQ(inputs.out.find("Numbers"), std::string::npos) << inputs.out;
  lines = lines_of(inputs.out);
  ASSERT_EQ(lines.size(), 7u) << inputs.out;
  EXPECT_EQ(lines[6].rfind("  options.given.seed ", 0), 0u) << inputs.out;
  EXPECT_NE(lines[6].find(" 12345"), std::string::npos) << inputs.out;
}

// aggnet compare checks what it reads of a report before comparing: a corrupt one is one
// line naming the file and the key, exit 2, and no --json written (it once compared a
// string with numbers, or stopped on a JSON type error with exit 1).
// A waveform changes the kernel's cycles (summary.events: the calendar stops running
// ahead), no simulated result: compare leaves them to --all. Counts differ exactly over
// the whole unsigned 64-bit range (they were subtracted as int64).
TEST_F(Outputs, CompareLeavesTheKernelsCyclesToAllAndSubtractsCountsExactly) {
  ASSERT_EQ(aggnet("run --gradient 4MiB --steps 1 --no-colocated -q --json a.json").status, 0);
  ASSERT_EQ(
      aggnet("run --gradient 4MiB --steps 1 --no-colocated -q --json b.json --vcd w.vcd").status,
      0);
  const json a = json::parse(read_text(dir_ / "a.json"));
  const json b = json::parse(read_text(dir_ / "b.json"));
  ASSERT_NE(a["summary"]["events"], b["summary"]["events"]);
  const Output summary = aggnet("compare a.json b.json");
  EXPECT_EQ(summary.out.find("summary.events"), std::string::npos) << summary.out;
  EXPECT_NE(summary.out.find("are identical"), std::string::npos) << summary.out;
  EXPECT_NE(aggnet("compare a.json b.json --all").out.find("summary.events"), std::string::npos);

  json big = a, bigger = a;
  big["summary"]["events"] = std::uint64_t{9223372036854775808u};  // 2^63
  bigger["summary"]["events"] = std::uint64_t{18446744073709551615u};
  big["summary"]["slot_stalls_total"] = std::uint64_t{18446744073709551615u};
  bigger["summary"]["slot_stalls_total"] = std::uint64_t{1};
  std::ofstream(dir_ / "big.json") << big.dump();
  std::ofstream(dir_ / "bigger.json") << bigger.dump();
  ASSERT_EQ(aggnet("compare big.json bigger.json --all --json d.json").status, 0);
  std::map<std::string, json> difference;
  const json document = json::parse(read_text(dir_ / "d.json"));
  for (const auto& row : document["numbers"])
    difference[row["key"].get<std::string>()] = row["difference"][1];
  EXPECT_EQ(difference["summary.events"], json(std::uint64_t{9223372036854775807u}));
  EXPECT_EQ(difference["summary.slot_stalls_total"].get<double>(), -18446744073709551614.0);
}

TEST_F(Outputs, CompareRefusesCorruptReports) {
  const json a = run("--steps 1");
  std::ofstream(dir_ / "a.json") << a.dump();
  const auto refused = [&](const std::string& name, const std::function<void(json&)>& corrupt,
                           const std::string& flags = "") {
    json b = a;
    corrupt(b);
    std::ofstream(dir_ / name) << b.dump();
    const Output o = aggnet("compare a.json " + name + " --json cmp.json " + flags);
    EXPECT_EQ(o.status, 2) << name;
    EXPECT_FALSE(fs::exists(dir_ / "cmp.json")) << name;
    return o.err;
  };
  EXPECT_EQ(refused("b.json", [](json& r) { r["summary"]["step_time_s_mean"] = "abc"; }),
            "b.json: summary.step_time_s_mean: expected a number, got \"abc\"\n");
  EXPECT_EQ(refused("c.json", [](json& r) { r.erase("summary"); }),
            "c.json: summary: expected an object, but the key is missing\n");
  EXPECT_EQ(refused("d.json", [](json& r) { r["schedule"] = 5; }),
            "d.json: schedule: expected a string, got 5\n");
  EXPECT_EQ(refused("e.json", [](json& r) { r["options"].erase("resolved"); }),
            "e.json: options.resolved: expected an object, but the key is missing\n");
  EXPECT_EQ(refused("f.json", [](json& r) { r["links"][1]["from"] = 5; }),
            "f.json: links[1].from: expected a string, got 5\n");
  // A number in one run and text in another, where only --all reads it: the text is wrong.
  const std::string site = a["sites"][2]["site"];
  EXPECT_EQ(refused(
                "g.json", [](json& r) { r["sites"][2]["high_water_bytes"] = "lots"; }, "--all"),
            "g.json: sites[" + site +
                "].high_water_bytes: expected a number (as in a.json), got \"lots\"\n");
  std::ofstream(dir_ / "h.json") << a.dump().substr(0, 40);
  const Output cut = aggnet("compare a.json h.json");
  EXPECT_EQ(cut.status, 2);
  EXPECT_EQ(cut.err.rfind("h.json:1: expected a run JSON written by aggnet run --json, got "
                          "malformed JSON (syntax error",
                          0),
            0u)
      << cut.err;
  EXPECT_EQ(std::count(cut.err.begin(), cut.err.end(), '\n'), 1) << cut.err;
  fs::create_directory(dir_ / "runs");
  const Output directory = aggnet("compare a.json runs");
  EXPECT_EQ(directory.status, 2);
  EXPECT_EQ(directory.err, "runs: expected a run JSON file (aggnet run --json), got a directory\n");
  // A number past a double's range is one line too (was a raw library error, exit 1).
  std::string huge = a.dump();
  const std::string key = "\"step_time_s_mean\":";
  const auto at = huge.find(key) + key.size();
  huge.replace(at, huge.find_first_of(",}", at) - at, "1e999999");
  std::ofstream(dir_ / "i.json") << huge;
  const Output overflow = aggnet("compare a.json i.json");
  EXPECT_EQ(overflow.status, 2);
  EXPECT_EQ(overflow.err,
            "i.json: expected a run JSON written by aggnet run --json, got number overflow "
            "parsing '1e999999'\n");
  // The uncorrupted report compares with itself, and with a run whose memory has no price
  // (null: no tier holds its buffer).
  EXPECT_EQ(aggnet("compare a.json a.json --all").status, 0);
  const json unpriced = run("--steps 1 --buffer 100GiB");
  ASSERT_TRUE(unpriced["summary"]["memory_cost_usd"].is_null());
  std::ofstream(dir_ / "j.json") << unpriced.dump();
  const Output priced = aggnet("compare a.json j.json");
  EXPECT_EQ(priced.status, 0) << priced.err;
  EXPECT_NE(priced.out.find("memory_cost_usd"), std::string::npos) << priced.out;
}

// aggnet platform: sites, links, routes and multicast trees of a platform, derived here
// from line3.yaml by hand: a --10 ms-- b --30 ms-- c.
TEST_F(Outputs, PlatformListsSitesLinksRoutesAndTrees) {
  const std::string line3 = std::string(AGGNET_SOURCE_DIR) + "/tests/workflow/data/line3.yaml";
  const Output o = aggnet("platform --platform " + line3 + " --json p.json");
  ASSERT_EQ(o.status, 0) << o.err;
  const json p = json::parse(read_text(dir_ / "p.json"));
  EXPECT_EQ(p["platform"], "line3");
  ASSERT_EQ(p["sites"].size(), 3u);
  EXPECT_EQ(p["sites"][0]["site"], "a");
  EXPECT_EQ(p["sites"][0]["compute_time_s"].get<double>(), 0.01);
  ASSERT_EQ(p["links"].size(), 2u);
  EXPECT_EQ(p["links"][1]["a"], "b");
  EXPECT_EQ(p["links"][1]["delay_ms"].get<double>(), 30.0);
  EXPECT_EQ(p["links"][1]["bandwidth_gbps"].get<double>(), 10.0);
  std::map<std::string, std::pair<double, json>> routes;
  for (const auto& r : p["routes"])
    routes[r["from"].get<std::string>() + r["to"].get<std::string>()] = {
        r["delay_ms"].get<double>(), r["path"]};
  ASSERT_EQ(routes.size(), 6u);  // n (n - 1) ordered pairs
  EXPECT_EQ(routes["ac"].first, 40.0);
  EXPECT_EQ(routes["ac"].second, json({"a", "b", "c"}));
  EXPECT_EQ(routes["cb"].first, 30.0);
  EXPECT_EQ(routes["ba"].second, json({"b", "a"}));
  // From the middle the tree uses both links once; from an end it runs along the line.
  for (const auto& t : p["trees"]) {
    EXPECT_EQ(t["links"].get<int>(), 2) << t;
    if (t["source"] == "a") {
      const std::set<json> hops(t["hops"].begin(), t["hops"].end());
      EXPECT_EQ(hops, std::set<json>({json({"a", "b"}), json({"b", "c"})})) << t;
    }
  }
  EXPECT_NE(o.out.find("Platform line3"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("a->c"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("a b c"), std::string::npos) << o.out;
  // --set applies; a bad one is the command line's error.
  const Output fast =
      aggnet("platform --platform " + line3 + " --set defaults.link.bandwidth=40Gbps --json -");
  ASSERT_EQ(fast.status, 0) << fast.err;
  EXPECT_EQ(json::parse(fast.out)["links"][0]["bandwidth_gbps"].get<double>(), 40.0);
  EXPECT_EQ(aggnet("platform --set defaults.link.bandwidth=40")
                .err.rfind("aggnet platform: --set defaults.link.bandwidth: ", 0),
            0u);
  // The map figure, from the JSON (nine_city: coordinates from the platform file).
  ASSERT_EQ(aggnet("platform --json nine.json -q").status, 2);  // no -q: unknown option
  ASSERT_EQ(aggnet("platform --json nine.json").status, 0);
  const std::string plot = "/usr/bin/python3 " + std::string(AGGNET_SOURCE_DIR) +
                           "/scripts/plot_platform.py '" + (dir_ / "nine.json").string() +
                           "' --out '" + (dir_ / "wan.png").string() + "'";
  ASSERT_EQ(std::system(plot.c_str()), 0);
  EXPECT_EQ(read_text(dir_ / "wan.png").substr(1, 3), "PNG");
}

// Beyond 100 sites the n(n-1) routes and n trees are listed only with --routes: a line of
// 101 sites, whose route a -> b is the line between them.
TEST_F(Outputs, PlatformListsRoutesOfManySitesOnlyWhenAsked) {
  {
    std::ofstream out(dir_ / "line101.yaml");
    out << "name: line101\ndefaults:\n  link: {bandwidth: 100Gbps}\nsites:\n";
    for (int i = 0; i < 101; ++i) out << "  - {code: s" << i << ", continent: EU}\n";
    out << "links:\n";
    for (int i = 0; i + 1 < 101; ++i)
      out << "  - {a: s" << i << ", b: s" << i + 1 << ", delay: 1ms}\n";
  }
  const Output quiet = aggnet("platform --platform line101.yaml --json p.json");
  ASSERT_EQ(quiet.status, 0) << quiet.err;
  const json p = json::parse(read_text(dir_ / "p.json"));
  EXPECT_EQ(p["sites"].size(), 101u);
  EXPECT_FALSE(p.contains("routes"));
  EXPECT_FALSE(p.contains("trees"));
  const Output table = aggnet("platform --platform line101.yaml");
  EXPECT_NE(table.out.find("10100 of each, not listed beyond 100 sites (--routes lists them)"),
            std::string::npos);
  ASSERT_EQ(aggnet("platform --platform line101.yaml --routes --json r.json").status, 0);
  const json r = json::parse(read_text(dir_ / "r.json"));
  ASSERT_EQ(r["routes"].size(), 101u * 100u);
  EXPECT_EQ(r["routes"][99]["to"], "s100");  // s0's last route: along the whole line
  EXPECT_EQ(r["routes"][99]["delay_ms"].get<double>(), 100.0);
  EXPECT_EQ(r["routes"][99]["path"].size(), 101u);
  EXPECT_EQ(r["trees"].size(), 101u);
}

}  // namespace
