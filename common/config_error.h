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

 private:
  std::string file_;
  int line_;
  std::string key_;
};

}  // namespace aggnet
