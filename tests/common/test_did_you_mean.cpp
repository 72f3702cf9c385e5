// closest_match / did_you_mean (common/strings.h) on the misspellings users made.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/strings.h"

namespace aggnet {
namespace {

const std::vector<std::string> kLinkKeys = {"delay", "bandwidth", "mtu", "header", "jitter"};
const std::vector<std::string> kSchedules = {"all-to-all", "triads", "ring", "pairs",
                                             "hierarchical"};
const std::vector<std::string> kCodes = {"nyc", "chi", "lax", "lon", "ams",
                                         "fra", "tyo", "sin", "bom"};

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);  // the textbook case
  EXPECT_EQ(edit_distance("bandwith", "bandwidth"), 1u);
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2u);
  EXPECT_EQ(edit_distance("MTU", "mtu"), 0u);  // case-insensitive
  EXPECT_EQ(edit_distance("rnu", "run"), 1u);  // a swap of adjacent letters is one edit
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);  // no letter edited twice (not 2 as Damerau)
}

TEST(ClosestMatch, SuggestsTheNearMissesFromIssue10) {
  EXPECT_EQ(closest_match("bandwith", kLinkKeys), "bandwidth");
  EXPECT_EQ(closest_match("triad", kSchedules), "triads");
  EXPECT_EQ(closest_match("all_to_all", kSchedules), "all-to-all");
  EXPECT_EQ(closest_match("all2all", kSchedules), "all-to-all");
  EXPECT_EQ(closest_match("london", kCodes), "lon");
  EXPECT_EQ(closest_match("jiter", kLinkKeys), "jitter");
}

TEST(ClosestMatch, SuggestsNothingFarOff) {
  EXPECT_EQ(closest_match("colour", kLinkKeys), "");
  EXPECT_EQ(closest_match("xyz", kCodes), "");  // 3 letters allow 1 edit; all need 3
  EXPECT_EQ(closest_match("", kCodes), "");
  EXPECT_EQ(closest_match("ring", {}), "");
  EXPECT_EQ(closest_match("ring", kSchedules), "");  // an exact name needs no suggestion
}

TEST(ClosestMatch, PrefersTheSmallestDistanceThenTheFirst) {
  EXPECT_EQ(closest_match("lan", kCodes), "lax");  // lax and lon both 1 edit: first wins
  EXPECT_EQ(closest_match("tyx", kCodes), "tyo");
}

TEST(DidYouMean, FormatsTheSuggestionOrNothing) {
  EXPECT_EQ(did_you_mean("bandwith", kLinkKeys), " (did you mean 'bandwidth'?)");
  EXPECT_EQ(did_you_mean("colour", kLinkKeys), "");
}

}  // namespace
}  // namespace aggnet
