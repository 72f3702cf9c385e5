// The expected round time under loss (traffic/loss_model.h): closed forms of geometric
// retransmission counts, derived by hand in each test's comment.
#include <gtest/gtest.h>

#include <cmath>

#include "model/routing.h"
#include "traffic/loss_model.h"
#include "traffic/time_model.h"

namespace aggnet {
namespace {

// Timeouts T, 2T, 4T, 8T, 8T, ...: the k-th copy leaves 0, 1, 3, 7, 15, 23, 31 T after
// the first; with a fixed timeout (cap 1) k T.
TEST(LossModel, RetransmissionDelaysFollowTheBackoff) {
  const Backoff doubling{0.5, 8}, fixed{0.5, 1};
  const double expected[] = {0, 1, 3, 7, 15, 23, 31};
  for (int k = 0; k < 7; ++k) {
    EXPECT_DOUBLE_EQ(retransmission_delay_s(k, doubling), 0.5 * expected[k]) << k;
    EXPECT_DOUBLE_EQ(retransmission_delay_s(k, fixed), 0.5 * k) << k;
  }
  EXPECT_DOUBLE_EQ(retransmission_delay_s(4, Backoff{1, 4}), 1 + 2 + 4 + 4);
}

// One contribution, fixed timeout: E[K] T with K geometric = q / (1 - q) T.
TEST(LossModel, OneContributionWithAFixedTimeoutWaitsQOverOneMinusQTimeouts) {
  const double q = 0.1, t = 2;
  EXPECT_NEAR(expected_last_arrival_s({{5, q}}, Backoff{t, 1}), 5 + t * q / (1 - q), 1e-9);
}

// With backoff, E[D(K)] = sum_k P(K >= k) x (k-th timeout) = T (q + 2q^2 + 4q^3 + 8q^4 / (1 - q)).
TEST(LossModel, OneContributionWithBackoffSumsItsDoublingTimeouts) {
  const double q = 0.2, t = 1;
  const double tail = q + 2 * q * q + 4 * std::pow(q, 3) + 8 * std::pow(q, 4) / (1 - q);
  EXPECT_NEAR(expected_last_arrival_s({{0, q}}, Backoff{t, 8}), t * tail, 1e-9);
}

// Two contributions at the same instant, fixed timeout: E[max(K1, K2)] = sum_k P(max >= k)
// = sum_k (2 q^k - q^2k) = 2q / (1 - q) - q^2 / (1 - q^2).
TEST(LossModel, TheLastOfTwoContributionsIsTheMaximumOfTwoGeometrics) {
  const double q = 0.3, t = 1;
  const double e = 2 * q / (1 - q) - q * q / (1 - q * q);
  EXPECT_NEAR(expected_last_arrival_s({{1, q}, {1, q}}, Backoff{t, 1}), 1 + t * e, 1e-9);
}

// A lossless contribution at 10 T hides every retransmission of one sent at 0 but the
// eleventh and later: E = 10 T + T sum_{k >= 11} q^k = 10 T + T q^11 / (1 - q).
TEST(LossModel, ALaterLosslessArrivalHidesEarlyRetransmissions) {
  const double q = 0.5, t = 1;
  EXPECT_NEAR(expected_last_arrival_s({{0, q}, {10, 0}}, Backoff{t, 1}),
              10 + std::pow(q, 11) / (1 - q), 1e-9);
  EXPECT_DOUBLE_EQ(expected_last_arrival_s({{3, 0}, {7, 0}}, Backoff{t, 1}), 7);
  EXPECT_TRUE(std::isinf(expected_last_arrival_s({{0, 1.0}}, Backoff{t, 1})));
}

TEST(LossModel, PathLossIsOneMinusTheProductOfDeliveries) {
  EXPECT_NEAR(path_loss({0.01, 0.02}), 1 - 0.99 * 0.98, 1e-15);
  EXPECT_EQ(path_loss({}), 0);
}

Site site(const std::string& code) {
  Site s;
  s.code = s.name = code;
  s.continent = "europe";
  return s;
}

LinkSpec link(int a, int b, std::uint64_t delay_ps) {
  LinkSpec l;
  l.a = a;
  l.b = b;
  l.params.delay_ps = delay_ps;
  l.params.bandwidth_bps = 100'000'000'000;
  return l;
}

// Two sites, one chunk each way over one link lost with q, a given timeout T doubling per
// expiry: the round ends when the later of the two contributions is in, T x
// E[D(max(K1, K2))] / T = sum_k P(max >= k) t_k = sum_k (2 q^k - q^2k) min(2^(k-1), 8)
// after the lossless round (both directions are symmetric).
TEST(LossModel, ATwoSiteRoundWaitsForItsLaterContribution) {
  Platform p;
  p.sites = {site("a"), site("b")};
  p.links = {link(0, 1, 10'000'000'000)};
  const Routing r(p);
  RunOptions rp;
  rp.gradient_bytes = rp.chunk_bytes = 1 << 20;
  const Round round{{Group{{0, 1}}}};
  const double lossless = estimate_round(p, r, round, Collective::kGroupAverage, rp).time_s;
  const double q = 0.1, t = 0.25;
  rp.faults.wan_loss_rate = q;
  rp.faults.retransmit_timeout_ps = 250'000'000'000;
  double extra = 0;
  for (int k = 1; k < 40; ++k)
    extra += (2 * std::pow(q, k) - std::pow(q, 2 * k)) * std::min(std::pow(2, k - 1), 8.0);
  const auto est = estimate_round(p, r, round, Collective::kGroupAverage, rp);
  EXPECT_NEAR(est.time_s, lossless + t * extra, 1e-9);
  EXPECT_NEAR(est.groups[0].loss_sd[0][1], q, 1e-15);
  EXPECT_NEAR(est.groups[0].backoff.timeout_s, t, 1e-15);
  // The staggered-step model draws the losses (256 draws): the same within 4 standard
  // errors (one draw's extra delay has a standard deviation below 0.2 s here).
  Schedule s;
  s.rounds = {round};
  EXPECT_NEAR(estimate_step_round_times(p, r, s, rp, 1).at(0), lossless + t * extra, 4 * 0.2 / 16);
}

}  // namespace
}  // namespace aggnet
