// Schedule optimizer: searches schedule candidates for the least time to eps-consensus,
// trading each round's time (analytic model) against how much it mixes (rho).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/schedule.h"
#include "traffic/mixing.h"
#include "traffic/time_model.h"

namespace aggnet {

struct Platform;
class Routing;

/// A scored schedule.
struct Candidate {
  Schedule schedule;
  std::string family;  ///< family it came from ("all-to-all", "partition-pair", ...)
  /// rho and spectral gaps (rounds_to_exact not computed: -1); left empty by
  /// score_schedule, filled in by complete_candidate (not ranked on; an eigensolve per
  /// candidate); empty for good where the collective has no mixing matrix
  /// (has_mixing_matrix: p2p, reduce-scatter, all-gather).
  std::optional<MixingStats> mixing;
  long rounds_to_eps = -1;  ///< rounds until consensus error <= eps (-1: never)
  /// Analytic round times (all members start together); their per-pair terms are released
  /// (release_pair_terms) once the times to eps are exact.
  ScheduleEstimate timing;
  /// The decision metric (time_to_eps_without_compute_s, traffic/time_model.h) from the
  /// staggered-start recurrence (simulate_steps), in which each site starts its next step
  /// when its own result is complete: from a common start at t = 0 until every site holds
  /// the eps-consensus result, compute included (time_to_eps_s) and without it
  /// (comm_time_to_eps_s, the ranking key), as `aggnet run` reports them. +inf if never.
  double time_to_eps_s = 0;
  double comm_time_to_eps_s = 0;
  /// rounds_to_eps x period-average round time, exactly: the sum of the isolated round
  /// times (all members start together) of the first rounds_to_eps rounds (s).
  double isolated_time_to_eps_s = 0;
  /// A group-average candidate of a screened search outside the window
  /// (OptimizerOptions::exhaustive_alignment_sites): timed without the offsets of the groups
  /// that need the general method (see RunOptions::general_offsets), so its times are
  /// upper estimates.
  bool unaligned_estimate = false;
  /// True while time_to_eps_s and comm_time_to_eps_s are lower bounds (makespan_lower_bound_s)
  /// in place of the staggered-start recurrence, deferred for a candidate ranked below the
  /// rows that must be exact (OptimizerOptions::exact_rows).
  bool time_bound = false;
  /// False while `timing` holds only the first rounds_to_eps rounds of a longer period (all
  /// the ranking needs: the recurrence runs rounds_to_eps steps); complete_candidate times
  /// the rest for the rows shown.
  bool period_timed = true;
  /// False for a candidate the search ranked by its members alone (UnplannedBound,
  /// traffic/time_model.h), below the rows that must be exact: nothing planned, `timing`
  /// empty, its times lower bounds (time_bound) and rounds_to_eps at most its own.
  bool timed = true;
};

struct OptimizerOptions {
  /// gradient, chunk, buffer, flow control, ... and eps, the target consensus error
  /// ||W_r ... W_1 - J||_2
  RunOptions run;
  /// Pairs of partitions whose estimated score is within the best `refine` get their
  /// rounds to eps computed exactly (the others are ranked by a rho-based estimate).
  int refine = 64;
  int random_seeds = 8;  ///< random-k:seed candidates per group size
  /// Random partitions sampled per group size k <= 4 when exhaustive enumeration is not
  /// possible (k does not divide n, or too many partitions); 0 disables sampling.
  int sample_partitions = 120;
  /// Send offsets of the groups that need the general method (4 or more members, or a
  /// triad the closed form cannot align; multicast with an aligned start, `--alignment
  /// auto` or `arrival`; model/send_alignment.h, the minimum cycle mean) are exact for
  /// every candidate up to this many sites: 81 sites rank in about 6 CPU-s (4.3 screened),
  /// 128 in 20 (15 screened). Beyond, the search is screened (a heuristic): every candidate
  /// is first timed without those offsets (the closed form still applies), and
  /// only the group-average candidates within `alignment_window` times the best such time
  /// are timed again with them and ranked exactly; the others keep the screened times. The
  /// offsets cut a candidate's time by at most 46 % on nine_city and the 27-site synthetic
  /// platform (x 0.54), so a window of 2 keeps every candidate that could win there; a
  /// larger cut elsewhere would be missed. (The limit was 32 sites while the offsets came
  /// from an LP, which took minutes for a group of 81.)
  int exhaustive_alignment_sites = 128;
  double alignment_window = 2.0;
  /// rotating-k and sequential-k for every k in 2..n-1 up to this many sites (their rounds
  /// hold O(n^2) groups per k, so every k costs O(n^3) group members to time). Beyond, a
  /// ladder of group sizes (a heuristic, stated in the output; group_size_ladder).
  int every_group_size_sites = 128;
  /// The leading rows of the ranking (and the leading group-average rows) whose times to
  /// eps are exact; a candidate whose recurrence is long (rounds to eps x sites beyond
  /// `deferred_site_steps`) and whose lower bound ranks it below them keeps that bound
  /// (time_bound). The rows above them are the same, in the same order, as with every time
  /// exact (each bound is at most the exact time). Default: every row exact.
  std::size_t exact_rows = SIZE_MAX;
  double deferred_site_steps = 1e6;
};

/// The group sizes k of rotating-k and sequential-k on n sites: every k in 2..n-1 up to
/// `every_group_size_sites`; beyond, k <= 8, the divisors of n and a geometric ladder from 8
/// (each k at least 1.25 times the one before) below n, ascending.
std::vector<int> group_size_ladder(int n, const OptimizerOptions& options);

/// Whether the search on `num_sites` sites is screened (see OptimizerOptions).
bool screened_search(int num_sites, const OptimizerOptions& options);

/// Scores one schedule (rounds to eps + analytic time; not its mixing). Errors: as
/// estimate_round.
Candidate score_schedule(const Platform& platform, const Routing& routing, const Schedule& schedule,
                         const std::string& family, const OptimizerOptions& options);

/// What score_schedule leaves out, for a row to be shown: the candidate's mixing
/// (analyze_mixing, without rounds_to_exact) and, unless period_timed, the rest of its
/// period's rounds, timed with the options it was scored with (`options`, without the
/// general offsets for an unaligned_estimate).
void complete_candidate(Candidate& candidate, const Platform& platform, const Routing& routing,
                        const OptimizerOptions& options);

/// Sorts by time to eps (ties: fewer rounds, then name).
void rank_candidates(std::vector<Candidate>& candidates);

/// The search. Candidates:
///  - the built-in families: all-to-all, triads (9 sites), ring, pairs, rotating-k and
///    sequential-k for every k of group_size_ladder, random-k:seed for k in {2, 3, 4} and
///    `random_seeds` seeds, hierarchical (if the platform has >= 2 continents);
///  - when k divides n and there are at most 400 partitions into groups of k (e.g. 9 sites
///    in triples: 280): every partition is timed once, and every unordered pair of
///    partitions {A, B} is a period-2 candidate (A, B, A, B, ...) ("partition-pair");
///    otherwise, for k <= 4, the same over `sample_partitions` random partitions
///    ("sampled-pair", heuristic). For 9 sites in triples the pairs of orthogonal
///    partitions (two parallel classes of some affine-plane labelling) reach the exact
///    average in 2 rounds; geography then decides which triads pair with which.
///    Exhaustive over the 39,060 pairs with rho from Eigen; rounds to eps exact for the
///    `refine` best by estimate (estimate: 2 x ceil(log eps / log rho)).
///  Send offsets: exact up to `exhaustive_alignment_sites`, screened beyond (see
///  OptimizerOptions).
/// Returns all scored candidates, best first (deduplicated by rounds).
std::vector<Candidate> optimize_schedules(const Platform& platform, const Routing& routing,
                                          const OptimizerOptions& options);

/// "3x3", "9", "4x2+1 out": group sizes of a round (sites in no group "sit out").
std::string round_shape(const Round& round, int num_sites);

}  // namespace aggnet
