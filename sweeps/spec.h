// Sweep specifications: a base set of `aggnet run` options plus axes to vary, read from
// YAML, validated up front and expanded into sweep points (see sweeps/README.md).
// Plain C++: sweeps drive the `aggnet run` command line, they do not link the model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/param_rows.h"

namespace aggnet::sweeps {

/// What kind of quantity an axis value is (common/param_rows.h: the one Quantity of
/// parameters, options and axes); decides how ranges are generated, how values are
/// written back ("64KiB", "10Gbps") and the numeric column stored next to the label. An
/// axis is never a kCount: a count is a kNumber here.
using ValueKind = Quantity;

/// Name of a ValueKind as stored in the database's `axes` table ("bytes", "rate", ...).
std::string kind_name(ValueKind kind);

/// The `aggnet run` command line of one point, as text (the model's RunOptions are made
/// from it by the run): option name (hyphenated, e.g. "flow-control") to value, and
/// `--set PATH=VALUE` platform overrides. Sorted maps, so canonical.
struct RunArguments {
  std::map<std::string, std::string> options;
  std::map<std::string, std::string> sets;
};

/// One value of an axis: the label stored in the axis column, its numeric value in the
/// kind's base unit (when it has one), and the options it assigns.
struct AxisValue {
  std::string label;
  std::optional<double> number;
  RunArguments assigns;
};

/// One axis of the sweep.
struct Axis {
  std::string name;    ///< column name in the results database (unique, [a-z_][a-z0-9_]*)
  std::string option;  ///< run option or "set:PATH"; empty for a variant axis (bundles)
  ValueKind kind = ValueKind::kText;
  std::vector<AxisValue> values;
  int line = 0;  ///< line of the axis in the spec (for messages)
};

/// How axes combine into points.
enum class SweepMode {
  kGrid,  ///< Cartesian product; the last axis varies fastest
  kZip,   ///< i-th values of all axes together; all axes have the same length
};

/// A validated sweep specification.
struct SweepSpec {
  std::string file;         ///< path as given
  std::string dir;          ///< directory of the file (relative paths resolve here first)
  std::string name;         ///< `name:` or the file's stem
  std::string description;  ///< `description:` (free text)
  std::string hash;         ///< spec hash: 16 hex digits of the canonical spec content
  RunArguments base;        ///< `base:` options shared by every point
  std::vector<Axis> axes;
  SweepMode mode = SweepMode::kGrid;
  std::string metric = "step_time_s_mean";  ///< summary key the crossover compares (lower wins)
  std::optional<std::string> timeout;       ///< `timeout:` default per-point timeout ("10m")
};

/// One sweep point: a full set of run options and the axis labels that produced it.
struct Point {
  std::size_t index = 0;            ///< position in expansion order (stable for a given spec)
  std::string id;                   ///< stable hash of the point's options (16 hex digits)
  std::vector<std::string> labels;  ///< one per axis
  std::vector<std::optional<double>> numbers;  ///< one per axis
  RunArguments options;                        ///< base merged with every axis' assignment

  /// Canonical JSON of the options (sorted keys): the input of the point id.
  std::string options_json() const;
  /// Arguments for `aggnet run` (after the "run" word): one `--opt value` pair per option,
  /// `--set PATH=VALUE` per override, then `--json json_path --quiet`. Relative
  /// platform/schedule file paths are resolved with `resolve`.
  std::vector<std::string> run_args(const std::string& json_path,
                                    const std::string& spec_dir) const;
  /// "buffer=64KiB schedule=triads" (axis name = label, for messages).
  std::string describe(const SweepSpec& spec) const;
};

/// The `aggnet run` options a spec's `base:`, bundles and axes may set, in the option
/// table's order (options/run_option_table.h: the rows for Command kSweep; `set` is
/// written as a mapping or an axis `set:PATH`). The other options of `aggnet run`
/// (outputs such as json, vcd, quiet) belong to the sweep's runner.
std::vector<std::string> spec_options();

/// A check of one run option's value that needs code the sweeps do not link (the model):
/// `aggnet sweep` passes `aggnet run`'s own parser of `--fault` specs. Called with the
/// option's name and each value a spec gives it (each of a list's); throws
/// std::invalid_argument saying what was expected, reported at that value's line and key.
using ValueCheck = std::function<void(const std::string& option, const std::string& value)>;

/// Loads and validates a spec file (`check`: run's checks the sweeps cannot make). Errors:
/// ConfigError naming file, line and key (one line; the CLI exits 2 without writing anything).
SweepSpec load_spec(const std::string& path, const ValueCheck& check = {});

/// Parses spec YAML text; `file` is used in messages and to resolve relative paths.
SweepSpec parse_spec(const std::string& yaml_text, const std::string& file,
                     const ValueCheck& check = {});

/// All points of a spec in expansion order. Errors: none (the spec is validated).
std::vector<Point> expand_points(const SweepSpec& spec);

/// The deterministic slice `shard` of `count` (0 <= shard < count): points whose index
/// modulo `count` equals `shard`. Shards are disjoint and together cover all points.
std::vector<Point> select_shard(const std::vector<Point>& points, std::size_t shard,
                                std::size_t count);

/// Parses "K/N" (0 <= K < N). Errors: ConfigError(kCommandLine, "--shard").
std::pair<std::size_t, std::size_t> parse_shard(const std::string& text);

/// Parses a timeout: any time `parse_time_ps` accepts ("30s", "1.5min") plus the short
/// forms "10m" (minutes) and "2h" (hours). Returns milliseconds (at least 1).
/// Errors: UnitError.
std::uint64_t parse_timeout_ms(const std::string& text);

/// Resolves a file named in a spec: as given if absolute or existing relative to the
/// working directory, else relative to the spec's directory, else relative to the
/// source tree. Returns the first existing candidate, or an empty string.
std::string resolve_file(const std::string& path, const std::string& spec_dir);

/// Formats an exact value of `kind` with the largest unit that divides it
/// (65536 bytes -> "64KiB", 1e10 bps -> "10Gbps", 0.0333 s -> "33300us").
std::string format_exact(ValueKind kind, double value);

/// Kind of the value of run option `option` ("gradient" -> kBytes, "set:PATH" from the
/// row the path names: common/param_rows.h); `integer` (when given) is set for options
/// that take whole numbers. Errors: std::invalid_argument for a `set:` path that names
/// no row (with a did-you-mean).
ValueKind run_option_kind(const std::string& option, bool* integer = nullptr);

/// Numeric value of `text` as `kind` in the kind's base unit (bytes, bit/s, s, Hz).
/// Errors: UnitError (also for kText).
double parse_value(ValueKind kind, const std::string& text);

/// Column holding the number of an axis or option called `name` whose values are of
/// `kind`: the unit in the name (`buffer_bytes`, `link_rate_bps`, `delay_s`,
/// `clock_hz`; `steps_value` for plain numbers); "" for kText.
std::string numeric_column(const std::string& name, ValueKind kind);

/// The keys of `aggnet run --json`'s `summary` a sweep metric may name (with the
/// co-located reference and --eps: the full set).
const std::vector<std::string>& summary_metrics();

/// Checks that `metric` is one of summary_metrics(). Errors: ConfigError(file, line, key)
/// with a did-you-mean suggestion.
void check_metric(const std::string& metric, const std::string& file, int line,
                  const std::string& key);

/// 64-bit FNV-1a of `text` as 16 lowercase hex digits.
std::string stable_hash(const std::string& text);

}  // namespace aggnet::sweeps
