// Functional mode's values without SystemC: the sums a site must receive, by hand.
#include <gtest/gtest.h>

#include <vector>

#include "collectives/functional.h"

namespace aggnet {
namespace {

// gradient_value(site, step, j) = ((site + 1) 131 + 17 step + j) mod 251.
TEST(FunctionalValues, GradientValues) {
  EXPECT_EQ(FunctionalValues::gradient_value(0, 0, 0), 131.0f);
  EXPECT_EQ(FunctionalValues::gradient_value(1, 0, 0), 11.0f);   // 262 mod 251
  EXPECT_EQ(FunctionalValues::gradient_value(2, 1, 1), 160.0f);  // 393 + 17 + 1 = 411 mod 251
}

// Site 0 of {0, 1, 2}, two floats: the reduced chunk must be site 1's + site 2's values
// (11 + 142, 12 + 143); the average is (own + that) / 3.
TEST(FunctionalValues, GroupResultCheckedAndAveraged) {
  FunctionalValues values(0, 8, 8, {});
  values.begin_step(0);
  values.add_result(true, 0, 0, 0, 1, {153.0f, 155.0f}, {0, 1, 2});
  EXPECT_EQ(values.checks(), 1u);
  EXPECT_EQ(values.mismatches(), 0u);
  values.finish_group_step(0, 3);
  EXPECT_EQ(values.result(), (std::vector<float>{(131.0f + 153.0f) / 3, (132.0f + 155.0f) / 3}));
  values.begin_step(1);
  values.add_result(true, 0, 1, 0, 1, {1.0f, 2.0f}, {0, 1, 2});
  EXPECT_EQ(values.mismatches(), 1u);
}

// A contribution is a slice of the own gradient; copies resent share one buffer.
TEST(FunctionalValues, ContributionsAndResentCopies) {
  FunctionalValues values(1, 16, 8, {});
  values.begin_step(0);
  EXPECT_EQ(*values.contribution(8, 8), (std::vector<float>{13.0f, 14.0f}));
  const auto first = values.resent(0, 1, 8, 8);
  EXPECT_EQ(*first, (std::vector<float>{13.0f, 14.0f}));
  EXPECT_EQ(values.resent(0, 1, 8, 8), first);
  EXPECT_EQ(values.resent_buffers(), 1u);
}

// Ring {0, 1} of one float per site: reduce-scatter adds, all-gather copies; the end
// checks the sum over the ring (131 + 11 at element 0).
TEST(FunctionalValues, RingSumChecked) {
  FunctionalValues values(0, 8, 4, {0, 1});
  values.add_ring_chunk(0, 1, true, {12.0f});    // site 1's element 1: 132 + 12
  values.add_ring_chunk(0, 0, false, {142.0f});  // the reduced element 0
  values.finish_ring_step(0);
  EXPECT_EQ(values.checks(), 2u);
  EXPECT_EQ(values.mismatches(), 0u);
  EXPECT_EQ(values.result(), (std::vector<float>{71.0f, 72.0f}));
}

}  // namespace
}  // namespace aggnet
