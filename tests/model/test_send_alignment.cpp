// Arrival-aligned send offsets, against values derived by hand (in the comments), a
// closed-form reference for triads, a brute-force grid search for five sites, and the
// two ways of solving groups of four or more against each other (the minimum cycle mean,
// which runs, and the LP). Arrival instants and skews are recomputed here from the
// offsets, not taken from the library.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "model/send_alignment.h"

namespace aggnet {
namespace {

constexpr std::uint64_t kMs = 1'000'000'000ull;  // ps per ms
using Offsets = std::vector<std::uint64_t>;

/// Instant at which i's chunk reaches j (relative to the agreed start T).
std::uint64_t at(const ArrivalMatrix& a, const Offsets& o, std::size_t i, std::size_t j) {
  return o[i] + a[i][j];
}

/// Largest skew over receivers, recomputed here.
std::uint64_t max_skew(const ArrivalMatrix& a, const Offsets& o) {
  std::uint64_t worst = 0;
  for (std::size_t j = 0; j < a.size(); ++j) {
    std::uint64_t first = UINT64_MAX, last = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (i == j) continue;
      first = std::min(first, at(a, o, i, j));
      last = std::max(last, at(a, o, i, j));
    }
    if (a.size() > 1) worst = std::max(worst, last - first);
  }
  return worst;
}

std::uint64_t last_arrival(const ArrivalMatrix& a, const Offsets& o) {
  std::uint64_t last = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t j = 0; j < a.size(); ++j) {
      if (i != j) last = std::max(last, at(a, o, i, j));
    }
  }
  return last;
}

std::int64_t diff(std::uint64_t x, std::uint64_t y) {
  return static_cast<std::int64_t>(x) - static_cast<std::int64_t>(y);
}

ArrivalMatrix scaled(const std::vector<std::vector<double>>& units, double ps_per_unit) {
  ArrivalMatrix a(units.size(), std::vector<std::uint64_t>(units.size(), 0));
  for (std::size_t i = 0; i < units.size(); ++i) {
    for (std::size_t j = 0; j < units.size(); ++j) {
      a[i][j] = static_cast<std::uint64_t>(std::llround(units[i][j] * ps_per_unit));
    }
  }
  return a;
}

/// Euclidean distances between random points of a square of side 1.4e11 ps (a metric,
/// up to ~2e11 ps), rounded to whole ps (still symmetric).
ArrivalMatrix random_points(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> coord(0.0, 1.4e11);
  std::vector<double> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = coord(rng), y[i] = coord(rng);
  ArrivalMatrix a(n, std::vector<std::uint64_t>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const double distance = std::hypot(x[i] - x[j], y[i] - y[j]);
      if (i != j) a[i][j] = static_cast<std::uint64_t>(std::llround(distance));
    }
  }
  return a;
}

