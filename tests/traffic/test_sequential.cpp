// The sequential-K family: one group exchanges per round while every other site sits out.
// Mixing is checked against matrix products written out here, not traffic/mixing.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "common/config_error.h"
#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "model/routing.h"
#include "traffic/families.h"
#include "traffic/mixing.h"

namespace aggnet {
namespace {

using Matrix = std::vector<std::vector<double>>;

Platform nine_city() {
  return load_platform(std::string(AGGNET_SOURCE_DIR) + "/platforms/nine_city.yaml");
}

Schedule of(std::vector<Round> rounds) {
  Schedule s;
  s.rounds = std::move(rounds);
  return s;
}

Matrix identity(int n) {
  Matrix m(n, std::vector<double>(n, 0.0));
  for (int i = 0; i < n; ++i) m[i][i] = 1;
  return m;
}

Matrix multiply(const Matrix& a, const Matrix& b) {
  const std::size_t n = a.size();
  Matrix c(n, std::vector<double>(n, 0.0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t j = 0; j < n; ++j) c[i][j] += a[i][k] * b[k][j];
  return c;
}

// One group averaging: its members take the group mean, every other site keeps its value.
Matrix group_average(const std::vector<int>& group, int n) {
  Matrix w = identity(n);
  for (int i : group)
    for (int j : group) w[i][j] = 1.0 / static_cast<double>(group.size());
  return w;
}

// ||m - J||_2 by power iteration on (m - J)^T (m - J).
double spectral_error(const Matrix& m) {
  const std::size_t n = m.size();
  Matrix d = m;
  for (auto& row : d)
    for (double& x : row) x -= 1.0 / static_cast<double>(n);
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = std::sqrt(static_cast<double>(i) + 2.0);  // generic start
  double sigma2 = 0;
  for (int it = 0; it < 5000; ++it) {
    std::vector<double> dv(n, 0.0), w(n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) dv[i] += d[i][j] * v[j];
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < n; ++i) w[j] += d[i][j] * dv[i];
    double norm = 0, vv = 0, vw = 0;
    for (std::size_t i = 0; i < n; ++i) norm += w[i] * w[i], vv += v[i] * v[i], vw += v[i] * w[i];
    if (norm == 0) return 0;
    sigma2 = vw / vv;
    for (std::size_t i = 0; i < n; ++i) v[i] = w[i] / std::sqrt(norm);
  }
  return std::sqrt(std::max(0.0, sigma2));
}

Matrix product_of(const std::vector<std::vector<int>>& groups, int n) {
  Matrix m = identity(n);
  for (const auto& g : groups) m = multiply(group_average(g, n), m);
  return m;
}

std::vector<std::vector<int>> groups_of(const std::vector<Round>& rounds) {
  std::vector<std::vector<int>> out;
  for (const auto& r : rounds) {
    EXPECT_EQ(r.groups.size(), 1u);
    if (!r.groups.empty()) out.push_back(r.groups[0].sites);
  }
  return out;
}

TEST(Sequential, NineCitiesEveryPairMeetsExactlyOnceInTwelveRounds) {
  const Platform p = nine_city();
  const Schedule s = make_schedule("sequential-3", p);
  EXPECT_EQ(s.name, "sequential-3");
  ASSERT_EQ(s.period(), 12u);
  int meets[9][9] = {};
  for (const auto& r : s.rounds) {
    ASSERT_EQ(r.groups.size(), 1u);  // one group exchanges, the other six sit out
    ASSERT_EQ(r.groups[0].sites.size(), 3u);
    for (int a : r.groups[0].sites)
      for (int b : r.groups[0].sites)
        if (a != b) ++meets[a][b];
  }
  for (int a = 0; a < 9; ++a) {
    for (int b = 0; b < 9; ++b) {
      if (a != b) {
        EXPECT_EQ(meets[a][b], 1) << p.sites[a].code << " " << p.sites[b].code;
      }
    }
  }
  EXPECT_NO_THROW(validate_schedule(s, p, "sequential-3"));
  // Class 0 first: the three continents, one per round.
  std::vector<std::string> first;
  for (int r = 0; r < 3; ++r) {
    std::string codes;
    for (int i : s.rounds[r].groups[0].sites) codes += (codes.empty() ? "" : " ") + p.sites[i].code;
    first.push_back(codes);
  }
  EXPECT_EQ(first, (std::vector<std::string>{"nyc chi lax", "lon ams fra", "tyo sin bom"}));
}

// Rounds 0-2 are the three disjoint lines of class 0 (their averages commute, so together
// they act as class 0), rounds 3-5 those of class 1: two parallel classes of the affine
// plane give the exact average, so consensus is exact after 6 rounds and rho = 0.
TEST(Sequential, NineCitiesIsExactAfterTwoClassesOfThreeRounds) {
  const Platform p = nine_city();
  const Schedule s = make_schedule("sequential-3", p);
  const auto groups = groups_of(s.rounds);
  const std::vector<std::vector<int>> first5(groups.begin(), groups.begin() + 5);
  const std::vector<std::vector<int>> first6(groups.begin(), groups.begin() + 6);
  EXPECT_GT(spectral_error(product_of(first5, 9)), 0.1);
  EXPECT_NEAR(spectral_error(product_of(first6, 9)), 0.0, 1e-9);
  const MixingStats st = analyze_mixing(s, 9);
  EXPECT_NEAR(st.rho, 0.0, 1e-12);
  EXPECT_EQ(st.rounds_to_exact, 6);
  EXPECT_EQ(rounds_to_eps(s, 9, 1e-3), 6);
}

TEST(Sequential, EveryRoundHasExactlyOneGroupAndEveryPairMeets) {
  for (int n : {3, 4, 5, 7, 8, 9, 10}) {
    for (int k = 2; k <= std::min(n, 5); ++k) {
      const auto rounds = sequential_rounds(n, k);
      std::set<std::pair<int, int>> met;
      for (const auto& r : rounds) {
        ASSERT_EQ(r.groups.size(), 1u) << n << " " << k;
        const auto& g = r.groups[0].sites;
        EXPECT_GE(g.size(), 2u);
        EXPECT_LE(static_cast<int>(g.size()), k);
        for (int a : g)
          for (int b : g)
            if (a < b) met.insert({a, b});
      }
      EXPECT_EQ(static_cast<int>(met.size()), n * (n - 1) / 2) << n << " " << k;
    }
  }
}

// Hand computation, n = 3, K = 2 (circle method: {1,2}, {0,2}, {0,1}):
// W3 W2 W1 = [[1/4,3/8,3/8],[1/4,3/8,3/8],[1/2,1/4,1/4]]; minus J it is u v^T with
// u = (1,1,-2), v = (-2,1,1)/24, so rho = |u| |v| = sqrt(6) sqrt(6) / 24 = 1/4.
TEST(Sequential, ThreeSitesMatchesHandComputedRho) {
  const auto rounds = sequential_rounds(3, 2);
  EXPECT_EQ(groups_of(rounds), (std::vector<std::vector<int>>{{1, 2}, {0, 2}, {0, 1}}));
  const Matrix m = product_of({{1, 2}, {0, 2}, {0, 1}}, 3);
  const Matrix expected = {{0.25, 0.375, 0.375}, {0.25, 0.375, 0.375}, {0.5, 0.25, 0.25}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(m[i][j], expected[i][j], 1e-15);
  EXPECT_NEAR(spectral_error(m), 0.25, 1e-12);
  EXPECT_NEAR(analyze_mixing(of(rounds), 3).rho, 0.25, 1e-12);
}

// n = 4, K = 2: the round-robin's matchings {0,3}{1,2}, {1,3}{0,2}, {2,3}{0,1}, one pair
// per round. After {0,3}, {1,2}, {1,3}, {0,2} every site holds the mean: rho = 0, exact
// after 4 rounds, not 3.
TEST(Sequential, FourSitesPairsAreExactAfterFourRounds) {
  const auto rounds = sequential_rounds(4, 2);
  const std::vector<std::vector<int>> expected = {{0, 3}, {1, 2}, {1, 3}, {0, 2}, {2, 3}, {0, 1}};
  EXPECT_EQ(groups_of(rounds), expected);
  const std::vector<std::vector<int>> first3(expected.begin(), expected.begin() + 3);
  const std::vector<std::vector<int>> first4(expected.begin(), expected.begin() + 4);
  EXPECT_GT(spectral_error(product_of(first3, 4)), 0.1);
  EXPECT_NEAR(spectral_error(product_of(first4, 4)), 0.0, 1e-12);
  const MixingStats st = analyze_mixing(of(rounds), 4);
  EXPECT_NEAR(st.rho, 0.0, 1e-12);
  EXPECT_EQ(st.rounds_to_exact, 4);
}

// n = 5, K = 2 (rho > 0): the library's rho equals that of the product written out here,
// with sites outside the round's pair left unchanged.
TEST(Sequential, FiveSitesRhoMatchesHandWrittenProduct) {
  const auto rounds = sequential_rounds(5, 2);
  ASSERT_EQ(rounds.size(), 10u);
  const double rho = spectral_error(product_of(groups_of(rounds), 5));
  EXPECT_GT(rho, 0.01);
  EXPECT_LT(rho, 1.0);
  EXPECT_NEAR(analyze_mixing(of(rounds), 5).rho, rho, 1e-9);
}

TEST(Sequential, BadGroupSizeIsAConfigError) {
  const Platform p = nine_city();
  EXPECT_THROW(make_schedule("sequential-1", p), ConfigError);
  EXPECT_THROW(make_schedule("sequential-10", p), ConfigError);
  EXPECT_THROW(make_schedule("sequential-99999999999", p), ConfigError);  // beyond int
  EXPECT_EQ(make_schedule("sequential-9", p).period(), 1u);  // one group of all: all-to-all
}

}  // namespace
}  // namespace aggnet
