// Sweep spec parsing, validation and point expansion.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/config_error.h"
#include "sweeps/spec.h"

namespace aggnet::sweeps {
namespace {

SweepSpec parse(const std::string& text) { return parse_spec(text, "spec.yaml"); }

/// The message of the ConfigError `text` raises ("" when it parses).
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(SweepSpec, GridExpandsLastAxisFastest) {
  auto spec = parse(R"(
base: {gradient: 1MiB, steps: 2}
axes:
  - option: schedule
    values: [all-to-all, triads]
  - option: buffer
    values: [64KiB, 1MiB, 16MiB]
)");
  auto points = expand_points(spec);
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[0].labels, (std::vector<std::string>{"all-to-all", "64KiB"}));
  EXPECT_EQ(points[1].labels, (std::vector<std::string>{"all-to-all", "1MiB"}));
  EXPECT_EQ(points[3].labels, (std::vector<std::string>{"triads", "64KiB"}));
  EXPECT_EQ(points[4].options.options.at("buffer"), "1MiB");
  EXPECT_EQ(points[4].options.options.at("gradient"), "1MiB");
  EXPECT_DOUBLE_EQ(*points[4].numbers[1], 1048576.0);
  EXPECT_FALSE(points[4].numbers[0].has_value());
  std::set<std::string> ids;
  for (const auto& p : points) ids.insert(p.id);
  EXPECT_EQ(ids.size(), 6u);
}

// The host collectives and the parameterised names are schedules of a sweep too (they
// were refused as misspellings of themselves before the one schedule-name table).
TEST(SweepSpec, ScheduleAxisTakesEveryBuiltInShape) {
  auto spec = parse(R"(
axes:
  - option: schedule
    values: [reduce-scatter, "ring:sendrecv", "p2p:lon-nyc", "parameter-server:lon",
             "reduction-tree:tyo", "random-3:7"]
)");
  const auto points = expand_points(spec);
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[0].options.options.at("schedule"), "reduce-scatter");
  EXPECT_EQ(points[2].options.options.at("schedule"), "p2p:lon-nyc");
}

TEST(SweepSpec, ZipPairsValuesAndNeedsEqualLengths) {
  auto spec = parse(R"(
mode: zip
axes:
  - {option: buffer, values: [1MiB, 2MiB]}
  - {option: chunk, values: [64KiB, 128KiB]}
)");
  auto points = expand_points(spec);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[1].options.options.at("chunk"), "128KiB");
  const std::string err = error_of(R"(
mode: zip
axes:
  - {option: buffer, values: [1MiB, 2MiB]}
  - {option: chunk, values: [64KiB]}
)");
  EXPECT_NE(err.find("spec.yaml:5: axes[1]:"), std::string::npos) << err;
}

TEST(SweepSpec, LogRangeWithFactorAndPoints) {
  auto spec = parse(R"(
axes:
  - option: buffer
    logrange: {from: 64KiB, to: 8GiB, factor: 2}
)");
  const auto& v = spec.axes[0].values;
  ASSERT_EQ(v.size(), 18u);  // 2^16 .. 2^33
  EXPECT_EQ(v.front().label, "64KiB");
  EXPECT_EQ(v[4].label, "1MiB");
  EXPECT_EQ(v.back().label, "8GiB");
  EXPECT_DOUBLE_EQ(*v.back().number, 8589934592.0);
  auto spec2 = parse(R"(
axes:
  - option: set:defaults.link.bandwidth
    logrange: {from: 1Gbps, to: 100Gbps, points: 3}
)");
  EXPECT_EQ(spec2.axes[0].name, "link_bandwidth");
  EXPECT_EQ(spec2.axes[0].kind, ValueKind::kRate);
  ASSERT_EQ(spec2.axes[0].values.size(), 3u);
  EXPECT_EQ(spec2.axes[0].values[1].label, "10Gbps");
  EXPECT_EQ(expand_points(spec2)[2].options.sets.at("defaults.link.bandwidth"), "100Gbps");
}