/// A random triangle: two sides up to 1e11 ps, the third between their difference and
/// sum (triangle inequality), all symmetric.
ArrivalMatrix random_triangle(std::mt19937_64& rng) {
  std::uniform_int_distribution<std::uint64_t> side(1, 100'000'000'000ull);
  const std::uint64_t p = side(rng), q = side(rng);
  std::uniform_int_distribution<std::uint64_t> third(std::max(p, q) - std::min(p, q), p + q);
  const std::uint64_t r = third(rng);
  return {{0, p, q}, {p, 0, r}, {q, r, 0}};
}

TEST(SendAlignment, GroupsOfTwoOrFewerNeedNoOffsets) {
  for (const ArrivalMatrix& a :
       {ArrivalMatrix{}, ArrivalMatrix{{7}}, ArrivalMatrix{{0, 3 * kMs}, {11 * kMs, 0}}}) {
    const SenderAlignment s = align_senders(a);
    EXPECT_EQ(s.offset_ps, Offsets(a.size(), 0));
    EXPECT_EQ(s.residual_skew_ps, Offsets(a.size(), 0));  // one sender per receiver
    EXPECT_EQ(s.max_residual_skew_ps, 0u);
    EXPECT_EQ(s.method, "closed-form");
  }
}

TEST(SendAlignment, UnalignedKeepsZeroOffsets) {
  // Receiver 0 hears 4 and 8 (skew 4), receiver 1 hears 5 and 2 (3), receiver 2 hears
  // 9 and 7 (2).
  const ArrivalMatrix a = {{0, 5, 9}, {4, 0, 7}, {8, 2, 0}};
  const SenderAlignment s = unaligned(a);
  EXPECT_EQ(s.offset_ps, (Offsets{0, 0, 0}));
  EXPECT_EQ(s.residual_skew_ps, (Offsets{4, 3, 2}));
  EXPECT_EQ(s.max_residual_skew_ps, 4u);
  EXPECT_EQ(s.method, "none");
  // Receiver 0 with o = (0, 4, 0) hears 4 + 4 and 0 + 8; receiver 1 still 5 and 2.
  EXPECT_EQ(residual_skew_ps(a, {0, 4, 0}, 0), 0u);
  EXPECT_EQ(residual_skew_ps(a, {0, 4, 0}, 1), 3u);
}

/// Checks the exact alignment of a triad: both contributions reach each receiver at the
/// same instant and the earliest member starts at T.
void expect_triad_aligned(const ArrivalMatrix& a, const SenderAlignment& s) {
  ASSERT_EQ(s.offset_ps.size(), 3u);
  EXPECT_EQ(at(a, s.offset_ps, 1, 0), at(a, s.offset_ps, 2, 0));
  EXPECT_EQ(at(a, s.offset_ps, 0, 1), at(a, s.offset_ps, 2, 1));
  EXPECT_EQ(at(a, s.offset_ps, 0, 2), at(a, s.offset_ps, 1, 2));
  EXPECT_EQ(*std::min_element(s.offset_ps.begin(), s.offset_ps.end()), 0u);
  EXPECT_EQ(s.residual_skew_ps, (Offsets{0, 0, 0}));
  EXPECT_EQ(s.max_residual_skew_ps, 0u);
}

TEST(SendAlignment, ClosedFormAlignsSymmetricTriadsExactly) {
  std::mt19937_64 rng(20240611);
  for (int round = 0; round < 200; ++round) {
    const ArrivalMatrix a = round % 2 ? random_points(3, rng) : random_triangle(rng);
    const SenderAlignment s = align_senders(a);
    EXPECT_EQ(s.method, "closed-form");
    expect_triad_aligned(a, s);
  }
}

TEST(SendAlignment, LpMatchesClosedFormOnSymmetricTriads) {
  // With zero residual the relative offsets are fixed (receivers 1 and 2 each pin one
  // difference), so the closed form (shifted to start at 0) also has the earliest last
  // arrival: the LP has to reach the same point.
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    const ArrivalMatrix a = round % 2 ? random_points(3, rng) : random_triangle(rng);
    const SenderAlignment closed = align_senders(a);
    const SenderAlignment lp = align_senders_lp(a);
    EXPECT_EQ(lp.method, "lp");
    EXPECT_LE(max_skew(a, lp.offset_ps), 1u);
    EXPECT_EQ(lp.max_residual_skew_ps, max_skew(a, lp.offset_ps));
    EXPECT_LE(std::abs(diff(last_arrival(a, lp.offset_ps), last_arrival(a, closed.offset_ps))), 2);
    EXPECT_EQ(*std::min_element(lp.offset_ps.begin(), lp.offset_ps.end()), 0u);
  }
}

TEST(SendAlignment, ClosedFormAlignsUpPathDownLatencies) {
  // a_ij = up_i + P_ij + down_j with up = (1, 5, 2), down = (3, 0, 4), P_01 = 10,
  // P_02 = 20, P_12 = 15 (ms). Receiver 2: o_1 - o_0 = a_02 - a_12 = 25 - 24 = 1;
  // receiver 1: o_2 - o_0 = a_01 - a_21 = 11 - 17 = -6. Shifted: o = (6, 7, 0), and
  // receiver 0 hears 7 + a_10 = 7 + 18 = 25 and 0 + a_20 = 25.
  const std::vector<double> up = {1, 5, 2}, down = {3, 0, 4};
  const std::vector<std::vector<double>> path = {{0, 10, 20}, {10, 0, 15}, {20, 15, 0}};
  std::vector<std::vector<double>> units(3, std::vector<double>(3, 0));
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) units[i][j] = i == j ? 0 : up[i] + path[i][j] + down[j];
  }
  const ArrivalMatrix a = scaled(units, kMs);
  const SenderAlignment s = align_senders(a);
  EXPECT_EQ(s.method, "closed-form");
  EXPECT_EQ(s.offset_ps, (Offsets{6 * kMs, 7 * kMs, 0}));
  expect_triad_aligned(a, s);
}

TEST(SendAlignment, ClosedFormAlignsRandomUpPathDownTriads) {
  std::mt19937_64 rng(99);
  std::uniform_int_distribution<std::uint64_t> access(0, 20'000'000'000ull);
  for (int round = 0; round < 100; ++round) {
    ArrivalMatrix a = random_points(3, rng);
    std::vector<std::uint64_t> up(3), down(3);
    for (int i = 0; i < 3; ++i) up[i] = access(rng), down[i] = access(rng);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) a[i][j] += i == j ? 0 : up[i] + down[j];
    }
    const SenderAlignment s = align_senders(a);
    EXPECT_EQ(s.method, "closed-form");
    expect_triad_aligned(a, s);
  }
}

