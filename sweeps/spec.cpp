// Sweep spec parsing, validation and point expansion.
#include "sweeps/spec.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/config_error.h"
#include "common/data_dir.h"
#include "common/input_file.h"
#include "common/schedule_names.h"
#include "common/strings.h"
#include "common/units.h"
#include "options/run_option_table.h"

namespace fs = std::filesystem;

namespace aggnet::sweeps {
namespace {

/// The row of a run option a spec sets by name, or nullptr (unknown, the runner's, or
/// `set`, which a spec writes as a mapping or an axis `set:PATH`).
const options::OptionSpec* sweep_option(const std::string& name) {
  const options::OptionSpec* spec = options::find_option(name);
  const bool named = spec && spec->takes(options::kSweep) && spec->form != options::Form::kOverride;
  return named ? spec : nullptr;
}

/// An option of `aggnet run` that the sweep's runner sets or leaves out (--json, --vcd).
bool is_runner_owned(const std::string& name) {
  const options::OptionSpec* spec = options::find_option(name);
  return spec && options::runner_owned(*spec);
}

/// "platform, schedule, ..., set" (`set` last: axes name it `set:PATH`).
std::string option_list() {
  std::string s;
  for (const auto& name : spec_options())
    if (sweep_option(name)) s += (s.empty() ? "" : ", ") + name;
  return s + ", set";
}

/// " (did you mean 'buffer'?)" for a misspelt run option of a spec.
std::string option_hint(const std::string& word) {
  std::vector<std::string> names;
  for (const auto& name : spec_options())
    if (sweep_option(name)) names.push_back(name);
  names.emplace_back("set");
  return did_you_mean(word, names);
}

const std::set<std::string> kReservedColumns = {
    "point_id",       "point_index", "status",  "error",       "wall_time_s", "exit_code",
    "aggnet_version", "spec_hash",   "options", "finished_at", "shard",       "elapsed_s"};

/// Parse context: the file name for messages, and run's checks the sweeps cannot make.
struct Ctx {
  std::string file;
  std::string dir;
  ValueCheck check;

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key, const std::string& expected,
                         const std::string& got = {}) const {
    int line = at.IsDefined() ? at.Mark().line + 1 : 0;
    if (got.empty()) throw ConfigError(file, line, key, expected);
    throw ConfigError(file, line, key, expected, got);
  }

  std::string scalar(const YAML::Node& node, const std::string& key) const {
    if (!node.IsDefined() || node.IsNull()) fail(node, key, "expected a value");
    if (!node.IsScalar()) fail(node, key, "expected a single value (not a list or mapping)");
    return node.Scalar();
  }

  /// The text of a mapping's key under `path`. Errors: ConfigError for a key that is a
  /// list or mapping (yaml-cpp would say "bad conversion" with neither file nor key).
  std::string key(const YAML::Node& node, const std::string& path) const {
    if (!node.IsScalar())
      fail(node, path.empty() ? "<key>" : path + ".<key>",
           std::string("expected a plain key, got a ") + (node.IsSequence() ? "list" : "mapping"));
    return node.Scalar();
  }

  /// Checks the keys of a mapping against `allowed`.
  void allow_keys(const YAML::Node& map, const std::string& path,
                  const std::vector<std::string>& allowed) const {
    if (!map.IsMap()) fail(map, path, "expected a mapping");
    std::map<std::string, int> seen;  // key -> its line
    for (const auto& kv : map) {
      std::string k = key(kv.first, path);
      std::string key = path.empty() ? k : path + "." + k;
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(kv.first, key,
             "unknown key" + did_you_mean(k, allowed) + ", expected one of: " + list);
      }
      const auto [first, fresh] = seen.emplace(k, kv.first.Mark().line + 1);
      if (!fresh)
        fail(kv.first, key, fmt::format("duplicate key (first given on line {})", first->second));
    }
  }
};

std::string normalize_option(std::string name) {
  for (char& c : name) {
    if (c == '_') c = '-';
  }
  return name;
}

/// The kind of an axis of quantity `q`: a count is a plain number in a sweep.
ValueKind axis_kind(Quantity q) { return q == Quantity::kCount ? ValueKind::kNumber : q; }

/// The kind of a run option's axis, from the option table's quantity.
ValueKind table_kind(const std::string& option) {
  const options::OptionSpec* spec = sweep_option(option);
  return spec ? axis_kind(spec->quantity) : ValueKind::kText;
}

/// The kind of a `--set PATH` override, from the row it names (common/param_rows.h).
/// Errors: std::invalid_argument for a path that names no row, with a did-you-mean.
ValueKind set_kind(const std::string& path) { return axis_kind(override_row(path).quantity); }

