// Mixing math and schedule families: affine plane, all-to-all, pairs, rounds to eps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

#include "traffic/families.h"
#include "traffic/mixing.h"

namespace aggnet {
namespace {

std::vector<int> iota9() {
  std::vector<int> v(9);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

Schedule of(std::vector<Round> rounds) {
  Schedule s;
  s.rounds = std::move(rounds);
  return s;
}

TEST(AffinePlane, EachClassPartitionsNineSitesIntoThreeTriples) {
  const auto classes = affine_plane_classes(iota9());
  ASSERT_EQ(classes.size(), 4u);
  for (const auto& c : classes) {
    ASSERT_EQ(c.groups.size(), 3u);
    std::set<int> seen;
    for (const auto& g : c.groups) {
      EXPECT_EQ(g.sites.size(), 3u);
      seen.insert(g.sites.begin(), g.sites.end());
    }
    EXPECT_EQ(seen.size(), 9u);
  }
}

TEST(AffinePlane, EveryPairMeetsInExactlyOneClass) {
  const auto classes = affine_plane_classes(iota9());
  int meets[9][9] = {};
  for (const auto& c : classes)
    for (const auto& g : c.groups)
      for (int a : g.sites)
        for (int b : g.sites)
          if (a != b) ++meets[a][b];
  for (int a = 0; a < 9; ++a) {
    for (int b = 0; b < 9; ++b) {
      if (a != b) {
        EXPECT_EQ(meets[a][b], 1) << a << "," << b;
      }
    }
  }
}

TEST(AffinePlane, AnyTwoDifferentClassesGiveExactAverageInTwoRounds) {
  const auto classes = affine_plane_classes(iota9());
  for (int i = 0; i < 4; ++i) {
    EXPECT_GT(consensus_error(mixing_matrix(classes[i], 9)), 0.5);
    for (int j = 0; j < 4; ++j) {
      if (i == j) continue;
      const double rho = consensus_error(period_product(of({classes[i], classes[j]}), 9));
      EXPECT_NEAR(rho, 0.0, 1e-12) << i << "," << j;
    }
  }
}

TEST(Mixing, AllToAllIsExactInOneRound) {
  const auto s = of(all_to_all_rounds(9));
  const auto st = analyze_mixing(s, 9);
  EXPECT_NEAR(st.rho, 0.0, 1e-12);
  EXPECT_EQ(st.rounds_to_exact, 1);
  EXPECT_NEAR(st.round_spectral_gaps.at(0), 1.0, 1e-12);
  EXPECT_EQ(rounds_to_eps(s, 9, 1e-6), 1);
}

// Hand computation: n = 3, pairs rounds {0,1} then {0,2}.
// W2 W1 = [[1/4,1/4,1/2],[1/2,1/2,0],[1/4,1/4,1/2]]; W2 W1 - J = u v^T with
// u = (1,-2,1), v = (-1,-1,2)/12, so rho = |u| |v| = sqrt(6) sqrt(6) / 12 = 1/2.
TEST(Mixing, PairsOnThreeSitesMatchesHandComputedRho) {
  const auto s = of(pairs_rounds(3));
  ASSERT_EQ(s.rounds.size(), 2u);
  const auto st = analyze_mixing(s, 3);
  EXPECT_NEAR(st.rho, 0.5, 1e-12);
  EXPECT_NEAR(st.spectral_gap, 0.5, 1e-12);
  EXPECT_EQ(st.rounds_to_exact, -1);
  // Each pair round has eigenvalues {1, 1, 0}: second largest modulus 1, gap 0.
  EXPECT_NEAR(st.round_spectral_gaps[0], 0.0, 1e-12);
}

TEST(Mixing, PairsOnEightSitesIsExactAfterThreeRounds) {
  const auto st = analyze_mixing(of(pairs_rounds(8)), 8);
  EXPECT_NEAR(st.rho, 0.0, 1e-12);
  EXPECT_EQ(st.rounds_to_exact, 3);
}

TEST(Mixing, RoundsToEpsIsMonotoneInEps) {
  const std::vector<std::pair<Schedule, int>> cases = {{of(pairs_rounds(9)), 9},
                                                       {of(rotating_rounds(9, 2)), 9},
                                                       {of(random_rounds(9, 2, 7)), 9},
                                                       {of(rotating_rounds(7, 3)), 7}};
  for (const auto& [s, n] : cases) {
    long prev = 0;
    for (double eps : {0.5, 0.1, 1e-2, 1e-3, 1e-4, 1e-6, 1e-9}) {
      const long r = rounds_to_eps(s, n, eps);
      ASSERT_GT(r, 0);
      EXPECT_GE(r, prev) << eps;
      prev = r;
    }
  }
}

TEST(Mixing, RoundsToEpsExtrapolationIsConsistent) {
  const auto s = of(pairs_rounds(3));  // rho = 0.5 per period of 2 rounds
  const long exact = rounds_to_eps(s, 3, 1e-9);
  const long extrap = rounds_to_eps(s, 3, 1e-9, 4);
  EXPECT_EQ(extrap, exact);
  // Hand computation: error after k periods = 0.5 * 0.25^(k-1) ((M - J)^2 = (M - J) / 4).
  EXPECT_EQ(rounds_to_eps(s, 3, 0.51), 2);
  // Round 3 applies W1 to (M - J) = u v^T: |W1 u| = sqrt(1.5), error = 3/12 = 0.25.
  EXPECT_EQ(rounds_to_eps(s, 3, 0.49), 3);
  EXPECT_EQ(rounds_to_eps(s, 3, 0.2), 4);
}

TEST(Mixing, DisconnectedScheduleNeverConverges) {
  Round r{{Group{{0, 1}}, Group{{2, 3}}}};
  EXPECT_EQ(rounds_to_eps(of({r}), 4, 1e-3, 50), -1);
}

TEST(Families, RotatingCoversEveryPair) {
  for (int n : {5, 7, 9, 10, 12}) {
    for (int k : {2, 3, 4}) {
      const auto rounds = rotating_rounds(n, k);
      std::set<std::pair<int, int>> met;
      for (const auto& r : rounds) {
        std::set<int> seen;
        for (const auto& g : r.groups) {
          EXPECT_LE(static_cast<int>(g.sites.size()), k);
          for (int a : g.sites) {
            EXPECT_TRUE(seen.insert(a).second);
            for (int b : g.sites)
              if (a < b) met.insert({a, b});
          }
        }
      }
      EXPECT_EQ(static_cast<int>(met.size()), n * (n - 1) / 2) << n << " " << k;
    }
  }
}

TEST(Families, AllPartitionsOfNineIntoTriples) {
  EXPECT_EQ(all_partitions(9, 3).size(), 280u);
  EXPECT_EQ(all_partitions(6, 2).size(), 15u);
}

TEST(Families, RoundRobinPairsForEvenN) {
  const auto rounds = rotating_rounds(8, 2);
  EXPECT_EQ(rounds.size(), 7u);
  for (const auto& r : rounds) EXPECT_EQ(r.groups.size(), 4u);
}

// The fast paths against the dense definitions (a second method): JacobiSVD of M - J,
// the dense product W_b W_a, and mixing_matrix(r) * e.
double svd_error(const Eigen::MatrixXd& m) {
  const long n = m.rows();
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(m - Eigen::MatrixXd::Constant(n, n, 1.0 / n));
  return svd.singularValues()(0);
}

TEST(FastMixing, ConsensusErrorMatchesJacobiSvdOnRandomPartitionProducts) {
  for (int n : {7, 12, 31}) {
    for (int k : {2, 3, 4}) {
      const auto rounds = random_rounds(n, k, 11 + n + k, 3);
      Eigen::MatrixXd m = Eigen::MatrixXd::Identity(n, n);
      for (const auto& r : rounds) {
        m = mixing_matrix(r, n) * m;
        EXPECT_NEAR(consensus_error(m), svd_error(m), 1e-12) << n << " " << k;
      }
    }
  }
}

TEST(FastMixing, PairErrorFromOverlapsMatchesTheDenseProduct) {
  for (int n : {9, 10, 27, 40}) {
    for (int k : {2, 3, 5}) {
      const auto rounds = random_rounds(n, k, 100 + n * k, 4);
      for (std::size_t a = 0; a < rounds.size(); ++a) {
        for (std::size_t b = 0; b < rounds.size(); ++b) {
          const Eigen::MatrixXd m = mixing_matrix(rounds[b], n) * mixing_matrix(rounds[a], n);
          EXPECT_NEAR(pair_consensus_error(rounds[a], rounds[b], n), svd_error(m), 1e-12)
              << n << " " << k << " " << a << " " << b;
        }
      }
    }
  }
  // Two orthogonal classes of the affine plane: the exact average, error 0.
  const auto classes = affine_plane_classes(iota9());
  EXPECT_NEAR(pair_consensus_error(classes[0], classes[1], 9), 0.0, 1e-12);
  // The same class twice: W^2 = W keeps the three triads apart, error 1 (exactly: the
  // components are counted, no eigensolver).
  EXPECT_EQ(pair_consensus_error(classes[0], classes[0], 9), 1.0);
}

// The error after each round by the dense product and Jacobi SVD; the first r with
// error <= eps (0 if none within `limit`).
long dense_rounds_to_eps(const Schedule& s, int n, double eps, long limit) {
  Eigen::MatrixXd m = Eigen::MatrixXd::Identity(n, n);
  for (long r = 1; r <= limit; ++r) {
    m = mixing_matrix(s.rounds[(r - 1) % s.rounds.size()], n) * m;
    if (svd_error(m) <= eps) return r;
  }
  return 0;
}

// rounds_to_eps keeps per-row norms and D v from round to round: the first r whose dense
// product W_r ... W_1 has ||. - J||_2 <= eps by JacobiSVD, scanned round by round.
TEST(FastMixing, RoundsToEpsEqualsTheDenseScan) {
  for (int n : {6, 11, 16}) {
    for (int k : {2, 3}) {
      for (const Schedule& s : {of(random_rounds(n, k, 7 + n, 5)), of(sequential_rounds(n, k))}) {
        for (double eps : {0.45, 1e-3, 1e-9}) {  // off the exact errors 1/2, 1/4, ... of pairs
          const long expected = dense_rounds_to_eps(s, n, eps, 5000);
          ASSERT_GT(expected, 0);
          EXPECT_EQ(rounds_to_eps(s, n, eps), expected) << n << " " << k << " " << eps;
        }
      }
    }
  }
}

// With no rounds stepped beyond the first period (exact_limit 0) the answer comes from
// binary lifting over whole periods, then galloping and bisection within the last one: the
// same first r as the dense scan, wherever in its period it falls.
TEST(FastMixing, RoundsToEpsWithinTheLastPeriodEqualsTheDenseScan) {
  int past_first_period = 0;
  for (int n : {6, 11, 16}) {
    for (int k : {2, 3}) {
      const Schedule s = of(sequential_rounds(n, k));
      for (double eps : {0.45, 0.1, 1e-3, 1e-6, 1e-9}) {
        const long expected = dense_rounds_to_eps(s, n, eps, 20000);
        ASSERT_GT(expected, 0);
        EXPECT_EQ(rounds_to_eps(s, n, eps, 0), expected) << n << " " << k << " " << eps;
        past_first_period += expected > static_cast<long>(s.rounds.size());
      }
    }
  }
  EXPECT_GE(past_first_period, 10);  // the lifting and the search in a later period ran
}

TEST(FastMixing, ApplyRoundEqualsTheDenseProduct) {
  const int n = 13;
  const auto rounds = random_rounds(n, 3, 5, 2);
  Eigen::MatrixXd e = Eigen::MatrixXd::Random(n, 5);
  const Eigen::MatrixXd dense = mixing_matrix(rounds[0], n) * e;
  apply_round(rounds[0], e);
  EXPECT_LT((e - dense).cwiseAbs().maxCoeff(), 1e-15);
}

// The greedy cover as it was written first: every count recomputed from `met` each time
// (O(n^3 k) over a cover), the reference for rotating_rounds' incremental counts.
Group reference_greedy_group(int size, const std::vector<std::vector<char>>& met,
                             const std::vector<int>& unmet, std::vector<char>& avail) {
  const int n = static_cast<int>(avail.size());
  Group g;
  int seed = -1;
  for (int s = 0; s < n; ++s) {
    if (avail[s] && (seed < 0 || unmet[s] > unmet[seed])) seed = s;
  }
  g.sites.push_back(seed);
  avail[seed] = 0;
  while (static_cast<int>(g.sites.size()) < size) {
    int best = -1, best_score = -1, best_unmet = -1;
    for (int s = 0; s < n; ++s) {
      if (!avail[s]) continue;
      int score = 0;
      for (int m : g.sites) score += !met[s][m];
      const int u = unmet[s];
      if (score > best_score || (score == best_score && u > best_unmet)) {
        best = s, best_score = score, best_unmet = u;
      }
    }
    g.sites.push_back(best);
    avail[best] = 0;
  }
  std::sort(g.sites.begin(), g.sites.end());
  return g;
}

std::vector<Round> reference_greedy_cover(int n, int k) {
  std::vector<std::vector<char>> met(n, std::vector<char>(n, 0));
  std::vector<int> sat_out(n, 0);
  auto unmet_of = [&](int s) {
    int c = 0;
    for (int t = 0; t < n; ++t) c += (t != s && !met[s][t]);
    return c;
  };
  auto all_met = [&] {
    for (int s = 0; s < n; ++s)
      if (unmet_of(s)) return false;
    return true;
  };
  std::vector<Round> rounds;
  while (!all_met() && static_cast<int>(rounds.size()) < n * n) {
    std::vector<int> unmet(n);  // met changes only between rounds
    for (int s = 0; s < n; ++s) unmet[s] = unmet_of(s);
    std::vector<int> sizes(n / k, k);
    std::vector<char> avail(n, 1);
    if (n % k >= 2) sizes.push_back(n % k);
    if (n % k == 1) {  // one site sits out: fewest unmet pairs, then fewest sit-outs
      int best = 0;
      for (int s = 1; s < n; ++s) {
        if (std::make_pair(unmet[s], sat_out[s]) < std::make_pair(unmet[best], sat_out[best]))
          best = s;
      }
      avail[best] = 0;
      ++sat_out[best];
    }
    Round round;
    int gained = 0;
    for (int size : sizes) round.groups.push_back(reference_greedy_group(size, met, unmet, avail));
    for (const auto& g : round.groups) {
      for (int a : g.sites)
        for (int b : g.sites)
          if (a != b && !met[a][b]) met[a][b] = 1, ++gained;
    }
    rounds.push_back(round);
    if (gained == 0) break;  // cannot progress (degenerate sizes)
  }
  return rounds;
}

TEST(Families, RotatingCoverIsTheRecountingGreedysCover) {
  for (int n : {10, 13, 20, 31})
    for (int k : {3, 4, 5, 7}) {
      const auto fast = rotating_rounds(n, k), slow = reference_greedy_cover(n, k);
      ASSERT_EQ(fast.size(), slow.size()) << n << " " << k;
      for (std::size_t r = 0; r < fast.size(); ++r) {
        ASSERT_EQ(fast[r].groups.size(), slow[r].groups.size()) << n << " " << k;
        for (std::size_t g = 0; g < fast[r].groups.size(); ++g)
          EXPECT_EQ(fast[r].groups[g].sites, slow[r].groups[g].sites) << n << " " << k;
      }
    }
}

TEST(FastMixing, PairRoundsToEpsIsTheDenseRoundByRoundCount) {
  int checked = 0;
  for (int n : {8, 12, 16})
    for (int k : {2, 3, 4}) {
      const auto rounds = random_rounds(n, k, 300 + n * k, 4);
      for (std::size_t a = 0; a < rounds.size(); ++a)
        for (std::size_t b = a + 1; b < rounds.size(); ++b)
          for (double eps : {0.3, 1e-3}) {
            const Schedule s = of({rounds[a], rounds[b]});
            const long dense = dense_rounds_to_eps(s, n, eps, 120);
            if (dense == 0) continue;  // slower than 120 rounds, or never
            EXPECT_EQ(rounds_to_eps(s, n, eps), dense) << n << " " << k << " " << a << b;
            ++checked;
          }
    }
  EXPECT_GT(checked, 40);
}

// rotating-2 (the circle method) as a period-2 schedule: by hand on 3 sites (rounds {1,2},
// {0,2}, {0,1}): a zero-mean x becomes (x0, -x0/2, -x0/2), then (x0/4, -x0/2, x0/4), then
// (-x0/8, -x0/8, x0/4); the largest |x0| of a unit zero-mean x is 2/sqrt(6), so the errors
// are 1, 0.5, 0.25. On 4 sites the first two rounds pair {3,0},{1,2} then {3,1},{2,0}:
// every pair mean meets the other, the exact average after 2 rounds.
TEST(RotationPair, RotatingTwoOnThreeAndFourSitesByHand) {
  const Schedule three = of(rotating_rounds(3, 2));
  ASSERT_TRUE(rotation_pair(three, 3).has_value());
  EXPECT_EQ(rounds_to_eps(three, 3, 0.51), 2);
  EXPECT_EQ(rounds_to_eps(three, 3, 0.49), 3);
  EXPECT_EQ(rounds_to_eps(three, 3, 0.2), 4);
  const Schedule four = of(rotating_rounds(4, 2));
  ASSERT_TRUE(rotation_pair(four, 4).has_value());
  EXPECT_EQ(rounds_to_eps(four, 4, 1e-9), 2);
}

// The identity behind rotation_pair: after every r the dense products of rotating-2 and of
// its period-2 equivalent have the same ||. - J||_2 (Jacobi SVD), odd and even n.
TEST(RotationPair, ErrorsEqualThePairScheduleRoundByRound) {
  for (int n = 5; n <= 12; ++n) {
    const Schedule s = of(rotating_rounds(n, 2));
    const auto pair = rotation_pair(s, n);
    ASSERT_TRUE(pair.has_value()) << n;
    Eigen::MatrixXd m = Eigen::MatrixXd::Identity(n, n), q = m;
    for (std::size_t r = 0; r < 3 * s.rounds.size(); ++r) {
      m = mixing_matrix(s.rounds[r % s.rounds.size()], n) * m;
      q = mixing_matrix(pair->rounds[r % 2], n) * q;
      EXPECT_NEAR(svd_error(m), svd_error(q), 1e-12) << n << " " << r;
    }
  }
}

TEST(RotationPair, RotatingTwoRoundsToEpsIsTheDenseCount) {
  for (int n : {5, 6, 9, 10, 13})
    for (double eps : {0.3, 1e-2}) {
      const Schedule s = of(rotating_rounds(n, 2));
      const long dense = dense_rounds_to_eps(s, n, eps, 2000);
      ASSERT_GT(dense, 0) << n;
      EXPECT_EQ(rounds_to_eps(s, n, eps), dense) << n << " " << eps;
    }
}

// Two matchings joining the sites in one cycle (n even) or one path (n odd): on the
// cycle, the a-pairs' values y_k (k mod m = n/2) go to (y_(k-1) + 2 y_k + y_(k+1)) / 4
// per period, Fourier multipliers cos^2(pi j / m): rho = cos(2 pi / n); on the path,
// rho = cos(pi / n) (3 sites: 0.5, as by hand above). rotating-2's period-2 equivalent is
// such a pair, so its rounds to eps are 1 + ceil(log eps / log rho): 349,950 on 1,000
// sites (also the O(n^3) lifting's count; there log eps / log rho lies 0.33 from an
// integer, within the old 1e-6 relative margin), 82,656 on 243.
TEST(RotationPair, RotatingTwoAtScaleByTheCycleAndPathClosedForms) {
  const double eps = 1e-3;
  const auto expected = [eps](double rho) {
    return 1 + static_cast<long>(std::ceil(std::log(eps) / std::log(rho)));
  };
  EXPECT_EQ(expected(std::cos(2 * M_PI / 1000)), 349950);  // the lifting's count at 1,000
  EXPECT_EQ(rounds_to_eps(of(rotating_rounds(242, 2)), 242, eps),
            expected(std::cos(2 * M_PI / 242)));
  EXPECT_EQ(expected(std::cos(M_PI / 243)), 82656);
  EXPECT_EQ(rounds_to_eps(of(rotating_rounds(243, 2)), 243, eps), 82656);
  Round a, b;  // the cycle 0-1-2-...-9-0 of 10 sites
  for (int i = 0; i < 10; i += 2) {
    a.groups.push_back(Group{{i, i + 1}});
    b.groups.push_back(Group{{i + 1, (i + 2) % 10}});
  }
  EXPECT_NEAR(pair_consensus_error(a, b, 10), std::cos(2 * M_PI / 10), 1e-12);
}

// Not rotations: two rounds of rotating-2 swapped, random pairings; their counts stay the
// round-by-round ones.
TEST(RotationPair, OtherSchedulesAreNotRotations) {
  Schedule swapped = of(rotating_rounds(8, 2));
  std::swap(swapped.rounds[1], swapped.rounds[2]);
  EXPECT_FALSE(rotation_pair(swapped, 8).has_value());
  EXPECT_EQ(rounds_to_eps(swapped, 8, 1e-2), dense_rounds_to_eps(swapped, 8, 1e-2, 2000));
  EXPECT_FALSE(rotation_pair(of(random_rounds(8, 2, 3, 7)), 8).has_value());
  EXPECT_FALSE(rotation_pair(of(rotating_rounds(9, 3)), 9).has_value());
}

// Rounds of pairs joining every site lie on one line through the sites, shuffled: a cycle
// (both rounds match every site) or a path (a round leaves one or two ends out).
TEST(FastMixing, PairErrorOfRoundsOfPairsOnOneLineMatchesTheDenseProduct) {
  std::mt19937 rng(7);
  for (int n = 3; n <= 40; ++n)
    for (const bool cycle : {false, true}) {
      if (cycle && n % 2 == 1) continue;
      std::vector<int> line(static_cast<std::size_t>(n));
      std::iota(line.begin(), line.end(), 0);
      std::shuffle(line.begin(), line.end(), rng);
      Round a, b;
      for (int i = 0; i + 1 < n; ++i)
        (i % 2 == 0 ? a : b).groups.push_back(Group{{line[i], line[i + 1]}});
      if (cycle) b.groups.push_back(Group{{line[n - 1], line[0]}});
      if (n % 2 == 1) b.groups.push_back(Group{{line[0]}});  // a group of one: no pair
      for (const auto& [first, second] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
        const Eigen::MatrixXd m = mixing_matrix(*second, n) * mixing_matrix(*first, n);
        EXPECT_NEAR(pair_consensus_error(*first, *second, n), svd_error(m), 1e-12)
            << n << (cycle ? " cycle" : " path");
        EXPECT_LE(pair_consensus_error_lower_bound(*first, *second, n),
                  pair_consensus_error(*first, *second, n));
      }
    }
}

TEST(FastMixing, PairErrorLowerBoundIsBelowItAndMeetsItOnAFullKrylovSpace) {
  for (int n : {9, 16, 27})
    for (int k : {2, 3, 4}) {
      const auto rounds = random_rounds(n, k, 500 + n * k, 4);
      for (std::size_t a = 0; a < rounds.size(); ++a)
        for (std::size_t b = 0; b < rounds.size(); ++b) {
          const double rho = pair_consensus_error(rounds[a], rounds[b], n);
          EXPECT_LE(pair_consensus_error_lower_bound(rounds[a], rounds[b], n, 3), rho + 1e-12);
          EXPECT_NEAR(pair_consensus_error_lower_bound(rounds[a], rounds[b], n, n), rho, 1e-6)
              << n << " " << k << " " << a << " " << b;
        }
    }
}

}  // namespace
}  // namespace aggnet