/// The kind of a sweep axis over a value written in `unit` and what one `unit` is in the
/// kind's base unit (s, bytes, bit/s, Hz), by hand (a count's unit names what it counts:
/// a plain number in a sweep, written without it); nullopt for a unit not listed.
std::optional<std::pair<ValueKind, double>> kind_of_unit(const std::string& unit) {
  static const std::map<std::string, std::pair<ValueKind, double>> kinds = {
      {"ns", {ValueKind::kTime, 1e-9}},  {"us", {ValueKind::kTime, 1e-6}},
      {"ms", {ValueKind::kTime, 1e-3}},  {"s", {ValueKind::kTime, 1}},
      {"B", {ValueKind::kBytes, 1}},     {"MiB", {ValueKind::kBytes, 1048576}},
      {"Gbps", {ValueKind::kRate, 1e9}}, {"MHz", {ValueKind::kFrequency, 1e6}},
      {"bit", {ValueKind::kNumber, 1}},  {"cycle", {ValueKind::kNumber, 1}}};
  const auto it = kinds.find(unit);
  if (it == kinds.end()) return std::nullopt;
  return it->second;
}

// Every module parameter row, as a `set:` axis: its kind is the row's (looked up, not
// guessed from the key's name or the values), its value's number in the kind's base unit.
// A row added with a unit this test does not know fails here until it is listed.
TEST(SweepSpec, SetAxisOfEveryParameterRowTakesItsKindFromTheRow) {
  ASSERT_EQ(module_param_rows().size(), 13u);
  for (const ParamRow& row : module_param_rows()) {
    const std::string path = std::string("defaults.") + row.section + "." + row.key;
    SCOPED_TRACE(path);
    const auto want = kind_of_unit(row.unit);
    ASSERT_TRUE(want) << "no expected sweep kind for unit '" << row.unit << "'";
    const std::string value = want->first == ValueKind::kNumber ? "8" : "8" + std::string(row.unit);
    const auto spec = parse("axes:\n  - option: set:" + path + "\n    values: [" + value + "]\n");
    EXPECT_EQ(spec.axes[0].kind, want->first);
    EXPECT_EQ(run_option_kind("set:" + path), want->first);
    ASSERT_TRUE(spec.axes[0].values[0].number);
    EXPECT_DOUBLE_EQ(*spec.axes[0].values[0].number, 8 * want->second);
  }
}

// The same path under a site, a link and the co-located reference; and the fields beside
// the parameters: text, plain numbers, the memory tiers' quantities.
TEST(SweepSpec, SetAxisKindsOfEveryPathShape) {
  const std::vector<std::pair<std::string, ValueKind>> paths = {
      {"sites.lon.switch.latency", ValueKind::kTime},
      {"links.nyc-lon.bandwidth", ValueKind::kRate},
      {"colocated.link.delay", ValueKind::kTime},
      {"sites.lon.lat_deg", ValueKind::kNumber},
      {"sites.lon.name", ValueKind::kText},
      {"links.nyc-lon.loss", ValueKind::kText},
      {"memory_tiers.hbm.capacity", ValueKind::kBytes},
      {"memory_tiers.hbm.bandwidth", ValueKind::kRate},
      {"memory_tiers.hbm.cost", ValueKind::kNumber},
      {"name", ValueKind::kText}};
  for (const auto& [path, kind] : paths) EXPECT_EQ(run_option_kind("set:" + path), kind) << path;
  // 1 GB/s is 8e9 bit/s, the rate's base unit.
  EXPECT_DOUBLE_EQ(parse_value(run_option_kind("set:memory_tiers.hbm.bandwidth"), "1GB/s"), 8e9);
}

TEST(SweepSpec, LinearRange) {
  auto spec = parse(R"(
axes:
  - option: pacing-margin
    range: {from: 0, to: 0.2, step: 0.05}
  - option: set:defaults.fpga.datapath_width
    values: [512, 1024]
)");
  ASSERT_EQ(spec.axes[0].values.size(), 5u);
  EXPECT_EQ(spec.axes[0].values[1].label, "0.05");
  EXPECT_EQ(spec.axes[1].kind, ValueKind::kNumber);
  EXPECT_EQ(spec.axes[1].name, "fpga_datapath_width");
}