TEST(SendAlignment, AsymmetricTriadFallsBackToTheCycleMean) {
  // Symmetric d_01 = 10, d_02 = 20, d_12 = 15 ms, except a_10 = 16. The signed skews
  // s_0 = (o_1 + a_10) - (o_2 + a_20), s_1 = (o_2 + a_21) - (o_0 + a_01) and
  // s_2 = (o_0 + a_02) - (o_1 + a_12) sum to a_10 - a_20 + a_21 - a_01 + a_02 - a_12 = 6
  // whatever the offsets, so max |s| >= 6 / 3 = 2 ms, reached only with s_0 = s_1 = s_2 =
  // 2: o_1 = o_0 + 3 (from s_2) and o_2 = o_0 - 3 (from s_1), i.e. o = (3, 6, 0) ms.
  const ArrivalMatrix a = scaled({{0, 10, 20}, {16, 0, 15}, {20, 15, 0}}, kMs);
  const SenderAlignment s = align_senders(a);
  EXPECT_EQ(s.method, "cycle-mean");
  EXPECT_EQ(s.offset_ps, (Offsets{3 * kMs, 6 * kMs, 0}));
  EXPECT_EQ(s.max_residual_skew_ps, 2 * kMs);
  EXPECT_EQ(s.max_residual_skew_ps, max_skew(a, s.offset_ps));
  const SenderAlignment lp = align_senders_lp(a);
  for (int i = 0; i < 3; ++i) EXPECT_LE(std::abs(diff(lp.offset_ps[i], s.offset_ps[i])), 1);
}

TEST(SendAlignment, FourSiteSquareHasPositiveMinimum) {
  // Square 0-1-2-3 with sides 10 and diagonals 14 (ms): receiver j hears its two
  // neighbours at o + 10 and the opposite site at o + 14. The largest skew is convex in
  // the offsets and invariant under the square's symmetries, which act transitively on
  // the sites, so averaging any optimum over them gives an optimum with equal offsets:
  // skew 14 - 10 = 4 ms. No offsets do better: skew <= 4 needs o_{j+2} <= o_{j+1} and
  // o_{j+2} <= o_{j-1} at every receiver j, i.e. all offsets equal (unique optimum).
  // Adding arms x = (0, 3, 1, 5) (a_ij += x_i + x_j) shifts every arrival at j by
  // x_j + x_i, which o_i -> o_i - x_i cancels: the minimum stays 4 ms, now with
  // o_i = 5 - x_i = (5, 2, 4, 0) ms and the last arrival 14 + 2 x 5 = 24 ms (receiver 3
  // hears site 1 across the diagonal at 2 + 14 + 3 + 5).
  const std::vector<double> x = {0, 3, 1, 5};
  std::vector<std::vector<double>> units(4, std::vector<double>(4, 0));
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      if (i != j) units[i][j] = ((i - j + 4) % 4 == 2 ? 14 : 10) + x[i] + x[j];
    }
  }
  const ArrivalMatrix a = scaled(units, kMs);
  const SenderAlignment s = align_senders(a);
  EXPECT_EQ(s.method, "cycle-mean");
  EXPECT_EQ(s.offset_ps, (Offsets{5 * kMs, 2 * kMs, 4 * kMs, 0}));
  EXPECT_EQ(max_skew(a, s.offset_ps), 4 * kMs);
  EXPECT_EQ(s.max_residual_skew_ps, max_skew(a, s.offset_ps));
  EXPECT_EQ(last_arrival(a, s.offset_ps), 24 * kMs);
  const SenderAlignment lp = align_senders_lp(a);
  EXPECT_EQ(lp.method, "lp");
  for (int i = 0; i < 4; ++i) EXPECT_LE(std::abs(diff(lp.offset_ps[i], s.offset_ps[i])), 1);
  EXPECT_NEAR(static_cast<double>(last_arrival(a, lp.offset_ps)), 24.0 * kMs, 2.0);
}

