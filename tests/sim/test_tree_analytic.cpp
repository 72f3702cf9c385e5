// The reduction plans on nine cities, no compute: the simulated time to the exact average
// (the last member's result) against the analytic time `aggnet schedule` ranks them by
// (reduction_tree_time), within the 2 % that `--verify` promises. Each test one cell of the
// regime map; the in-trees' cell is where they win. And the memory tier a tree run
// reports: its FPGAs' access rate, derived by hand on a star.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <systemc>

#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "modules/core/time.h"
#include "sim/builder.h"
#include "sim/invariants.h"
#include "sim/report.h"
#include "tests/modules/test_platforms.h"
#include "traffic/closed_form.h"

namespace aggnet {
namespace {

Platform nine_city(std::uint64_t link_bps) {
  Platform p = load_platform(std::string(AGGNET_SOURCE_DIR) + "/platforms/nine_city.yaml");
  for (auto& site : p.sites) site.cluster.compute_time_ps = 0;
  for (auto& link : p.links) link.params.bandwidth_bps = link_bps;
  return p;
}

void expect_analytic_within_2_percent(const std::string& name, std::uint64_t link_bps,
                                      std::uint64_t gradient_bytes) {
  const Platform p = nine_city(link_bps);
  RunOptions o;
  o.gradient_bytes = gradient_bytes;
  o.buffer_bytes = 16ull << 20;
  o.steps = 1;
  const Schedule s = make_schedule(name, p, PlanInputs{gradient_bytes, o.chunk_bytes});
  NetworkSystem sys("wan", p, s, o);
  sc_core::sc_start();
  std::uint64_t last_ps = 0;
  for (const auto& site : sys.sites())
    last_ps = std::max(last_ps, to_ps(site.cluster->steps().at(0).end));
  EXPECT_EQ(violations(check_invariants(sys)), "");
  const double simulated_s = static_cast<double>(last_ps) * 1e-12;
  const double analytic_s = reduction_tree_time(p, sys.routing(), s, o);
  EXPECT_NEAR(analytic_s / simulated_s, 1.0, 0.02) << analytic_s << " vs " << simulated_s;
}

TEST(TreeAnalytic, ForestAt10GbpsAnd256MiB) {
  expect_analytic_within_2_percent("reduction-forest", 10'000'000'000, 256ull << 20);
}

TEST(TreeAnalytic, ForestAt100GbpsAnd1GiB) {
  expect_analytic_within_2_percent("reduction-forest", 100'000'000'000, 1ull << 30);
}

TEST(TreeAnalytic, InTreesAt100GbpsAnd64MiB) {
  expect_analytic_within_2_percent("reduction-in-trees", 100'000'000'000, 64ull << 20);
}

// The star of tests/sizing/test_tree_sizing.cpp (hub h, leaves a, b, c; 1 MiB chunks, a
// 50 us pacing interval): the hub's FPGA serves four inputs per chunk at 32 GB/s, so a
// chunk every 4F; each input is written and read once, 2 x 4 x MiB / 4F at the hub and
// 2 x 1 x MiB / 4F at a leaf. The power is the chosen tier's energy per bit times that.
TEST(TreeMemoryTier, AccessIsEachSumsInputsAtTheTreesChunkRate) {
  enum Site { a, b, c, h };
  constexpr std::uint64_t kMs = 1'000'000'000, kMiB = 1 << 20, F = 32'768'000;
  const Platform p = testing::with_sites(
      testing::make_platform({"a", "b", "c", "h"},
                             {{a, h, 2 * kMs}, {b, h, 4 * kMs}, {c, h, 6 * kMs}}, 100'000'000'000),
      200'000'000'000, 1'000'000, 500'000);
  Schedule s;
  s.name = "star";
  s.collective = Collective::kReductionTree;
  s.rounds.push_back(Round{{Group{{a, b, c, h}}}});
  s.forest.push_back(testing::reduction_tree(h, {h, h, h, -1}));
  s.forest[0].pacing_interval_ps = 50'000'000;
  RunOptions o;
  o.gradient_bytes = 16 * kMiB;
  o.chunk_bytes = kMiB;
  o.steps = 1;
  NetworkSystem sys("wan", p, s, o);
  sc_core::sc_start();
  const nlohmann::json report = collect_report(sys);
  const double chunk_rate = kMiB / (4.0 * F * 1e-12);  // bytes/s of each input
  for (int site : {a, b, c, h}) {
    const nlohmann::json& entry = report["sites"][site];
    const double gbps = 2.0 * (site == h ? 4 : 1) * chunk_rate * 8 / 1e9;
    EXPECT_NEAR(entry["memory_access_gbps"].get<double>(), gbps, 1e-9 * gbps) << site;
    const auto& tiers = report["memory"]["tiers"];
    const auto tier = std::find_if(tiers.begin(), tiers.end(), [&](const nlohmann::json& t) {
      return t["name"] == entry["memory_tier"];
    });
    ASSERT_NE(tier, tiers.end()) << entry["memory_tier"];
    const double watts = (*tier)["energy_pj_per_bit"].get<double>() * 1e-12 * gbps * 1e9;
    EXPECT_NEAR(entry["memory_power_w"].get<double>(), watts, 1e-9 * watts) << site;
  }
}

}  // namespace
}  // namespace aggnet
