// The command line every validation harness shares: the platform (aggnet's YAML, with
// `--set` overrides), the scenario as an aggnet schedule name, G and the chunk size.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/platform.h"
#include "model/schedule.h"

namespace aggnet::validation {

struct Scenario {
  Platform platform;
  Schedule schedule;
  std::uint64_t gradient_bytes = 0;  ///< G: bytes per site (per message for point-to-point)
  std::uint64_t chunk_bytes = 1ull << 20;
};

/// Reads `--platform FILE [--set KEY=VALUE]... --schedule NAME --gradient BYTES
/// [--chunk BYTES]`; arguments it does not know are left in `rest`.
/// Errors: ConfigError (bad platform, schedule or size; a missing option).
Scenario parse_scenario(int argc, char** argv, std::vector<std::string>& rest);

/// Bytes on the wire of one message of G (or of a ring segment for the ring family),
/// header-inflated per chunk. Errors: ConfigError when links differ in MTU or header.
std::uint64_t message_bytes_on_wire(const Scenario& scenario, std::uint64_t payload_bytes);

/// The ring family's segment payload (G / n). Precondition: a ring collective.
std::uint64_t ring_segment_bytes(const Scenario& scenario);

/// {"closed_form": {...}} for the scenario (traffic/closed_form.h), every time in seconds.
nlohmann::json closed_form_json(const Scenario& scenario);

/// Runs `body`, turning a ConfigError into one line on stderr and exit status 2.
int run_main(int (*body)(int, char**), int argc, char** argv);

}  // namespace aggnet::validation
