// arrival_latency_ps from one sender to many receivers, each hop's term computed once.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "model/network_math.h"
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

/// Per link of a platform, the terms of one message size that every hop of a chunk adds:
/// chunk_serialization_ps and payload_rate, each computed on a link's first use (a link
/// no path takes is never priced, as before), and the propagation delay.
class LinkTerms {
 public:
  LinkTerms(const Platform& platform, std::uint64_t bytes);
  std::uint64_t serialization_ps(std::size_t link) {
    std::uint64_t& ps = serialization_ps_[link];
    if (ps == kUnknown) ps = chunk_serialization_ps(platform_.links[link].params, bytes_);
    return ps;
  }
  double payload_rate(std::size_t link) {
    double& rate = payload_rate_[link];
    if (std::isnan(rate)) rate = aggnet::payload_rate(platform_.links[link].params, bytes_);
    return rate;
  }
  std::uint64_t delay_ps(std::size_t link) const { return delay_ps_[link]; }

 private:
  const Platform& platform_;
  std::uint64_t bytes_;
  std::vector<std::uint64_t> serialization_ps_, delay_ps_;
  std::vector<double> payload_rate_;
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
  /// arrival_latency_ps(s, to[k], bytes) into out[k], summed along a tree from s: `hops`
  /// parents first, as Routing::multicast_tree orders them, each on the link
  /// `directed_link[h] / 2`, every to[k] s or on the tree. One pass over the tree, its
  /// sums in a scratch row kept in cache (a sender's kept sums are a row of the
  /// platform's size, a cache miss per receiver).
  void tree_arrival_ps(int s, const std::vector<std::pair<int, int>>& hops,
                       const std::vector<std::uint32_t>& directed_link, std::uint64_t bytes,
                       const std::vector<int>& to, std::uint64_t* out);
  LinkTerms& link_terms(std::uint64_t bytes);
  const Platform& platform() const { return platform_; }
  const Routing& routing() const { return routing_; }

 private:
  const Platform& platform_;
  const Routing& routing_;
  std::map<std::uint64_t, std::vector<std::unique_ptr<ArrivalLatencies>>> by_bytes_;
  std::map<std::uint64_t, LinkTerms> link_terms_;
  std::vector<std::uint64_t> switch_ps_;  // [site]: its switch latency
  std::vector<std::uint64_t> sums_ps_;    // tree_arrival_ps's scratch, [site]
};

}  // namespace aggnet
