// `aggnet sweep`: design-space sweeps (see sweeps/README.md).
//
//   aggnet sweep SPEC.yaml --out DIR [--workers N] [--timeout 10m] [--resume]
//                [--shard K/N] [--slurm [--shards N] [--wait]] [--dry-run]
//   aggnet sweep merge OUT.db IN1.db [IN2.db ...]
//   aggnet sweep export DB --csv FILE
#include <fmt/format.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "common/config_error.h"
#include "common/data_dir.h"
#include "common/units.h"
#include "config/platform_loader.h"
#include "model/faults.h"
#include "sweeps/analysis.h"
#include "sweeps/runner.h"
#include "sweeps/slurm.h"
#include "sweeps/spec.h"
#include "sweeps/store.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace aggnet {
namespace {

using namespace aggnet::sweeps;

constexpr const char* kUsage =
    "usage: aggnet sweep SPEC.yaml --out DIR [options]\n"
    "       aggnet sweep merge OUT.db IN1.db [IN2.db ...]\n"
    "       aggnet sweep export DB --csv FILE\n";

/// The running executable (children run `<it> run ...`).
std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "aggnet";
  return std::string(buf, static_cast<std::size_t>(n));
}

/// Runs scripts/plot_sweep.py on the database; warns and carries on when Python or
/// matplotlib is missing.
void make_plots(const std::string& db, const std::string& out_dir, const std::string& metric) {
  std::string script;
  if (const char* env = std::getenv("AGGNET_PLOT_SCRIPT")) script = env;
  if (script.empty()) script = (fs::path(data_dir()) / "scripts" / "plot_sweep.py").string();
  if (!fs::exists(script)) {
    std::fprintf(stderr, "aggnet sweep: warning: plots skipped: %s not found\n", script.c_str());
    return;
  }
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  std::string output;
  const std::string cmd =
      fmt::format("{} {} {} --out {} --metric {}", python, shell_quote(script), shell_quote(db),
                  shell_quote(out_dir + "/plots"), shell_quote(metric));
  int rc = run_command(cmd, output);
  if (rc == 3) {
    std::fprintf(stderr, "aggnet sweep: warning: plots skipped: %s", output.c_str());
  } else if (rc != 0) {
    std::fprintf(stderr, "aggnet sweep: warning: plotting failed (status %d): %s", rc,
                 output.c_str());
  } else {
    std::fprintf(stderr, "%s", output.c_str());
  }
}

/// CSV export, crossover verdict and plots for a complete results database.
void finish_outputs(const std::string& db_path, const std::string& out_dir,
                    const std::string& metric, bool plots) {
  ResultStore store(db_path);
  const std::string csv = (fs::path(out_dir) / "results.csv").string();
  store.export_csv(csv);
  Crossover c = analyze_crossover(store, metric);
  std::fwrite(c.text.data(), 1, c.text.size(), stdout);
  std::fflush(stdout);
  if (plots) make_plots(db_path, out_dir, metric);
  std::fprintf(stderr, "aggnet sweep: results in %s and %s\n", db_path.c_str(), csv.c_str());
}

/// Loads the platform of every distinct (platform, `set:` overrides) pair of the points,
/// so a misspelled `set:` path or a value the platform rejects stops the sweep with exit
/// status 2 before any point runs. Errors: ConfigError naming the spec line and key.
void check_platforms(const SweepSpec& spec, const std::vector<Point>& points) {
  std::set<std::pair<std::string, std::map<std::string, std::string>>> seen;
  for (const Point& p : points) {
    auto it = p.options.options.find("platform");
    std::string platform = it != p.options.options.end()
                               ? resolve_file(it->second, spec.dir)
                               : (fs::path(data_dir()) / "platforms/nine_city.yaml").string();
    if (platform.empty() || !seen.emplace(platform, p.options.sets).second) continue;
    std::vector<Override> overrides(p.options.sets.begin(), p.options.sets.end());
    try {
      load_platform(platform, overrides);
    } catch (const ConfigError& e) {
      int line = 0;
      std::string key = e.file() == "--set" ? "base.set." + e.key() : "platform";
      for (std::size_t i = 0; i < spec.axes.size() && e.file() == "--set"; ++i) {
        const Axis& a = spec.axes[i];
        const bool assigns = std::any_of(a.values.begin(), a.values.end(), [&](const AxisValue& v) {
          return v.assigns.sets.count(e.key()) > 0;
        });
        if (a.option == "set:" + e.key() || assigns) {
          line = a.line;
          key = fmt::format(a.option.empty() ? "axes[{}]" : "axes[{}].option", i);
        }
      }
      throw ConfigError(
          spec.file, line, key,
          fmt::format("the platform rejects point {}: {}", p.describe(spec), e.what()));
    }
  }
}

