#include "options/run_option_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "common/data_dir.h"
#include "common/schedule_names.h"
#include "common/strings.h"
#include "common/units.h"
#include "model/run_options.h"

namespace aggnet::options {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kIntMax = INT_MAX;
constexpr double kUint64Max = 18446744073709551616.0;  // 2^64: any std::uint64_t

/// Options that describe one simulation: `aggnet run` and the sweeps take them all.
constexpr unsigned kRunInput = kRun | kSweep;

/// A row under construction: the table below reads as one line per fact.
struct Row : OptionSpec {
  Row(const char* name, Quantity quantity, unsigned commands, std::string help)
      : Row(name, commands, std::move(help)) {
    this->quantity = quantity;
  }
  Row(const char* name, Form form, unsigned commands, std::string help)
      : Row(name, commands, std::move(help)) {
    this->form = form;
  }
  Row(const char* name, unsigned commands, std::string help) {
    this->name = name;
    this->commands = commands;
    this->help = std::move(help);
  }
  Row& def(const char* value) {
    fallback = value;
    return *this;
  }
  Row& within(double lo, double hi, const char* brackets) {
    range = {lo, hi, brackets[0] == '(', brackets[1] == ')'};
    return *this;
  }
  Row& among(std::vector<std::string> words) {
    choices = std::move(words);
    return *this;
  }
  Row& many() {
    repeatable = true;
    return *this;
  }
  Row& alias(char letter) {
    short_name = letter;
    return *this;
  }
  Row& sets(Setter setter) {
    apply = setter;
    return *this;
  }
};

bool on(const std::string& v) { return v == "on"; }
int whole(const std::string& v) { return static_cast<int>(std::stoull(v)); }

std::vector<OptionSpec> make_table() {
  using O = RunOptions;
  using S = const std::string&;
  using Q = Quantity;
  using F = Form;
  const unsigned kAll = kRunInput | kSchedule | kSizeBuffers;
  const Row rows[] = {
      Row("platform", F::kPath, kAll | kPlatform, "platform YAML file")
          .def("platforms/nine_city.yaml"),
      Row("schedule", F::kSchedule, kRunInput | kSizeBuffers,
          "schedule name (" + schedule_name_list() + ") or schedule YAML file")
          .def("triads"),
      Row("buffer", Q::kBytes, kRunInput | kSchedule,
          "FPGA buffer memory at every site, e.g. 64MiB (default: the platform's)")
          .sets([](O& o, S v) { o.buffer_bytes = parse_bytes(v); }),
      Row("gradient", Q::kBytes, kAll | kPlatform, "gradient bytes per site (G)")
          .def("1GiB")
          .sets([](O& o, S v) { o.gradient_bytes = parse_bytes(v); }),
      Row("chunk", Q::kBytes, kAll, "chunk = aggregation slot size")
          .def("1MiB")
          .sets([](O& o, S v) { o.chunk_bytes = parse_bytes(v); }),
      Row("burst", Q::kCount, kRunInput,
          "burst mode: K consecutive chunks per transaction, timed as one unit (store-and-"
          "forward per burst; 1: exact per chunk; error and speed-up: docs/performance.md)")
          .def("1")
          .within(1, 65536, "[]")
          .sets([](O& o, S v) { o.burst_chunks = std::stoull(v); }),
      Row("steps", Q::kCount, kAll,
          "training steps (0: enough to reach --eps consensus, at least one schedule period); "
          "with schedule --verify: per run")
          .def("0")
          .within(0, kIntMax, "[]")
          .sets([](O& o, S v) { o.steps = whole(v); }),
      Row("eps", Q::kNumber, kRunInput | kSchedule,
          "target consensus error ||W_r...W_1 - J||_2: a run reports rounds_to_eps and the "
          "simulated time_to_eps_s (compute included) and comm_time_to_eps_s (without); "
          "schedules are ranked by the latter")
          .def("0.001")
          .within(0, 1, "()")
          .sets([](O& o, S v) { o.eps = parse_number(v); }),
      Row("flow-control", F::kChoice, kAll,
          "pacing | credit | drop (no flow control: a contribution finding no free slot is "
          "dropped and retransmitted after a timeout)")
          .def("pacing")
          .among({"pacing", "credit", "drop"})
          .sets([](O& o, S v) {
            o.flow_control = v == "credit" ? FlowControl::kCredit
                             : v == "drop" ? FlowControl::kDrop
                                           : FlowControl::kPacing;
          }),
      Row("round-start", F::kChoice, kAll,
          "aligned (members exchange ready messages and start together) | immediate | auto "
          "(aligned with pacing and drop, immediate with credit and for reduction trees)")
          .def("auto")
          .among({"auto", "aligned", "immediate"})
          .sets([](O& o, S v) {
            o.aligned_start = v == "auto" ? o.flow_control != FlowControl::kCredit : v == "aligned";
            o.round_start_auto = v == "auto";
          }),
      Row("alignment", F::kChoice, kAll,
          "with an aligned start: arrival (each member sends at its offset so contributions "
          "reach each receiver together) | none | auto (per group, offsets where they make it "
          "land earlier)")
          .def("auto")
          .among({"auto", "arrival", "none"})
          .sets([](O& o, S v) {
            o.alignment = v == "none"      ? SendAlignment::kNone
                          : v == "arrival" ? SendAlignment::kArrival
                                           : SendAlignment::kAuto;
          }),
      Row("pacing-margin", Q::kNumber, kAll, "pacing: fraction below the computed safe rate")
          .def("0.02")
          .within(0, 1, "[)")
          .sets([](O& o, S v) { o.pacing_margin = parse_number(v); }),
      Row("multicast", F::kSwitch, kRunInput | kSchedule, "on | off (unicast copies)")
          .def("on")
          .sets([](O& o, S v) { o.multicast = on(v); }),
      Row("routing", F::kChoice, kAll,
          "delay (shortest-delay paths, as the reference network's IS-IS) | load-aware (link "
          "metrics planned for the schedule so its multicast trees spread over the trunks; "
          "group schedules only)")
          .def("delay")
          .among({"delay", "load-aware"})
          .sets([](O& o, S v) { o.load_aware_routing = v == "load-aware"; }),
      Row("aggregation", F::kSwitch, kRunInput | kSchedule,
          "on | off (FPGAs pass contributions to the hosts)")
          .def("on")
          .sets([](O& o, S v) { o.aggregation = on(v); }),
      Row("jitter", F::kSwitch, kRunInput | kSizeBuffers,
          "on | off: apply the links' jitter (size-buffers: the size leaves no slot stall "
          "in 95 % of seeds)")
          .def("off")
          .sets([](O& o, S v) { o.jitter = on(v); }),
      Row("seed", Q::kCount, kRunInput | kSizeBuffers, "random seed (jitter)")
          .def("1")
          .within(0, kUint64Max, "[]")
          .sets([](O& o, S v) { o.seed = std::stoull(v); }),
      Row("set", F::kOverride, kAll | kPlatform,
          "platform override PATH=VALUE, repeatable (e.g. defaults.link.bandwidth=10Gbps)")
          .many(),
      Row("functional", F::kFlag, kRunInput, "carry real data and check every sum")
          .sets([](O& o, S v) { o.functional = v == "true"; }),
      Row("no-colocated", F::kFlag, kRunInput, "skip the co-located reference simulation"),
      Row("loss", Q::kNumber, kRunInput | kSchedule,
          "fault injection: chunk (and control message) loss rate on every WAN link, each "
          "direction, seeded by --seed; turns loss recovery on")
          .def("0")
          .within(0, 1, "[)")
          .sets([](O& o, S v) { o.faults.wan_loss_rate = parse_number(v); }),
      Row("fault", Q::kText, kRunInput,
          "fault injection, repeatable: loss:A-B=RATE, down:A-B@T1[-T2] (link down, rerouted), "
          "stall:SITE@T1-T2, slow:SITE=FACTOR (docs/simulation-semantics.md, Faults)")
          .many(),
      Row("retransmit-timeout", Q::kTime, kRunInput | kSchedule,
          "loss recovery: retransmission timeout (default: per group, twice its longest "
          "chunk/acknowledgement round trip plus its skew)")
          .within(0, kInf, "()")
          .sets([](O& o, S v) { o.faults.retransmit_timeout_ps = parse_time_ps(v); }),
      Row("watchdog", Q::kTime, kRunInput,
          "end a run without progress for this long (simulated) with a diagnosis, exit "
          "status 3 (default: 20 retransmission timeouts + the longest outage, >= 1s; at "
          "least 1ms: it looks every window / 8)")
          .within(1e-3, kInf, "[)")
          .sets([](O& o, S v) { o.faults.watchdog_ps = parse_time_ps(v); }),
      Row("vcd", F::kOutput, kRun,
          "write a VCD waveform to FILE, and its GTKWave view to FILE with .gtkw"),
      Row("gtkw", F::kOutput, kRun, "with --vcd: write the GTKWave view to FILE instead"),
      Row("trace", Q::kText, kRun,
          "with --vcd: what to trace, e.g. \"sites=lon,tyo signals=buffer,links,slots,state\" "
          "(default: every site and signal; docs/waveforms.md)")
          .many(),
      Row("trace-from", Q::kTime, kRun, "with --vcd: record from this time, e.g. 1s")
          .within(0, kInf, "[)"),
      Row("trace-to", Q::kTime, kRun, "with --vcd: record until this time, e.g. 1.5s")
          .within(0, kInf, "[)"),
      Row("stats", F::kOutput, kRun,
          "write per-module statistics to FILE (.csv or .json: one row per module instance)"),
      Row("report", F::kOutput, kRun,
          "write a Markdown report to FILE.md, its PNG figures next to it (FILE.occupancy.png, "
          ".links.png, .alignment.png; docs/run-report.md)"),
      Row("journey", F::kOutput, kRun,
          "write which module handed chunks of each kind to which, in the order they first "
          "did, to FILE (docs/chunk-journey.md)"),
      Row("stats-interval", Q::kTime, kRun,
          "with --stats or --report: occupancy time-series sampling interval")
          .def("1ms")
          .within(0, kInf, "()"),
      Row("json", F::kOutput, kRun | kSizeBuffers | kPlatform,
          "write the results as JSON to FILE (- for the standard output)"),
      Row("routes", F::kFlag, kPlatform,
          "list every route and multicast tree also beyond 100 sites (n(n-1) routes)"),
      Row("csv", F::kOutput, kSizeBuffers, "write the per-site table as CSV to FILE"),
      Row("out", F::kOutput, kSchedule, "write the winner as a schedule YAML file"),
      Row("schedules", Q::kText, kSchedule,
          "comma-separated schedule names or files to rank instead of searching"),
      Row("top", Q::kCount, kSchedule, "rows of the ranked table")
          .def("10")
          .within(1, kIntMax, "[]"),
      Row("group-average-only", F::kFlag, kSchedule,
          "leave the host-based ring all-reduce baseline out of the ranking"),
      Row("verify", F::kFlag, kSchedule,
          "run the listed schedules through the SystemC simulation (aggnet run --json) and "
          "print analytic vs simulated round time"),
      Row("target", Q::kNumber, kSizeBuffers,
          "keep every group's round at least this fraction of its unconstrained speed "
          "(unconstrained round time / round time), in (0, 1]")
          .def("0.95")
          .within(0, 1, "(]"),
      Row("heterogeneous", F::kFlag, kSizeBuffers,
          "also find one size per site (others unconstrained) and check them together"),
      Row("workers", Q::kCount, kSchedule | kSizeBuffers,
          "simulations in parallel (0: one per CPU); schedule: with --verify")
          .def("0")
          .within(0, kIntMax, "[]"),
      Row("quiet", F::kFlag, kRun | kSizeBuffers, "do not print the table or progress").alias('q'),
  };
  return {std::begin(rows), std::end(rows)};
}

std::string bound(double x) { return x >= kIntMax ? "inf" : fmt::format("{}", x); }

std::string number_expectation(const Interval& r) {
  return fmt::format("expected a number in {}{}, {}{}", r.lo_open ? '(' : '[', bound(r.lo),
                     bound(r.hi), r.hi_open ? ')' : ']');
}

std::string choice_list(const std::vector<std::string>& words) {
  std::string list;
  for (std::size_t i = 0; i < words.size(); ++i)
    list += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return list;
}

// "expected an integer <= 2147483647" (2^64: the largest std::uint64_t).
OptionError too_large(const Interval& range) {
  const std::string max =
      range.hi >= kUint64Max ? "18446744073709551615" : fmt::format("{:.0f}", range.hi);
  return OptionError("expected an integer <= " + max);
}

// [0-9]+, by hand: compiling a std::regex costs more than a short run's option checks.
bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void check_integer(const OptionSpec& spec, const std::string& value) {
  if (!all_digits(value)) throw OptionError(expectation(spec));
  unsigned long long n = 0;
  try {
    n = std::stoull(value);
  } catch (const std::out_of_range&) {
    throw too_large(spec.range);
  }
  if (static_cast<double>(n) > spec.range.hi) throw too_large(spec.range);
  if (static_cast<double>(n) < spec.range.lo) throw OptionError(expectation(spec));
}

void check_number(const OptionSpec& spec, const std::string& value) {
  double x = -1;
  try {
    x = parse_number(value);
  } catch (const UnitError&) {
    throw OptionError(expectation(spec));
  }
  if (!spec.range.contains(x)) throw OptionError(expectation(spec));
}

void check_time(const OptionSpec& spec, const std::string& value) {
  try {
    if (!spec.range.contains(static_cast<double>(parse_time_ps(value)) * 1e-12))
      throw UnitError("out of range");
  } catch (const UnknownUnitError& e) {
    throw OptionError(e.what());
  } catch (const UnitError& e) {
    // The parser's reason, when it gives one: "(a unit is required)", "(value too large)".
    const std::string what = e.what();
    const auto reason = what.find(" (");
    throw OptionError(expectation(spec) + (reason == std::string::npos ? "" : what.substr(reason)));
  }
}

bool plain_decimal(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+';
  });
}