/// Numeric value of `text` as `kind` in the kind's base unit (a time in s). Errors:
/// UnitError.
double parse_as(ValueKind kind, const std::string& text) {
  const QuantityInfo& q = quantity_info(kind);
  if (q.parse) return static_cast<double>(q.parse(text)) * q.column_scale;
  if (kind == ValueKind::kText) throw UnitError("not a number");
  return parse_number(text);
}

/// Validates `value` for run option `option` ("set:PATH" for overrides) and returns the
/// value to pass on the command line. Errors: ConfigError at `at`.
std::string check_value(const Ctx& ctx, const std::string& option, const YAML::Node& at,
                        const std::string& key) {
  std::string value = ctx.scalar(at, key);
  if (option.rfind("set:", 0) == 0) {
    ValueKind kind = ValueKind::kText;
    try {
      kind = set_kind(option.substr(4));
    } catch (const std::invalid_argument& e) {
      ctx.fail(at, key, e.what());
    }
    if (value.empty()) ctx.fail(at, key, "expected a value");
    if (kind != ValueKind::kText) {
      try {
        parse_as(kind, value);
      } catch (const std::exception&) {
        ctx.fail(at, key, quantity_info(kind).like, value);
      }
    }
    return value;
  }
  const options::OptionSpec& spec = *sweep_option(option);
  try {
    options::check_value(
        spec, value, [&](const std::string& file) { return !resolve_file(file, ctx.dir).empty(); });
  } catch (const options::OptionError& e) {
    ctx.fail(at, key, e.what(), value);
  }
  if (ctx.check) {
    try {
      ctx.check(option, value);
    } catch (const std::invalid_argument& e) {  // run's own words, which name the value
      ctx.fail(at, key, e.what());
    }
  }
  return value;
}

/// Reads a mapping of run options (`base:` or one variant of a bundle axis) into `out`.
/// `skip` lists keys that belong to the enclosing structure (e.g. "label").
void read_options(const Ctx& ctx, const YAML::Node& map, const std::string& path, RunArguments& out,
                  const std::set<std::string>& skip = {}) {
  if (!map.IsMap()) ctx.fail(map, path, "expected a mapping of run options");
  std::map<std::string, int> seen;  // key -> its line
  for (const auto& kv : map) {
    const std::string raw = ctx.key(kv.first, path);
    const std::string key = path.empty() ? raw : path + "." + raw;
    if (skip.count(raw)) continue;
    const auto [first, fresh] = seen.emplace(raw, kv.first.Mark().line + 1);
    if (!fresh)
      ctx.fail(kv.first, key, fmt::format("duplicate key (first given on line {})", first->second));
    if (raw == "set") {
      if (!kv.second.IsMap()) ctx.fail(kv.second, key, "expected a mapping PATH: VALUE");
      for (const auto& s : kv.second) {
        const std::string p = ctx.key(s.first, key);
        out.sets[p] = check_value(ctx, "set:" + p, s.second, key + "." + p);
      }
      continue;
    }
    const std::string opt = normalize_option(raw);
    if (is_runner_owned(opt)) {
      ctx.fail(kv.first, key,
               "is set by `aggnet sweep` itself or left out (an output of the run); a spec "
               "cannot give it");
    }
    if (!sweep_option(opt)) {
      ctx.fail(kv.first, key,
               "unknown run option" + option_hint(opt) + ", expected one of: " + option_list());
    }
    if (sweep_option(opt)->repeatable && kv.second.IsSequence()) {
      // A repeatable option (fault) takes a list: one value per line, as repeat_values reads.
      std::string values;
      for (std::size_t i = 0; i < kv.second.size(); ++i)
        values +=
            (i ? "\n" : "") + check_value(ctx, opt, kv.second[i], fmt::format("{}[{}]", key, i));
      if (values.empty()) ctx.fail(kv.second, key, "expected a non-empty list");
      out.options[opt] = values;
      continue;
    }
    out.options[opt] = check_value(ctx, opt, kv.second, key);
  }
}

/// The values of a repeatable option held as one line each.
std::vector<std::string> repeat_values(const std::string& option, const std::string& value) {
  if (!sweep_option(option)->repeatable) return {value};
  return split(value, '\n');
}

/// Writes an integral value of `kind` with the largest unit dividing it.
std::string format_integral(ValueKind kind, std::uint64_t v) {
  const std::vector<QuantityInfo::Unit>& units = quantity_info(kind).units;
  if (units.empty()) return std::to_string(v);
  for (const QuantityInfo::Unit& u : units) {
    if (v != 0 && v % u.scale == 0) return fmt::format("{}{}", v / u.scale, u.name);
  }
  return fmt::format("{}{}", v, units.back().name);
}

