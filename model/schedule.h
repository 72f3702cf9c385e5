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
  kReductionTree,    ///< in-network reduction over Schedule::forest (one round, one group of
                     ///< all members): relays' FPGAs sum partial sums, each root multicasts
};

/// One tree of a kReductionTree schedule. Each member's contribution to the tree's chunks
/// goes up `parent` to `root`: the FPGA at every site sums the partial sums from its
/// children with its own cluster's contribution and forwards one stream to its parent;
/// the root's FPGA completes the sum and multicasts the result down the same tree edges.
/// Tree edges join sites with a direct WAN link.
struct ReductionTree {
  int root = -1;
  /// Per site (Platform::sites order): its parent; -1 for the root and sites not in the tree.
  std::vector<int> parent;
  /// Fraction of the gradient's chunks this tree carries (a forest's shares sum to 1).
  double share = 1.0;
  /// Time between two of this tree's chunks leaving a member (its pacing); 0: no pacing.
  std::uint64_t pacing_interval_ps = 0;
  /// Per site: when it starts sending this tree's chunks, after the round's start;
  /// empty: the control plane aligns them (`--alignment`). Shape: empty or n sites.
  std::vector<std::uint64_t> send_offset_ps = {};
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
