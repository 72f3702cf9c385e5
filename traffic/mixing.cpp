#include "traffic/mixing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace aggnet {

Eigen::MatrixXd mixing_matrix(const Round& round, int n) {
  Eigen::MatrixXd w = Eigen::MatrixXd::Identity(n, n);
  for (const auto& g : round.groups) {
    const double a = 1.0 / static_cast<double>(g.sites.size());
    for (int i : g.sites) {
      if (i < 0 || i >= n) throw std::out_of_range("mixing_matrix: site index out of range");
      for (int j : g.sites) w(i, j) = a;
    }
  }
  return w;
}

Eigen::MatrixXd period_product(const Schedule& schedule, int n) {
  Eigen::MatrixXd m = Eigen::MatrixXd::Identity(n, n);
  for (const auto& r : schedule.rounds) m = mixing_matrix(r, n) * m;
  return m;
}

double consensus_error(const Eigen::MatrixXd& product) {
  const long n = product.rows();
  const Eigen::MatrixXd j = Eigen::MatrixXd::Constant(n, n, 1.0 / static_cast<double>(n));
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(product - j);
  return svd.singularValues().size() ? svd.singularValues()(0) : 0.0;
}

MixingStats analyze_mixing(const Schedule& schedule, int n) {
  MixingStats st;
  st.rho = consensus_error(period_product(schedule, n));
  st.spectral_gap = 1.0 - st.rho;
  for (const auto& r : schedule.rounds) {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(mixing_matrix(r, n));
    Eigen::VectorXd ev = es.eigenvalues().cwiseAbs();  // ascending by value, then |.|
    std::sort(ev.data(), ev.data() + ev.size());
    st.round_spectral_gaps.push_back(n >= 2 ? 1.0 - ev(n - 2) : 1.0);
  }
  Eigen::MatrixXd m = Eigen::MatrixXd::Identity(n, n);
  const std::size_t p = schedule.rounds.size();
  const long limit = static_cast<long>(p) * 2;  // J, once reached, stays
  for (long r = 1; r <= limit && p > 0; ++r) {
    m = mixing_matrix(schedule.rounds[(r - 1) % p], n) * m;
    if (consensus_error(m) <= 1e-12) {
      st.rounds_to_exact = r;
      break;
    }
  }
  return st;
}

long rounds_to_eps(const Schedule& schedule, int n, double eps, long exact_limit) {
  if (!(eps > 0 && eps < 1)) throw std::invalid_argument("rounds_to_eps: need 0 < eps < 1");
  const long p = static_cast<long>(schedule.rounds.size());
  if (p == 0) return -1;
  std::vector<Eigen::MatrixXd> ws;
  for (const auto& r : schedule.rounds) ws.push_back(mixing_matrix(r, n));
  const Eigen::MatrixXd j = Eigen::MatrixXd::Constant(n, n, 1.0 / static_cast<double>(n));
  // e = W_r ... W_1 - J; applying W gives W e (W J = J), so the error evolves linearly.
  Eigen::MatrixXd e = Eigen::MatrixXd::Identity(n, n) - j;
  long r = 0;
  const long limit = std::max(exact_limit, p);
  for (; r < limit || r % p != 0; ++r) {
    e = ws[r % p] * e;
    if (consensus_error(e + j) <= eps) return r + 1;
  }
  // Beyond: binary lifting over whole periods with D = M - J, D^k e = (M^k - J) e.
  const Eigen::MatrixXd d = period_product(schedule, n) - j;
  std::vector<Eigen::MatrixXd> pow2 = {d};  // D^(2^i)
  while (true) {
    if ((pow2.back() * e).norm() == 0 || consensus_error(pow2.back() * e + j) <= eps) break;
    if (pow2.size() >= 62) return -1;  // does not converge in practice
    pow2.push_back(pow2.back() * pow2.back());
  }
  long k = 0;
  for (int i = static_cast<int>(pow2.size()) - 1; i >= 0; --i) {
    const Eigen::MatrixXd cand = pow2[i] * e;
    if (consensus_error(cand + j) > eps) {
      e = cand;
      k += 1L << i;
    }
  }
  r += k * p;
  for (long i = 0; i < p; ++i, ++r) {
    e = ws[r % p] * e;
    if (consensus_error(e + j) <= eps) return r + 1;
  }
  return r;  // not reached: numerical corner case; upper bound
}

}  // namespace aggnet