/// Base-unit value (bytes, bps, s, Hz) to the integer the unit parser works in.
std::uint64_t to_integral(ValueKind kind, double value) {
  if (kind == ValueKind::kTime) return static_cast<std::uint64_t>(std::llround(value * 1e12));
  return static_cast<std::uint64_t>(std::llround(value));
}

double from_integral(ValueKind kind, std::uint64_t v) {
  return static_cast<double>(v) * quantity_info(kind).column_scale;
}

std::string format_number(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9 * std::max(1.0, std::fabs(v))) {
    return fmt::format("{}", static_cast<long long>(std::llround(v)));
  }
  return fmt::format("{:.10g}", v);
}

/// Kind of an axis from its option. Errors: std::invalid_argument for a `set:` path that
/// names no row.
ValueKind option_kind(const std::string& option) {
  if (option.rfind("set:", 0) == 0) return set_kind(option.substr(4));
  return table_kind(option);
}

// The raw values of a `logrange:` from `from` to `to` (points or factor).
std::vector<double> log_range(const Ctx& ctx, const YAML::Node& node, const std::string& key,
                              double from, double to) {
  std::vector<double> raw;
  const bool has_points = static_cast<bool>(node["points"]);
  const bool has_factor = static_cast<bool>(node["factor"]);
  if (has_points == has_factor) ctx.fail(node, key, "expected exactly one of points or factor");
  if (has_points) {
    const std::string s = ctx.scalar(node["points"], key + ".points");
    int n = 0;
    try {
      n = std::stoi(s);
    } catch (const std::exception&) {
    }
    if (n < 2 || n > 100000)
      ctx.fail(node["points"], key + ".points", "expected an integer >= 2", s);
    for (int i = 0; i < n; ++i) raw.push_back(from * std::pow(to / from, double(i) / (n - 1)));
    return raw;
  }
  const std::string s = ctx.scalar(node["factor"], key + ".factor");
  double f = 0;
  try {
    f = parse_number(s);
  } catch (const std::exception&) {
  }
  if (!(f > 1)) ctx.fail(node["factor"], key + ".factor", "expected a number > 1", s);
  for (double v = from; v <= to * (1 + 1e-12); v *= f) {
    raw.push_back(v);
    if (raw.size() > 100000) ctx.fail(node, key, "expected at most 100000 values");
  }
  return raw;
}

// Generated numbers as axis values: labels in the kind's units, duplicates dropped.
std::vector<AxisValue> as_axis_values(const std::vector<double>& raw, ValueKind kind) {
  std::vector<AxisValue> values;
  std::set<std::string> labels;
  for (double v : raw) {
    AxisValue av;
    if (kind == ValueKind::kNumber) {
      av.label = format_number(v);
      av.number = parse_number(av.label);
    } else {
      std::uint64_t i = to_integral(kind, v);
      av.label = format_integral(kind, i);
      av.number = from_integral(kind, i);
    }
    if (labels.insert(av.label).second) values.push_back(std::move(av));
  }
  return values;
}

/// Values of a `range:` or `logrange:` axis.
std::vector<AxisValue> generate_values(const Ctx& ctx, const YAML::Node& node,
                                       const std::string& key, bool log, ValueKind& kind) {
  ctx.allow_keys(node, key,
                 log ? std::vector<std::string>{"from", "to", "points", "factor"}
                     : std::vector<std::string>{"from", "to", "step"});
  const YAML::Node from_n = node["from"], to_n = node["to"];
  if (!from_n) ctx.fail(node, key + ".from", "missing");
  if (!to_n) ctx.fail(node, key + ".to", "missing");
  const std::string from_s = ctx.scalar(from_n, key + ".from");
  const std::string to_s = ctx.scalar(to_n, key + ".to");
  if (kind == ValueKind::kText) {
    ctx.fail(from_n, key + ".from", "expected a number or a quantity with units", from_s);
  }
  auto parse = [&](const YAML::Node& n, const std::string& k, const std::string& s) {
    try {
      return parse_as(kind, s);
    } catch (const std::exception&) {
      ctx.fail(n, k, quantity_info(kind).like, s);
    }
  };
  const double from = parse(from_n, key + ".from", from_s);
  const double to = parse(to_n, key + ".to", to_s);
  if (to < from) ctx.fail(to_n, key + ".to", "expected a value >= from", to_s);
  if (log) {
    if (from <= 0) ctx.fail(from_n, key + ".from", "expected a value > 0 for a log range", from_s);
    return as_axis_values(log_range(ctx, node, key, from, to), kind);
  }
  if (!node["step"]) ctx.fail(node, key + ".step", "missing");
  const std::string s = ctx.scalar(node["step"], key + ".step");
  const double step = parse(node["step"], key + ".step", s);
  if (!(step > 0)) ctx.fail(node["step"], key + ".step", "expected a value > 0", s);
  const double count = std::floor((to - from) / step * (1 + 1e-12)) + 1;
  if (count > 100000) ctx.fail(node, key, "expected at most 100000 values");
  std::vector<double> raw;
  for (int i = 0; i < static_cast<int>(count); ++i) raw.push_back(from + i * step);
  return as_axis_values(raw, kind);
}

}  // namespace

