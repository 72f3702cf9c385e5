// The co-located reference built only for the pairs the run's rounds use runs exactly as
// the full mesh: both systems side by side in one simulation, same results.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "sim/builder.h"
#include "sim/report.h"

namespace aggnet {
namespace {

Platform nine_city() {
  return load_platform(std::string(AGGNET_SOURCE_DIR) + "/platforms/nine_city.yaml");
}

TEST(ColocatedReference, PartialMeshRunsAsTheFullMesh) {
  Platform p = nine_city();
  p.colocated.link.jitter_ps = 500'000;  // 0.5 us: the links' seeds must match too
  const Schedule s = make_schedule("triads", p);
  ASSERT_EQ(s.period(), 4u);
  RunOptions o;
  o.gradient_bytes = 16ull << 20;
  o.steps = 1;  // round 0 only: the three continents' triads
  o.jitter = true;
  const ColocatedReference ref = colocated_reference(p, s, o);
  EXPECT_EQ(ref.platform.links.size(), 9u);  // 3 triads x 3 pairs, of the mesh's 36
  EXPECT_EQ(ref.schedule.period(), 4u);
  EXPECT_EQ(ref.schedule.rounds[0].groups.size(), 3u);
  for (std::size_t r = 1; r < 4; ++r) EXPECT_TRUE(ref.schedule.rounds[r].groups.empty());

  NetworkSystem full("full", p.colocated_variant(), s, o);
  NetworkSystem part("part", ref.platform, ref.schedule, o);
  sc_core::sc_start();
  const nlohmann::json a = collect_report(full), b = collect_report(part);
  ASSERT_GT(a["summary"]["round_time_s_mean"].get<double>(), 0.0);
  EXPECT_EQ(a["summary"], b["summary"]);
  EXPECT_EQ(a["steps"], b["steps"]);
  EXPECT_EQ(a["sites"], b["sites"]);
}

// Host collectives: a ring needs each site's link to its successor, a parameter server
// the server's links, unicast all-to-all every pair, a transfer its one pair. All four
// side by side in one simulation, each against the full mesh.
TEST(ColocatedReference, HostCollectivesRunAsTheFullMesh) {
  Platform p = nine_city();
  p.colocated.link.jitter_ps = 500'000;
  RunOptions o;
  o.gradient_bytes = 64ull << 20;
  o.jitter = true;
  const std::vector<std::pair<std::string, std::size_t>> cases = {{"ring:sendrecv", 9},
                                                                  {"parameter-server:fra", 8},
                                                                  {"unicast-all-to-all", 36},
                                                                  {"p2p:nyc-tyo", 1}};
  std::vector<std::unique_ptr<NetworkSystem>> full, part;
  for (const auto& [name, links] : cases) {
    const Schedule s = make_schedule(name, p);
    const ColocatedReference ref = colocated_reference(p, s, o);
    EXPECT_EQ(ref.platform.links.size(), links) << name;
    const std::string id = std::to_string(full.size());
    full.push_back(
        std::make_unique<NetworkSystem>(("full" + id).c_str(), p.colocated_variant(), s, o));
    part.push_back(
        std::make_unique<NetworkSystem>(("part" + id).c_str(), ref.platform, ref.schedule, o));
  }
  sc_core::sc_start();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const nlohmann::json a = collect_report(*full[i]), b = collect_report(*part[i]);
    ASSERT_GT(a["summary"]["step_time_s_mean"].get<double>(), 0.0) << cases[i].first;
    EXPECT_EQ(a["summary"], b["summary"]) << cases[i].first;
    EXPECT_EQ(a["steps"], b["steps"]) << cases[i].first;
    EXPECT_EQ(a["sites"], b["sites"]) << cases[i].first;
  }
}

}  // namespace
}  // namespace aggnet
