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
      key_(key) {}

ConfigError::ConfigError(const std::string& file, int line, const std::string& key,
                         const std::string& expected, const std::string& got)
    : ConfigError(file, line, key, expected + ", got '" + got + "'") {}

}  // namespace aggnet