ValueKind run_option_kind(const std::string& option, bool* integer) {
  const options::OptionSpec* spec = option.rfind("set:", 0) == 0 ? nullptr : sweep_option(option);
  if (integer) *integer = spec && spec->quantity == Quantity::kCount;
  return option_kind(option);
}

double parse_value(ValueKind kind, const std::string& text) { return parse_as(kind, text); }

std::string numeric_column(const std::string& name, ValueKind kind) {
  return kind == ValueKind::kText ? "" : name + quantity_info(kind).column;
}

const std::vector<std::string>& summary_metrics() {
  // The summary of sim/report.cpp and apps/cmd_run.cpp; tests/sweeps/e2e_metric_keys.sh
  // checks that every key of a real run's summary is here (a key added to the summary
  // must be added here to be usable as a sweep metric).
  // clang-format off
  static const std::vector<std::string> keys = {
      // time
      "step_time_s_mean", "step_time_s_max", "compute_time_s_mean", "exposed_comm_time_s_mean",
      "round_time_s_mean", "round_time_s_max", "total_time_s", "time_to_eps_s",
      "comm_time_to_eps_s", "colocated_step_time_s_mean", "slowdown_vs_colocated",
      "recovery_time_s_max", "wall_time_s",  // wall_time_s: in the summary of older versions
      "bound_s", "exact_average_time_s", "efficiency",
      // rates and fractions
      "gpu_idle_fraction", "allreduce_bandwidth_gbps", "link_utilization_max",
      // counts
      "buffer_high_water_bytes_max", "slot_stalls_total", "functional_checks",
      "functional_mismatches", "duplicate_results", "steps", "events", "rounds_to_eps",
      "retransmissions_total", "control_retransmissions_total", "retransmitted_bytes_total",
      "wasted_payload_bytes_total", "dropped_contributions_total", "lost_chunks_total",
      "lost_messages_total",
      // memory tiers (docs/memory-tiers.md)
      "memory_cost_usd", "memory_power_w"};
  // clang-format on
  return keys;
}

void check_metric(const std::string& metric, const std::string& file, int line,
                  const std::string& key) {
  const auto& keys = summary_metrics();
  if (std::find(keys.begin(), keys.end(), metric) != keys.end()) return;
  throw ConfigError(file, line, key,
                    "unknown summary key '" + metric + "'" + did_you_mean(metric, keys) +
                        ", expected a key of `aggnet run --json`'s summary such as "
                        "step_time_s_mean or comm_time_to_eps_s");
}

std::string kind_name(ValueKind kind) { return quantity_info(kind).stored; }

std::string format_exact(ValueKind kind, double value) {
  if (kind == ValueKind::kNumber || kind == ValueKind::kCount || kind == ValueKind::kText)
    return format_number(value);
  return format_integral(kind, to_integral(kind, value));
}

std::string stable_hash(const std::string& text) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

std::uint64_t parse_timeout_ms(const std::string& text) {
  static const std::regex short_form("\\s*([0-9]+(\\.[0-9]+)?)\\s*([mh])\\s*");
  std::smatch m;
  std::uint64_t ps = 0;
  if (std::regex_match(text, m, short_form)) {
    ps = parse_time_ps(m[1].str() + "s") * (m[3] == "m" ? 60 : 3600);
  } else {
    ps = parse_time_ps(text);
  }
  const std::uint64_t ms = ps / 1000000000ULL;
  if (ms == 0) throw UnitError("expected a timeout of at least 1ms");
  return ms;
}

std::string resolve_file(const std::string& path, const std::string& spec_dir) {
  std::vector<fs::path> candidates;
  fs::path p(path);
  if (p.is_absolute()) {
    candidates.push_back(p);
  } else {
    candidates.push_back(fs::current_path() / p);
    if (!spec_dir.empty()) candidates.push_back(fs::path(spec_dir) / p);
    if (const std::string shipped = data_dir(); !shipped.empty())
      candidates.push_back(fs::path(shipped) / p);
  }
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return fs::absolute(c).lexically_normal().string();
  }
  return {};
}