TEST(SweepSpec, BundleAxisAssignsSeveralOptions) {
  auto spec = parse(R"(
axes:
  - name: variant
    values:
      - {label: plain-wan-ring, schedule: ring}
      - {label: multicast-only, aggregation: "off"}
      - {label: aggregation-only, multicast: off}
      - {label: both}
)");
  auto points = expand_points(spec);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].options.options.at("schedule"), "ring");
  EXPECT_EQ(points[1].options.options.at("aggregation"), "off");
  EXPECT_EQ(points[2].options.options.at("multicast"), "off");
  EXPECT_TRUE(points[3].options.options.empty());
  EXPECT_EQ(points[3].labels[0], "both");
}

TEST(SweepSpec, PointIdDependsOnOptionsNotOnSpelling) {
  auto a = parse("base: {gradient: 1MiB, steps: 2}\naxes: [{option: buffer, values: [1MiB]}]");
  auto b = parse(
      "base:\n  steps: 2\n  gradient: 1MiB  # comment\naxes:\n  - option: buffer\n"
      "    values: [1MiB]\n");
  EXPECT_EQ(expand_points(a)[0].id, expand_points(b)[0].id);
  EXPECT_EQ(a.hash, b.hash);
  auto c = parse("base: {gradient: 2MiB, steps: 2}\naxes: [{option: buffer, values: [1MiB]}]");
  EXPECT_NE(expand_points(a)[0].id, expand_points(c)[0].id);
  EXPECT_NE(a.hash, c.hash);
}

TEST(SweepSpec, RunArgsCarryEveryOption) {
  auto spec = parse(R"(
base:
  schedule: triads
  no_colocated: true
  set: {defaults.link.bandwidth: 10Gbps}
axes: [{option: buffer, values: [1MiB]}]
)");
  auto args = expand_points(spec)[0].run_args("/o/x.json", "");
  const std::vector<std::string> want = {"--buffer",
                                         "1MiB",
                                         "--no-colocated",
                                         "--schedule",
                                         "triads",
                                         "--set",
                                         "defaults.link.bandwidth=10Gbps",
                                         "--json",
                                         "/o/x.json",
                                         "--quiet"};
  EXPECT_EQ(args, want);
}

// The spec takes every run option of the option table's sweep rows: eps, round-start and
// alignment too, with a numeric column where the table gives a unit.
TEST(SweepSpec, TakesTheTablesRunOptions) {
  auto spec = parse(R"(
base: {round-start: aligned, alignment: arrival, functional: true, gradient: 1MiB}
axes:
  - option: eps
    values: [1e-3, 1e-6]
)");
  EXPECT_EQ(spec.axes[0].kind, ValueKind::kNumber);
  const auto points = expand_points(spec);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_DOUBLE_EQ(*points[1].numbers[0], 1e-6);
  const auto args = points[1].run_args("/o/x.json", "");
  const std::vector<std::string> want = {"--alignment",  "arrival",    "--eps",     "1e-6",
                                         "--functional", "--gradient", "1MiB",      "--round-start",
                                         "aligned",      "--json",     "/o/x.json", "--quiet"};
  EXPECT_EQ(args, want);
}

TEST(SweepSpec, ShardsAreDisjointAndCoverAllPoints) {
  auto spec = parse("axes: [{option: buffer, logrange: {from: 1KiB, to: 1GiB, factor: 2}}]");
  auto points = expand_points(spec);
  std::multiset<std::string> seen;
  for (std::size_t k = 0; k < 3; ++k) {
    for (const auto& p : select_shard(points, k, 3)) seen.insert(p.id);
  }
  EXPECT_EQ(seen.size(), points.size());
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), points.size());
  EXPECT_EQ(parse_shard("2/3"), std::make_pair(std::size_t{2}, std::size_t{3}));
  EXPECT_THROW(parse_shard("3/3"), ConfigError);
  EXPECT_THROW(parse_shard("1"), ConfigError);
}