TEST(SendAlignment, FourSiteTreeMetricAlignsExactly) {
  // Star with arms x (a_ij = x_i + x_j): o_i = max x - x_i makes every arrival at j
  // max x + x_j, so the skew is 0; any zero-skew offsets have o_i + x_i equal for all i
  // (each receiver sees the other three), and the earliest of them starts at 0.
  const std::vector<double> x = {3.25, 7.5, 1.0, 12.125};
  std::vector<std::vector<double>> units(4, std::vector<double>(4, 0));
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) units[i][j] = i == j ? 0 : x[i] + x[j];
  }
  const ArrivalMatrix a = scaled(units, kMs);
  for (const SenderAlignment& s : {align_senders(a), align_senders_lp(a)}) {
    const std::int64_t tolerance = s.method == "lp" ? 1 : 0;  // the cycle mean is exact
    EXPECT_LE(static_cast<std::int64_t>(max_skew(a, s.offset_ps)), tolerance) << s.method;
    for (int i = 0; i < 4; ++i) {
      const auto expected = static_cast<std::uint64_t>((12.125 - x[i]) * kMs);
      EXPECT_LE(std::abs(diff(s.offset_ps[i], expected)), tolerance) << s.method;
    }
    const auto last = static_cast<std::uint64_t>(2 * 12.125 * kMs);
    EXPECT_LE(std::abs(diff(last_arrival(a, s.offset_ps), last)), 2 * tolerance) << s.method;
  }
  EXPECT_EQ(align_senders(a).method, "cycle-mean");
}

// --- Brute force over a grid of offsets (five sites) -----------------------------------

/// Delays and offsets on the brute-force grid, in grid steps.
using Grid = std::vector<std::vector<std::int64_t>>;

struct GridPoint {
  std::int64_t skew = INT64_MAX, last = INT64_MAX;
};

/// Largest skew and last arrival (the smallest offset shifted to 0) of offsets o; gives
/// up (returning a skew above `limit`) as soon as one receiver's skew exceeds `limit`.
GridPoint evaluate(const Grid& d, const std::vector<std::int64_t>& o, std::int64_t limit) {
  GridPoint p{0, INT64_MIN};
  for (std::size_t j = 0; j < d.size(); ++j) {
    std::int64_t first = INT64_MAX, last = INT64_MIN;
    for (std::size_t i = 0; i < d.size(); ++i) {
      if (i == j) continue;
      first = std::min(first, o[i] + d[i][j]);
      last = std::max(last, o[i] + d[i][j]);
    }
    p.skew = std::max(p.skew, last - first);
    if (p.skew > limit) return p;
    p.last = std::max(p.last, last);
  }
  p.last -= *std::min_element(o.begin(), o.end());
  return p;
}

/// Search box with o_0 = 0: any optimum has |o_i - o_0| <= z* + |a_ij - a_0j| for every
/// receiver j outside {0, i} (j's skew bounds the gap between the two arrivals), and z*
/// is at most the skew z0 of zero offsets, so |o_i| <= z0 + min_j |a_ij - a_0j|.
std::vector<std::int64_t> search_box(const Grid& d) {
  const std::int64_t z0 = evaluate(d, std::vector<std::int64_t>(d.size(), 0), INT64_MAX).skew;
  std::vector<std::int64_t> bound(d.size(), 0);
  for (std::size_t i = 1; i < d.size(); ++i) {
    std::int64_t closest = INT64_MAX;
    for (std::size_t j = 1; j < d.size(); ++j) {
      if (j != i) closest = std::min(closest, std::abs(d[i][j] - d[0][j]));
    }
    bound[i] = z0 + closest;
  }
  return bound;
}

/// Lexicographically best (skew, then last arrival) grid point of five sites.
GridPoint brute_force(const Grid& d) {
  const std::vector<std::int64_t> bound = search_box(d);
  GridPoint best;
  std::vector<std::int64_t> o(5, 0);
  for (o[1] = -bound[1]; o[1] <= bound[1]; ++o[1]) {
    for (o[2] = -bound[2]; o[2] <= bound[2]; ++o[2]) {
      for (o[3] = -bound[3]; o[3] <= bound[3]; ++o[3]) {
        for (o[4] = -bound[4]; o[4] <= bound[4]; ++o[4]) {
          const GridPoint p = evaluate(d, o, best.skew);
          if (p.skew < best.skew || (p.skew == best.skew && p.last < best.last)) best = p;
        }
      }
    }
  }
  return best;
}