/// Run's checks of a spec's values that the sweeps do not link: a `fault` value goes
/// through `aggnet run`'s own parser of --fault specs (its syntax, kinds, numbers and times;
/// the sites it names are checked against each point's platform when the point runs).
void run_value_check(const std::string& option, const std::string& value) {
  if (option != "fault") return;
  FaultPlan plan;
  add_fault_spec(plan, value);
}

// A count option (--workers, --shards): a whole number >= 1, never a wrapped "-1".
unsigned count_option(const po::variables_map& vm, const std::string& key) {
  const std::string text = vm[key].as<std::string>();
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || text.size() > 9 || std::stoul(text) == 0)
    throw ConfigError(kCommandLine, 0, "--" + key, "expected a whole number from 1 to 999999999",
                      text);
  return static_cast<unsigned>(std::stoul(text));
}

int cmd_merge(int argc, char** argv) {
  if (argc < 4) {
    std::fputs(
        "aggnet sweep merge: expected OUT.db and at least one IN.db (aggnet sweep merge "
        "OUT.db IN1.db [IN2.db ...])\n",
        stderr);
    return 2;
  }
  const std::string out = argv[2];
  std::vector<std::string> inputs;
  for (int i = 3; i < argc; ++i) {
    if (!fs::is_regular_file(argv[i])) {
      std::fprintf(stderr, "aggnet sweep merge: %s: no such database\n", argv[i]);
      return 2;
    }
    inputs.emplace_back(argv[i]);
  }
  std::size_t rows = 0, total = 0;
  try {
    total = merge_databases(out, inputs, &rows);
  } catch (const StoreError& e) {  // a garbage, foreign or mismatched database: bad input
    std::fprintf(stderr, "aggnet sweep merge: %s\n", e.what());
    return 2;
  }
  std::fprintf(stderr, "aggnet sweep merge: %zu rows from %zu databases into %s (%zu rows)\n",
               total, inputs.size(), out.c_str(), rows);
  return 0;
}

std::string file_kind(const fs::file_status& st) {
  switch (st.type()) {
    case fs::file_type::symlink:
      return "a symbolic link";
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::character:
    case fs::file_type::block:
      return "a device";
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::regular:
      return "a regular file";
    default:
      return "a special file";
  }
}

// One path the sweep writes inside --out: absent or of the kind it writes there.
void check_out_entry(const fs::path& path, const std::string& name, fs::file_type want) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (!fs::exists(st) || st.type() == want) return;
  throw ConfigError(
      kCommandLine, 0, "out",
      fmt::format("expected {} in it to be {} or absent, not {} (the sweep would write through it)",
                  name, want == fs::file_type::directory ? "a directory" : "a regular file",
                  file_kind(st)),
      path.string());
}