void check_bytes(const OptionSpec& spec, const std::string& value) {
  try {
    if (parse_bytes(value) == 0) throw UnitError("zero");
  } catch (const UnknownUnitError& e) {
    throw OptionError(e.what());
  } catch (const UnitError& e) {
    // "64" could be bytes or MiB: a size, like a rate, needs its unit (a zero is no size).
    if (plain_decimal(value) && std::strtod(value.c_str(), nullptr) != 0)
      throw OptionError("expected a size with its unit, like '" + value + "MiB' or '" + value +
                        "B'");
    const std::string what = e.what();
    if (what.find("(value too large)") != std::string::npos)
      throw OptionError("expected a size below 2^64 bytes (16 EiB), like '64MiB'");
    // The parser's reason, when it gives one: "(not a whole number of bytes)"; a bare zero
    // is no size whatever its unit.
    const auto reason = plain_decimal(value) ? std::string::npos : what.find(" (");
    throw OptionError(expectation(spec) + (reason == std::string::npos ? "" : what.substr(reason)));
  }
}

void check_schedule(const OptionSpec& spec, const std::string& value, const FileCheck& exists) {
  if (is_schedule_name(value) || !exists) return;
  if (!looks_like_file(value)) {
    const std::string match = closest_match(value, schedule_name_words());
    if (!match.empty())
      throw OptionError("expected a schedule name (did you mean '" + match + "'?)");
    throw OptionError(expectation(spec));
  }
  if (!exists(value)) throw OptionError("expected an existing schedule file");
}