TEST(SendAlignment, MatchesBruteForceOnFiveSites) {
  // Symmetric random delays of 0..9 ms, searched on a grid of half a ms (search_box
  // bounds the search). The real optimum need not lie on the grid (halves and thirds of a
  // ms occur), but rounding an optimum's offsets to the grid moves each arrival by at
  // most half a step, so its skew by at most one step:
  //   ours <= grid (+ 1 ps: ours is the whole-ps optimum, at most 1 ps above the real
  //   one) and grid <= ours + one step.
  // When the grid reaches our skew (half-integral optimum), the best last arrival among
  // those grid points bounds ours from above.
  constexpr std::int64_t kStepsPerMs = 2;
  constexpr std::int64_t kStepPs = static_cast<std::int64_t>(kMs) / kStepsPerMs;
  std::mt19937_64 rng(5);
  int tight = 0;
  for (int round = 0; round < 10; ++round) {
    Grid d(5, std::vector<std::int64_t>(5, 0));
    ArrivalMatrix a(5, std::vector<std::uint64_t>(5, 0));
    for (int i = 0; i < 5; ++i) {
      for (int j = i + 1; j < 5; ++j) {
        const auto ms = static_cast<std::int64_t>(rng() % 10);
        d[i][j] = d[j][i] = ms * kStepsPerMs;
        a[i][j] = a[j][i] = static_cast<std::uint64_t>(ms) * kMs;
      }
    }
    const GridPoint grid = brute_force(d);
    const SenderAlignment s = align_senders(a);
    const auto skew = static_cast<std::int64_t>(max_skew(a, s.offset_ps));
    EXPECT_LE(skew, grid.skew * kStepPs + 1) << "round " << round;
    EXPECT_LE(grid.skew * kStepPs, skew + kStepPs) << "round " << round;
    if (std::abs(skew - grid.skew * kStepPs) <= 1) {
      ++tight;
      const auto last = static_cast<std::int64_t>(last_arrival(a, s.offset_ps));
      EXPECT_LE(last, grid.last * kStepPs + 2) << "round " << round;
    }
  }
  EXPECT_GE(tight, 8);  // most of these optima are half-integral: the check is tight
}

TEST(SendAlignment, NeverWorseThanUnaligned) {
  // Zero offsets are feasible, so the optimum's largest skew is at most the unaligned one;
  // and the earliest member starts at T. Latencies up to 1e12 ps (1 s).
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<std::uint64_t> latency(0, 1'000'000'000'000ull);
  for (std::size_t n : {4u, 5u, 7u, 9u}) {
    for (int round = 0; round < 10; ++round) {
      ArrivalMatrix a(n, std::vector<std::uint64_t>(n, 0));
      for (auto& row : a) {
        for (auto& v : row) v = latency(rng);
      }
      const SenderAlignment s = align_senders(a);
      EXPECT_LE(s.max_residual_skew_ps, unaligned(a).max_residual_skew_ps);
      EXPECT_EQ(s.max_residual_skew_ps, max_skew(a, s.offset_ps));
      EXPECT_EQ(*std::min_element(s.offset_ps.begin(), s.offset_ps.end()), 0u);
    }
  }
}

TEST(SendAlignment, AlignedCopiesLandTogether) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::uint64_t> latency(1, 300'000'000'000ull);
  ArrivalMatrix a(6, std::vector<std::uint64_t>(6, 0));
  for (std::size_t i = 0; i < 6; ++i) {
    for (std::size_t j = 0; j < 6; ++j) a[i][j] = latency(rng);  // diagonal is ignored
  }
  const auto copy = align_copies(a);
  ASSERT_EQ(copy.size(), 6u);
  for (std::size_t j = 0; j < 6; ++j) {
    std::uint64_t latest = 0;
    for (std::size_t k = 0; k < 6; ++k) {
      if (k != j) latest = std::max(latest, a[k][j]);
    }
    EXPECT_EQ(copy[j][j], 0u);
    std::uint64_t earliest_offset = UINT64_MAX;
    for (std::size_t i = 0; i < 6; ++i) {
      if (i == j) continue;
      EXPECT_EQ(copy[i][j] + a[i][j], latest) << i << " -> " << j;
      earliest_offset = std::min(earliest_offset, copy[i][j]);
    }
    EXPECT_EQ(earliest_offset, 0u);  // the slowest copy starts at T
  }
}

TEST(SendAlignment, NonSquareMatrixThrows) {
  const ArrivalMatrix wide = {{0, 1, 2}, {1, 0, 2}};
  const ArrivalMatrix ragged = {{0, 1, 2}, {1, 0}, {2, 2, 0}};
  for (const ArrivalMatrix& a : {wide, ragged}) {
    EXPECT_THROW(align_senders(a), std::invalid_argument);
    EXPECT_THROW(align_senders_lp(a), std::invalid_argument);
    EXPECT_THROW(unaligned(a), std::invalid_argument);
    EXPECT_THROW(align_copies(a), std::invalid_argument);
  }
  EXPECT_THROW(residual_skew_ps({{0, 1}, {1, 0}}, {0}, 0), std::invalid_argument);
}