// What a sweep writes in an existing --out: a link, FIFO or device there (DIR/logs,
// DIR/results.db, DIR/logs/<id>.log, ...) would be written through, so each is refused
// before any point runs.
void check_out_contents(const fs::path& out) {
  for (const char* name : {"results.db", "results.db-journal", "results.csv", "sweep.sbatch"})
    check_out_entry(out / name, name, fs::file_type::regular);
  for (const char* dir : {"runs", "logs", "plots"}) {
    check_out_entry(out / dir, dir, fs::file_type::directory);
    std::error_code ec;
    for (fs::directory_iterator it(out / dir, ec), end; !ec && it != end; it.increment(ec))
      check_out_entry(it->path(), fmt::format("{}/{}", dir, it->path().filename().string()),
                      fs::file_type::regular);
  }
}

// --out: a directory or a new one (its parents are made), not a link (the results would
// land elsewhere) nor a file, FIFO or device, and nothing in it the sweep would write
// through.
void check_out_dir(const std::string& out) {
  std::error_code ec;
  const fs::file_status own = fs::symlink_status(out, ec);
  if (fs::is_symlink(own))
    throw ConfigError(kCommandLine, 0, "out",
                      "expected a directory or a new one, not a symbolic link", out);
  if (fs::exists(own) && !fs::is_directory(own))
    throw ConfigError(kCommandLine, 0, "out", "expected a directory or a new one", out);
  if (fs::is_directory(own)) check_out_contents(out);
}

int cmd_export(int argc, char** argv) {
  if (argc != 5 || std::string(argv[3]) != "--csv") {
    std::fputs("aggnet sweep export: expected DB --csv FILE (aggnet sweep export DB --csv FILE)\n",
               stderr);
    return 2;
  }
  if (!fs::is_regular_file(argv[2])) {
    std::fprintf(stderr, "aggnet sweep export: %s: no such database\n", argv[2]);
    return 2;
  }
  return cli::guarded("aggnet sweep export", [&] {
    cli::check_output_path("aggnet sweep export", "csv", argv[4]);
    cli::check_not_an_input("aggnet sweep export", "csv", argv[4],
                            {{argv[2], std::string("the database ") + argv[2]}});
    ResultStore store(argv[2]);
    store.export_csv(argv[4]);
    std::fprintf(stderr, "aggnet sweep export: %zu rows to %s\n", store.row_count(), argv[4]);
    return 0;
  });
}

po::options_description sweep_options() {
  po::options_description desc("aggnet sweep options");
  // clang-format off
  desc.add_options()
    ("help,h", "show this help")
    ("spec", po::value<std::string>(), "sweep spec YAML")
    ("out,o", po::value<std::string>(), "output directory (results.db, results.csv, plots/)")
    ("workers,j", po::value<std::string>(), "concurrent points (default: number of cores)")
    ("timeout", po::value<std::string>(), "per-point timeout, e.g. 10m (default: spec's, else 10m)")
    ("resume", "skip points already finished in DIR/results.db")
    ("shard", po::value<std::string>(), "run only the slice K/N of the points")
    ("slurm", "submit the sweep as a Slurm job array (one shard per task)")
    ("shards", po::value<std::string>()->default_value("2"), "array tasks for --slurm")
    ("wait", "with --slurm: wait for the array, merge the shards, export and plot")
    ("sbatch-arg", po::value<std::vector<std::string>>()->composing(),
     "extra sbatch option for --slurm (repeatable), e.g. --sbatch-arg=--partition=x")
    ("dry-run", "print the points and their command lines, run nothing")
    ("aggnet", po::value<std::string>(), "aggnet executable to run points with (default: this one)")
    ("metric", po::value<std::string>(), "summary key the crossover compares (default: spec's)")
    ("no-plot", "do not call scripts/plot_sweep.py")
    ("no-progress", "no progress bar");
  // clang-format on
  return desc;
}

// One `aggnet sweep SPEC` invocation, validated before anything is written.
struct Invocation {
  po::variables_map vm;
  SweepSpec spec;
  std::vector<Point> all, points;  // every point; this shard's
  std::size_t shard = 0, shards = 1;
  std::string timeout;
  std::uint64_t timeout_ms = 0;
  std::string metric, aggnet;
  unsigned workers = 1;
  bool has(const char* option) const { return vm.count(option) > 0; }
};