void check_word(const OptionSpec& spec, const std::string& value) {
  const auto& words = spec.form == Form::kSwitch ? std::vector<std::string>{"on", "off"}
                      : spec.form == Form::kFlag ? std::vector<std::string>{"true", "false"}
                                                 : spec.choices;
  if (std::find(words.begin(), words.end(), value) == words.end())
    throw OptionError(expectation(spec) + did_you_mean(value, words));
}

/// What a value of form kValue must look like, by its quantity.
std::string value_expectation(const OptionSpec& spec) {
  switch (spec.quantity) {
    case Quantity::kBytes:
      return "expected a positive size like '64MiB'";
    case Quantity::kTime:
      if (spec.range.lo > 0)
        return "expected a time of at least " + format_time_ps(spec.range.lo * 1e12);
      return spec.range.lo_open ? "expected a positive time like '1ms'"
                                : "expected a time like '1.5s'";
    case Quantity::kCount:
      return fmt::format("expected an integer >= {}", spec.range.lo);
    case Quantity::kNumber:
      return number_expectation(spec.range);
    default:
      return "expected a value";
  }
}

void check_quantity(const OptionSpec& spec, const std::string& value) {
  switch (spec.quantity) {
    case Quantity::kBytes:
      return check_bytes(spec, value);
    case Quantity::kTime:
      return check_time(spec, value);
    case Quantity::kCount:
      return check_integer(spec, value);
    case Quantity::kNumber:
      return check_number(spec, value);
    default:
      return;  // free text
  }
}

}  // namespace

