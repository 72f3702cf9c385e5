// The one table of run options: every option of `aggnet run`, `aggnet schedule` and
// `aggnet size-buffers`, each declared once with its quantity or form, default, help
// text, check, the commands that take it and how it sets the model's RunOptions.
// Derived from it: the commands' program_options descriptions and --help text
// (apps/cli_options.h), the conversion to RunOptions (options/option_values.h) and the
// options a sweep spec accepts with their checks (sweeps/spec.cpp).
//
// Plain data: reading the table needs no model type (RunOptions is only named by the
// setters), so the sweeps, which drive the `aggnet run` command line and do not link the
// model, use it too.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/param_rows.h"

namespace aggnet {

struct RunOptions;  // model/run_options.h

namespace options {

/// The commands that take an option (a bit set).
enum Command : unsigned {
  kRun = 1u << 0,          ///< aggnet run
  kSchedule = 1u << 1,     ///< aggnet schedule
  kSizeBuffers = 1u << 2,  ///< aggnet size-buffers
  kSweep = 1u << 3,        ///< a sweep spec's `base:` and axes (passed on to aggnet run)
  kPlatform = 1u << 4,     ///< aggnet platform
};

/// How an option's value is written, beside its Quantity (common/param_rows.h: the one
/// enum of parameters, options and sweep axes); the two decide its check.
enum class Form {
  kValue,     ///< a value of its quantity: a positive size, a time, an integer or a number
              ///< in `range`, free text
  kPath,      ///< a file to read
  kOutput,    ///< a file to write
  kSchedule,  ///< a schedule name or a schedule YAML file
  kOverride,  ///< a platform override PATH=VALUE
  kSwitch,    ///< on | off
  kChoice,    ///< one of `choices`
  kFlag,      ///< no value on the command line; true | false in a sweep spec
};

/// Bounds of a number (kCount, kNumber; kTime in seconds).
struct Interval {
  double lo = 0, hi = 0;
  bool lo_open = false, hi_open = false;
  bool contains(double x) const;
};

/// How an option sets the model's RunOptions from its checked value.
using Setter = void (*)(RunOptions&, const std::string&);

/// One row of the table.
struct OptionSpec {
  std::string name;  ///< long option name, e.g. "flow-control"
  /// kBytes (a positive size), kTime, kCount (a whole number), kNumber; kText for the
  /// other forms (files, schedules, words, text). In a sweep: the axis' kind.
  Quantity quantity = Quantity::kText;
  Form form = Form::kValue;
  std::string fallback;              ///< default value as text; empty: none
  std::string help;                  ///< --help text
  unsigned commands = 0;             ///< Command bits
  char short_name = 0;               ///< one-letter alias, 0: none
  Interval range;                    ///< kCount, kNumber, kTime
  std::vector<std::string> choices;  ///< kChoice
  bool repeatable = false;           ///< may be given several times (values add up)
  Setter apply = nullptr;            ///< nullptr: the command reads the value itself

  bool takes(Command command) const { return (commands & command) != 0; }
  bool has_default() const { return !fallback.empty(); }
};

/// Every option, in --help order. Setters run in this order (round-start after
/// flow-control, whose default it follows).
const std::vector<OptionSpec>& run_option_table();

/// The row named `name`, or nullptr.
const OptionSpec* find_option(const std::string& name);

/// The rows `command` takes, in table order.
std::vector<const OptionSpec*> options_of(Command command);

/// A sweep axis or `base:` may set the options a sweep takes; the other options of
/// `aggnet run` (outputs: --json, --vcd, --quiet, ...) belong to the sweep's runner.
bool runner_owned(const OptionSpec& spec);

/// The default of `spec` as the command line shows it: a file is looked up in the
/// working directory, then in the shipped data (common/data_dir.h).
std::string default_value(const OptionSpec& spec);

/// A value that fails its check; what() is "expected ..." (callers add where and key).
class OptionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What a value of `spec` must look like, e.g. "expected a positive size like '64MiB'".
std::string expectation(const OptionSpec& spec);

/// Tells whether a file named in an option exists (sweeps resolve against the spec's
/// directory); without one, files are left to the command that reads them.
using FileCheck = std::function<bool(const std::string&)>;

/// Checks one value of `spec`. Errors: OptionError.
void check_value(const OptionSpec& spec, const std::string& value,
                 const FileCheck& exists = nullptr);

/// Whether a schedule value names a file rather than a built-in schedule.
bool looks_like_file(const std::string& value);

}  // namespace options
}  // namespace aggnet