Invocation prepare_sweep(po::variables_map vm) {
  Invocation in;
  in.vm = std::move(vm);
  in.spec = load_spec(in.vm["spec"].as<std::string>(), run_value_check);
  in.all = expand_points(in.spec);
  if (in.has("shard"))
    std::tie(in.shard, in.shards) = parse_shard(in.vm["shard"].as<std::string>());
  in.points = select_shard(in.all, in.shard, in.shards);
  in.timeout =
      in.has("timeout") ? in.vm["timeout"].as<std::string>() : in.spec.timeout.value_or("10m");
  try {
    in.timeout_ms = parse_timeout_ms(in.timeout);
  } catch (const UnitError&) {
    throw ConfigError(kCommandLine, 0, "--timeout",
                      "expected a time of at least 1ms like '10m' or '30s'", in.timeout);
  }
  in.metric = in.has("metric") ? in.vm["metric"].as<std::string>() : in.spec.metric;
  if (in.has("metric")) check_metric(in.metric, kCommandLine, 0, "--metric");
  check_platforms(in.spec, in.points);
  in.aggnet = in.has("aggnet") ? in.vm["aggnet"].as<std::string>() : self_exe();
  if (access(in.aggnet.c_str(), X_OK) != 0) {
    throw ConfigError(kCommandLine, 0, "--aggnet", "expected an executable file", in.aggnet);
  }
  in.aggnet = fs::absolute(in.aggnet).string();
  in.workers = in.has("workers") ? count_option(in.vm, "workers")
                                 : std::max(1u, std::thread::hardware_concurrency());
  return in;
}

int dry_run(const Invocation& in) {
  std::printf("sweep %s (spec hash %s): %zu points%s\n", in.spec.name.c_str(), in.spec.hash.c_str(),
              in.points.size(),
              in.shards > 1
                  ? fmt::format(" in shard {}/{} of {}", in.shard, in.shards, in.all.size()).c_str()
                  : "");
  for (const Point& p : in.points) {
    std::string cmd = in.aggnet + " run";
    for (const auto& a : p.run_args("DIR/runs/" + p.id + ".json", in.spec.dir)) {
      cmd += " " + shell_quote(a);
    }
    std::printf("%4zu %s  %s\n     %s\n", p.index, p.id.c_str(), p.describe(in.spec).c_str(),
                cmd.c_str());
  }
  return 0;
}

// DIR/results.db, when there: this spec's sweep (another's is refused, --resume or not),
// and with results only with --resume (a warning when the spec changed since). Read
// before anything is written, so a refusal leaves the directory as it was.
void check_existing_results(const SweepSpec& spec, const std::string& db_path, bool resume) {
  if (!fs::exists(db_path)) return;
  StoredSweep stored;
  try {
    stored = read_sweep(db_path);
  } catch (const StoreError& e) {
    throw ConfigError(kCommandLine, 0, "--out",
                      fmt::format("expected results.db in it to be a sweep's results: {}; choose "
                                  "a new directory",
                                  e.what()));
  }
  const std::string differs = sweep_mismatch(stored, spec);
  if (!differs.empty()) {
    throw ConfigError(
        kCommandLine, 0, "--out",
        fmt::format("{} belongs to another spec ({}); choose a new directory", db_path, differs));
  }
  if (!resume && stored.rows > 0) {
    throw ConfigError(kCommandLine, 0, "--out",
                      "already holds results (" + db_path +
                          "); pass --resume to continue that sweep or choose a new directory");
  }
}

