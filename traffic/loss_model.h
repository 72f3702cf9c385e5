// Expected completion under random loss (loss recovery: docs/simulation-semantics.md,
// "Loss recovery"). A contribution lost in flight is sent again when its sender's
// retransmission timer expires; the timer starts at the hand-over and doubles per expiry
// up to a cap (modules/cluster/retransmitter.h), so the k-th copy leaves D(k) after the
// first: 0, T, 3T, 7T, 15T, then every 8T with the default cap of 8. A receiver's result
// is complete when its last contribution is in: the expected maximum over contributions.
// Plain C++, no SystemC.
#pragma once

#include <cstdint>
#include <vector>

namespace aggnet {

/// A sender's retransmission timer: first timeout and its cap as a multiple of it.
struct Backoff {
  double timeout_s = 0;
  std::uint64_t max_backoff = 8;  ///< 1: a fixed timeout
};

/// D(k): when the k-th copy of a contribution leaves, after the first (k = 0: 0),
/// s: the sum of the first k timeouts T, 2T, 4T, ... capped at max_backoff x T.
double retransmission_delay_s(int copies, const Backoff& backoff);

/// A contribution that arrives at `base_s` unless lost; each copy is lost on its way
/// with probability `loss` (independently), and a lost copy arrives D(k) later.
struct LossyArrival {
  double base_s = 0;
  double loss = 0;
};

/// E[max_j (base_j + D(K_j))] with K_j geometric (P(K_j = k) = loss_j^k (1 - loss_j))
/// and the K_j independent: the expected arrival of the last contribution. Exact up to
/// copies whose probability is below 1e-12 (counted as arriving at the last one kept).
double expected_last_arrival_s(const std::vector<LossyArrival>& arrivals, const Backoff& backoff);

/// Probability that a copy crossing links with these loss rates is lost on one of them.
double path_loss(const std::vector<double>& link_loss_rates);

}  // namespace aggnet
