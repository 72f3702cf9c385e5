// Mixing math of gossip schedules: mixing matrices, consensus contraction, spectral gap,
// rounds to a target consensus error. Uses Eigen (JacobiSVD, SelfAdjointEigenSolver).
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "model/schedule.h"

namespace aggnet {

/// Mixing matrix W (n x n, doubly stochastic, symmetric) of one round: for each group g,
/// W[i][j] = 1/|g| for i, j in g; sites in no group keep their value (W[i][i] = 1).
/// A ring all-reduce group is an exact average of its members, i.e. the same matrix.
/// Precondition: site indices in [0, n).
Eigen::MatrixXd mixing_matrix(const Round& round, int n);

/// Product W_P ... W_1 over the schedule's period (n x n); round 0 is applied first.
Eigen::MatrixXd period_product(const Schedule& schedule, int n);

/// Consensus error of a product M: ||M - J||_2 (largest singular value), J = ones/n.
/// After applying M, the disagreement ||x - mean|| shrinks by at least this factor.
double consensus_error(const Eigen::MatrixXd& product);

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

/// Mixing summary for `schedule` on n sites (n = platform site count).
MixingStats analyze_mixing(const Schedule& schedule, int n);

/// Smallest number of rounds r (applying rounds 0, 1, ... cyclically) such that the
/// consensus error ||W_r ... W_1 - J||_2 is <= eps. Round by round for the first
/// `exact_limit` rounds, then by binary lifting over whole periods with powers of
/// (M - J), M = period product: exact (up to floating point), not a rho bound. The error
/// never increases with r, so the result is monotone in eps. Returns -1 when the schedule
/// does not converge (e.g. a site never meets the others). Precondition: 0 < eps < 1.
long rounds_to_eps(const Schedule& schedule, int n, double eps, long exact_limit = 2000);

}  // namespace aggnet
