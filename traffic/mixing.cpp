#include "traffic/mixing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>

namespace aggnet {

namespace {

void check_sites(const Round& round, int n) {
  for (const auto& g : round.groups)
    for (int i : g.sites)
      if (i < 0 || i >= n) throw std::out_of_range("mixing_matrix: site index out of range");
}

/// Error matrices kept by rows: a round averages its groups' rows (row i: what site i
/// holds, as a combination of the sites' start values), so a group's rows are contiguous.
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// D^T D, its lower triangle.
template <class Matrix>
Eigen::MatrixXd gram_lower(const Matrix& d) {
  Eigen::MatrixXd a(d.cols(), d.cols());
  a.triangularView<Eigen::Lower>() = d.transpose() * d;
  return a;
}

double largest_eigenvalue(const Eigen::MatrixXd& lower) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(lower, Eigen::EigenvaluesOnly);
  return es.eigenvalues().maxCoeff();
}

/// sqrt(lambda_max(D^T D)) = ||D||_2; D^T D is symmetric, so only eigenvalues are needed.
template <class Matrix>
double largest_singular_value(const Matrix& d) {
  if (d.size() == 0) return 0.0;
  return std::sqrt(std::max(0.0, largest_eigenvalue(gram_lower(d))));
}

/// largest_singular_value(d) <= eps, decided by whether s I - D^T D is positive definite
/// (a Cholesky factorization, n^3 / 3 and blocked, against the eigensolver's 4 n^3 / 3 of
/// matrix-vector work) at s = eps^2 (1 -+ margin); the eigensolver only within the margin.
/// The margin, 64 n^2 u, is above the factorization's backward error (|E| <= (n + 1) u
/// |L| |L^T|, and ||L||^2 = ||A||) and the eigensolver's, so outside it both give the
/// exact answer: the same.
bool spectral_norm_within(const RowMatrix& d, double eps) {
  if (d.size() == 0) return 0.0 <= eps;
  const Eigen::MatrixXd gram = gram_lower(d);
  const double n = static_cast<double>(d.cols());
  const double margin = 64.0 * n * n * std::numeric_limits<double>::epsilon();
  const auto definite = [&gram](double s) {
    Eigen::MatrixXd a = -gram;
    a.diagonal().array() += s;
    return Eigen::LLT<Eigen::MatrixXd, Eigen::Lower>(a).info() == Eigen::Success;
  };
  const double eps2 = eps * eps;
  if (margin < 1e-3) {
    if (definite(eps2 * (1 - margin))) return true;
    if (!definite(eps2 * (1 + margin))) return false;
  }
  return std::sqrt(std::max(0.0, largest_eigenvalue(gram))) <= eps;
}

/// Decides ||D||_2 <= eps, the eigensolver only where the bounds do not: ||D||_2 <= ||D||_F;
/// ||D||_2 >= ||D v|| for a unit v (a few power-iteration steps from the previous round's
/// vector `v`, kept across calls: the top singular vector changes slowly round to round).
/// after_round: the same answer when only the rows of `round`'s groups changed since the last
/// call, in O(n) per changed row while the bounds decide "no" with a margin over the rounding
/// of the two summation orders (per-row norms and D v kept; Higham's bound, n u ||D||_F).
class ErrorTest {
 public:
  explicit ErrorTest(long n) : v_(Eigen::VectorXd::Constant(n, 1.0)) {
    v_(0) += 1.0;  // not orthogonal to the top singular vector in the common cases
    v_.normalize();
  }

  bool within(const RowMatrix& d, double eps) {
    kept_ = false;
    if (d.norm() <= eps) return true;
    for (int i = 0; i < kPowerSteps; ++i) {
      const Eigen::VectorXd dv = d * v_;
      if (dv.norm() > eps) return false;
      Eigen::VectorXd next = d.transpose() * dv;
      if (next.norm() == 0) break;
      v_ = next.normalized();
    }
    return spectral_norm_within(d, eps);
  }

