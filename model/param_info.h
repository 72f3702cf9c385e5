// Description of one module parameter: the single source for config keys,
// `aggnet params` and the generated docs/modules pages.
#pragma once

#include <string>
#include <vector>

namespace aggnet {

/// Kind of quantity a parameter holds; decides how its config value is parsed.
enum class Quantity { kTime, kBytes, kRate, kFrequency, kCount, kNumber, kBool };

/// One parameter of a module: `key` is the config key (and the member name minus its
/// unit suffix), `unit` the unit users write, `default_value` as users would write it.
struct ParamInfo {
  std::string key;
  Quantity quantity;
  std::string unit;
  std::string default_value;
  std::string description;
};

/// The parameter list of one module type, e.g. {"WanLink", {...}}.
struct ModuleParamInfo {
  std::string module;
  std::string description;
  std::vector<ParamInfo> params;
};

/// Every module parameter table, in a fixed order: WanLink, MulticastSwitch,
/// FpgaAggregator, Cluster (copies of WanLinkParams::info(), ...).
/// Defined in modules/core/params_info.cpp (library aggnet_module_params).
const std::vector<ModuleParamInfo>& all_module_params();

}  // namespace aggnet