bool Interval::contains(double x) const {
  return (lo_open ? x > lo : x >= lo) && (hi_open ? x < hi : x <= hi);
}

const std::vector<OptionSpec>& run_option_table() {
  static const std::vector<OptionSpec> table = make_table();
  return table;
}

const OptionSpec* find_option(const std::string& name) {
  for (const auto& spec : run_option_table())
    if (spec.name == name) return &spec;
  return nullptr;
}

std::vector<const OptionSpec*> options_of(Command command) {
  std::vector<const OptionSpec*> out;
  for (const auto& spec : run_option_table())
    if (spec.takes(command)) out.push_back(&spec);
  return out;
}

bool runner_owned(const OptionSpec& spec) { return spec.takes(kRun) && !spec.takes(kSweep); }

std::string default_value(const OptionSpec& spec) {
  namespace fs = std::filesystem;
  if (spec.form != Form::kPath || !spec.has_default() || fs::exists(spec.fallback))
    return spec.fallback;
  const std::string shipped = data_dir();
  return shipped.empty() ? spec.fallback : (fs::path(shipped) / spec.fallback).string();
}

std::string expectation(const OptionSpec& spec) {
  switch (spec.form) {
    case Form::kPath:
      return "expected an existing file";
    case Form::kSchedule:
      return "expected a schedule name (" + schedule_name_list() + ") or a schedule YAML file";
    case Form::kOverride:
      return "expected PATH=VALUE";
    case Form::kSwitch:
      return "expected on or off";
    case Form::kChoice:
      return "expected " + choice_list(spec.choices);
    case Form::kFlag:
      return "expected true or false";
    case Form::kValue:
      return value_expectation(spec);
    case Form::kOutput:
      break;
  }
  return "expected a value";
}

void check_value(const OptionSpec& spec, const std::string& value, const FileCheck& exists) {
  if (value.empty()) throw OptionError(expectation(spec));
  switch (spec.form) {
    case Form::kPath:
      if (exists && !exists(value)) throw OptionError(expectation(spec));
      return;
    case Form::kSchedule:
      return check_schedule(spec, value, exists);
    case Form::kOverride:
      if (value.find('=') == std::string::npos || value[0] == '=')
        throw OptionError(expectation(spec));
      return;
    case Form::kSwitch:
    case Form::kChoice:
    case Form::kFlag:
      return check_word(spec, value);
    case Form::kValue:
      return check_quantity(spec, value);
    case Form::kOutput:
      return;
  }
}

bool looks_like_file(const std::string& value) {
  return value.find('/') != std::string::npos || value.find(".yaml") != std::string::npos ||
         value.find(".yml") != std::string::npos;
}

}  // namespace aggnet::options
