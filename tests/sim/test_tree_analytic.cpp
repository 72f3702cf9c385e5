// The reduction plans on nine cities, no compute: the simulated time to the exact average
// (the last member's result) against the analytic time `aggnet schedule` ranks them by
// (reduction_tree_time), within the 2 % that `--verify` promises. Each test one cell of the
// regime map; the in-trees' cell is where they win.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <systemc>

#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "modules/core/time.h"
#include "sim/builder.h"
#include "sim/invariants.h"
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

}  // namespace
}  // namespace aggnet