// Stars with spokes of seconds to an hour are tree metrics (a_ij = x_i + x_j), so exact
// alignment exists; with such delays GLPK once failed or spun. The LP must return, with
// a residual no larger than 1e-9 of the largest latency; the cycle mean, with none.
TEST(SendAlignment, StarsWithDelaysOfMinutesToHoursAlign) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t n = 6 + static_cast<std::size_t>(trial % 3);
    std::uniform_int_distribution<std::uint64_t> arm(17'000'000'000'000ull,
                                                     3'600'000'000'000'000ull);
    std::vector<std::uint64_t> x(n);
    for (auto& v : x) v = arm(rng);
    ArrivalMatrix a(n, std::vector<std::uint64_t>(n, 0));
    std::uint64_t largest = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (i != j) largest = std::max(largest, a[i][j] = x[i] + x[j]);
    const auto r = align_senders_lp(a);
    EXPECT_EQ(r.method, "lp");
    EXPECT_LE(static_cast<double>(r.max_residual_skew_ps), 1e-9 * static_cast<double>(largest))
        << "trial " << trial;
    EXPECT_EQ(align_senders(a).max_residual_skew_ps, 0u) << "trial " << trial;
  }
}

/// Random latencies of three kinds: arbitrary (asymmetric), distances between points
/// (a metric), and distances plus access arms up_i + d_ij + down_j.
ArrivalMatrix random_group(std::size_t n, int kind, std::mt19937_64& rng) {
  if (kind == 0) {
    std::uniform_int_distribution<std::uint64_t> latency(0, 1'000'000'000'000ull);
    ArrivalMatrix a(n, std::vector<std::uint64_t>(n, 0));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (i != j) a[i][j] = latency(rng);
    return a;
  }
  ArrivalMatrix a = random_points(n, rng);
  if (kind == 1) return a;
  std::uniform_int_distribution<std::uint64_t> arm(0, 20'000'000'000ull);
  std::vector<std::uint64_t> up(n), down(n);
  for (std::size_t i = 0; i < n; ++i) up[i] = arm(rng), down[i] = arm(rng);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i != j) a[i][j] += up[i] + down[j];
  return a;
}

// The two methods solve the same lexicographic problem (largest skew, then last arrival,
// then the sum of offsets): the LP over real offsets in floating point (its answer
// rounded), the cycle mean exactly over whole ps. So the cycle mean's skew is never
// larger, at most 2 ps smaller (the LP's rounding), and at an equal skew its last arrival
// is never later; each offset is within about n ps of the LP's (the rounded real
// optimum against the whole-ps one). Latencies up to 1 s: at hours the LP's tolerances
// are several ps.
TEST(SendAlignment, CycleMeanMatchesTheLp) {
  std::mt19937_64 rng(17);
  for (std::size_t n : {4u, 5u, 6u, 8u, 12u, 16u}) {
    for (int round = 0; round < 12; ++round) {
      const ArrivalMatrix a = random_group(n, round % 3, rng);
      const SenderAlignment exact = align_senders(a), lp = align_senders_lp(a);
      ASSERT_EQ(exact.method, "cycle-mean");
      const std::int64_t skew = diff(lp.max_residual_skew_ps, exact.max_residual_skew_ps);
      EXPECT_GE(skew, 0) << n << " sites, round " << round;
      EXPECT_LE(skew, 2) << n << " sites, round " << round;
      const std::int64_t last =
          diff(last_arrival(a, lp.offset_ps), last_arrival(a, exact.offset_ps));
      if (skew == 0) {
        EXPECT_GE(last, 0) << n << " sites, round " << round;
      }
      EXPECT_LE(std::abs(last), static_cast<std::int64_t>(n)) << n << " sites, round " << round;
      for (std::size_t i = 0; i < n; ++i)
        EXPECT_LE(std::abs(diff(exact.offset_ps[i], lp.offset_ps[i])), static_cast<std::int64_t>(n))
            << n << " sites, round " << round << ", member " << i;
    }
  }
}

/// The lexicographically best whole-ps offsets (largest skew, last arrival, sum) in
/// [0, bound]^n, by enumeration. Only vectors with a zero offset are scored: one without
/// is beaten by itself shifted down 1 ps (the same skews, an earlier last arrival).
Offsets best_on_grid(const ArrivalMatrix& a, std::uint64_t bound) {
  const std::size_t n = a.size();
  Offsets o(n, 0), best;
  std::uint64_t best_skew = UINT64_MAX, best_last = UINT64_MAX, best_sum = UINT64_MAX;
  const auto next = [&] {  // o steps to the next vector of the grid; false after the last
    std::size_t i = 0;
    while (i < n && o[i] == bound) o[i++] = 0;
    if (i == n) return false;
    ++o[i];
    return true;
  };
  do {
    if (std::find(o.begin(), o.end(), std::uint64_t{0}) == o.end()) continue;
    const std::uint64_t skew = max_skew(a, o), last = last_arrival(a, o);
    std::uint64_t sum = 0;
    for (const std::uint64_t v : o) sum += v;
    if (std::tie(skew, last, sum) < std::tie(best_skew, best_last, best_sum))
      best = o, best_skew = skew, best_last = last, best_sum = sum;
  } while (next());
  return best;
}