  bool after_round(const Round& round, const RowMatrix& d, double eps) {
    if (!kept_) {
      row_sq_ = d.rowwise().squaredNorm();
      dv_ = d * v_;
      kept_ = true;
    } else {
      for (const auto& g : round.groups)
        for (int i : g.sites) {
          row_sq_(i) = d.row(i).squaredNorm();
          dv_(i) = d.row(i).dot(v_);
        }
    }
    const double frobenius = std::sqrt(row_sq_.sum());
    const double rounding = 8.0 * static_cast<double>(d.cols()) * kUnit;
    if (frobenius > eps * (1 + rounding) && dv_.norm() > eps + rounding * frobenius) return false;
    return within(d, eps);
  }

 private:
  static constexpr int kPowerSteps = 8;
  static constexpr double kUnit = std::numeric_limits<double>::epsilon();
  Eigen::VectorXd v_;
  bool kept_ = false;  // row_sq_ and dv_ hold the rows of the matrix last tested
  Eigen::VectorXd row_sq_, dv_;
};

// Union-find over the sites, joined group by group.
class SiteComponents {
 public:
  explicit SiteComponents(int n) : parent_(static_cast<std::size_t>(n)), count_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  void join(const Round& round) {
    for (const auto& g : round.groups)
      for (int i : g.sites)
        if (const int a = root(g.sites.front()), b = root(i); a != b) {
          parent_[b] = a;
          --count_;
        }
  }
  bool one() const { return count_ <= 1; }

