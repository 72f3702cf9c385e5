// The optimizer's screened search (the offsets of groups of 4 or more only for the
// finalists) against the exhaustive one (offsets for every candidate) on platforms where
// both run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "config/platform_loader.h"
#include "model/routing.h"
#include "traffic/optimizer.h"

namespace aggnet {
namespace {

namespace fs = std::filesystem;

Platform nine_city() {
  return load_platform(std::string(AGGNET_SOURCE_DIR) + "/platforms/nine_city.yaml");
}

// scripts/make_platforms.py's synthetic platform (as the benchmarks use), in a per-process
// temporary directory.
Platform synthetic(int sites) {
  const fs::path dir = fs::temp_directory_path() / ("aggnet_screening_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string cmd = "python3 " + std::string(AGGNET_SOURCE_DIR) +
                          "/scripts/make_platforms.py --synthetic " + std::to_string(sites) +
                          " --seed 1 --out " + dir.string() + " > /dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  Platform p = load_platform((dir / ("synthetic_" + std::to_string(sites) + ".yaml")).string());
  fs::remove_all(dir);
  return p;
}

std::string key(const Candidate& c) { return c.family + "/" + c.schedule.name; }

// Runs both searches and checks: the same rank 1 with the same time; every candidate
// inside the window timed exactly as the exhaustive search times it; every one outside
// it timed as without those offsets, and no better than the window allows.
void expect_screening_keeps_the_winner(const Platform& p) {
  const Routing r(p);
  const int n = static_cast<int>(p.sites.size());
  OptimizerOptions exhaustive;
  exhaustive.exhaustive_alignment_sites = n;
  OptimizerOptions screened = exhaustive;
  screened.exhaustive_alignment_sites = 0;
  ASSERT_FALSE(screened_search(n, exhaustive));
  ASSERT_TRUE(screened_search(n, screened));
  const auto all = optimize_schedules(p, r, exhaustive);
  const auto few = optimize_schedules(p, r, screened);
  ASSERT_FALSE(all.empty());
  ASSERT_EQ(few.size(), all.size());
  EXPECT_EQ(key(few.front()), key(all.front()));
  EXPECT_EQ(few.front().comm_time_to_eps_s, all.front().comm_time_to_eps_s);
  EXPECT_FALSE(few.front().unaligned_estimate);

  std::map<std::string, const Candidate*> exact;
  for (const auto& c : all) exact[key(c)] = &c;
  OptimizerOptions no_offsets = exhaustive;
  no_offsets.run.general_offsets = false;
  int inside = 0, outside = 0, moved = 0;
  for (const auto& c : few) {
    ASSERT_TRUE(exact.count(key(c))) << key(c);
    const Candidate plain = score_schedule(p, r, c.schedule, c.family, no_offsets);
    if (plain.comm_time_to_eps_s != exact[key(c)]->comm_time_to_eps_s) ++moved;
    if (!c.unaligned_estimate) {
      ++inside;
      EXPECT_EQ(c.comm_time_to_eps_s, exact[key(c)]->comm_time_to_eps_s) << key(c);
      continue;
    }
    ++outside;
    EXPECT_EQ(c.comm_time_to_eps_s, plain.comm_time_to_eps_s) << key(c);
    EXPECT_GT(c.comm_time_to_eps_s, screened.alignment_window * all.front().comm_time_to_eps_s)
        << key(c);
  }
  EXPECT_GT(inside, 1);
  EXPECT_GT(outside, 0);
  // The offsets matter on this platform (else the comparisons above would be vacuous).
  EXPECT_GT(moved, 0);
}

TEST(OptimizerScreening, KeepsTheExhaustiveWinnerOnNineCity) {
  expect_screening_keeps_the_winner(nine_city());
}

TEST(OptimizerScreening, KeepsTheExhaustiveWinnerOn27SyntheticSites) {
  expect_screening_keeps_the_winner(synthetic(27));
}

TEST(OptimizerScreening, ExhaustiveUpTo128SitesByDefault) {
  const OptimizerOptions defaults;
  EXPECT_FALSE(screened_search(81, defaults));
  EXPECT_FALSE(screened_search(128, defaults));
  EXPECT_TRUE(screened_search(129, defaults));
  OptimizerOptions none = defaults;
  none.run.alignment = SendAlignment::kNone;  // no offsets to screen
  EXPECT_FALSE(screened_search(243, none));
  OptimizerOptions unicast = defaults;
  unicast.run.multicast = false;  // per-copy offsets: a closed form
  EXPECT_FALSE(screened_search(243, unicast));
}

// Beyond every_group_size_sites: k <= 8, the divisors, and ceil(1.25 k) from 8 (by hand:
// 8 10 13 17 22 28 35 44 55 69 87 109 137 172 215 for 243 = 3^5).
TEST(GroupSizeLadder, EveryKUpTo128SitesThenALadder) {
  const OptimizerOptions defaults;
  EXPECT_EQ(group_size_ladder(9, defaults), (std::vector<int>{2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(group_size_ladder(128, defaults).size(), 126u);
  EXPECT_EQ(group_size_ladder(243, defaults),
            (std::vector<int>{2,  3,  4,  5,  6,  7,  8,  9,  10,  13,  17,  22,
                              27, 28, 35, 44, 55, 69, 81, 87, 109, 137, 172, 215}));
}

// The ladder forced on 27 sites (every k beyond 8 sites off): the same winner as every k.
TEST(GroupSizeLadder, KeepsTheWinnerOn27SyntheticSites) {
  const Platform p = synthetic(27);
  const Routing r(p);
  OptimizerOptions every, ladder;
  ladder.every_group_size_sites = 8;
  ASSERT_LT(group_size_ladder(27, ladder).size(), group_size_ladder(27, every).size());
  const auto all = optimize_schedules(p, r, every);
  const auto few = optimize_schedules(p, r, ladder);
  EXPECT_EQ(few.front().schedule.name, all.front().schedule.name);
  EXPECT_EQ(few.front().comm_time_to_eps_s, all.front().comm_time_to_eps_s);
}

}  // namespace
}  // namespace aggnet