SweepSpec load_spec(const std::string& path, const ValueCheck& check) {
  return parse_spec(read_input_file(path), path, check);
}

namespace {

// name, description, mode, metric and timeout.
void read_header(const Ctx& ctx, const YAML::Node& root, SweepSpec& spec) {
  spec.name = root["name"] ? ctx.scalar(root["name"], "name") : fs::path(ctx.file).stem().string();
  if (root["description"]) spec.description = ctx.scalar(root["description"], "description");
  if (root["mode"]) {
    const std::string m = ctx.scalar(root["mode"], "mode");
    if (m == "grid") {
      spec.mode = SweepMode::kGrid;
    } else if (m == "zip") {
      spec.mode = SweepMode::kZip;
    } else {
      ctx.fail(root["mode"], "mode", "expected grid or zip", m);
    }
  }
  if (root["metric"]) {
    spec.metric = ctx.scalar(root["metric"], "metric");
    static const std::regex ident("[A-Za-z_][A-Za-z0-9_]*");
    if (!std::regex_match(spec.metric, ident)) {
      ctx.fail(root["metric"], "metric", "expected a summary key such as step_time_s_mean",
               spec.metric);
    }
    check_metric(spec.metric, ctx.file, root["metric"].Mark().line + 1, "metric");
  }
  if (root["timeout"]) {
    const std::string t = ctx.scalar(root["timeout"], "timeout");
    try {
      parse_timeout_ms(t);
    } catch (const std::exception&) {
      ctx.fail(root["timeout"], "timeout", "expected a positive time like '10m' or '30s'", t);
    }
    spec.timeout = t;
  }
}

// An axis' `option:`: a run option or set:PATH, and its value kind.
void read_axis_option(const Ctx& ctx, const YAML::Node& a, const std::string& key, Axis& axis) {
  std::string opt = ctx.scalar(a["option"], key + ".option");
  if (opt.rfind("set:", 0) == 0) {
    static const std::regex path("[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*");
    if (!std::regex_match(opt.substr(4), path)) {
      ctx.fail(a["option"], key + ".option", "expected set:PATH with a dotted path", opt);
    }
  } else {
    opt = normalize_option(opt);
    if (!sweep_option(opt)) {
      ctx.fail(
          a["option"], key + ".option",
          "unknown run option" + option_hint(opt) + ", expected one of: " + option_list() + ":PATH",
          opt);
    }
  }
  axis.option = opt;
  try {
    axis.kind = option_kind(opt);
  } catch (const std::invalid_argument& e) {
    ctx.fail(a["option"], key + ".option", e.what(), opt);
  }
}

// An axis' name: given, or from its option (set:defaults.link.bandwidth ->
// link_bandwidth, the last two components), as a lower-case identifier.
void read_axis_name(const Ctx& ctx, const YAML::Node& a, const std::string& key, Axis& axis) {
  if (a["name"]) {
    axis.name = ctx.scalar(a["name"], key + ".name");
  } else if (axis.option.rfind("set:", 0) == 0) {
    std::string p = axis.option.substr(4);
    auto last = p.rfind('.');
    auto prev = last == std::string::npos ? std::string::npos : p.rfind('.', last - 1);
    axis.name = prev == std::string::npos ? p : p.substr(prev + 1);
  } else if (!axis.option.empty()) {
    axis.name = axis.option;
  } else {
    ctx.fail(a, key + ".name", "missing (an axis of option bundles needs a name)");
  }
  for (char& c : axis.name) {
    if (c == '-' || c == '.') c = '_';
  }
  static const std::regex ident("[a-z_][a-z0-9_]*");
  if (!std::regex_match(axis.name, ident)) {
    ctx.fail(a["name"] ? a["name"] : a, key + ".name",
             "expected a lower-case identifier ([a-z_][a-z0-9_]*)", axis.name);
  }
}

// An axis' numeric column is <name>_bytes, _bps, _s, _hz or _value: no axis may be named
// like another's numeric column, a reserved column or another axis.
void check_axis_name(const Ctx& ctx, const YAML::Node& a, const std::string& key,
                     const std::string& name, std::set<std::string>& names) {
  bool clash = kReservedColumns.count(name) > 0;
  for (const char* suffix : {"_bytes", "_bps", "_s", "_hz", "_value"}) {
    const std::string sfx = suffix;
    clash = clash || names.count(name + sfx) > 0;
    if (name.size() > sfx.size() && name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0) {
      clash = clash || names.count(name.substr(0, name.size() - sfx.size())) > 0;
    }
  }
  if (clash || !names.insert(name).second) {
    ctx.fail(a["name"] ? a["name"] : a, key + ".name",
             "is reserved or already used by another axis; give the axis a distinct name", name);
  }
}

// One written value: a plain value of the axis' option, or an option bundle with a label.
AxisValue read_axis_value(const Ctx& ctx, const YAML::Node& v, const std::string& vkey,
                          const Axis& axis, bool bundles) {
  AxisValue av;
  if (bundles) {
    if (!v.IsMap()) ctx.fail(v, vkey, "expected a mapping with a label");
    if (!v["label"]) ctx.fail(v, vkey + ".label", "missing");
    av.label = ctx.scalar(v["label"], vkey + ".label");
    read_options(ctx, v, vkey, av.assigns, {"label"});
    return av;
  }
  av.label = check_value(ctx, axis.option, v, vkey);
  if (axis.kind != ValueKind::kText) {
    try {
      av.number = parse_as(axis.kind, av.label);
    } catch (const std::exception&) {
      ctx.fail(v, vkey, quantity_info(axis.kind).like, av.label);
    }
  }
  return av;
}

// `values:` of an axis, each distinct (by label, and by number for numeric axes).
void read_axis_values(const Ctx& ctx, const YAML::Node& a, const std::string& key, Axis& axis) {
  const YAML::Node vals = a["values"];
  if (!vals.IsSequence() || vals.size() == 0) {
    ctx.fail(vals, key + ".values", "expected a non-empty list");
  }
  const bool bundles = vals[0].IsMap();
  if (bundles && !axis.option.empty()) {
    ctx.fail(vals[0], key + ".values[0]",
             "expected a plain value (values are option bundles only without `option`)");
  }
  if (!bundles && axis.option.empty()) {
    ctx.fail(a, key + ".option", "missing (or give values as mappings with a label)");
  }
  std::set<std::string> labels;
  for (std::size_t j = 0; j < vals.size(); ++j) {
    const std::string vkey = fmt::format("{}.values[{}]", key, j);
    AxisValue av = read_axis_value(ctx, vals[j], vkey, axis, bundles);
    if (!labels.insert(av.label).second) ctx.fail(vals[j], vkey, "duplicate value", av.label);
    for (const auto& earlier : axis.values)
      if (axis.kind != ValueKind::kText && !bundles && earlier.number == av.number)
        ctx.fail(vals[j], vkey, "duplicate value: equals '" + earlier.label + "' (one point each)",
                 av.label);
    axis.values.push_back(std::move(av));
  }
}

// `range:` or `logrange:` of a numeric axis; the generated values checked like written ones.
void read_axis_range(const Ctx& ctx, const YAML::Node& a, const std::string& key, Axis& axis) {
  if (axis.option.empty()) ctx.fail(a, key + ".option", "missing");
  if (axis.kind == ValueKind::kText) {
    ctx.fail(a["option"], key + ".option", "takes no numeric values; use `values:` for this option",
             axis.option);
  }
  const bool log = static_cast<bool>(a["logrange"]);
  const std::string rkey = key + (log ? ".logrange" : ".range");
  axis.values = generate_values(ctx, log ? a["logrange"] : a["range"], rkey, log, axis.kind);
  for (auto& v : axis.values) {
    YAML::Node n(v.label);
    try {
      v.label = check_value(ctx, axis.option, n, rkey);
    } catch (const ConfigError&) {
      ctx.fail(log ? a["logrange"] : a["range"], rkey, "generates an invalid value", v.label);
    }
  }
}

// Every axis assigns its option (or the bundle's options) on top of the base; no option
// may be assigned by two axes.
void assign_axis(const Ctx& ctx, const YAML::Node& a, const std::string& key, Axis& axis,
                 std::set<std::string>& axis_options) {
  if (!axis.option.empty()) {
    for (auto& v : axis.values) {
      if (axis.option.rfind("set:", 0) == 0) {
        v.assigns.sets[axis.option.substr(4)] = v.label;
      } else {
        v.assigns.options[axis.option] = v.label;
      }
    }
  }
  std::set<std::string> assigned;
  for (const auto& v : axis.values) {
    for (const auto& [o, _] : v.assigns.options) assigned.insert(o);
    for (const auto& [p, _] : v.assigns.sets) assigned.insert("set:" + p);
  }
  for (const auto& o : assigned) {
    if (!axis_options.insert(o).second) {
      ctx.fail(a, key, "assigns " + o + ", which an earlier axis also assigns");
    }
  }
}

void read_axes(const Ctx& ctx, const YAML::Node& axes, SweepSpec& spec) {
  if (!axes.IsSequence()) ctx.fail(axes, "axes", "expected a list of axes");
  std::set<std::string> names, axis_options;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const YAML::Node a = axes[i];
    const std::string key = fmt::format("axes[{}]", i);
    ctx.allow_keys(a, key, {"name", "option", "values", "range", "logrange"});
    Axis axis;
    axis.line = a.Mark().line + 1;
    const int sources = (a["values"] ? 1 : 0) + (a["range"] ? 1 : 0) + (a["logrange"] ? 1 : 0);
    if (sources != 1) ctx.fail(a, key, "expected exactly one of values, range or logrange");
    if (a["option"]) read_axis_option(ctx, a, key, axis);
    read_axis_name(ctx, a, key, axis);
    check_axis_name(ctx, a, key, axis.name, names);
    if (a["values"]) {
      read_axis_values(ctx, a, key, axis);
    } else {
      read_axis_range(ctx, a, key, axis);
    }
    assign_axis(ctx, a, key, axis, axis_options);
    spec.axes.push_back(std::move(axis));
  }
}