// After a Slurm array: the shards merged into DIR/results.db, exported and plotted.
int merge_slurm_results(const Invocation& in, const std::string& out_dir, const std::string& id,
                        std::size_t shards) {
  const std::string db_path = (fs::path(out_dir) / "results.db").string();
  const auto dbs = shard_databases(out_dir, shards);
  if (fs::exists(db_path)) fs::remove(db_path);
  merge_databases(db_path, dbs);
  ResultStore merged(db_path);
  const Table t = merged.read_all();
  std::size_t ok = 0;
  std::vector<std::string> bad;
  const int sc = t.column("status"), ic = t.column("point_id"), ec = t.column("error");
  for (const auto& row : t.rows) {
    if (row[sc].text == "ok") {
      ++ok;
    } else {
      bad.push_back(row[ic].text + ": " + row[ec].text);
    }
  }
  std::fprintf(stderr, "aggnet sweep: merged %zu shard databases: %zu rows, %zu ok of %zu points\n",
               dbs.size(), t.rows.size(), ok, in.all.size());
  finish_outputs(db_path, out_dir, in.metric, !in.has("no-plot"));
  if (ok == in.all.size()) return 0;
  for (const auto& b : bad) std::fprintf(stderr, "  failed: %s\n", b.c_str());
  if (t.rows.size() < in.all.size()) {
    std::fprintf(stderr, "aggnet sweep: %zu points have no result; see %s/slurm-%s_*.out\n",
                 in.all.size() - t.rows.size(), out_dir.c_str(), id.c_str());
  }
  return 1;
}

int run_slurm(const Invocation& in, const std::string& out_dir) {
  // --wait replaces DIR/results.db with the merged shards: never another sweep's.
  check_existing_results(in.spec, (fs::path(out_dir) / "results.db").string(), true);
  SlurmJob job;
  job.aggnet = in.aggnet;
  job.spec = fs::absolute(in.spec.file).string();
  job.out_dir = out_dir;
  job.workdir = fs::current_path().string();
  job.shards = count_option(in.vm, "shards");
  job.workers_per_task = in.has("workers") ? in.workers : 1;
  job.timeout = in.timeout;
  if (in.has("sbatch-arg")) job.sbatch_args = in.vm["sbatch-arg"].as<std::vector<std::string>>();
  const std::string script = write_sbatch_script(job);
  const std::string id = submit_sbatch(script);
  std::fprintf(stderr, "aggnet sweep: submitted job array %s (%zu tasks, %zu points): %s\n",
               id.c_str(), job.shards, in.all.size(), script.c_str());
  if (!in.has("wait")) {
    std::fprintf(
        stderr, "aggnet sweep: when it has finished: aggnet sweep merge %s %s/shard-*/results.db\n",
        (fs::path(out_dir) / "results.db").string().c_str(), out_dir.c_str());
    std::printf("%s\n", id.c_str());
    return 0;
  }
  wait_for_job(id);
  return merge_slurm_results(in, out_dir, id, job.shards);
}

void init_store(const Invocation& in, ResultStore& store, const std::string& db_path, bool resume) {
  if (resume && !store.meta("spec_hash").empty() && store.meta("spec_hash") != in.spec.hash) {
    std::fprintf(stderr,
                 "aggnet sweep: warning: the spec changed since %s was written (hash %s, now %s); "
                 "points are matched by their options\n",
                 db_path.c_str(), store.meta("spec_hash").c_str(), in.spec.hash.c_str());
  }
  store.init(in.spec);
}

int report_local(const Invocation& in, const RunSummary& sum, ResultStore& store,
                 const std::string& out_dir) {
  std::fprintf(stderr, "aggnet sweep: %zu ok, %zu failed, %zu skipped (already finished) in %s\n",
               sum.ok, sum.failed, sum.skipped, format_duration(sum.elapsed_s).c_str());
  if (sum.interrupted) {
    store.export_csv((fs::path(out_dir) / "results.csv").string());
    std::fprintf(stderr,
                 "aggnet sweep: interrupted; finished points are saved, rerun with --resume to "
                 "run the rest\n");
    return 130;
  }
  if (in.shards > 1) {
    store.export_csv((fs::path(out_dir) / "results.csv").string());
  } else {
    finish_outputs((fs::path(out_dir) / "results.db").string(), out_dir, in.metric,
                   !in.has("no-plot"));
  }
  if (!sum.failures.empty()) {
    std::fprintf(stderr, "aggnet sweep: %zu points failed:\n", sum.failures.size());
    for (const auto& [what, err] : sum.failures) {
      std::fprintf(stderr, "  %s: %s\n", what.c_str(), err.c_str());
    }
    return 1;
  }
  return 0;
}

