// The optimizer's bounds on a candidate from its group members alone (nothing planned):
// the link shares against the control plane's plan, the bound against every candidate's
// time, the leading rows of a search that keeps such bounds, and the "more rounds than"
// test against rounds_to_eps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "config/platform_loader.h"
#include "model/routing.h"
#include "traffic/families.h"
#include "traffic/mixing.h"
#include "traffic/optimizer.h"
#include "traffic/time_model.h"

namespace aggnet {
namespace {

Platform nine_city(const std::string& file = "nine_city.yaml") {
  return load_platform(std::string(AGGNET_SOURCE_DIR) + "/platforms/" + file);
}

std::string key(const Candidate& c) { return c.family + "/" + c.schedule.name; }

std::vector<std::vector<int>> sites_of(const Round& round) {
  std::vector<std::vector<int>> out;
  for (const auto& g : round.groups) out.push_back(g.sites);
  return out;
}

// Rounds of many shapes: every family's, one group or many, groups of 2 to all sites.
std::vector<Round> rounds_of_every_shape(const Platform& p, const Routing& r) {
  std::vector<Round> out;
  for (const Schedule& s :
       {all_to_all_schedule(p), rotating_schedule(p, 2), rotating_schedule(p, 3),
        rotating_schedule(p, 4), sequential_schedule(p, 5), random_schedule(p, 3, 7),
        random_schedule(p, 4, 2), pairs_schedule(p), hierarchical_schedule(p, r)})
    out.insert(out.end(), s.rounds.begin(), s.rounds.end());
  return out;
}

TEST(LinkShares, AreThePlansLinkRatesOnEveryRound) {
  for (const char* file : {"nine_city.yaml", "nine_city_full_mesh.yaml"}) {
    const Platform p = nine_city(file);
    const Routing r(p);
    for (const bool multicast : {true, false}) {
      RunOptions run;
      run.multicast = multicast;
      int groups = 0;
      for (const Round& round : rounds_of_every_shape(p, r)) {
        const auto shares = link_share_rates(p, r, round, run);
        const auto est = estimate_round(p, r, round, Collective::kGroupAverage, run);
        ASSERT_EQ(shares.size(), est.groups.size());
        for (std::size_t g = 0; g < shares.size(); ++g, ++groups)
          EXPECT_EQ(shares[g], est.groups[g].link_rate) << file << " group " << g;
      }
      EXPECT_GT(groups, 100) << file;
    }
  }
}

// Every group-average candidate of an all-exact search: the bound after its rounds to eps
// is at most its time to eps, and (`near_rows`) at least half of it on that many rows.
void expect_bound_below_every_candidate(const Platform& p, const RunOptions& run, int near_rows) {
  const Routing r(p);
  OptimizerOptions exact;
  exact.run = run;
  int checked = 0, near = 0;
  for (const Candidate& c : optimize_schedules(p, r, exact)) {
    if (c.schedule.collective != Collective::kGroupAverage || c.rounds_to_eps < 0) continue;
    UnplannedBound bound(p, r, c.schedule, run, 100000);
    ASSERT_TRUE(bound.valid());
    const double b = bound.comm_time_s(c.rounds_to_eps);
    EXPECT_LE(b, c.comm_time_to_eps_s) << key(c);
    ++checked;
    near += b >= 0.5 * c.comm_time_to_eps_s;
  }
  EXPECT_GT(checked, 50);
  EXPECT_GE(near, near_rows);
}

TEST(UnplannedBound, IsAtMostEveryCandidatesTimeToEps) {
  const Platform p = nine_city();
  RunOptions run;
  run.gradient_bytes = 256ull << 20;
  // Paced and aligned (the default): the start delay and the link shares bind on most rows.
  expect_bound_below_every_candidate(p, run, 30);
  // Credit windows and the buffer's skews are left out: valid, but far below.
  RunOptions credit = run;
  credit.flow_control = FlowControl::kCredit;
  expect_bound_below_every_candidate(p, credit, 0);
  RunOptions plain = run;
  plain.multicast = plain.aligned_start = false;
  expect_bound_below_every_candidate(p, plain, 0);
}

TEST(UnplannedBound, IsNotValidWithUnequalCompute) {
  Platform p = nine_city();
  p.sites[3].cluster.compute_time_ps *= 2;
  const Routing r(p);
  UnplannedBound bound(p, r, rotating_schedule(p, 3), RunOptions{}, 100000);
  EXPECT_FALSE(bound.valid());
}

// exact_rows set: the leading rows as with every time exact, the rest possibly bounded
// from their members alone (never above their exact times).
void expect_leading_rows_kept(const Platform& p, OptimizerOptions exact) {
  const Routing r(p);
  OptimizerOptions lazy = exact;
  lazy.exact_rows = 4;
  const auto all = optimize_schedules(p, r, exact), few = optimize_schedules(p, r, lazy);
  ASSERT_EQ(all.size(), few.size());
  std::map<std::string, double> exact_time;
  for (const auto& c : all) exact_time[key(c)] = c.comm_time_to_eps_s;
  std::size_t rows = 0, group_rows = 0, unplanned = 0;
  for (std::size_t i = 0; i < few.size(); ++i) {
    if (rows < 4 || group_rows < 4) {
      EXPECT_EQ(key(few[i]), key(all[i])) << i;
      EXPECT_TRUE(few[i].timed) << i;
      EXPECT_EQ(few[i].comm_time_to_eps_s, all[i].comm_time_to_eps_s) << i;
    }
    ++rows;
    group_rows += few[i].schedule.collective == Collective::kGroupAverage;
    if (few[i].timed) continue;
    ++unplanned;
    EXPECT_TRUE(few[i].time_bound) << key(few[i]);
    EXPECT_TRUE(few[i].timing.rounds.empty()) << key(few[i]);
    EXPECT_LE(few[i].comm_time_to_eps_s, exact_time.at(key(few[i]))) << key(few[i]);
  }
  EXPECT_GE(unplanned, 20u);
}

TEST(ExactRows, UnplannedBoundsKeepTheLeadingRows) {
  OptimizerOptions exact;
  exact.run.gradient_bytes = 256ull << 20;
  expect_leading_rows_kept(nine_city(), exact);
}

TEST(ExactRows, UnplannedBoundsKeepTheLeadingRowsOfAScreenedSearch) {
  OptimizerOptions exact;
  exact.run.gradient_bytes = 256ull << 20;
  exact.exhaustive_alignment_sites = 0;  // screened: the window's candidates timed again
  expect_leading_rows_kept(nine_city(), exact);
}

// The optimizer's sampled partition pairs (partition times bounded from their members
// before any is planned) against a brute-force search over the same sampled partitions:
// every pair's exact rho and round times, the refine / 4 least scores.
TEST(SampledPairs, AreTheBestPairsOfABruteForceSearch) {
  const Platform p = nine_city();
  const Routing r(p);
  const int n = static_cast<int>(p.sites.size());
  OptimizerOptions opt;
  opt.run.gradient_bytes = 256ull << 20;
  opt.exact_rows = 10;
  std::map<std::string, const Candidate*> by_name;
  const auto cs = optimize_schedules(p, r, opt);
  for (const auto& c : cs) by_name[c.schedule.name] = &c;
  int compared = 0;
  for (const int k : {2, 4}) {  // 9 sites: k = 3 is exhaustive, 2 and 4 sampled
    std::vector<Round> parts;
    std::set<std::vector<std::vector<int>>> seen;
    for (const Round& round : random_rounds(n, k, 1000 + k, opt.sample_partitions)) {
      std::vector<std::vector<int>> groups;
      for (const auto& g : round.groups) {
        groups.push_back(g.sites);
        std::sort(groups.back().begin(), groups.back().end());
      }
      std::sort(groups.begin(), groups.end());
      if (seen.insert(groups).second) parts.push_back(round);
    }
    std::vector<double> t;
    for (const Round& part : parts)
      t.push_back(estimate_round(p, r, part, Collective::kGroupAverage, opt.run).time_s);
    std::vector<std::tuple<double, std::size_t, std::size_t>> pairs;
    for (std::size_t a = 0; a < parts.size(); ++a)
      for (std::size_t b = a + 1; b < parts.size(); ++b) {
        const double rho = pair_consensus_error(parts[a], parts[b], n);
        if (rho >= 1 - 1e-9) continue;
        const double periods =
            rho < 1e-12 ? 1.0 : std::max(1.0, std::ceil(std::log(opt.run.eps) / std::log(rho)));
        pairs.emplace_back(periods * (t[a] + t[b]), a, b);
      }
    std::sort(pairs.begin(), pairs.end());
    for (int i = 0; i < opt.refine / 4 && i < static_cast<int>(pairs.size()); ++i) {
      auto [score, a, b] = pairs[i];
      if (t[b] < t[a]) std::swap(a, b);
      const auto it =
          by_name.find("sampled-pair-k" + std::to_string(k) + "-" + std::to_string(i + 1));
      ASSERT_NE(it, by_name.end()) << k << " " << i;
      const Schedule& s = it->second->schedule;
      ASSERT_EQ(s.rounds.size(), 2u);
      EXPECT_EQ(sites_of(s.rounds[0]), sites_of(parts[a])) << k << " " << i;
      EXPECT_EQ(sites_of(s.rounds[1]), sites_of(parts[b])) << k << " " << i;
      ++compared;
    }
  }
  EXPECT_GE(compared, 20);
}

TEST(ExceedsRoundsToEps, AgreesWithRoundsToEps) {
  int power_branch = 0;
  for (const int n : {10, 12, 16}) {
    std::vector<Schedule> schedules;
    for (const int k : {2, 3, 4}) {
      Schedule rot, seq, rnd;
      rot.rounds = rotating_rounds(n, k);
      seq.rounds = one_group_per_round(rotating_rounds(n, k));
      rnd.rounds = random_rounds(n, k, 5);
      schedules.insert(schedules.end(), {rot, seq, rnd});
    }
    for (const Schedule& s : schedules) {
      const long p = static_cast<long>(s.rounds.size());
      for (const double eps : {1e-2, 1e-4}) {
        const long rte = rounds_to_eps(s, n, eps);
        ASSERT_GT(rte, 0);
        for (const long r : {1L, rte - 1, rte, rte + 1, 5 * p + 3, 2 * rte + 1}) {
          EXPECT_EQ(exceeds_rounds_to_eps(s, n, eps, r), rte > r)
              << "n " << n << " period " << p << " rounds " << r << " of " << rte;
          power_branch += r > std::max(4 * p, 64L);
        }
      }
    }
  }
  EXPECT_GT(power_branch, 10);
}

}  // namespace
}  // namespace aggnet
