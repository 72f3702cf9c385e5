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

/// How a schedule's rounds are executed on the network.
enum class Collective {
  kGroupAverage,  ///< multicast + in-line aggregation inside each group (the intelligent WAN)
  kRing,          ///< host-based ring all-reduce over plain unicast (no-intelligence baseline)
};

/// A periodic schedule: step k runs round rounds[k % rounds.size()].
/// For kRing, rounds has one round with one group whose `sites` order is the ring order.
struct Schedule {
  std::string name;
  Collective collective = Collective::kGroupAverage;
  std::vector<Round> rounds;
  std::size_t period() const { return rounds.size(); }
};

}  // namespace aggnet
