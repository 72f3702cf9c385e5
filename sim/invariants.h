// The invariants checked at the end of every run (issue 11): a run that breaks one fails,
// naming it, instead of reporting numbers that cannot be trusted.
#pragma once

#include <string>
#include <vector>

namespace aggnet {

class NetworkSystem;

/// One invariant and what broke it ("" when it holds).
struct InvariantResult {
  std::string name;
  std::string description;
  std::string violation;
  bool holds() const { return violation.empty(); }
};

/// After a finished run (every cluster done):
/// - `exactly-once delivery`: every (step, chunk) result reached every member of its group
///   once: accepted results = chunks x communicating steps, no result delivered twice
///   without a retransmission asking for it;
/// - `one contribution per member`: every reduced chunk summed exactly one contribution
///   from each other member of the group (reduction trees: every partial sum and result
///   holds each member of its subtree once, counted by `contributions`);
/// - `no slot leaked`: no aggregation slot held and no contribution waiting at the end;
/// - `buffer within capacity`: slots in use never exceeded the buffer memory;
/// - `link conservation`: on every link, wire bytes sent = delivered + lost + in flight.
std::vector<InvariantResult> check_invariants(const NetworkSystem& system);

/// "name: violation; ..." of the invariants that do not hold ("" if all hold).
std::string violations(const std::vector<InvariantResult>& results);

}  // namespace aggnet
