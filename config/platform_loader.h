// Loading a platform from YAML: validation, `--set` overrides, one-line errors.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/platform.h"

namespace aggnet {

/// One `--set path=value` override applied to the YAML tree before validation,
/// e.g. {"defaults.link.bandwidth", "10Gbps"} or {"sites.lon.fpga.buffer", "1GiB"}.
using Override = std::pair<std::string, std::string>;

/// Loads and validates a platform file. Errors: ConfigError (one line with file, line,
/// key and what was expected) for malformed YAML, unknown keys, bad units, zero or
/// negative rates, duplicate or unknown sites, links to unknown sites, a disconnected
/// graph, and every check of the parameter tables (e.g. an MTU not larger than the
/// header, a pipeline latency that does not fit in 64-bit picoseconds).
Platform load_platform(const std::string& path, const std::vector<Override>& overrides = {});

/// The module parameter an override path sets ("sites.lon.fpga.buffer" -> FpgaAggregator's
/// `buffer`), from the parameter tables; nullptr for the other fields (name, source,
/// lat_deg...) and for paths that name no parameter. Site codes and link names are not
/// checked (that needs the platform file).
const ParamInfo* override_param(const std::string& path);

}  // namespace aggnet