int run_local(const Invocation& in, const std::string& out_dir) {
  const bool resume = in.has("resume");
  const std::string db_path = (fs::path(out_dir) / "results.db").string();
  check_existing_results(in.spec, db_path, resume);
  fs::create_directories(out_dir);
  ResultStore store(db_path);
  init_store(in, store, db_path, resume);
  std::set<std::string> skip;
  if (resume) skip = store.finished_ids();
  RunnerOptions ro;
  ro.aggnet = in.aggnet;
  ro.workers = in.workers;
  ro.timeout_ms = in.timeout_ms;
  ro.out_dir = out_dir;
  ro.progress = !in.has("no-progress");
  std::size_t already = 0;
  for (const auto& p : in.points) already += skip.count(p.id);
  std::fprintf(stderr,
               "aggnet sweep: %s: %zu points%s, %zu to run (%zu already finished), %u workers\n",
               in.spec.name.c_str(), in.points.size(),
               in.shards > 1
                   ? fmt::format(" (shard {}/{} of {})", in.shard, in.shards, in.all.size()).c_str()
                   : "",
               in.points.size() - already, already, in.workers);
  const RunSummary sum = run_points(in.spec, in.points, skip, store, ro);
  return report_local(in, sum, store, out_dir);
}

int cmd_run_sweep(int argc, char** argv) {
  const po::options_description desc = sweep_options();
  po::positional_options_description pos;
  pos.add("spec", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "%s\n", cli::option_error("aggnet sweep", e, desc).what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << kUsage << "\n";
    cli::print_help(std::cout, "aggnet sweep options", desc);
    return 0;
  }
  if (!vm.count("spec")) {
    std::fputs(
        "aggnet sweep: expected a spec, SPEC.yaml (aggnet sweep SPEC.yaml --out DIR; "
        "--help lists the options)\n",
        stderr);
    return 2;
  }
  const Invocation in = prepare_sweep(std::move(vm));
  // Before --dry-run too: a dry run shows what the same command would run.
  if (in.has("shard") && in.has("slurm"))
    throw ConfigError(kCommandLine, 0, "--shard", "cannot be combined with --slurm");
  if (in.has("dry-run")) return dry_run(in);
  if (!in.has("out")) {
    std::fputs(
        "aggnet sweep: --out: expected the results' directory (aggnet sweep SPEC.yaml "
        "--out DIR)\n",
        stderr);
    return 2;
  }
  const std::string out_dir =
      fs::absolute(in.vm["out"].as<std::string>()).lexically_normal().string();
  check_out_dir(in.vm["out"].as<std::string>());
  return in.has("slurm") ? run_slurm(in, out_dir) : run_local(in, out_dir);
}

}  // namespace

int cmd_sweep(int argc, char** argv) {
  // argv[0] is "sweep" (the subcommand); tolerate being handed the full command line.
  if (argc > 1 && std::string(argv[1]) == "sweep") {
    --argc;
    ++argv;
  }
  try {
    const std::string sub = argc > 1 ? argv[1] : "";
    if (sub == "merge") return cmd_merge(argc, argv);
    if (sub == "export") return cmd_export(argc, argv);
    return cmd_run_sweep(argc, argv);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "%s\n", error_line("aggnet sweep", e).c_str());
    return 2;
  } catch (const StoreError& e) {
    std::fprintf(stderr, "aggnet sweep: %s\n", e.what());
    return 1;
  } catch (const SlurmError& e) {
    std::fprintf(stderr, "aggnet sweep: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "aggnet sweep: %s\n", e.what());
    return 1;
  }
}

}  // namespace aggnet