// --shard errors read like any option's ("aggnet sweep: --shard: ..."), a count past 64
// bits included (it was std::stoul's out_of_range, exit 1).
TEST(SweepSpec, ShardErrorsNameTheOption) {
  for (const std::string bad : {"3/3", "1", "/3", "1/", "-1/3", "1/+3", "1/3x", "0/0",
                                "18446744073709551616/18446744073709551617"}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(error_line("aggnet sweep", e),
                "aggnet sweep: --shard: expected K/N with 0 <= K < N, got '" + bad + "'");
    }
  }
  EXPECT_EQ(parse_shard("0/1"), std::make_pair(std::size_t{0}, std::size_t{1}));
  EXPECT_EQ(
      parse_shard("18446744073709551614/18446744073709551615"),
      std::make_pair(std::size_t{18446744073709551614ull}, std::size_t{18446744073709551615ull}));
}

// The check a spec's caller passes (`aggnet sweep`: run's --fault parser, which the sweeps
// do not link) sees every value of every option, a list's one by one, and its
// std::invalid_argument is a one-line error at that value's line and key.
TEST(SweepSpec, CallersCheckSeesEachValueAtItsLine) {
  std::vector<std::string> seen;
  const ValueCheck check = [&](const std::string& option, const std::string& value) {
    seen.push_back(option + "=" + value);
    if (value == "bad") throw std::invalid_argument("expected good (got 'bad')");
  };
  const std::string ok =
      "base: {steps: 1, fault: [a, b]}\naxes:\n  - {option: fault, values: [c, d]}\n";
  parse_spec(ok, "spec.yaml", check);
  EXPECT_EQ(seen,
            (std::vector<std::string>{"steps=1", "fault=a", "fault=b", "fault=c", "fault=d"}));
  for (const auto& [text, error] : std::vector<std::pair<std::string, std::string>>{
           {"base: {steps: 1, fault: [a, bad]}\n",
            "spec.yaml:1: base.fault[1]: expected good (got 'bad')"},
           {"base: {steps: 1}\naxes:\n  - option: fault\n    values: [c, bad]\n",
            "spec.yaml:4: axes[0].values[1]: expected good (got 'bad')"},
           {"axes:\n  - name: v\n    values:\n      - {label: x, fault: bad}\n",
            "spec.yaml:4: axes[0].values[0].fault: expected good (got 'bad')"}}) {
    try {
      parse_spec(text, "spec.yaml", check);
      ADD_FAILURE() << "no error for " << text;
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), error);
    }
    EXPECT_NO_THROW(parse_spec(text, "spec.yaml"));  // no check given: none made
  }
}

TEST(SweepSpec, TimeoutForms) {
  EXPECT_EQ(parse_timeout_ms("10m"), 600000u);
  EXPECT_EQ(parse_timeout_ms("2h"), 7200000u);
  EXPECT_EQ(parse_timeout_ms("30s"), 30000u);
  EXPECT_EQ(parse_timeout_ms("250ms"), 250u);
}

struct BadSpec {
  const char* name;
  const char* text;
  const char* expected;  // substring of the one-line message
};

void PrintTo(const BadSpec& b, std::ostream* os) { *os << b.name; }

class SweepSpecErrors : public ::testing::TestWithParam<BadSpec> {};

