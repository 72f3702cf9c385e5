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
/// graph, an MTU not larger than the header.
Platform load_platform(const std::string& path, const std::vector<Override>& overrides = {});

}  // namespace aggnet