// Without GLPK: small integer latencies (0-6 ps), every offset vector in a box three times
// the latencies' spread enumerated. The optimum over whole ps is unique (the least
// offsets at the least skew), so the offsets must be equal, not just as good.
TEST(SendAlignment, CycleMeanIsTheBestWholePsOffsets) {
  std::mt19937_64 rng(29);
  std::uniform_int_distribution<std::uint64_t> latency(0, 6);
  int nonzero = 0;
  for (std::size_t n : {3u, 4u, 5u}) {
    for (int round = 0; round < (n == 5 ? 6 : 30); ++round) {
      ArrivalMatrix a(n, std::vector<std::uint64_t>(n, 0));
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
          if (i != j) a[i][j] = latency(rng);
      const SenderAlignment s = align_senders(a);
      if (s.method != "cycle-mean") continue;  // a triad the closed form aligns
      const std::uint64_t bound = 18;
      ASSERT_LE(*std::max_element(s.offset_ps.begin(), s.offset_ps.end()), bound);
      EXPECT_EQ(s.offset_ps, best_on_grid(a, bound)) << n << " sites, round " << round;
      if (s.max_residual_skew_ps > 0) ++nonzero;
    }
  }
  EXPECT_GE(nonzero, 40);  // the cases have something to optimise
}

// align_senders' short cuts (policy iteration confirmed by shortest paths) against Karp's
// walks alone: the same offsets for arbitrary, metric and up-path-down latencies, and for
// small integers with many ties.
TEST(SendAlignment, ShortCutsGiveKarpsOffsets) {
  std::mt19937_64 rng(36);
  for (std::size_t n : {4u, 5u, 7u, 12u, 31u, 90u}) {
    for (int round = 0; round < 9; ++round) {
      const ArrivalMatrix a = random_group(n, round % 3, rng);
      const SenderAlignment fast = align_senders(a), karp = align_senders_general(a);
      EXPECT_EQ(fast.offset_ps, karp.offset_ps) << n << " members, round " << round;
      EXPECT_EQ(fast.residual_skew_ps, karp.residual_skew_ps) << n << " members, round " << round;
      EXPECT_EQ(fast.method, karp.method);
    }
  }
  std::uniform_int_distribution<std::uint64_t> tiny(0, 4);
  for (std::size_t n : {4u, 6u, 9u, 20u}) {
    for (int round = 0; round < 40; ++round) {
      ArrivalMatrix a(n, std::vector<std::uint64_t>(n, 0));
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
          if (i != j) a[i][j] = tiny(rng);
      EXPECT_EQ(align_senders(a).offset_ps, align_senders_general(a).offset_ps)
          << n << " members, round " << round;
    }
  }
}

/// a_ij = up_i + down_j off the diagonal (the diagonal random: it is ignored).
ArrivalMatrix separable(const std::vector<std::uint64_t>& up,
                        const std::vector<std::uint64_t>& down, std::mt19937_64& rng) {
  ArrivalMatrix a(up.size(), std::vector<std::uint64_t>(up.size(), 0));
  for (std::size_t i = 0; i < up.size(); ++i)
    for (std::size_t j = 0; j < up.size(); ++j) a[i][j] = i == j ? rng() % 1000 : up[i] + down[j];
  return a;
}

/// up and down of n members drawn from [0, most]: with a small `most`, many ties.
ArrivalMatrix random_separable(std::size_t n, std::uint64_t most, std::mt19937_64& rng,
                               std::vector<std::uint64_t>& up) {
  std::uniform_int_distribution<std::uint64_t> arm(0, most);
  std::vector<std::uint64_t> down(n);
  up.resize(n);
  for (std::size_t i = 0; i < n; ++i) up[i] = arm(rng), down[i] = arm(rng);
  return separable(up, down, rng);
}

// a_ij = up_i + down_j (a star: every member up its own arm to one switch, down another's)
// is solved in O(n^2); the general method (Karp, shortest paths) must give the very same
// offsets, o_i = max up - up_i, ties among the arms included.
TEST(SendAlignment, SeparableLatenciesGetTheGeneralMethodsOffsets) {
  std::mt19937_64 rng(1000);
  const std::uint64_t kMost[] = {0, 3, 20'000'000ull, 1'000'000'000'000ull, std::uint64_t{1} << 61};
  for (std::size_t n : {3u, 4u, 5u, 9u, 33u, 120u}) {
    for (const std::uint64_t most : kMost) {
      std::vector<std::uint64_t> up;
      const ArrivalMatrix a = random_separable(n, most, rng, up);
      const SenderAlignment fast = align_senders(a), general = align_senders_general(a);
      const std::uint64_t highest = *std::max_element(up.begin(), up.end());
      for (std::size_t i = 0; i < n; ++i)
        EXPECT_EQ(fast.offset_ps[i], highest - up[i]) << n << " members, arms to " << most;
      EXPECT_EQ(fast.offset_ps, general.offset_ps) << n << " members, arms to " << most;
      EXPECT_EQ(fast.residual_skew_ps, general.residual_skew_ps);
      EXPECT_EQ(fast.max_residual_skew_ps, 0u);
      EXPECT_EQ(fast.method, general.method);
    }
  }
}

