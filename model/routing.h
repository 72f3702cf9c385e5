// Shortest-delay routing over a platform's links. Plain C++.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "model/platform.h"

namespace aggnet {

/// Shortest-metric routing over the platform's links (Boost.Graph Dijkstra). The default
/// metric of a link is its delay (the reference network routes by IS-IS metric = RTT, so
/// shortest delay is faithful); an explicit metric per link (an IGP weight, e.g. the
/// load-aware planner's, traffic/load_aware.h) moves paths, and every query below follows
/// the routed paths: delay_ps is then the routed path's delay, not the shortest one.
class Routing {
 public:
  explicit Routing(const Platform& platform) : Routing(platform, {}) {}
  /// `link_metric[i]`: the routing weight of Platform::links[i] (both directions); empty:
  /// each link's delay_ps. Errors: std::invalid_argument for a size that is not the
  /// number of links.
  Routing(const Platform& platform, const std::vector<std::uint64_t>& link_metric);
  int num_sites() const { return n_; }
  /// One-way propagation delay of the routed path s -> d (the sum of its links' delays),
  /// in ps (0 when s == d).
  std::uint64_t delay_ps(int s, int d) const;
  /// Sites on the routed (shortest-metric) path s -> d, both ends included.
  std::vector<int> path(int s, int d) const;
  /// Next site after `at` on the shortest path at -> d (d itself if adjacent, `at` if
  /// d == at, -1 if unreachable); O(1).
  int next_hop(int at, int d) const;
  /// Whether d is reachable from s (s itself is).
  bool reachable(int s, int d) const { return dist_ps_.at(s).at(d) != kUnreachable; }
  /// The site before v on the routed path s -> v (-1 for v == s or v unreachable); O(1).
  int predecessor(int s, int v) const { return pred_.at(s).at(v); }
  /// Index into Platform::links of the link joining adjacent sites u and v, or -1.
  int link_index(int u, int v) const {
    return u < 0 || v < 0 || u >= n_ || v >= n_ ? -1
                                                : link_of_[static_cast<std::size_t>(u) * n_ + v];
  }
  /// Calls f(u, v) for every hop u -> v of the shortest path s -> d, from d back to s
  /// (no hop if s == d or d is unreachable). No allocation: for per-pair sums.
  template <class F>
  void for_each_hop_reversed(int s, int d, F f) const {
    if (dist_ps_.at(s).at(d) == kUnreachable) return;
    for (int v = d; v != s;) {
      const int u = pred_[s][v];
      f(u, v);
      v = u;
    }
  }
  /// Calls f(link, u, v) for every hop u -> v of the routed path src -> d, from d back
  /// towards src, while f returns true (no hop if src == d or d is unreachable); `link`
  /// is link_index(u, v). Walks src's routing tree: one line per step, no n x n lookups.
  template <class F>
  void walk_back(int src, int d, F f) const {
    const auto& nodes = tree_nodes_[static_cast<std::size_t>(src)];
    const auto& parent = tree_parent_[static_cast<std::size_t>(src)];
    for (std::uint32_t x = tree_rank_[static_cast<std::size_t>(src)][static_cast<std::size_t>(d)];
         x != 0 && x != kNoRank;) {
      const std::uint32_t up = parent[x];
      if (!f(nodes[x].link, nodes[up].site, nodes[x].site)) return;
      x = up;
    }
  }
  /// Multicast tree from `src` to `receivers`: the union of the shortest paths, as
  /// directed hops (u, v). Each hop appears once however many receivers lie behind it.
  std::vector<std::pair<int, int>> multicast_tree(int src,
                                                  const std::vector<int>& receivers) const {
    return multicast_tree(src, receivers, nullptr);
  }
  /// The same tree, and into `hop_links` (when not null; replaced) each hop's link_index.
  std::vector<std::pair<int, int>> multicast_tree(int src, const std::vector<int>& receivers,
                                                  std::vector<int>* hop_links) const;

 private:
  void path_delays_from(int s, const std::vector<std::uint64_t>& hop_delay_ps);
  void first_hop_from(int s);
  void tree_order_from(int s);

  int n_ = 0;
  std::vector<std::vector<std::uint64_t>> dist_ps_;  // [s][d]: delay of the routed path
  std::vector<std::vector<int>> pred_;               // [s][d]: predecessor of d from s
  std::vector<std::vector<int>> hops_;   // [s][d]: hops of the path s -> d (set-up only)
  std::vector<std::vector<int>> first_;  // [s][d]: next hop from s (-1: none)
  // s's routing tree in the order of multicast_tree's hops, the sites reached from s by
  // (delay, hops, index), parents before children (s is rank 0):
  std::vector<std::vector<std::uint32_t>> tree_rank_;  // [s][v]: v's rank (kNoRank: unreached)
  struct TreeNode {
    int site, link;  // the site of this rank, link_index of the hop to it
  };
  std::vector<std::vector<TreeNode>> tree_nodes_;  // [s][r]: rank r
  // [s][r]: the rank of rank r's predecessor, apart: a climb reads 16 to a line.
  std::vector<std::vector<std::uint32_t>> tree_parent_;
  static constexpr std::uint32_t kNoRank = ~std::uint32_t{0};
  std::vector<int> link_of_;  // [u * n + v]: link index or -1
  static constexpr std::uint64_t kUnreachable = ~std::uint64_t{0};
};

}  // namespace aggnet