void check_zip_lengths(const SweepSpec& spec) {
  if (spec.mode != SweepMode::kZip || spec.axes.empty()) return;
  for (std::size_t i = 1; i < spec.axes.size(); ++i) {
    if (spec.axes[i].values.size() != spec.axes[0].values.size()) {
      throw ConfigError(spec.file, spec.axes[i].line, fmt::format("axes[{}]", i),
                        fmt::format("has {} values but axes[0] has {} (mode: zip needs equal "
                                    "lengths)",
                                    spec.axes[i].values.size(), spec.axes[0].values.size()));
    }
  }
}

// A grid of more points than a sweep can run (each point is a process) is refused before
// its points are made: three axes of 1,000 values once took 2 GB and ended in bad_alloc.
void check_point_count(const SweepSpec& spec) {
  constexpr std::uint64_t kMaxPoints = 100000;
  if (spec.mode != SweepMode::kGrid || spec.axes.empty()) return;
  std::uint64_t points = 1;
  for (const Axis& axis : spec.axes) {
    points *= std::max<std::uint64_t>(axis.values.size(), 1);
    if (points > kMaxPoints)
      throw ConfigError(spec.file, spec.axes.front().line, "axes",
                        fmt::format("expected a grid of at most {} points (the product of the "
                                    "axes' lengths), got more at axes[{}] ({})",
                                    kMaxPoints, &axis - spec.axes.data(), axis.name));
  }
}

