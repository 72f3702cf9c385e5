// ConfigError: one-line messages "<file>:<line>: <key>: <expected>[, got '<value>']".
#include "common/config_error.h"

#include <fmt/format.h>

namespace aggnet {
namespace {

std::string make_message(const std::string& file, int line, const std::string& key,
                         const std::string& expected) {
  std::string msg = file;
  if (line > 0) msg += fmt::format(":{}", line);
  msg += ": ";
  if (!key.empty()) msg += key + ": ";
  msg += expected;
  // Keep the message on one line whatever the inputs contain.
  for (char& c : msg) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return msg;
}

}  // namespace

ConfigError::ConfigError(const std::string& file, int line, const std::string& key,
                         const std::string& expected)
    : std::runtime_error(make_message(file, line, key, expected)),
      file_(file),
      line_(line),
      key_(key),
      detail_(expected) {}

ConfigError::ConfigError(const std::string& file, int line, const std::string& key,
                         const std::string& expected, const std::string& got)
    : ConfigError(file, line, key, expected + ", got '" + got + "'") {}

std::string error_line(const std::string& command, const ConfigError& e) {
  const std::string& file = e.file();
  std::string option;
  if (file == kCommandLine)
    option = e.key().rfind("--", 0) == 0 ? e.key() : "--" + e.key();
  else if (file.rfind("--", 0) == 0)
    option = e.key().empty() ? file : file + " " + e.key();
  else
    return e.what();
  return ConfigError(command, 0, option, e.detail()).what();
}

}  // namespace aggnet
