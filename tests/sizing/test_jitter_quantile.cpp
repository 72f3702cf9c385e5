// The jitter skew quantile of size-buffers' bound (sizing/buffer_sizing.h) against closed
// forms: a receiver's skew is the largest less the smallest of its senders' path jitters.
#include <gtest/gtest.h>

#include "sizing/buffer_sizing.h"

namespace aggnet {
namespace {

constexpr double kMsPs = 1e9;

TEST(JitterSkewQuantile, OneSenderHasNoSkew) {
  EXPECT_EQ(jitter_skew_quantile_ps({{kMsPs, kMsPs}}, 0.999), 0.0);
}

TEST(JitterSkewQuantile, NoJitterNoSkew) {
  EXPECT_EQ(jitter_skew_quantile_ps({{}, {}}, 0.999), 0.0);
}

// Against a sender without jitter the skew is |N(0, sigma)|: its quantile at L is
// sigma x Phi^-1((1 + L) / 2): 1.959964 sigma at 95 %, 3.290527 sigma at 99.9 %.
TEST(JitterSkewQuantile, AgainstASteadySenderIsTheHalfNormalQuantile) {
  EXPECT_NEAR(jitter_skew_quantile_ps({{kMsPs}, {}}, 0.95), 1.959964 * kMsPs, 0.01 * kMsPs);
  EXPECT_NEAR(jitter_skew_quantile_ps({{2 * kMsPs}, {}}, 0.999), 2 * 3.290527 * kMsPs,
              0.03 * kMsPs);
}

// Two jittered senders (sigma each): the skew is |H1 - H2| of two independent half-normals,
// P(|H1 - H2| > x) = 2 int_0^inf 2 phi(h) 2 (1 - Phi(h + x)) dh (in sigmas); that integral
// is 0.05 at x = 1.721088 (midpoint rule, 40,000 steps to h = 12, then bisection).
TEST(JitterSkewQuantile, TwoJitteredSendersGiveTheDifferenceOfHalfNormals) {
  EXPECT_NEAR(jitter_skew_quantile_ps({{kMsPs}, {kMsPs}}, 0.95), 1.721088 * kMsPs, 0.01 * kMsPs);
}

TEST(JitterSkewQuantile, IsDeterministic) {
  const std::vector<std::vector<double>> s{{kMsPs, 0.5 * kMsPs}, {0.7 * kMsPs}, {}};
  EXPECT_EQ(jitter_skew_quantile_ps(s, 0.99), jitter_skew_quantile_ps(s, 0.99));
}

}  // namespace
}  // namespace aggnet
