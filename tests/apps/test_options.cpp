// The one option table (options/run_option_table.h) and what derives from it: the
// options each command accepts (its --help), the sweep spec's options and checks, the
// conversion to the model's RunOptions, the one-line errors and the READMEs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/config_error.h"
#include "options/option_values.h"
#include "options/run_option_table.h"
#include "sweeps/spec.h"

namespace aggnet::options {
namespace {

const std::map<Command, std::string> kCommands = {
    {kRun, "run"}, {kSchedule, "schedule"}, {kSizeBuffers, "size-buffers"}};

struct Output {
  int status;
  std::string out;  ///< stdout and stderr
};

Output aggnet(const std::string& args) {
  const std::string cmd = std::string(AGGNET_BINARY) + " " + args + " 2>&1";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int raw = ::pclose(p);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, out};
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::set<std::string> names_of(Command command) {
  std::set<std::string> names;
  for (const OptionSpec* spec : options_of(command)) names.insert(spec->name);
  return names;
}

// The long option names `aggnet <command> --help` lists ("  --buffer arg", "  -q [ --quiet ]").
std::set<std::string> help_options(const std::string& command) {
  const Output o = aggnet(command + " --help");
  EXPECT_EQ(o.status, 0) << o.out;
  static const std::regex option(R"(^  (?:-[a-z] \[ )?--([a-z][a-z0-9-]*))");
  std::set<std::string> names;
  std::istringstream lines(o.out);
  std::smatch m;
  for (std::string line; std::getline(lines, line);)
    if (std::regex_search(line, m, option)) names.insert(m[1]);
  return names;
}

// The values of a command line giving no option: every default.
OptionValues defaults(Command command) {
  OptionValues v("aggnet " + kCommands.at(command), command);
  for (const OptionSpec* spec : options_of(command)) {
    if (spec->form == Form::kFlag) v.set(spec->name, {"false"}, false);
    if (spec->has_default()) v.set(spec->name, {spec->fallback}, false);
  }
  return v;
}

OptionValues with(Command command, const std::map<std::string, std::string>& given) {
  OptionValues v = defaults(command);
  for (const auto& [name, value] : given) v.set(name, {value}, true);
  return v;
}

// The one-line message `with(kRun, given)` and its conversion raise ("" when none).
std::string error_of(const std::map<std::string, std::string>& given, Command command = kRun) {
  try {
    to_run_options(with(command, given));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(OptionTable, RowsAreWellFormed) {
  std::set<std::string> names;
  for (const auto& spec : run_option_table()) {
    SCOPED_TRACE(spec.name);
    EXPECT_TRUE(names.insert(spec.name).second);
    EXPECT_TRUE(std::regex_match(spec.name, std::regex("[a-z][a-z0-9-]*")));
    EXPECT_FALSE(spec.help.empty());
    EXPECT_NE(spec.commands & (kRun | kSchedule | kSizeBuffers | kPlatform), 0u);
    EXPECT_EQ(spec.form == Form::kChoice, !spec.choices.empty());
    // A sweep passes its options to `aggnet run`; setters change what a run simulates.
    EXPECT_TRUE(!spec.takes(kSweep) || spec.takes(kRun));
    EXPECT_TRUE(!spec.apply || spec.takes(kSweep));
    if (spec.has_default()) {
      EXPECT_NO_THROW(check_value(spec, spec.fallback));
    }
  }
}

// The table's defaults are RunOptions' defaults, for every command.
TEST(OptionTable, DefaultsGiveTheModelDefaults) {
  const RunOptions model;
  for (const auto& [command, name] : kCommands) {
    SCOPED_TRACE(name);
    const RunOptions o = to_run_options(defaults(command));
    EXPECT_EQ(o.gradient_bytes, model.gradient_bytes);
    EXPECT_EQ(o.chunk_bytes, model.chunk_bytes);
    EXPECT_EQ(o.buffer_bytes, model.buffer_bytes);
    EXPECT_EQ(o.steps, model.steps);
    EXPECT_EQ(o.eps, model.eps);
    EXPECT_EQ(o.flow_control, model.flow_control);
    EXPECT_EQ(o.pacing_margin, model.pacing_margin);
    EXPECT_EQ(o.aligned_start, model.aligned_start);
    EXPECT_EQ(o.alignment, model.alignment);
    EXPECT_EQ(o.multicast, model.multicast);
    EXPECT_EQ(o.aggregation, model.aggregation);
    EXPECT_EQ(o.jitter, model.jitter);
    EXPECT_EQ(o.seed, model.seed);
    EXPECT_EQ(o.functional, model.functional);
    EXPECT_EQ(o.credit_bytes, model.credit_bytes);
    EXPECT_EQ(o.burst_chunks, model.burst_chunks);
  }
}

// Burst mode: K >= 1 chunks per transaction; the transaction limit counts bursts, and the
// smallest buffer is one burst (its slot is K chunk slots).
TEST(OptionTable, BurstCountsTransactions) {
  EXPECT_EQ(to_run_options(with(kRun, {{"burst", "8"}})).burst_chunks, 8u);
  EXPECT_EQ(error_of({{"burst", "0"}}), "aggnet run: --burst: expected an integer >= 1, got '0'");
  // 8 Mi chunks of 1 KiB are too many transactions one by one, not in bursts of 64.
  EXPECT_NE(error_of({{"gradient", "8GiB"}, {"chunk", "1KiB"}}).find("--chunk"), std::string::npos);
  EXPECT_EQ(error_of({{"gradient", "8GiB"}, {"chunk", "1KiB"}, {"burst", "64"}}), "");
  const Output o = aggnet("run --buffer 4MiB --chunk 1MiB --burst 8");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_EQ(o.out,
            "aggnet run: --buffer: expected a buffer of at least one burst (--burst x --chunk = "
            "8.0 MiB), got '4MiB'\n");
}

TEST(OptionTable, SettersFollowTheTable) {
  const RunOptions o = to_run_options(with(kRun, {{"buffer", "64MiB"},
                                                  {"steps", "3"},
                                                  {"eps", "1e-4"},
                                                  {"flow-control", "credit"},
                                                  {"pacing-margin", "0.05"},
                                                  {"multicast", "off"},
                                                  {"jitter", "on"},
                                                  {"seed", "7"},
                                                  {"functional", "true"},
                                                  {"gradient", "1MiB"}}));
  EXPECT_EQ(o.buffer_bytes, 64ull << 20);
  EXPECT_EQ(o.gradient_bytes, 1ull << 20);
  EXPECT_EQ(o.steps, 3);
  EXPECT_EQ(o.eps, 1e-4);
  EXPECT_EQ(o.flow_control, FlowControl::kCredit);
  EXPECT_FALSE(o.aligned_start);  // round-start auto: immediate with credit
  EXPECT_EQ(o.pacing_margin, 0.05);
  EXPECT_FALSE(o.multicast);
  EXPECT_TRUE(o.jitter);
  EXPECT_EQ(o.seed, 7u);
  EXPECT_TRUE(o.functional);
  const RunOptions a = to_run_options(
      with(kRun, {{"flow-control", "credit"}, {"round-start", "aligned"}, {"alignment", "none"}}));
  EXPECT_TRUE(a.aligned_start);
  EXPECT_EQ(a.alignment, SendAlignment::kNone);
}

struct BadValue {
  const char* option;
  const char* value;
  const char* message;  ///< the whole one-line message of `aggnet run`
};

void PrintTo(const BadValue& b, std::ostream* os) { *os << b.option << "=" << b.value; }

class BadValues : public ::testing::TestWithParam<BadValue> {};

TEST_P(BadValues, AreOneLineConfigErrors) {
  const auto& p = GetParam();
  OptionValues v("aggnet run", kRun);
  try {
    v.set(p.option, {p.value}, true);
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), p.message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Run, BadValues,
    ::testing::Values(
        BadValue{"buffer", "64 potatoes",
                 "aggnet run: --buffer: expected a size like '64MiB' or '2048B' (unknown unit "
                 "'potatoes'; known: B, kB, KB, MB, GB, TB, KiB, MiB, GiB, TiB, bit, bits, kbit, "
                 "Mbit, Gbit, Tbit, Kibit, Mibit, Gibit, Tibit), got '64 potatoes'"},
        BadValue{"buffer", "20EiB",
                 "aggnet run: --buffer: expected a size like '64MiB' or '2048B' (unknown unit "
                 "'EiB'; known: B, kB, KB, MB, GB, TB, KiB, MiB, GiB, TiB, bit, bits, kbit, Mbit, "
                 "Gbit, Tbit, Kibit, Mibit, Gibit, Tibit), got '20EiB'"},
        BadValue{"buffer", "64MiB!",
                 "aggnet run: --buffer: expected a size like '64MiB' or '2048B' (unknown unit "
                 "'MiB!'; known: B, kB, KB, MB, GB, TB, KiB, MiB, GiB, TiB, bit, bits, kbit, Mbit, "
                 "Gbit, Tbit, Kibit, Mibit, Gibit, Tibit), got '64MiB!'"},
        BadValue{"buffer", "0",
                 "aggnet run: --buffer: expected a positive size like '64MiB', got '0'"},
        BadValue{"buffer", "-1MiB",
                 "aggnet run: --buffer: expected a positive size like '64MiB' (negative values "
                 "are not allowed), got '-1MiB'"},
        BadValue{"gradient", "0.1B",
                 "aggnet run: --gradient: expected a positive size like '64MiB' (not a whole "
                 "number of bytes), got '0.1B'"},
        BadValue{"gradient", "12bit",
                 "aggnet run: --gradient: expected a positive size like '64MiB' (not a whole "
                 "number of bytes), got '12bit'"},
        BadValue{"watchdog", "5hours",
                 "aggnet run: --watchdog: expected a time like '33.3ms' or '2us' (unknown unit "
                 "'hours'; known: ps, ns, us, \xC2\xB5s, \xCE\xBCs, ms, s, min), got '5hours'"},
        BadValue{"chunk", "0B",
                 "aggnet run: --chunk: expected a positive size like '64MiB', got '0B'"},
        BadValue{"steps", "-1", "aggnet run: --steps: expected an integer >= 0, got '-1'"},
        BadValue{"steps", "3000000000",
                 "aggnet run: --steps: expected an integer <= 2147483647, got '3000000000'"},
        BadValue{"seed", "1.5", "aggnet run: --seed: expected an integer >= 0, got '1.5'"},
        BadValue{"eps", "1", "aggnet run: --eps: expected a number in (0, 1), got '1'"},
        BadValue{"pacing-margin", "-0.1",
                 "aggnet run: --pacing-margin: expected a number in [0, 1), got '-0.1'"},
        BadValue{"multicast", "true", "aggnet run: --multicast: expected on or off, got 'true'"},
        BadValue{"flow-control", "window",
                 "aggnet run: --flow-control: expected pacing, credit or drop, got 'window'"},
        BadValue{"round-start", "later",
                 "aggnet run: --round-start: expected auto, aligned or immediate, got 'later'"},
        BadValue{"trace-from", "1",
                 "aggnet run: --trace-from: expected a time like '1.5s' (a unit is required), "
                 "got '1'"},
        BadValue{"watchdog", "5",
                 "aggnet run: --watchdog: expected a time of at least 1.000 ms (a unit is "
                 "required), got '5'"},
        BadValue{"watchdog", "1e400s",
                 "aggnet run: --watchdog: expected a time of at least 1.000 ms (value too "
                 "large), got '1e400s'"},
        BadValue{"watchdog", "1ps",
                 "aggnet run: --watchdog: expected a time of at least 1.000 ms, got '1ps'"},
        BadValue{"stats-interval", "0s",
                 "aggnet run: --stats-interval: expected a positive time like '1ms', got '0s'"},
        BadValue{"set", "=10Gbps", "aggnet run: --set: expected PATH=VALUE, got '=10Gbps'"}),
    [](const auto& info) {
      std::string n = std::string(info.param.option) + "_" + std::to_string(info.index);
      for (char& c : n)
        if (c == '-') c = '_';
      return n;
    });

TEST(OptionTable, CrossChecksNameTheOption) {
  EXPECT_EQ(error_of({{"round-start", "immediate"}, {"alignment", "arrival"}}),
            "aggnet run: --alignment: arrival alignment needs an aligned round start "
            "(--round-start aligned), got 'arrival'");
  EXPECT_NE(error_of({{"flow-control", "credit"}, {"alignment", "arrival"}}).find("--alignment"),
            std::string::npos);
  EXPECT_NE(error_of({{"gradient", "8GiB"}, {"chunk", "1KiB"}}).find("--chunk: expected at most"),
            std::string::npos);
  EXPECT_NE(error_of({{"functional", "true"}}).find("--functional"), std::string::npos);
  EXPECT_EQ(error_of({{"functional", "true"}, {"gradient", "1MiB"}}), "");
  // The same rules hold for every command that takes the options.
  EXPECT_NE(error_of({{"round-start", "immediate"}, {"alignment", "arrival"}}, kSizeBuffers)
                .find("aggnet size-buffers: --alignment"),
            std::string::npos);
  EXPECT_NE(error_of({{"gradient", "8GiB"}, {"chunk", "1KiB"}}, kSchedule).find("--chunk"),
            std::string::npos);
}

TEST(OptionTable, ACommandTakesOnlyItsOptions) {
  OptionValues v("aggnet schedule", kSchedule);
  EXPECT_THROW(v.set("functional", {"true"}, true), std::logic_error);
  EXPECT_NO_THROW(v.set("verify", {"true"}, true));
}

// `aggnet <command> --help` lists exactly --help and the table's rows for the command.
TEST(DerivedFromTheTable, EachCommandsHelp) {
  for (const auto& [command, name] : kCommands) {
    SCOPED_TRACE(name);
    std::set<std::string> expected = names_of(command);
    expected.insert("help");
    EXPECT_EQ(help_options(name), expected);
  }
}

// ... and shows each default.
TEST(DerivedFromTheTable, HelpShowsTheDefaults) {
  const Output o = aggnet("run --help");
  for (const OptionSpec* spec : options_of(kRun)) {
    if (!spec->has_default() || spec->form == Form::kPath) continue;
    EXPECT_NE(o.out.find("--" + spec->name + " arg (=" + spec->fallback + ")"), std::string::npos)
        << spec->name;
  }
}

// The options a sweep spec accepts are the table's sweep rows, which `aggnet run` takes.
TEST(DerivedFromTheTable, SweepSpecOptions) {
  const auto accepted = sweeps::spec_options();
  std::vector<std::string> expected;
  for (const OptionSpec* spec : options_of(kSweep)) expected.push_back(spec->name);
  EXPECT_EQ(accepted, expected);
  for (const auto& name : accepted) EXPECT_TRUE(names_of(kRun).count(name)) << name;
}

// A value of the right kind for each sweep option, and one its check rejects.
std::pair<std::string, std::string> samples(const OptionSpec& spec) {
  switch (spec.form) {
    case Form::kPath:
      return {std::string(AGGNET_SOURCE_DIR) + "/platforms/nine_city.yaml", "/no/such.yaml"};
    case Form::kSchedule:
      return {"rotating-4", "trads"};
    case Form::kSwitch:
      return {"off", "maybe"};
    case Form::kChoice:
      return {spec.choices.back(), "maybe"};
    case Form::kFlag:
      return {"true", "maybe"};
    default:
      break;
  }
  switch (spec.form == Form::kValue ? spec.quantity : Quantity::kText) {
    case Quantity::kBytes:
      return {"2MiB", "0B"};
    case Quantity::kTime:
      return {"2ms", "soon"};
    case Quantity::kCount:
      return {"3", "-3"};
    case Quantity::kNumber:
      return {"0.5", "2"};
    default:
      return {"", ""};
  }
}

std::string spec_error(const std::string& yaml) {
  try {
    sweeps::parse_spec(yaml, "spec.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// The sweep spec checks each option with the table's check: it accepts a good value as a
// base option and an axis, and rejects a bad one with the message the CLI gives.
TEST(DerivedFromTheTable, SweepSpecChecks) {
  for (const OptionSpec* spec : options_of(kSweep)) {
    if (spec->form == Form::kOverride ||
        (spec->form == Form::kValue && spec->quantity == Quantity::kText))
      continue;  // own grammar
    SCOPED_TRACE(spec->name);
    const auto [good, bad] = samples(*spec);
    EXPECT_EQ(spec_error("base:\n  " + spec->name + ": \"" + good + "\"\n"), "");
    EXPECT_EQ(spec_error("axes:\n  - option: " + spec->name + "\n    values: [\"" + good + "\"]\n"),
              "");
    const std::string sweep = spec_error("base:\n  " + spec->name + ": \"" + bad + "\"\n");
    EXPECT_NE(sweep.find("spec.yaml:2: base." + spec->name + ": expected"), std::string::npos)
        << sweep;
    if (spec->form == Form::kPath || spec->form == Form::kSchedule) continue;  // the CLI reads
    OptionValues v("aggnet run", kRun);
    try {
      v.set(spec->name, {bad}, true);
      ADD_FAILURE() << "the CLI accepts " << bad;
    } catch (const ConfigError& e) {
      const std::string cli = e.what();
      EXPECT_EQ(sweep.substr(sweep.find(": expected")), cli.substr(cli.find(": expected")));
    }
  }
}

// The outputs of `aggnet run` belong to the sweep's runner; other names are unknown.
TEST(DerivedFromTheTable, SweepSpecRefusesTheRunnersOptions) {
  for (const OptionSpec* spec : options_of(kRun)) {
    if (!runner_owned(*spec)) continue;
    const std::string err = spec_error("base:\n  " + spec->name + ": x\n");
    EXPECT_NE(err.find("is set by `aggnet sweep`"), std::string::npos) << err;
  }
  EXPECT_NE(spec_error("base:\n  top: 3\n").find("unknown run option"), std::string::npos);
}

// Backticked words of `text` after `from` up to `to`, the `--` and ": {...}" stripped.
std::vector<std::string> listed(const std::string& text, const std::string& from,
                                const std::string& to, const std::regex& word) {
  const auto begin = text.find(from);
  EXPECT_NE(begin, std::string::npos) << from;
  const std::string part = text.substr(begin, text.find(to, begin) - begin);
  std::vector<std::string> out;
  for (std::sregex_iterator it(part.begin(), part.end(), word), end; it != end; ++it)
    out.push_back((*it)[1]);
  return out;
}

// README.md lists `aggnet run`'s options; sweeps/README.md the spec's, in table order.
TEST(DerivedFromTheTable, Readmes) {
  const std::string root = AGGNET_SOURCE_DIR;
  const auto run = listed(read_text(root + "/README.md"), "`aggnet run` options", "\n\n",
                          std::regex("`-(?:-([a-z][a-z0-9-]*)|q)"));
  std::set<std::string> in_readme;
  for (const auto& name : run) in_readme.insert(name.empty() ? "quiet" : name);
  EXPECT_EQ(in_readme, names_of(kRun));
  const auto sweep = listed(read_text(root + "/sweeps/README.md"), "- Run options", "belong",
                            std::regex("`([a-z][a-z0-9-]*)[`:]"));
  std::vector<std::string> expected = sweeps::spec_options();
  for (const auto& name : {"json", "vcd", "quiet"}) expected.push_back(name);
  EXPECT_EQ(sweep, expected);
}

// Every doc that lists an option's words (`--flow-control pacing|credit|drop`) lists the
// words the option accepts, all of them (docs/buffer-sizing.md once left out `drop`).
TEST(DerivedFromTheTable, DocsListEveryChoice) {
  const std::string root = AGGNET_SOURCE_DIR;
  std::vector<std::string> docs = {"README.md", "sweeps/README.md", "platforms/README.md"};
  for (const auto& entry : std::filesystem::directory_iterator(root + "/docs"))
    if (entry.path().extension() == ".md")
      docs.push_back("docs/" + entry.path().filename().string());
  const std::regex listing(R"(`--([a-z][a-z0-9-]*) ([a-z0-9-]+(?:\|[a-z0-9-]+)+)`)");
  int checked = 0;
  for (const auto& doc : docs) {
    const std::string text = read_text(root + "/" + doc);
    for (std::sregex_iterator it(text.begin(), text.end(), listing), end; it != end; ++it) {
      const OptionSpec* spec = find_option((*it)[1]);
      ASSERT_NE(spec, nullptr) << doc << ": " << (*it)[0];
      if (spec->form != Form::kChoice && spec->form != Form::kSwitch) continue;
      const std::vector<std::string> words =
          spec->form == Form::kSwitch ? std::vector<std::string>{"on", "off"} : spec->choices;
      std::string want;
      for (const auto& w : words) want += (want.empty() ? "" : "|") + w;
      EXPECT_EQ((*it)[2].str(), want) << doc << ": " << (*it)[0];
      ++checked;
    }
  }
  EXPECT_GE(checked, 9);  // README's seven, buffer-sizing.md's two
}

// The commands share the rules: a bad value is the same one line and exit 2 everywhere.
TEST(DerivedFromTheTable, CommandsRejectAlike) {
  for (const auto& [command, name] : kCommands) {
    const Output o = aggnet(name + " --pacing-margin 1");
    EXPECT_EQ(o.status, 2) << o.out;
    EXPECT_EQ(o.out,
              "aggnet " + name + ": --pacing-margin: expected a number in [0, 1), got '1'\n");
  }
  const Output jitter = aggnet("size-buffers --jitter true");
  EXPECT_EQ(jitter.out, "aggnet size-buffers: --jitter: expected on or off, got 'true'\n");
  // The smallest buffer is one chunk for `run` and `schedule` alike.
  for (const std::string name : {"run", "schedule"}) {
    const Output o = aggnet(name + " --buffer 512KiB --chunk 1MiB");
    EXPECT_EQ(o.status, 2) << o.out;
    EXPECT_EQ(o.out, "aggnet " + name +
                         ": --buffer: expected a buffer of at least one chunk (1.0 MiB), got "
                         "'512KiB'\n");
  }
}

}  // namespace
}  // namespace aggnet::options
