// Module parameters, each declared once: the row (section, key, quantity, unit) in
// common/param_rows.h, where the sweeps read it too; a parameter struct (model/params/*.h)
// lists next to its members a ParamTable binding each row's key to its member, with the
// description and check; the member's initializer is the default. The platform loader
// (YAML keys, binding, validation, `--set` paths: config/platform_loader.h), `aggnet
// params` and the docs/modules pages all derive from these tables.
//
// Naming: key = member name minus its unit suffix, the suffix given by the quantity
// (_ps, _bytes, _bps, _hz; a count names what it counts: datapath_width_bits).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/param_rows.h"

namespace aggnet {

/// What is checked of one parameter as it is read: bounds on its value, and whether every
/// entry of a list (each of links[*]) must set it, which also keeps it out of `defaults`.
struct Check {
  bool positive = false;
  std::uint64_t multiple_of = 1;
  bool required = false;
  std::uint64_t max = UINT64_MAX;  ///< largest value, in the quantity's base unit
  const char* max_text = "";       ///< `max` as users write it ("1000s")
};
inline constexpr Check kAnyValue{};
inline constexpr Check kPositive{true, 1, false};
inline constexpr Check kRequired{false, 1, true};
/// Every delay term (link delay and jitter, switch latency, access delay) is at most
/// 1000 s: a larger one is surely a typo, and a run's sums of delays must stay far below
/// the end of SystemC's 64-bit ps clock (1.8e7 s; a delay near it wrapped and hung runs).
inline constexpr std::uint64_t kMaxDelayPs = 1'000'000'000'000'000ull;
inline constexpr Check kDelay{false, 1, false, kMaxDelayPs, "1000s"};
inline constexpr Check kRequiredDelay{false, 1, true, kMaxDelayPs, "1000s"};

/// One parameter, without its struct: what the YAML reader, `aggnet params` and the
/// docs need.
struct ParamInfo {
  std::string key;
  Quantity quantity = Quantity::kCount;
  std::string unit;  ///< unit users write ("ms", "Gbps"); for a count, what it counts
  std::string description;
  Check check;
  std::string default_value;  ///< the member's default written in `unit` ("100Gbps")
};

/// The parameters of one module type, e.g. WanLink.
struct ModuleParamInfo {
  std::string module;   ///< "WanLink"
  std::string section;  ///< its platform YAML mapping: "link", "switch", "fpga", "cluster"
  std::string description;
  std::vector<ParamInfo> params;
  std::vector<std::string> invariants;  ///< checks across parameters, e.g. "`mtu` > `header`"
};

/// Parses a value of parameter `p` in its quantity's base unit (ps, bytes, bits/s, Hz; a
/// count, optionally followed by its unit: "512", "512bit", "2e7"). Does not apply the
/// Check. Errors: UnitError saying what was expected.
std::uint64_t parse_param_value(const ParamInfo& p, const std::string& text);

/// What `p`'s Check expected when `value` fails it ("expected a positive rate like
/// '100Gbps'"), or "" when the value passes.
std::string check_violation(const ParamInfo& p, std::uint64_t value);

/// `value` written exactly in `unit` as users would write it ("2us", "64MiB", "512").
std::string format_param_value(Quantity q, const std::string& unit, std::uint64_t value);

/// The Check as the docs show it: "> 0", "> 0, multiple of 8", "required", or "".
std::string check_text(const Check& check);

/// One row of a ParamTable, as declared next to the struct's members: the key of a row of
/// the table's section (common/param_rows.h) and the member holding its value.
template <class T>
struct ParamDecl {
  const char* key;
  std::uint64_t T::*member;
  const char* description;
  Check check = kAnyValue;
};

/// A check across parameters of one struct, run once the struct is complete.
template <class T>
struct Invariant {
  const char* doc;                     ///< for the docs: "`mtu` > `header`"
  std::vector<std::string> keys;       ///< errors name the first of these the config set
  std::string (*violation)(const T&);  ///< what was expected, or "" when it holds
};

/// The row of `section` declared as `index`-th by a table: its key must be that row's.
/// Errors: std::logic_error naming the key or row without a counterpart.
const ParamRow& declared_row(const char* section, std::size_t index, const char* key);

/// Errors: std::logic_error when `section` has a row past the `declared` ones.
void check_all_rows_declared(const char* section, std::size_t declared);

/// The parameter table of struct T: the section's rows (common/param_rows.h), each bound
/// to its member in the same order, with the struct's default-initialized members as the
/// defaults.
template <class T>
class ParamTable {
 public:
  ParamTable(const char* module, const char* section, const char* description,
             std::initializer_list<ParamDecl<T>> params, std::vector<Invariant<T>> invariants = {})
      : info_{module, section, description, {}, {}}, invariants_(std::move(invariants)) {
    const T defaults{};
    for (const ParamDecl<T>& d : params) {
      const ParamRow& row = declared_row(section, members_.size(), d.key);
      info_.params.push_back(
          ParamInfo{row.key, row.quantity, row.unit, d.description, d.check,
                    format_param_value(row.quantity, row.unit, defaults.*d.member)});
      members_.push_back(d.member);
    }
    check_all_rows_declared(section, members_.size());
    for (const Invariant<T>& inv : invariants_) info_.invariants.push_back(inv.doc);
  }

  const ModuleParamInfo& info() const { return info_; }
  /// The member of row `i` (rows in the order of info().params).
  std::uint64_t T::*member(std::size_t i) const { return members_.at(i); }
  const std::vector<Invariant<T>>& invariants() const { return invariants_; }

 private:
  ModuleParamInfo info_;
  std::vector<std::uint64_t T::*> members_;
  std::vector<Invariant<T>> invariants_;
};

/// Every module parameter table, in a fixed order: WanLink, MulticastSwitch,
/// FpgaAggregator, Cluster (the info() of WanLinkParams::table(), ...).
const std::vector<ModuleParamInfo>& all_module_params();

/// The module whose YAML section is `section` ("fpga"), or nullptr.
const ModuleParamInfo* find_module_by_section(const std::string& section);

/// The parameter `key` of `module`, or nullptr.
const ParamInfo* find_param(const ModuleParamInfo& module, const std::string& key);

/// The config keys of a module's parameters, in table order.
std::vector<std::string> param_keys(const ModuleParamInfo& module);

}  // namespace aggnet