 private:
  int root(int i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  std::vector<int> parent_;
  int count_;
};

// joins_all_sites for the schedule of the two rounds a, b.
bool pair_joins_all_sites(const Round& a, const Round& b, int n) {
  SiteComponents c(n);
  c.join(a);
  c.join(b);
  return c.one();
}

// Whether the groups of all rounds join the n sites into one component. If not, averaging
// never mixes two components: a zero-mean vector constant on each is left as it is, so the
// error stays at 1 and the schedule never reaches an eps < 1.
bool joins_all_sites(const Schedule& schedule, int n) {
  SiteComponents c(n);
  for (const auto& round : schedule.rounds) c.join(round);
  return c.one();
}

RowMatrix centering(int n) {
  return RowMatrix::Identity(n, n) - RowMatrix::Constant(n, n, 1.0 / static_cast<double>(n));
}

// W e for the round's mixing matrix W: each group's rows replaced by their mean.
template <class Matrix>
void average_rows(const Round& round, Matrix& e) {
  check_sites(round, static_cast<int>(e.rows()));
  Eigen::RowVectorXd mean(e.cols());
  for (const auto& g : round.groups) {
    if (g.sites.size() < 2) continue;
    mean.setZero();
    for (int i : g.sites) mean += e.row(i);
    mean /= static_cast<double>(g.sites.size());
    for (int i : g.sites) e.row(i) = mean;
  }
}

}  // namespace

Eigen::MatrixXd mixing_matrix(const Round& round, int n) {
  check_sites(round, n);
  Eigen::MatrixXd w = Eigen::MatrixXd::Identity(n, n);
  for (const auto& g : round.groups) {
    const double a = 1.0 / static_cast<double>(g.sites.size());
    for (int i : g.sites)
      for (int j : g.sites) w(i, j) = a;
  }
  return w;
}

void apply_round(const Round& round, Eigen::MatrixXd& e) { average_rows(round, e); }

Eigen::MatrixXd period_product(const Schedule& schedule, int n) {
  RowMatrix m = RowMatrix::Identity(n, n);
  for (const auto& r : schedule.rounds) average_rows(r, m);
  return m;
}

double consensus_error(const Eigen::MatrixXd& product) {
  const long n = product.rows();
  return largest_singular_value(product -
                                Eigen::MatrixXd::Constant(n, n, 1.0 / static_cast<double>(n)));
}

namespace {
// Whether every group of `r` has at most two sites; `pairs`: how many have two.
bool pairs_only(const Round& r, int& pairs) {
  pairs = 0;
  for (const auto& g : r.groups) {
    if (g.sites.size() > 2) return false;
    pairs += g.sites.size() == 2 ? 1 : 0;
  }
  return true;
}

// Two rounds of pairs joining every site (n >= 3) join them in one line: a cycle when both
// match every site, else a path (its ends the sites one round leaves out). The pair's
// error is then that of the cycle, cos(2 pi / n), or of the path, cos(pi / n): an average
// over a pair per edge, alternating, mixes as a walk along the line.
std::optional<double> line_pair_error(const Round& a, const Round& b, int n) {
  int pairs_a = 0, pairs_b = 0;
  if (n < 3 || !pairs_only(a, pairs_a) || !pairs_only(b, pairs_b)) return std::nullopt;
  const bool cycle = 2 * pairs_a == n && 2 * pairs_b == n;
  const double pi = std::acos(-1.0);
  return std::cos((cycle ? 2.0 : 1.0) * pi / static_cast<double>(n));
}
}  // namespace

double pair_consensus_error(const Round& a, const Round& b, int n) {
  check_sites(a, n);
  check_sites(b, n);
  // Group index of each site in a round (sites in no group: a group of their own).
  auto groups_of = [n](const Round& r, std::vector<int>& of, std::vector<double>& size) {
    of.assign(n, -1);
    size.clear();
    for (const auto& g : r.groups) {
      for (int i : g.sites) of[i] = static_cast<int>(size.size());
      size.push_back(static_cast<double>(g.sites.size()));
    }
    for (int i = 0; i < n; ++i)
      if (of[i] < 0) {
        of[i] = static_cast<int>(size.size());
        size.push_back(1.0);
      }
  };
  std::vector<int> in_a, in_b;
  std::vector<double> size_a, size_b;
  groups_of(a, in_a, size_a);
  groups_of(b, in_b, size_b);
  if (!pair_joins_all_sites(a, b, n)) return 1.0;
  if (const auto line = line_pair_error(a, b, n)) return *line;
  Eigen::MatrixXd c =
      Eigen::MatrixXd::Zero(static_cast<long>(size_b.size()), static_cast<long>(size_a.size()));
  for (int i = 0; i < n; ++i) c(in_b[i], in_a[i]) += 1.0;  // |b_i intersect a_j|
  const double nd = static_cast<double>(n);
  for (long i = 0; i < c.rows(); ++i)
    for (long j = 0; j < c.cols(); ++j)
      c(i, j) = c(i, j) / std::sqrt(size_b[i] * size_a[j]) - std::sqrt(size_b[i] * size_a[j]) / nd;
  return largest_singular_value(c);
}

double pair_consensus_error_lower_bound(const Round& a, const Round& b, int n, int steps) {
  check_sites(a, n);
  check_sites(b, n);
  if (!pair_joins_all_sites(a, b, n)) return 1.0;
  if (const auto line = line_pair_error(a, b, n)) return *line;
  std::vector<int> in_a, in_b;
  std::vector<double> root_a, root_b;  // sqrt of the group sizes
  auto groups_of = [n](const Round& r, std::vector<int>& of, std::vector<double>& root) {
    of.assign(n, -1);
    for (const auto& g : r.groups) {
      for (int i : g.sites) of[i] = static_cast<int>(root.size());
      root.push_back(std::sqrt(static_cast<double>(g.sites.size())));
    }
    for (int i = 0; i < n; ++i)
      if (of[i] < 0) {
        of[i] = static_cast<int>(root.size());
        root.push_back(1.0);
      }
  };
  groups_of(a, in_a, root_a);
  groups_of(b, in_b, root_b);
  const Eigen::Map<const Eigen::VectorXd> ua(root_a.data(), static_cast<long>(root_a.size()));
  const Eigen::Map<const Eigen::VectorXd> ub(root_b.data(), static_cast<long>(root_b.size()));
  const double nd = static_cast<double>(n);
  // C(i, j) = |b_i ^ a_j| / (ub_i ua_j) - ub_i ua_j / n; y = C^T C x.
  Eigen::VectorXd cx(ub.size());
  auto apply = [&](const Eigen::VectorXd& x, Eigen::VectorXd& y) {
    const double ax = ua.dot(x) / nd;
    cx = -ax * ub;
    for (int s = 0; s < n; ++s) cx(in_b[s]) += x(in_a[s]) / (ub(in_b[s]) * ua(in_a[s]));
    const double bc = ub.dot(cx) / nd;
    y = -bc * ua;
    for (int s = 0; s < n; ++s) y(in_a[s]) += cx(in_b[s]) / (ub(in_b[s]) * ua(in_a[s]));
  };
  const long m = ua.size();
  Eigen::VectorXd q = Eigen::VectorXd::LinSpaced(m, 1.0, 2.0), prev = Eigen::VectorXd::Zero(m), w;
  q.normalize();
  std::vector<double> alpha, beta;
  for (int k = 0; k < steps && k < m; ++k) {
    apply(q, w);
    alpha.push_back(q.dot(w));
    w -= alpha.back() * q + (beta.empty() ? 0.0 : beta.back()) * prev;
    const double norm = w.norm();
    if (norm < 1e-12) break;
    beta.push_back(norm);
    prev = q;
    q = w / norm;
  }
  const long k = static_cast<long>(alpha.size());
  Eigen::MatrixXd t = Eigen::MatrixXd::Zero(k, k);
  for (long i = 0; i < k; ++i) {
    t(i, i) = alpha[i];
    if (i + 1 < k) t(i, i + 1) = t(i + 1, i) = beta[i];
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(t, Eigen::EigenvaluesOnly);
  return std::sqrt(std::max(0.0, es.eigenvalues().maxCoeff() - 1e-9));
}

MixingStats analyze_mixing(const Schedule& schedule, int n, bool with_rounds_to_exact) {
  MixingStats st;
  st.rho = consensus_error(period_product(schedule, n));
  st.spectral_gap = 1.0 - st.rho;
  // W_r averages within its components (groups and sites sitting out): eigenvalue 1 once per
  // component, 0 otherwise; so |lambda_2| = 1 unless one group holds every site.
  for (const auto& r : schedule.rounds) {
    check_sites(r, n);
    std::size_t covered = 0;
    for (const auto& g : r.groups) covered += g.sites.size();
    const std::size_t components = r.groups.size() + (static_cast<std::size_t>(n) - covered);
    st.round_spectral_gaps.push_back(n >= 2 && components >= 2 ? 0.0 : 1.0);
  }
  if (with_rounds_to_exact) st.rounds_to_exact = rounds_to_exact(schedule, n);
  return st;
}

long rounds_to_exact(const Schedule& schedule, int n) {
  for (const auto& r : schedule.rounds) check_sites(r, n);
  RowMatrix e = centering(n);  // W_r ... W_1 - J
  ErrorTest test(n);
  const std::size_t p = schedule.rounds.size();
  const long limit = static_cast<long>(p) * 2;  // J, once reached, stays
  for (long r = 1; r <= limit && p > 0; ++r) {
    const Round& round = schedule.rounds[(r - 1) % p];
    average_rows(round, e);
    if (test.after_round(round, e, 1e-12)) return r;
  }
  return -1;
}

namespace {
bool spans_components(const Round& round, int n) {
  std::size_t covered = 0;
  for (const auto& g : round.groups) covered += g.sites.size();
  return round.groups.size() + (static_cast<std::size_t>(n) - covered) >= 2;
}

// A period of two rounds a, b (symmetric idempotents W_a, W_b commuting with J): after
// r >= 2 rounds the error is rho^(r-1), rho = ||W_b W_a - J||_2, since (W_b W_a)^p - J =
// W_b S^(p-1) - J with S = W_a W_b W_a, whose Gram matrix is S^(2p-1) - J, and W_a (W_b
// W_a)^p's is S^(2p) - J; after one round it is 1 (W_a - J projects onto a nonzero space
// when a leaves two or more components). So r = 1 + ceil(log eps / log rho): one m x m
// eigensolve (pair_consensus_error) instead of r rounds of O(n^2). 0 where rounding could
// decide (log eps / log rho within its rounding of an integer, rho near 0 or 1): the
// caller iterates then.
long pair_rounds_to_eps(const Schedule& schedule, int n, double eps) {
  const Round& a = schedule.rounds[0];
  const Round& b = schedule.rounds[1];
  if (!spans_components(a, n) || !spans_components(b, n)) return 0;
  const double rho = pair_consensus_error(a, b, n);
  if (!(rho > 1e-6 && rho < 1 - 1e-9)) return 0;
  // rho's rounding: the symmetric eigensolver's backward error on a Gram matrix of norm
  // <= 1 and its forming, each about m u for m <= n groups; 10 n u covers both with room.
  // x moves by x drho / (rho |log rho|) (log rho ~ -2e-5 at 1,000 sites, x ~ 3.5e5: 0.04).
  const double x = std::log(eps) / std::log(rho);
  const double drho = 10.0 * n * std::numeric_limits<double>::epsilon();
  if (std::abs(x - std::round(x)) < 1e-9 * x + x * drho / (rho * std::abs(std::log(rho)))) return 0;
  return 1 + static_cast<long>(std::ceil(x));
}
}  // namespace

namespace {
// The group of each site in `round` (-1: in no group, or a group of one: it keeps its value).
std::vector<int> group_index(const Round& round, int n) {
  std::vector<int> of(static_cast<std::size_t>(n), -1);
  for (std::size_t g = 0; g < round.groups.size(); ++g)
    if (round.groups[g].sites.size() >= 2)
      for (int i : round.groups[g].sites) of[i] = static_cast<int>(g);
  return of;
}

// Whether `to` has the groups of `from` with every site x renamed perm[x] (the same mixing
// matrix up to that permutation: W_to = P W_from P^T).
bool renamed_round(const Round& from, const Round& to, const std::vector<int>& perm, int n) {
  const std::vector<int> in_to = group_index(to, n);
  std::size_t groups = 0;
  for (const auto& g : from.groups) {
    if (g.sites.size() < 2) continue;
    ++groups;
    const int h = in_to[perm[g.sites.front()]];
    if (h < 0 || to.groups[h].sites.size() != g.sites.size()) return false;
    for (int i : g.sites)
      if (in_to[perm[i]] != h) return false;
  }
  // Each group maps onto a distinct group of `to` of its size (perm is a bijection).
  return groups == static_cast<std::size_t>(
                       std::count_if(to.groups.begin(), to.groups.end(),
                                     [](const Group& g) { return g.sites.size() >= 2; }));
}

Round renamed(const Round& round, const std::vector<int>& perm) {
  Round out = round;
  for (auto& g : out.groups)
    for (int& i : g.sites) i = perm[i];
  return out;
}
}  // namespace

std::optional<Schedule> rotation_pair(const Schedule& schedule, int n) {
  const std::size_t p = schedule.rounds.size();
  if (p < 3 || n < 2) return std::nullopt;
  // The circle method's rotation: sites 0 .. m - 1 on a cycle (m = n, or n - 1 with site
  // n - 1 fixed when n is even), sigma: x -> x + 1, tau: x -> -1 - x (mod m).
  const int m = n % 2 ? n : n - 1;
  std::vector<int> sigma(n), tau(n), rho(n);
  for (int x = 0; x < n; ++x) {
    sigma[x] = x < m ? (x + 1) % m : x;
    tau[x] = x < m ? (2 * m - 1 - x) % m : x;
  }
  for (int x = 0; x < n; ++x) rho[x] = sigma[tau[x]];  // x -> -x: each pair of round 0 kept
  const Round& first = schedule.rounds[0];
  const std::vector<int> in_first = group_index(first, n);
  for (int x = 0; x < n; ++x)  // rho keeps every group (and every site in none) in place
    if (in_first[rho[x]] != in_first[x] || (in_first[x] < 0 && rho[x] != x)) return std::nullopt;
  for (std::size_t r = 0; r < p; ++r)
    if (!renamed_round(schedule.rounds[r], schedule.rounds[(r + 1) % p], sigma, n))
      return std::nullopt;
  Schedule pair;
  pair.rounds = {first, renamed(first, tau)};
  return pair;
}

namespace {
// The first i in 1..p such that the rounds r, r + 1, ..., r + i - 1 (cyclically) applied to
// `e` leave it within eps, given that p rounds do (p: the period; i = p also when none
// tests within, a numerical corner case, as an upper bound). The error never increases
// round by round, so galloping, then bisection, finds it with O(log p) tests, not one per
// round: near the crossing a test needs the eigensolver, and a long period's last rounds
// can hover just above eps for hundreds of rounds (sequential-2 on 1,000 sites).
long rounds_until_within(const Schedule& schedule, long r, RowMatrix e, ErrorTest& test,
                         double eps) {
  const long p = static_cast<long>(schedule.rounds.size());
  const auto advance = [&](RowMatrix& m, long from, long to) {
    for (long i = from; i < to; ++i) average_rows(schedule.rounds[(r + i) % p], m);
  };
  long lo = 0, hi = p;  // the error after lo rounds is above eps; after hi, within
  for (long step = 1; lo + step < p; step *= 2) {
    RowMatrix m = e;
    advance(m, lo, lo + step);
    if (test.within(m, eps)) {
      hi = lo + step;
      break;
    }
    lo += step;
    e = std::move(m);
  }
  while (hi - lo > 1) {
    const long mid = lo + (hi - lo) / 2;
    RowMatrix m = e;
    advance(m, lo, mid);
    if (test.within(m, eps)) {
      hi = mid;
    } else {
      lo = mid;
      e = std::move(m);
    }
  }
  return hi;
}
}  // namespace

long rounds_to_eps(const Schedule& schedule, int n, double eps, long exact_limit) {
  if (!(eps > 0 && eps < 1)) throw std::invalid_argument("rounds_to_eps: need 0 < eps < 1");
  const long p = static_cast<long>(schedule.rounds.size());
  if (p == 0) return -1;
  for (const auto& round : schedule.rounds) check_sites(round, n);
  if (!joins_all_sites(schedule, n)) return -1;  // saves 2000 rounds of arithmetic
  if (p == 2)
    if (const long r = pair_rounds_to_eps(schedule, n, eps); r > 0) return r;
  if (const auto pair = rotation_pair(schedule, n))
    return rounds_to_eps(*pair, n, eps, exact_limit);
  // e = W_r ... W_1 - J; applying W gives W e (W J = J), so the error evolves linearly.
  RowMatrix e = centering(n);
  ErrorTest test(n);
  long r = 0;
  const long limit = std::max(exact_limit, p);
  for (; r < limit || r % p != 0; ++r) {
    average_rows(schedule.rounds[r % p], e);
    if (test.after_round(schedule.rounds[r % p], e, eps)) return r + 1;
  }
  // Beyond: binary lifting over whole periods with D = M - J, D^k e = (M^k - J) e.
  RowMatrix d = centering(n);
  for (const auto& round : schedule.rounds) average_rows(round, d);  // M - J
  std::vector<RowMatrix> pow2 = {d};                                 // D^(2^i)
  while (true) {
    const RowMatrix next = pow2.back() * e;
    if (next.norm() == 0 || test.within(next, eps)) break;
    if (pow2.size() >= 62) return -1;  // does not converge in practice
    pow2.push_back(pow2.back() * pow2.back());
  }
  long k = 0;
  for (int i = static_cast<int>(pow2.size()) - 1; i >= 0; --i) {
    RowMatrix cand = pow2[i] * e;
    if (!test.within(cand, eps)) {
      e = std::move(cand);
      k += 1L << i;
    }
  }
  r += k * p;
  return r + rounds_until_within(schedule, r, std::move(e), test, eps);
}

bool exceeds_rounds_to_eps(const Schedule& schedule, int n, double eps, long rounds) {
  // Up to this many rounds (or periods) are applied one by one, the rest by powers.
  constexpr long kSteppedRounds = 64, kSteppedPeriods = 4;
  const long p = static_cast<long>(schedule.rounds.size());
  if (rounds <= 0) return true;
  if (p == 0 || !joins_all_sites(schedule, n)) return true;
  if (p == 2 || rotation_pair(schedule, n)) return rounds_to_eps(schedule, n, eps) > rounds;
  RowMatrix e = centering(n);
  long stepped = rounds;
  if (rounds > std::max(kSteppedPeriods * p, kSteppedRounds)) {
    RowMatrix d = std::move(e);  // M - J, then its powers: (M - J)^k = M^k - J
    for (const auto& round : schedule.rounds) average_rows(round, d);
    e = d;
    for (long periods = rounds / p - 1; periods > 0; periods /= 2) {
      if (periods % 2) e = d * e;
      if (periods > 1) d = d * d;
    }
    stepped = rounds % p;
  }
  for (long k = 0; k < stepped; ++k) average_rows(schedule.rounds[k % p], e);
  ErrorTest test(n);
  return !test.within(e, eps);
}

}  // namespace aggnet
