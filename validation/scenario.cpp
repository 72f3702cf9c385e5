#include "validation/scenario.h"

#include <iostream>

#include "common/config_error.h"
#include "common/units.h"
#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "model/network_math.h"
#include "traffic/closed_form.h"

namespace aggnet::validation {

namespace {
const char* kWhere = "<command line>";
}

Scenario parse_scenario(int argc, char** argv, std::vector<std::string>& rest) {
  std::string platform_file, schedule, gradient, chunk = "1MiB";
  std::vector<Override> overrides;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw ConfigError(kWhere, 0, arg, "a value after " + arg);
      return argv[++i];
    };
    if (arg == "--platform") {
      platform_file = value();
    } else if (arg == "--schedule") {
      schedule = value();
    } else if (arg == "--gradient") {
      gradient = value();
    } else if (arg == "--chunk") {
      chunk = value();
    } else if (arg == "--set") {
      const std::string kv = value();
      const auto eq = kv.find('=');
      if (eq == std::string::npos) throw ConfigError(kWhere, 0, "--set", "KEY=VALUE", kv);
      overrides.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    } else {
      rest.push_back(arg);
    }
  }
  for (const auto& [name, text] :
       {std::pair{"--platform", platform_file}, std::pair{"--schedule", schedule},
        std::pair{"--gradient", gradient}})
    if (text.empty()) throw ConfigError(kWhere, 0, name, "the option " + std::string(name));
  Scenario s;
  s.platform = load_platform(platform_file, overrides);
  try {
    s.gradient_bytes = parse_bytes(gradient);
    s.chunk_bytes = parse_bytes(chunk);
  } catch (const std::exception&) {
    throw ConfigError(kWhere, 0, "--gradient/--chunk", "sizes like 90MiB", gradient + ", " + chunk);
  }
  if (s.chunk_bytes == 0 || s.gradient_bytes == 0)
    throw ConfigError(kWhere, 0, "--gradient/--chunk", "sizes above 0");
  // A planned forest (`reduction-forest`) is planned for this gradient, as `aggnet run` does.
  s.schedule = make_schedule(schedule, s.platform, PlanInputs{s.gradient_bytes, s.chunk_bytes});
  return s;
}

std::uint64_t message_bytes_on_wire(const Scenario& scenario, std::uint64_t payload_bytes) {
  const auto& p = scenario.platform;
  const WanLinkParams framing = access_link(p.sites.at(0));
  auto same = [&](const WanLinkParams& l) {
    return l.mtu_bytes == framing.mtu_bytes && l.header_bytes == framing.header_bytes;
  };
  for (const auto& link : p.links)
    if (!same(link.params))
      throw ConfigError(p.file, 0, "links.mtu/header",
                        "the same MTU and header on every link (the flow-level harnesses send "
                        "one wire size per message)");
  return message_wire_bytes(framing, payload_bytes, scenario.chunk_bytes);
}

std::uint64_t ring_segment_bytes(const Scenario& scenario) {
  const auto n = scenario.schedule.rounds.at(0).groups.at(0).sites.size();
  return ring_segment_offsets(scenario.gradient_bytes, n)[1];
}

nlohmann::json closed_form_json(const Scenario& scenario) {
  const ClosedForm f = closed_form(scenario.platform, scenario.schedule, scenario.gradient_bytes,
                                   scenario.chunk_bytes);
  nlohmann::json j{{"applicable", f.applicable}};
  if (!f.applicable) {
    j["why"] = f.why;
    return j;
  }
  j["store_and_forward_s"] = f.store_and_forward_s;
  j["flow_level_s"] = f.flow_level_s;
  if (f.packet_level_s > 0) j["packet_level_s"] = f.packet_level_s;
  j["formula"] = f.formula;
  if (f.transmit_complete_s > 0) j["transmit_complete_s"] = f.transmit_complete_s;
  j["tolerance_s"] = f.tolerance_s;
  return j;
}

int run_main(int (*body)(int, char**), int argc, char** argv) {
  try {
    return body(argc, argv);
  } catch (const ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}

}  // namespace aggnet::validation
