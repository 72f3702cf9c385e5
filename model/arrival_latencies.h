// arrival_latency_ps from one sender to many receivers, each hop's term computed once.
#pragma once

#include <cstdint>
#include <vector>

#include "model/platform.h"
#include "model/routing.h"

namespace aggnet {

/// arrival_latency_ps(platform, routing, s, d, chunk_bytes) for one sender s and any d, the
/// same integers: the shortest paths from s form a tree, so a hop's term (its switch
/// latency, serialization and propagation) is computed once per sender, not once per
/// receiver behind it. The planner's all-pairs loops over groups of hundreds of members
/// spent most of a 1,000-site set-up recomputing them.
/// The first kDirectQueries answers are arrival_latency_ps's own (a group of three asks
/// for two receivers: a per-site table would cost more than it saves).
class ArrivalLatencies {
 public:
  static constexpr int kDirectQueries = 8;
  ArrivalLatencies(const Platform& platform, const Routing& routing, int s,
                   std::uint64_t chunk_bytes)
      : platform_(platform), routing_(routing), s_(s), chunk_bytes_(chunk_bytes) {}
  std::uint64_t to(int d);

 private:
  const Platform& platform_;
  const Routing& routing_;
  int s_;
  std::uint64_t chunk_bytes_, up_ps_ = 0;
  int queries_ = 0;
  std::vector<std::uint64_t> hops_ps_;  // [v]: the terms of the hops s -> v; kUnknown until asked
  std::vector<std::pair<int, int>> walk_;
  static constexpr std::uint64_t kUnknown = ~std::uint64_t{0};
};

}  // namespace aggnet
