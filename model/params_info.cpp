// Parsing, checking and writing parameter values per Quantity, and the list of every
// module's table. The tables themselves sit next to their structs (model/params/*.h).
#include <cctype>
#include <stdexcept>

#include "common/strings.h"
#include "common/units.h"
#include "model/param_info.h"
#include "model/params/cluster.h"
#include "model/params/fpga.h"
#include "model/params/network.h"

namespace aggnet {
namespace {

/// `s` without a trailing `unit` or its plural ("512bit", "64 cycles").
std::string strip_unit(std::string s, const std::string& unit) {
  if (unit.empty()) return s;
  for (const std::string& suffix : {unit + "s", unit}) {
    if (s.size() > suffix.size() &&
        s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return trim(s.substr(0, s.size() - suffix.size()));
    }
  }
  return s;
}

// [0-9]+(\.[0-9]+)?([eE]\+?[0-9]+)?, by hand: compiling a std::regex costs more than
// reading a whole platform file.
bool is_plain_number(const std::string& s) {
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > from;
  };
  if (!digits()) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && s[i] == '+') ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

std::uint64_t parse_count(const ParamInfo& p, const std::string& text) {
  const std::string what =
      "expected a whole number like '64'" + (p.unit.empty() ? "" : " or '64" + p.unit + "'");
  const std::string s = strip_unit(trim(text), p.unit);
  if (!s.empty() && s[0] == '-') throw UnitError(what + " (negative values are not allowed)");
  if (!is_plain_number(s)) throw UnitError(what);
  try {
    // A bare size is a count of bytes: the exact decimal rules of units.h ("2e7").
    return parse_bytes(s + "B");
  } catch (const UnitError& e) {
    const bool too_large = std::string(e.what()).find("too large") != std::string::npos;
    throw UnitError(what + (too_large ? " (value too large)" : ""));
  }
}

}  // namespace

std::uint64_t parse_param_value(const ParamInfo& p, const std::string& text) {
  if (const auto parse = quantity_info(p.quantity).parse) return parse(text);
  if (p.quantity == Quantity::kCount) return parse_count(p, text);
  throw std::logic_error("a module parameter of quantity " + quantity_name(p.quantity));
}

std::string check_violation(const ParamInfo& p, std::uint64_t value) {
  const Check& c = p.check;
  if (value > c.max) return "expected a " + quantity_name(p.quantity) + " of at most " + c.max_text;
  if ((!c.positive || value != 0) && value % c.multiple_of == 0) return "";
  const std::string like = " like '" + p.default_value + "'";
  const std::string positive = c.positive ? "positive " : "";
  if (c.multiple_of == 1) return "expected a " + positive + quantity_name(p.quantity) + like;
  return "expected a " + positive + "multiple of " + std::to_string(c.multiple_of) + " " + p.unit +
         "s" + like;
}

std::string format_param_value(Quantity q, const std::string& unit, std::uint64_t value) {
  if (q == Quantity::kCount) return std::to_string(value);
  const std::uint64_t per_unit = parse_param_value(ParamInfo{"", q, unit, "", {}, ""}, "1" + unit);
  std::string out = std::to_string(value / per_unit);
  std::uint64_t rest = value % per_unit;
  if (rest != 0) out += '.';
  for (int digits = 0; rest != 0; ++digits) {
    if (digits == 20) throw std::logic_error("no exact decimal of " + out + " in " + unit);
    rest *= 10;
    out += static_cast<char>('0' + rest / per_unit);
    rest %= per_unit;
  }
  return out + unit;
}

std::string check_text(const Check& check) {
  std::vector<std::string> parts;
  if (check.required) parts.push_back("required");
  if (check.positive) parts.push_back("> 0");
  if (check.multiple_of > 1) parts.push_back("multiple of " + std::to_string(check.multiple_of));
  if (check.max_text[0] != '\0') parts.push_back("<= " + std::string(check.max_text));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

const ParamRow& declared_row(const char* section, std::size_t index, const char* key) {
  const std::vector<const ParamRow*> rows = section_rows(section);
  if (index >= rows.size() || std::string(rows[index]->key) != key)
    throw std::logic_error(
        std::string("ParamTable of section '") + section + "' declares '" + key +
        "' where common/param_rows.cpp has " +
        (index < rows.size() ? "'" + std::string(rows[index]->key) + "'" : std::string("no row")));
  return *rows[index];
}

void check_all_rows_declared(const char* section, std::size_t declared) {
  const std::vector<const ParamRow*> rows = section_rows(section);
  if (declared < rows.size())
    throw std::logic_error(std::string("ParamTable of section '") + section +
                           "' has no member for row '" + rows[declared]->key + "'");
}

const std::vector<ModuleParamInfo>& all_module_params() {
  static const std::vector<ModuleParamInfo> all{
      WanLinkParams::table().info(), SwitchParams::table().info(), FpgaParams::table().info(),
      ClusterParams::table().info()};
  return all;
}

const ModuleParamInfo* find_module_by_section(const std::string& section) {
  for (const auto& m : all_module_params()) {
    if (m.section == section) return &m;
  }
  return nullptr;
}

const ParamInfo* find_param(const ModuleParamInfo& module, const std::string& key) {
  for (const auto& p : module.params) {
    if (p.key == key) return &p;
  }
  return nullptr;
}

std::vector<std::string> param_keys(const ModuleParamInfo& module) {
  std::vector<std::string> keys;
  for (const auto& p : module.params) keys.push_back(p.key);
  return keys;
}

}  // namespace aggnet
