// Built-in schedules on the shipped nine-city platform.
#include <gtest/gtest.h>

#include <set>

#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "model/control_plane.h"
#include "model/routing.h"
#include "traffic/families.h"
#include "traffic/mixing.h"
#include "traffic/optimizer.h"

namespace aggnet {
namespace {

Platform nine_city() {
  return load_platform(std::string(AGGNET_SOURCE_DIR) + "/platforms/nine_city.yaml");
}

std::string codes(const Platform& p, const Group& g) {
  std::string s;
  for (int i : g.sites) s += (s.empty() ? "" : " ") + p.sites[i].code;
  return s;
}

TEST(NineCity, TriadsClassZeroIsTheThreeContinents) {
  const Platform p = nine_city();
  const Schedule s = make_schedule("triads", p);
  ASSERT_EQ(s.period(), 4u);
  EXPECT_EQ(codes(p, s.rounds[0].groups[0]), "nyc chi lax");
  EXPECT_EQ(codes(p, s.rounds[0].groups[1]), "lon ams fra");
  EXPECT_EQ(codes(p, s.rounds[0].groups[2]), "tyo sin bom");
  EXPECT_EQ(codes(p, s.rounds[1].groups[0]), "nyc lon tyo");
  EXPECT_NEAR(analyze_mixing(s, 9).rho, 0.0, 1e-12);
}

TEST(NineCity, RingVisitsEverySiteOnceAlongContinents) {
  const Platform p = nine_city();
  const Schedule s = make_schedule("ring", p);
  EXPECT_EQ(s.collective, Collective::kRing);
  ASSERT_EQ(s.rounds.size(), 1u);
  const auto& order = s.rounds[0].groups.at(0).sites;
  EXPECT_EQ(std::set<int>(order.begin(), order.end()).size(), 9u);
  // A least-delay tour crosses between continents only 3 times.
  int crossings = 0;
  for (std::size_t i = 0; i < order.size(); ++i)
    crossings += p.sites[order[i]].continent != p.sites[order[(i + 1) % 9]].continent;
  EXPECT_EQ(crossings, 3);
}

TEST(NineCity, EveryBuiltInNameResolves) {
  const Platform p = nine_city();
  for (const char* name : {"all-to-all", "triads", "ring", "pairs", "rotating-2", "rotating-3",
                           "rotating-4", "random-3:5", "hierarchical"}) {
    const Schedule s = make_schedule(name, p);
    EXPECT_NO_THROW(validate_schedule(s, p)) << name;
    const Schedule back = parse_schedule(schedule_to_yaml(s, p), p, "x.yaml");
    EXPECT_EQ(back.period(), s.period()) << name;
  }
}

TEST(NineCity, OptimizerRanksAndFindsAnExactTriadPair) {
  const Platform p = nine_city();
  const Routing r(p);
  OptimizerOptions opt;
  opt.run.buffer_bytes = 64ull << 20;
  const auto cs = optimize_schedules(p, r, opt);
  ASSERT_GT(cs.size(), 20u);
  bool found = false;
  for (const auto& c : cs) {
    if (c.family == "partition-pair") {
      EXPECT_EQ(c.rounds_to_eps, 2);
      found = true;
      break;
    }
  }
  EXPECT_TRUE(found);
}

// Any three sites: their arrival latencies split into arms (a 3-point metric is a tree
// metric), so the control plane's offsets leave no skew at any receiver. Checked against
// the arrival latencies themselves: every member's contributions land at one instant.
TEST(NineCity, EveryTriadAlignsToZeroResidualSkew) {
  const Platform p = nine_city();
  const Routing routing(p);
  RunOptions o;
  o.chunk_bytes = 1 << 20;
  o.alignment = SendAlignment::kArrival;
  int triads = 0;
  for (int a = 0; a < 9; ++a) {
    for (int b = a + 1; b < 9; ++b) {
      for (int c = b + 1; c < 9; ++c) {
        const RoundPlan plan = plan_round(p, routing, Round{{Group{{a, b, c}}}}, o);
        const GroupPlan& g = plan.groups.at(0);
        EXPECT_EQ(g.alignment, "closed-form");
        for (int d : {a, b, c}) {
          std::set<std::uint64_t> arrivals;
          for (int s : {a, b, c})
            if (s != d)
              arrivals.insert(g.send_offset_ps.at(s).at(d) +
                              arrival_latency_ps(p, routing, s, d, o.chunk_bytes));
          EXPECT_EQ(arrivals.size(), 1u) << a << " " << b << " " << c << " at " << d;
          EXPECT_LE(g.skew_ps.at(d), 1u);
        }
        ++triads;
      }
    }
  }
  EXPECT_EQ(triads, 84);
}

// All nine sites cannot be aligned with one offset per sender: the optimum (by the
// minimum cycle mean) keeps a residual skew, but strictly less than the unaligned one.
TEST(NineCity, AllToAllKeepsAResidualSkewBelowTheUnalignedOne) {
  const Platform p = nine_city();
  const Routing routing(p);
  RunOptions o;
  o.alignment = SendAlignment::kArrival;
  const RoundPlan plan = plan_round(p, routing, all_to_all_schedule(p).rounds.at(0), o);
  const GroupPlan& g = plan.groups.at(0);
  EXPECT_EQ(g.alignment, "cycle-mean");
  std::uint64_t aligned = 0, unaligned = 0;
  for (const auto& [d, skew] : g.skew_ps) aligned = std::max(aligned, skew);
  for (const auto& [d, skew] : g.unaligned_skew_ps) unaligned = std::max(unaligned, skew);
  EXPECT_GT(aligned, 1'000'000'000u);  // > 1 ms: nine cities are no tree metric
  EXPECT_LT(aligned, unaligned);
}

}  // namespace
}  // namespace aggnet