// Spec hash: canonical content (comments and key order do not matter).
std::string spec_hash(const SweepSpec& spec) {
  nlohmann::json canon;
  canon["mode"] = spec.mode == SweepMode::kGrid ? "grid" : "zip";
  canon["metric"] = spec.metric;
  canon["base"] = {{"options", spec.base.options}, {"set", spec.base.sets}};
  canon["axes"] = nlohmann::json::array();
  for (const auto& axis : spec.axes) {
    nlohmann::json a;
    a["name"] = axis.name;
    a["option"] = axis.option;
    a["values"] = nlohmann::json::array();
    for (const auto& v : axis.values) {
      a["values"].push_back(
          {{"label", v.label}, {"options", v.assigns.options}, {"set", v.assigns.sets}});
    }
    canon["axes"].push_back(a);
  }
  return stable_hash(canon.dump());
}

// Two points with identical options would be one point twice.
void check_distinct_points(const SweepSpec& spec) {
  std::map<std::string, std::string> seen;
  for (const Point& p : expand_points(spec)) {
    auto [it, fresh] = seen.emplace(p.id, p.describe(spec));
    if (!fresh) {
      throw ConfigError(
          spec.file, 0, "axes",
          "points '" + it->second + "' and '" + p.describe(spec) + "' have identical run options");
    }
  }
}

}  // namespace

SweepSpec parse_spec(const std::string& yaml_text, const std::string& file,
                     const ValueCheck& check) {
  Ctx ctx{file, fs::path(file).parent_path().string(), check};
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(file, e.mark.line + 1, "", "malformed YAML: " + e.msg);
  }
  if (!root.IsMap()) ctx.fail(root, "", "expected a mapping with base: and axes:");
  ctx.allow_keys(root, "", {"name", "description", "base", "axes", "mode", "metric", "timeout"});
  SweepSpec spec;
  spec.file = file;
  spec.dir = ctx.dir;
  read_header(ctx, root, spec);
  if (root["base"] && !root["base"].IsNull()) read_options(ctx, root["base"], "base", spec.base);
  const YAML::Node axes = root["axes"];
  if (axes && !axes.IsNull()) read_axes(ctx, axes, spec);
  check_zip_lengths(spec);
  check_point_count(spec);
  spec.hash = spec_hash(spec);
  check_distinct_points(spec);
  return spec;
}

