// A small strict reader over yaml-cpp: every user mistake becomes a one-line
// ConfigError naming file, line and key (see common/config_error.h).
//
// Typical use:
//   YAML::Node root = load_yaml_file(path);
//   YamlMap top(root, path, "");                 // must be a mapping
//   top.allow_keys({"name", "sites", "links"});  // unknown keys -> ConfigError
//   std::string name = top.scalar("name");
//   YamlMap link(top.required("link"), path, "link");
//   const ModuleParamInfo& m = WanLinkParams::table().info();
//   std::uint64_t bps = link.param(*find_param(m, "bandwidth"));  // parsed and checked
//
// Positions: yaml-cpp marks are 0-based; messages use 1-based lines. Nodes created in
// code (e.g. by a `--set path=value` override) have no position; errors about them
// are reported as "--set: <key>: ..." (file "--set", line 0).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/config_error.h"
#include "model/param_info.h"

namespace aggnet {

/// The file name used in messages for values that came from `--set` overrides.
inline constexpr const char* kOverrideFile = "--set";

/// Parses YAML text. Errors: ConfigError(file, line, "", "malformed YAML: ...") with
/// the line yaml-cpp reports for the syntax error.
YAML::Node parse_yaml(const std::string& text, const std::string& file);

/// Reads and parses a YAML file. Errors: ConfigError(path, 0, "", "cannot read file")
/// when it cannot be opened, otherwise as parse_yaml.
YAML::Node load_yaml_file(const std::string& path);

/// True if the node carries a position from a parsed file (false for nodes made in
/// code, e.g. by an override).
bool yaml_has_position(const YAML::Node& node);

/// 1-based line of a node, or 0 when it has no position.
int yaml_line(const YAML::Node& node);

/// Throws ConfigError located at `node`: (file, line) when the node came from the file,
/// ("--set", 0) when it was created by an override. `got`, when non-empty, is appended
/// as ", got '<got>'".
[[noreturn]] void throw_at(const YAML::Node& node, const std::string& file, const std::string& key,
                           const std::string& expected, const std::string& got = {});

/// A YAML mapping being read. Tracks which keys were used and reports mistakes with
/// the dotted key path (`path` + "." + key, e.g. "defaults.link.bandwidth").
class YamlMap {
 public:
  /// Errors: ConfigError "expected a mapping" when `node` is not a mapping (a null
  /// node, e.g. "fpga:" with nothing after it, is treated as an empty mapping).
  YamlMap(const YAML::Node& node, std::string file, std::string path);

  /// Declares the allowed keys and checks them all at once. Errors: ConfigError at the
  /// first unknown key ("unknown key, expected one of: a, b, c"), at a duplicated key,
  /// or at a key that is not a plain scalar.
  void allow_keys(const std::vector<std::string>& allowed);

  bool has(const std::string& key) const;
  /// The value node for `key`. Errors: ConfigError at the mapping when it is missing.
  YAML::Node required(const std::string& key) const;
  /// The value node, or an undefined node (operator bool false) when absent.
  YAML::Node optional(const std::string& key) const;
  /// The key node itself (its line is the "key:" line, also for block lists and
  /// mappings whose value starts on the next line), or an undefined node.
  YAML::Node key_node(const std::string& key) const;
  /// Scalar value of a required key. Errors: ConfigError when missing or not a scalar.
  std::string scalar(const std::string& key) const;
  /// Scalar value of an optional key, or `fallback` when absent.
  std::string scalar_or(const std::string& key, const std::string& fallback) const;
  /// Number (may be negative, e.g. longitudes) of an optional key within [lo, hi].
  double number_or(const std::string& key, double fallback, double lo, double hi) const;

  /// The value of parameter `p`, a key of this mapping, parsed per its Quantity and
  /// checked against its Check. Errors: ConfigError at the value when it is missing, not
  /// a scalar, does not parse or fails the check.
  std::uint64_t param(const ParamInfo& p) const;

  /// Dotted path of a key of this mapping ("defaults.link" + "bandwidth").
  std::string key_path(const std::string& key) const;
  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  const YAML::Node& node() const { return node_; }

 private:
  // The mapping's entries in file order, read once: a lookup through yaml-cpp's
  // iterators builds two node handles per entry, and a mapping is asked for most keys.
  struct Entry {
    YAML::Node key;
    YAML::Node value;
    std::string name;  ///< the key's text; empty for a key that is not a scalar
  };
  const Entry* find(const std::string& key) const;

  YAML::Node node_;
  std::string file_;
  std::string path_;
  std::vector<Entry> entries_;
};

}  // namespace aggnet
