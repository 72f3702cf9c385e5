// The one table of built-in schedule names (common/schedule_names.h): the shapes it accepts
// and what errors list. tests/traffic/test_schedule_io.cpp makes a schedule from each row.
#include <gtest/gtest.h>

#include <string>

#include "common/schedule_names.h"

namespace aggnet {
namespace {

TEST(ScheduleNames, AcceptsEveryFamilyWithItsParameters) {
  for (const std::string name : {"all-to-all",
                                 "triads",
                                 "ring",
                                 "pairs",
                                 "rotating-4",
                                 "sequential-12",
                                 "random-3:7",
                                 "hierarchical",
                                 "ring:sendrecv",
                                 "reduce-scatter",
                                 "reduce-scatter:barrier",
                                 "all-gather",
                                 "all-gather:receive",
                                 "p2p:nyc-tyo",
                                 "p2p:lon-nyc,ams-chix4",
                                 "parameter-server:lon",
                                 "unicast-all-to-all",
                                 "reduction-tree",
                                 "reduction-tree:tyo",
                                 "reduction-forest",
                                 "reduction-in-trees"})
    EXPECT_TRUE(is_schedule_name(name)) << name;
}

TEST(ScheduleNames, RefusesOtherShapes) {
  for (const std::string name :
       {"", "trads", "rotating-", "rotating-k", "random-3", "random-3:", "random-:7",
        "ring:", "p2p:", "parameter-server:", "reduction-tree:", "all-to-all ", "schedules/x.yaml"})
    EXPECT_FALSE(is_schedule_name(name)) << name;
}

TEST(ScheduleNames, ListsTheSpellingsAndComparesMisspellingsWithTheirWords) {
  EXPECT_EQ(schedule_name_list().rfind("all-to-all, triads, ring, pairs, rotating-K, ", 0), 0u);
  EXPECT_NE(schedule_name_list().find(", reduction-tree[:SITE], "), std::string::npos);
  const auto words = schedule_name_words();
  ASSERT_EQ(words.size(), schedule_names().size());
  EXPECT_EQ(words[14], "reduction-tree");  // "reduction-tree[:SITE]" without its option
  EXPECT_EQ(words[11], "p2p:SRC-DST");
}

}  // namespace
}  // namespace aggnet
