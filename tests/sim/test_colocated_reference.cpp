// The co-located reference: the same clusters on one data-centre fabric switch (a port
// link per site). Its runs against the store-and-forward closed forms of
// traffic/closed_form.h, which know nothing of the builder: a path site - fabric - site
// is the access link up, the two port links and the access link down.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <systemc>
#include <vector>

#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "sim/builder.h"
#include "sim/report.h"
#include "traffic/closed_form.h"

namespace aggnet {
namespace {

constexpr std::uint64_t kGradient = 90ull << 20, kChunk = 1ull << 20;

Platform nine_city_without_compute() {
  Platform p = load_platform(std::string(AGGNET_SOURCE_DIR) + "/platforms/nine_city.yaml");
  for (auto& site : p.sites) site.cluster.compute_time_ps = 0;
  return p;
}

TEST(ColocatedReference, EmptiesTheRoundsThatNeverRun) {
  const Platform p = nine_city_without_compute();
  const Schedule s = make_schedule("triads", p);
  ASSERT_EQ(s.period(), 4u);
  RunOptions o;
  o.steps = 1;  // round 0 only: the three continents' triads
  const ColocatedReference ref = colocated_reference(p, s, o);
  EXPECT_EQ(ref.platform.sites.size(), 10u);  // nine clusters and the fabric switch
  EXPECT_EQ(ref.platform.links.size(), 9u);   // one port each, not the mesh's 36
  EXPECT_EQ(ref.schedule.period(), 4u);
  EXPECT_EQ(ref.schedule.rounds[0].groups.size(), 3u);
  for (std::size_t r = 1; r < 4; ++r) EXPECT_TRUE(ref.schedule.rounds[r].groups.empty());
}

// One step of each host collective on the reference, side by side in one simulation,
// against its closed form on the reference's platform: a transfer and the ring (edges on
// disjoint port links: exact) and the unicast all-to-all (every pair through the fabric:
// the FIFO recurrence of its chunks on the shared ports, within the form's tolerance).
TEST(ColocatedReference, HostCollectivesMeetTheirClosedForms) {
  const Platform p = nine_city_without_compute();
  RunOptions o;
  o.gradient_bytes = kGradient;
  o.chunk_bytes = kChunk;
  o.steps = 1;
  const std::vector<std::string> names = {"p2p:nyc-tyo", "ring:sendrecv", "ring:barrier",
                                          "unicast-all-to-all"};
  std::vector<NetworkSystem*> systems;
  std::vector<ClosedForm> forms;
  for (const auto& name : names) {
    const ColocatedReference ref = colocated_reference(p, make_schedule(name, p), o);
    forms.push_back(closed_form(ref.platform, ref.schedule, kGradient, kChunk));
    ASSERT_TRUE(forms.back().applicable) << name << ": " << forms.back().why;
    const std::string id = "ref" + std::to_string(systems.size());
    systems.push_back(new NetworkSystem(id.c_str(), ref.platform, ref.schedule, o));
  }
  sc_core::sc_start();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const nlohmann::json report = collect_report(*systems[i]);
    const double sim = report["steps"][0]["round_time_s"].get<double>();
    EXPECT_NEAR(sim, forms[i].store_and_forward_s, forms[i].tolerance_s + 1e-9 * sim)
        << names[i] << " (" << forms[i].formula << ")";
  }
}

}  // namespace
}  // namespace aggnet
