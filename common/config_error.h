// The one error type every user-facing input problem becomes.
#pragma once

#include <stdexcept>
#include <string>

namespace aggnet {

/// A problem in user input (a config file, a schedule file, a command-line option).
/// what() is one line: "<file>:<line>: <key>: <what was expected>[, got '<value>']".
/// The CLI prints it to stderr and exits with status 2 without writing any output file.
/// `line` is 1-based; a line <= 0 (unknown, or a command-line option such as a
/// `--set` override, whose file is "--set") is left out: "--set: <key>: <expected>".
/// An empty key is left out too: "<file>:<line>: <expected>".
class ConfigError : public std::runtime_error {
 public:
  ConfigError(const std::string& file, int line, const std::string& key,
              const std::string& expected);
  /// Same, with the offending value appended as ", got '<value>'".
  ConfigError(const std::string& file, int line, const std::string& key,
              const std::string& expected, const std::string& got);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& key() const { return key_; }
  /// What was expected (and what was given): the message after "<file>:<line>: <key>: ".
  const std::string& detail() const { return detail_; }

 private:
  std::string file_;
  int line_;
  std::string key_;
  std::string detail_;
};

/// The "file" of an error in a command-line value the error's raiser cannot name the
/// command of (e.g. a schedule name parsed in config/); its key is the option's name.
inline constexpr const char* kCommandLine = "<command line>";

/// The one line `command` ("aggnet run") prints for `e`. Errors in the command line read
/// "<command>: --<option>[ <item>]: <expected>": an error whose file is kCommandLine
/// names its key as the option; one whose file is an option ("--set", "--trace") names
/// that option and the item in it ("aggnet run: --set defaults.link.bandwidth: ...").
/// Errors in a file keep "<file>:<line>: <key>: <expected>".
std::string error_line(const std::string& command, const ConfigError& e);

}  // namespace aggnet
