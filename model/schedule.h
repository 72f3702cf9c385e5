// Schedules: which sites average together in each round. Plain C++, no SystemC.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aggnet {

struct Platform;

/// A multicast group: sites that average their gradients together in one round.
/// Site indices refer to Platform::sites.
struct Group {
  std::vector<int> sites;
  /// Explicit send offsets (ps after the agreed start), one per member in `sites` order;
  /// empty: the control plane chooses them (`--alignment`). Shape: empty or sites.size().
  std::vector<std::uint64_t> send_offset_ps = {};
};

/// One round: disjoint groups; sites in no group sit the round out.
struct Round {
  std::vector<Group> groups;
};

/// How a schedule's rounds are executed on the network. Every collective but
/// kGroupAverage is host-based: plain unicast, the FPGAs pass the chunks through
/// (docs/simulation-semantics.md gives each one's rules and closed form).
enum class Collective {
  kGroupAverage,     ///< multicast + in-line aggregation inside each group (the intelligent WAN)
  kRing,             ///< host-based ring all-reduce: reduce-scatter then all-gather, 2(n-1) steps
  kReduceScatter,    ///< the ring's first n-1 steps: each site ends with one reduced segment
  kAllGather,        ///< the ring's last n-1 steps: each site's segment reaches every site
  kPointToPoint,     ///< each group [sender, receiver] is a one-way transfer of G bytes
  kParameterServer,  ///< group [server, workers...]: workers send G to the server, then it
                     ///< sends G back to each worker once it has every worker's G
  kUnicastAllToAll,  ///< all-reduce by direct exchange: every member sends its whole G to
                     ///< every other member over unicast and sums what it receives
  kReductionTree,    ///< in-network reduction: partial sums flow up each tree of
                     ///< Schedule::forest, FPGAs sum in transit, the root multicasts the sum
};

/// When a ring site may send its step-k+1 segment (kRing, kReduceScatter, kAllGather).
enum class RingStepRule {
  kReceive,   ///< once its predecessor's step-k segment has arrived
  kSendRecv,  ///< MPI_Sendrecv: also once its own step-k segment has reached its successor
  kBarrier,   ///< once every site has received its step-k segment (a global barrier)
};

/// True for the collectives whose one group's `sites` order is a ring order.
inline bool is_ring_collective(Collective c) {
  return c == Collective::kRing || c == Collective::kReduceScatter || c == Collective::kAllGather;
}

/// One tree of a reduction forest (kReductionTree): the members' partial sums of the tree's
/// chunks flow up the parent links to the root, whose FPGA multicasts the full sum back down.
struct ReductionTree {
  int root = -1;
  std::vector<int> parent;  ///< per site: its parent site; -1 for the root and non-members
  double share = 1.0;       ///< fraction of the gradient's chunks this tree carries
  std::uint64_t pacing_interval_ps = 0;  ///< between a member's chunk emissions; 0: none
  /// Per site: when it starts sending the tree's chunks after the agreed start; empty: the
  /// control plane aligns them (partial sums reach every relay together).
  std::vector<std::uint64_t> send_offset_ps = {};
  /// true: the root multicasts the sum back down the tree (reduce-then-broadcast). false:
  /// the sum stays at the root, a per-receiver in-tree; a forest of in-trees has one per
  /// member, each carrying the whole gradient.
  bool broadcast = true;
};

/// A periodic schedule: step k runs round rounds[k % rounds.size()].
/// Ring collectives, kParameterServer and kUnicastAllToAll: one round with one group (the
/// ring order; the server first; any order). kPointToPoint: rounds of groups [sender, receiver];
/// the groups of one round are concurrent transfers.
struct Schedule {
  std::string name;
  Collective collective = Collective::kGroupAverage;
  std::vector<Round> rounds;
  RingStepRule ring_step = RingStepRule::kReceive;  ///< ring collectives only
  int messages = 1;                   ///< kPointToPoint: concurrent messages of G bytes per pair
  std::vector<ReductionTree> forest;  ///< kReductionTree only: at least one tree
  std::size_t period() const { return rounds.size(); }
};

}  // namespace aggnet