TEST_P(SweepSpecErrors, OneLineNamingFileLineAndKey) {
  const std::string err = error_of(GetParam().text);
  EXPECT_NE(err.find(GetParam().expected), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    All, SweepSpecErrors,
    ::testing::Values(
        BadSpec{"UnknownTopKey", "base: {}\naxis: []\n", "spec.yaml:2: axis: unknown key"},
        BadSpec{"UnknownOption", "base:\n  bufer: 1MiB\n", "spec.yaml:2: base.bufer: unknown run"},
        BadSpec{"BadSize", "base:\n  buffer: 64 potatoes\n",
                "spec.yaml:2: base.buffer: expected a size like '64MiB' or '2048B' (unknown unit "
                "'potatoes'; known: B,"},
        BadSpec{"BadSchedule", "base:\n  schedule: trads\n", "spec.yaml:2: base.schedule:"},
        BadSpec{"MissingScheduleFile", "base:\n  schedule: nope/x.yaml\n",
                "expected an existing schedule file"},
        BadSpec{"BadOnOff", "base:\n  multicast: maybe\n", "base.multicast: expected on or off"},
        BadSpec{"SwitchIsOnOrOff", "base:\n  jitter: true\n", "base.jitter: expected on or off"},
        BadSpec{"FlagIsTrueOrFalse", "base:\n  functional: yes\n",
                "base.functional: expected true or false"},
        BadSpec{"RandomNeedsASeed", "base:\n  schedule: random-3\n", "base.schedule: expected"},
        BadSpec{"EpsInOpenUnitInterval", "axes:\n  - option: eps\n    values: [0]\n",
                "spec.yaml:3: axes[0].values[0]: expected a number in (0, 1), got '0'"},
        BadSpec{"SetIsAMapping", "axes:\n  - option: set\n    values: [a=b]\n",
                "axes[0].option: unknown run option"},
        BadSpec{"RunnerOwned", "base:\n  json: x.json\n", "base.json: is set by `aggnet sweep`"},
        BadSpec{"RunOutput", "base:\n  stats: x.csv\n", "base.stats: is set by `aggnet sweep`"},
        BadSpec{"BadLograngeUnit",
                "axes:\n  - option: buffer\n    logrange: {from: 64KiB, to: 8Gbps, factor: 2}\n",
                "spec.yaml:3: axes[0].logrange.to:"},
        BadSpec{"LograngeBothForms",
                "axes:\n  - option: buffer\n    logrange: {from: 1KiB, to: 8KiB, factor: 2, "
                "points: 3}\n",
                "expected exactly one of points or factor"},
        BadSpec{"NoValues", "axes:\n  - option: buffer\n",
                "spec.yaml:2: axes[0]: expected exactly"},
        BadSpec{"BadSetRate",
                "axes:\n  - option: set:defaults.link.bandwidth\n    values: [10GB]\n",
                "spec.yaml:3: axes[0].values[0]: expected a rate"},
        BadSpec{"MisspeltSetKey",
                "axes:\n  - option: set:defaults.link.bandwith\n    values: [10Gbps]\n",
                "spec.yaml:2: axes[0].option: unknown key 'bandwith', expected one of: delay, "
                "bandwidth, mtu, header, jitter (did you mean 'bandwidth'?), got "
                "'set:defaults.link.bandwith'"},
        BadSpec{"MisspeltSetKeyInBase", "base:\n  set: {sites.lon.fpga.bufer: 1MiB}\n",
                "spec.yaml:2: base.set.sites.lon.fpga.bufer: unknown key 'bufer', expected one "
                "of: datapath_width, clock, latency_cycles, buffer (did you mean 'buffer'?)"},
        BadSpec{"MisspeltSetSection",
                "axes:\n  - option: set:sites.lon.fgpa.buffer\n    values: [1MiB]\n",
                "unknown key 'fgpa', expected one of: fpga, switch, cluster (did you mean "
                "'fpga'?)"},
        BadSpec{"RangeOfATextField",
                "axes:\n  - option: set:sites.lon.continent\n    range: {from: 1, to: 2, step: "
                "1}\n",
                "spec.yaml:2: axes[0].option: takes no numeric values"},
        BadSpec{"DuplicateValue", "axes:\n  - option: buffer\n    values: [1MiB, 1MiB]\n",
                "duplicate value"},
        BadSpec{"SameOptionTwice",
                "axes:\n  - {option: buffer, values: [1MiB]}\n  - {option: buffer, name: b2, "
                "values: [2MiB]}\n",
                "spec.yaml:3: axes[1]: assigns buffer"},
        BadSpec{"BadMode", "mode: diagonal\n", "spec.yaml:1: mode: expected grid or zip"},
        BadSpec{"BadTimeout", "timeout: soon\n", "spec.yaml:1: timeout:"},
        BadSpec{"MisspelledMetric", "name: x\nmetric: step_time_mean\n",
                "spec.yaml:2: metric: unknown summary key 'step_time_mean' (did you mean "
                "'step_time_s_mean'?)"},
        BadSpec{"UnknownMetric", "metric: wibble\n",
                "spec.yaml:1: metric: unknown summary key 'wibble', expected"},
        BadSpec{"Malformed", "axes: [\n", "spec.yaml:"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace aggnet::sweeps
