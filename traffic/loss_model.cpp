#include "traffic/loss_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace aggnet {

namespace {
constexpr double kNegligible = 1e-12;
constexpr int kMaxCopies = 64;

// Copies of a contribution worth counting: the last kept has probability loss^k >= 1e-12.
int copies_counted(double loss) {
  int k = 0;
  for (double p = loss; k < kMaxCopies && p >= kNegligible; p *= loss) ++k;
  return k;
}

struct Step {
  double at_s;
  double log_ratio;  // log of P(X_j <= at) / P(X_j < at) for its contribution j
};
}  // namespace

double retransmission_delay_s(int copies, const Backoff& backoff) {
  const double cap = static_cast<double>(std::max<std::uint64_t>(backoff.max_backoff, 1));
  double delay = 0, timeout = 1;
  for (int k = 0; k < copies; ++k) {
    delay += timeout;
    timeout = timeout >= cap / 2 ? cap : 2 * timeout;  // as Retransmitter::fire doubles
  }
  return delay * backoff.timeout_s;
}

// E[M] = m0 + integral over x >= m0 of (1 - P(M <= x)), m0 = max_j base_j (M >= m0);
// P(M <= x) = prod_j P(X_j <= x) is a step function that rises at every copy's arrival.
double expected_last_arrival_s(const std::vector<LossyArrival>& arrivals, const Backoff& backoff) {
  double floor_s = -std::numeric_limits<double>::infinity(), log_g = 0;
  std::vector<Step> steps;
  for (const auto& a : arrivals) {
    floor_s = std::max(floor_s, a.base_s);
    if (a.loss >= 1) return std::numeric_limits<double>::infinity();  // never arrives
    if (a.loss <= 0) continue;
    const int copies = copies_counted(a.loss);
    log_g += std::log1p(-a.loss);  // P(X_j <= base_j) = 1 - loss
    double tail = a.loss;          // P(X_j > base_j + D(k - 1)) = loss^k
    for (int k = 1; k <= copies; ++k) {
      const double next = k == copies ? 0.0 : tail * a.loss;
      steps.push_back(
          {a.base_s + retransmission_delay_s(k, backoff), std::log1p(-next) - std::log1p(-tail)});
      tail = next;
    }
  }
  if (arrivals.empty()) return 0;
  std::sort(steps.begin(), steps.end(),
            [](const Step& a, const Step& b) { return a.at_s < b.at_s; });
  double expected = floor_s, x = floor_s;
  for (const Step& s : steps) {
    if (s.at_s > x) {
      expected += -std::expm1(log_g) * (s.at_s - x);
      x = s.at_s;
    }
    log_g += s.log_ratio;
  }
  return expected;
}

double path_loss(const std::vector<double>& link_loss_rates) {
  double delivered = 1;
  for (const double r : link_loss_rates) delivered *= 1 - r;
  return 1 - delivered;
}

}  // namespace aggnet
