// Arrival-aligned sends: per-member start offsets that make the contributions for a
// chunk reach each receiver's aggregator together. Plain C++ (no SystemC, no platform):
// it works on a matrix of arrival latencies that the control plane computes.
//
// Member i starts its stream at T + offset_ps[i]; its chunk k reaches receiver j at
// T + offset_ps[i] + k x interval + arrival_ps[i][j]. The residual skew at j is
//   max_i (offset_i + arrival_ij) - min_i (offset_i + arrival_ij),  i != j,
// and the slot of a chunk at j is held for about that skew plus the pipeline time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aggnet {

/// arrival_ps[i][j]: latency from member i starting a chunk to its last bit reaching
/// member j's aggregator (i != j; the diagonal is ignored). Square, size = group size.
using ArrivalMatrix = std::vector<std::vector<std::uint64_t>>;

/// One offset per sender (multicast: one stream serves every receiver).
struct SenderAlignment {
  std::vector<std::uint64_t> offset_ps;         ///< per member; the smallest is 0
  std::vector<std::uint64_t> residual_skew_ps;  ///< per member as receiver
  std::uint64_t max_residual_skew_ps = 0;
  std::string method;  ///< "none", "closed-form" (2 or 3 members), "cycle-mean" or "lp"
};

/// Residual skew at receiver j for the given offsets (exact integer arithmetic).
std::uint64_t residual_skew_ps(const ArrivalMatrix& arrival_ps,
                               const std::vector<std::uint64_t>& offset_ps, std::size_t j);

/// All offsets 0: every member starts at T (the unaligned baseline), with its skews.
SenderAlignment unaligned(const ArrivalMatrix& arrival_ps);

/// Offsets minimising the largest residual skew over receivers; among those, the ones
/// whose last arrival, max_ij (offset_i + arrival_ij), is earliest. Groups of 2 and 3
/// use the closed form (residual exactly 0 whenever the cyclic asymmetry of the matrix
/// cancels, as for any latency of the form up_i + path_ij + down_j with a symmetric
/// path term; otherwise they fall back to the general method); 4 or more members are
/// solved exactly in O(n^3) integer arithmetic through the minimum cycle mean of the skew
/// constraints' graph (Karp) and shortest paths ("cycle-mean": the optimum of the LP of
/// align_senders_lp over whole-ps offsets, without one; 243 members in tens of ms), in
/// O(n^2) where a_ij = up_i + down_j (the method's answer there: o_i = max up - up_i).
/// Howard's policy iteration usually finds the least skew before Karp's walks would;
/// shortest paths at that skew confirm it (else Karp decides).
/// Errors: std::invalid_argument if the matrix is not square or holds a latency above
/// 2^62 ps.
SenderAlignment align_senders(const ArrivalMatrix& arrival_ps);

/// align_senders without its short cuts (separable latencies, a_ij = up_i + down_j as in
/// the co-located reference's star, in O(n^2); the skew weights eight rows per pass;
/// policy iteration before Karp's walks): every group of 4 or more through Karp's minimum
/// cycle mean, a row at a time. The same offsets; tests compare the two.
SenderAlignment align_senders_general(const ArrivalMatrix& arrival_ps);

/// align_senders where the closed form of 2 or 3 members applies, else nullopt.
std::optional<SenderAlignment> align_senders_closed_form(const ArrivalMatrix& arrival_ps);

/// The same optimisation over real offsets, always through a linear program (GLPK), its
/// offsets rounded to whole ps: within a few ps of align_senders for latencies up to
/// about a second (its tolerances scale with the latencies' spread). Tests compare it
/// with the closed form and the cycle mean; it takes minutes from about 200 members.
/// Errors: std::runtime_error if GLPK fails.
SenderAlignment align_senders_lp(const ArrivalMatrix& arrival_ps);

/// Without multicast every unicast copy i -> j has its own offset: perfect alignment,
/// copy_offset_ps[i][j] = max_k arrival_kj - arrival_ij (diagonal 0). Every copy for j
/// then lands at T + max_k arrival_kj, the earliest common instant.
std::vector<std::vector<std::uint64_t>> align_copies(const ArrivalMatrix& arrival_ps);

}  // namespace aggnet