std::vector<std::string> spec_options() {
  std::vector<std::string> names;
  for (const options::OptionSpec* spec : options::options_of(options::kSweep))
    names.push_back(spec->name);
  return names;
}

std::string Point::options_json() const {
  nlohmann::json j;
  j["options"] = options.options;
  j["set"] = options.sets;
  return j.dump();
}

std::vector<std::string> Point::run_args(const std::string& json_path,
                                         const std::string& spec_dir) const {
  std::vector<std::string> args;
  for (const auto& [opt, value] : options.options) {
    if (sweep_option(opt)->form == options::Form::kFlag) {
      if (value == "true") args.push_back("--" + opt);
      continue;
    }
    std::string v = value;
    if (opt == "platform" || (opt == "schedule" && !is_schedule_name(value))) {
      std::string r = resolve_file(value, spec_dir);
      if (!r.empty()) v = r;
    }
    for (const auto& one : repeat_values(opt, v)) {
      args.push_back("--" + opt);
      args.push_back(one);
    }
  }
  for (const auto& [path, value] : options.sets) {
    args.push_back("--set");
    args.push_back(path + "=" + value);
  }
  args.push_back("--json");
  args.push_back(json_path);
  args.push_back("--quiet");
  return args;
}

std::string Point::describe(const SweepSpec& spec) const {
  std::string s;
  for (std::size_t i = 0; i < spec.axes.size() && i < labels.size(); ++i) {
    s += (s.empty() ? "" : " ") + spec.axes[i].name + "=" + labels[i];
  }
  return s.empty() ? "(base)" : s;
}

std::vector<Point> expand_points(const SweepSpec& spec) {
  std::vector<std::vector<std::size_t>> combos;
  const std::size_t n = spec.axes.size();
  if (n == 0) {
    combos.push_back({});
  } else if (spec.mode == SweepMode::kZip) {
    for (std::size_t j = 0; j < spec.axes[0].values.size(); ++j) {
      combos.push_back(std::vector<std::size_t>(n, j));
    }
  } else {
    std::vector<std::size_t> idx(n, 0);
    while (true) {
      combos.push_back(idx);
      std::size_t k = n;
      while (k > 0) {
        --k;
        if (++idx[k] < spec.axes[k].values.size()) break;
        idx[k] = 0;
        if (k == 0) {
          k = n + 1;  // wrapped the first axis: done
          break;
        }
      }
      if (k == n + 1) break;
    }
  }
  std::vector<Point> points;
  points.reserve(combos.size());
  for (const auto& combo : combos) {
    Point p;
    p.index = points.size();
    p.options = spec.base;
    for (std::size_t a = 0; a < n; ++a) {
      const AxisValue& v = spec.axes[a].values[combo[a]];
      p.labels.push_back(v.label);
      p.numbers.push_back(v.number);
      for (const auto& [o, val] : v.assigns.options) {
        // A repeatable option (fault) adds to the base's values; any other replaces them.
        std::string& to = p.options.options[o];
        to = to.empty() || !sweep_option(o)->repeatable ? val : to + "\n" + val;
      }
      for (const auto& [path, val] : v.assigns.sets) p.options.sets[path] = val;
    }
    p.id = stable_hash(p.options_json());
    points.push_back(std::move(p));
  }
  return points;
}

std::vector<Point> select_shard(const std::vector<Point>& points, std::size_t shard,
                                std::size_t count) {
  std::vector<Point> out;
  for (const auto& p : points) {
    if (count == 0 || p.index % count == shard) out.push_back(p);
  }
  return out;
}

std::pair<std::size_t, std::size_t> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  std::size_t k = 0, n = 0;
  // from_chars, not stoul: a count past 64 bits is this error too, not std::out_of_range.
  const auto whole = [&](std::size_t from, std::size_t to, std::size_t& out) {
    const char* end = text.data() + to;
    const auto [at, ec] = std::from_chars(text.data() + from, end, out);
    return from < to && ec == std::errc() && at == end;
  };
  if (slash != std::string::npos && whole(0, slash, k) && whole(slash + 1, text.size(), n) &&
      n > 0 && k < n)
    return {k, n};
  throw ConfigError(kCommandLine, 0, "--shard", "expected K/N with 0 <= K < N", text);
}

}  // namespace aggnet::sweeps
