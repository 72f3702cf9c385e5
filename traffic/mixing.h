// Mixing math of gossip schedules: mixing matrices, consensus contraction, spectral gap,
// rounds to a target consensus error. Uses Eigen (SelfAdjointEigenSolver, JacobiSVD on small
// overlap matrices). Every consensus error is ||M - J||_2 exactly (to floating point); the
// searches skip the eigensolver where cheap bounds already decide (docs/performance.md).
#pragma once

#include <Eigen/Dense>
#include <optional>
#include <vector>

#include "model/schedule.h"

namespace aggnet {

/// Whether a round of `collective` has a mixing matrix: every member of each group ends with
/// the group's average (group average, ring all-reduce, parameter server, unicast
/// all-to-all, reduction trees). A one-way transfer, a reduce-scatter (each site ends with
/// one reduced segment) and an all-gather (segments copied, none summed) average nothing:
/// rho and rounds to eps do not apply to them (no site ever holds the average).
inline bool has_mixing_matrix(Collective collective) {
  return collective != Collective::kPointToPoint && collective != Collective::kReduceScatter &&
         collective != Collective::kAllGather;
}

/// Mixing matrix W (n x n, doubly stochastic, symmetric) of one round: for each group g,
/// W[i][j] = 1/|g| for i, j in g; sites in no group keep their value (W[i][i] = 1).
/// A ring all-reduce group is an exact average of its members, i.e. the same matrix.
/// Precondition: site indices in [0, n).
Eigen::MatrixXd mixing_matrix(const Round& round, int n);

/// Product W_P ... W_1 over the schedule's period (n x n); round 0 is applied first.
Eigen::MatrixXd period_product(const Schedule& schedule, int n);

/// W e for the round's W, in place (e: n x m): each group's rows become their mean. O(n m),
/// the same as mixing_matrix(round, n) * e without the dense product.
void apply_round(const Round& round, Eigen::MatrixXd& e);

/// Consensus error of a product M: ||M - J||_2 (largest singular value), J = ones/n.
/// After applying M, the disagreement ||x - mean|| shrinks by at least this factor.
/// Computed as sqrt(lambda_max(D^T D)), D = M - J, with a symmetric eigensolver: squaring
/// loses no relative accuracy in the largest singular value.
double consensus_error(const Eigen::MatrixXd& product);

/// ||W_b W_a - J||_2 of two rounds (a applied first), exactly, from the small matrix of
/// group overlaps: W_a = U_a U_a^T with U_a's columns the normalized group indicators
/// (sites in no group are groups of one), so W_b W_a - J = U_b (U_b^T U_a - beta alpha^T) U_a^T
/// with orthonormal U's and alpha_j = sqrt(|a_j| / n): the same singular values as the
/// (groups of b) x (groups of a) matrix in the middle. Exactly 1 without the eigensolver when
/// the two rounds' groups leave the sites in more than one component (a vector constant on
/// each component, of zero mean, is left as it is). Two rounds of pairs (groups of at most
/// two) joining every site lie on one line through them: cos(2 pi / n) when both match
/// every site (a cycle), else cos(pi / n) (a path), without the eigensolver.
double pair_consensus_error(const Round& a, const Round& b, int n);

/// A lower bound on pair_consensus_error(a, b, n) in O(n) per step: the largest Ritz value
/// of `steps` Lanczos steps on C^T C, C the overlap matrix above applied without forming it
/// (a Rayleigh quotient over a Krylov space; less a margin over the rounding). 1 when the
/// rounds leave more than one component, and the exact value for rounds of pairs on one
/// line, as there.
double pair_consensus_error_lower_bound(const Round& a, const Round& b, int n, int steps = 30);

/// Summary of a schedule's mixing on n sites.
struct MixingStats {
  double rho = 1;           ///< ||W_P ... W_1 - J||_2 over one period (0 = exact average)
  double spectral_gap = 0;  ///< 1 - rho: contraction gained per period
  /// Per round r: 1 - |lambda_2(W_r)| (second largest eigenvalue modulus of the symmetric
  /// W_r; 0 when the round leaves the sites in more than one component).
  std::vector<double> round_spectral_gaps;
  /// First r <= 2 P with consensus error <= 1e-12 (an exact average is reached within two
  /// periods if ever), or -1.
  long rounds_to_exact = -1;
};

/// First r <= 2 P with consensus error <= 1e-12 (the exact average), or -1. O(n^2 P).
long rounds_to_exact(const Schedule& schedule, int n);

/// Mixing summary for `schedule` on n sites (n = platform site count). Without
/// `with_rounds_to_exact`, rounds_to_exact is left at -1 (not computed: O(n^2 P)).
MixingStats analyze_mixing(const Schedule& schedule, int n, bool with_rounds_to_exact = true);

/// A schedule of P >= 3 rounds that is a rotation of its first round: round r is round 0 with
/// every site x renamed sigma^r(x) (so W_r = S^r W_0 S^-r, S the permutation matrix), and
/// tau = sigma^-1 rho is an involution for a rho that keeps every group of round 0 in place
/// (rho W_0 = W_0). Then the product of the first r rounds is S^r (T W_0)^r, T = tau's
/// matrix, and (T W_0)^2 = W_b W_0 with W_b = T W_0 T, so its consensus error after every r
/// equals that of the period-2 schedule (round 0, tau(round 0)): returned, else nullopt.
/// Tried with the circle method's sigma (x -> x + 1 on a cycle of n sites, or of n - 1 with
/// site n - 1 fixed when n is even) and tau (x -> -1 - x): rotating-2 (rotating_rounds, k = 2).
/// O(n P).
std::optional<Schedule> rotation_pair(const Schedule& schedule, int n);

/// Smallest number of rounds r (applying rounds 0, 1, ... cyclically) such that the
/// consensus error ||W_r ... W_1 - J||_2 is <= eps. Round by round for the first
/// `exact_limit` rounds, then by binary lifting over whole periods with powers of
/// (M - J), M = period product: exact (up to floating point), not a rho bound. The error
/// never increases with r, so the result is monotone in eps. Returns -1 when the schedule
/// does not converge (e.g. a site never meets the others). A period of two rounds: 1 +
/// ceil(log eps / log rho) from rho = pair_consensus_error (the error after r >= 2 rounds
/// is rho^(r-1)) unless rounding could decide; a rotation (rotation_pair) as its period-2
/// equivalent. Precondition: 0 < eps < 1.
long rounds_to_eps(const Schedule& schedule, int n, double eps, long exact_limit = 2000);

/// Whether rounds_to_eps exceeds `rounds` (the error after that many rounds is above eps),
/// without finding it: round by round up to 4 periods (or 64 rounds), else whole periods by
/// powers of (M - J), then the rest round by round. Precondition: 0 < eps < 1.
bool exceeds_rounds_to_eps(const Schedule& schedule, int n, double eps, long rounds);

}  // namespace aggnet
