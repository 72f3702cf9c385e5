// arrival_latency_ps from one sender to many receivers, each hop's term computed once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
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
  /// `direct_queries`: how many first answers are arrival_latency_ps's own (0: the table
  /// from the first, for a sender asked again and again, as ArrivalLatencyCache's are).
  ArrivalLatencies(const Platform& platform, const Routing& routing, int s,
                   std::uint64_t chunk_bytes, int direct_queries = kDirectQueries)
      : platform_(platform),
        routing_(routing),
        s_(s),
        chunk_bytes_(chunk_bytes),
        direct_queries_(direct_queries) {}
  /// Walks back from d only to the nearest site already summed: O(1) for a d asked before.
  std::uint64_t to(int d);

 private:
  const Platform& platform_;
  const Routing& routing_;
  int s_;
  std::uint64_t chunk_bytes_, up_ps_ = 0;
  int queries_ = 0, direct_queries_;
  std::vector<std::uint64_t> hops_ps_;  // [v]: the terms of the hops s -> v; kUnknown until asked
  std::vector<std::pair<int, int>> walk_;
  static constexpr std::uint64_t kUnknown = ~std::uint64_t{0};
};

/// arrival_latency_ps for any sender, receiver and message size, each sender's sums kept
/// from call to call: a schedule's rounds meet the same senders again and again (a
/// 1,000-site rotating-3 plans about 500 rounds of 1,000 senders), and the walks along the
/// routed paths, one cache miss per hop, were most of its set-up. A sender's first
/// kDirectQueries answers per size are direct, as ArrivalLatencies' (a plan of one round of
/// small groups allocates no tables); then 8 bytes per site per sender and size.
class ArrivalLatencyCache {
 public:
  ArrivalLatencyCache(const Platform& platform, const Routing& routing)
      : platform_(platform), routing_(routing) {}
  std::uint64_t get(int s, int d, std::uint64_t bytes) { return from(s, bytes).to(d); }
  /// s's latencies for messages of `bytes`, for a loop over many receivers (no look-up
  /// of the size and sender per receiver). Valid as long as this cache.
  ArrivalLatencies& from(int s, std::uint64_t bytes);
  const Platform& platform() const { return platform_; }
  const Routing& routing() const { return routing_; }

 private:
  const Platform& platform_;
  const Routing& routing_;
  std::map<std::uint64_t, std::vector<std::unique_ptr<ArrivalLatencies>>> by_bytes_;
};

}  // namespace aggnet