// One latency off by 1 ps is not separable: the general method's answer, whatever it is.
TEST(SendAlignment, NearlySeparableLatenciesGetTheGeneralMethodsOffsets) {
  std::mt19937_64 rng(1001);
  int skewed = 0;
  for (std::size_t n : {4u, 6u, 17u}) {
    for (int round = 0; round < 20; ++round) {
      std::vector<std::uint64_t> up;
      ArrivalMatrix a = random_separable(n, 1'000'000, rng, up);
      const std::size_t i = rng() % n, j = (i + 1 + rng() % (n - 1)) % n;
      if (round % 2 && a[i][j] > 0)
        --a[i][j];
      else
        ++a[i][j];
      const SenderAlignment fast = align_senders(a), general = align_senders_general(a);
      EXPECT_EQ(fast.offset_ps, general.offset_ps) << n << " members, round " << round;
      EXPECT_EQ(fast.residual_skew_ps, general.residual_skew_ps);
      EXPECT_EQ(fast.method, "cycle-mean");
      if (fast.max_residual_skew_ps > 0) ++skewed;
    }
  }
  EXPECT_GT(skewed, 0);  // some perturbations cannot be aligned away
}

// Small separable latencies against every whole-ps offset vector of a box (the unique
// optimum: the least offsets at the least skew).
TEST(SendAlignment, SeparableOffsetsAreTheBestWholePsOffsets) {
  std::mt19937_64 rng(1002);
  for (int round = 0; round < 12; ++round) {
    std::vector<std::uint64_t> up;
    const ArrivalMatrix a = random_separable(4, 6, rng, up);
    EXPECT_EQ(align_senders(a).offset_ps, best_on_grid(a, 12)) << "round " << round;
  }
}

TEST(SendAlignment, LatenciesBeyond2To62PsAreAnError) {
  const std::uint64_t huge = (std::uint64_t{1} << 62) + 1;
  const ArrivalMatrix a = {{0, 1, 2, huge}, {1, 0, 2, 3}, {2, 2, 0, 3}, {3, 3, 3, 0}};
  EXPECT_THROW(align_senders(a), std::invalid_argument);
  // Separable as well (a_01 = 2^61 + 1 + 2^61): the short cut checks the same.
  const std::uint64_t arm = std::uint64_t{1} << 61;
  std::mt19937_64 rng(62);
  EXPECT_THROW(align_senders(separable({arm + 1, 1, 0, 0}, {arm, arm, 0, 0}, rng)),
               std::invalid_argument);
}

// Hundreds of members (an all-to-all of a 243-site platform), where the LP took minutes:
// a star (tree metric) aligns exactly, at o_i = max x - x_i; any latencies are never
// worse than unaligned, and the earliest member starts at T.
TEST(SendAlignment, GroupsOfHundredsAreSolved) {
  std::mt19937_64 rng(243);
  const std::size_t n = 243;
  std::uniform_int_distribution<std::uint64_t> spoke(1'000'000'000ull, 80'000'000'000ull);
  std::vector<std::uint64_t> x(n);
  for (auto& v : x) v = spoke(rng);
  ArrivalMatrix star(n, std::vector<std::uint64_t>(n, 0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i != j) star[i][j] = x[i] + x[j];
  const SenderAlignment s = align_senders(star);
  const std::uint64_t longest = *std::max_element(x.begin(), x.end());
  EXPECT_EQ(s.max_residual_skew_ps, 0u);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(s.offset_ps[i], longest - x[i]) << i;
  for (int kind = 0; kind < 3; ++kind) {
    const ArrivalMatrix a = random_group(n, kind, rng);
    const SenderAlignment r = align_senders(a);
    EXPECT_LT(r.max_residual_skew_ps, unaligned(a).max_residual_skew_ps) << kind;
    EXPECT_EQ(r.max_residual_skew_ps, max_skew(a, r.offset_ps)) << kind;
    EXPECT_EQ(*std::min_element(r.offset_ps.begin(), r.offset_ps.end()), 0u) << kind;
  }
}

}  // namespace
}  // namespace aggnet
