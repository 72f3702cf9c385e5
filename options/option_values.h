// The checked option values of one command line, and their conversion to the model's
// RunOptions. Every error is a ConfigError whose "file" is the command ("aggnet run") and
// whose key is the option ("--buffer"): `aggnet run: --buffer: expected ..., got '...'`.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "model/run_options.h"
#include "options/run_option_table.h"

namespace aggnet::options {

/// Values of the options a command takes (table rows of that command): given ones and
/// the defaults of the rest. Values are checked when set.
class OptionValues {
 public:
  OptionValues(std::string where, Command command);

  /// Sets option `name` (a row `command` takes) to `values` (one unless repeatable; a
  /// flag is "true" or "false"); `given`: on the command line, not the default.
  /// Errors: ConfigError(where, --name) naming the first bad value; std::logic_error for
  /// an option the command does not take.
  void set(const std::string& name, const std::vector<std::string>& values, bool given);

  const std::string& where() const { return where_; }
  Command command() const { return command_; }
  bool has(const std::string& name) const;    ///< given or defaulted
  bool given(const std::string& name) const;  ///< on the command line
  /// The value ("" when absent); a repeatable option's last value.
  const std::string& text(const std::string& name) const;
  const std::vector<std::string>& list(const std::string& name) const;  ///< all values
  bool flag(const std::string& name) const;
  std::uint64_t bytes(const std::string& name) const;
  double number(const std::string& name) const;
  std::uint64_t integer(const std::string& name) const;
  std::uint64_t time_ps(const std::string& name) const;

  /// Throws ConfigError(where, 0, "--name", expected[, got]).
  [[noreturn]] void fail(const std::string& name, const std::string& expected,
                         const std::string& got = {}) const;

  /// `--name value` words for an `aggnet run` child: every option this command shares
  /// with `aggnet run` except its outputs and `skip`, flags as `--name` when true.
  std::vector<std::string> run_args(const std::set<std::string>& skip = {}) const;

 private:
  struct Entry {
    std::vector<std::string> values;
    bool given = false;
  };
  const Entry* entry(const std::string& name) const;

  std::string where_;
  Command command_;
  std::map<std::string, Entry> entries_;
};

/// The run options the values set (each row's setter, in table order; options the
/// command does not take keep RunOptions' defaults), checked together: arrival alignment
/// needs an aligned start; at most 2^22 chunks per gradient; functional mode needs a
/// gradient of at most 64 MiB in whole floats. Errors: ConfigError(where, --option).
RunOptions to_run_options(const OptionValues& values);

}  // namespace aggnet::options
