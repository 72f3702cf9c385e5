// Shortest-metric routing over the platform's links (Boost.Graph Dijkstra).
#include "model/routing.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace aggnet {

// ---------------------------------------------------------------------------------
// Routing
// ---------------------------------------------------------------------------------

namespace {

/// Path length as (metric, hop count), compared lexicographically: the smallest metric
/// (by default the one-way delay in ps) wins, ties go to fewer hops, remaining ties to the
/// lower-index predecessor (see Routing::Routing).
using Dist = std::pair<std::uint64_t, std::uint64_t>;
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
const Dist kInf{kMax, kMax};

struct Combine {
  Dist operator()(const Dist& a, const Dist& b) const {
    if (a == kInf || b == kInf) return kInf;
    const std::uint64_t d = a.first > kMax - b.first ? kMax : a.first + b.first;
    return {d, a.second + b.second};
  }
};

struct EdgeProps {
  Dist weight;
  std::uint64_t delay_ps = 0;
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                    boost::no_property, EdgeProps>;

// Canonical predecessor: the lowest-index neighbour u on a shortest (metric, hops) path.
// Hop counts strictly increase along such edges, so this is a tree and does not depend on
// the order of links in the file. Fills pred[v], hops[v] and hop_delay[v] (the delay of
// the hop pred -> v, in ps) for every v reached from s.
void canonical_predecessors(const Graph& g, const std::vector<Dist>& dist, int s,
                            std::vector<int>& pred, std::vector<int>& hops,
                            std::vector<std::uint64_t>& hop_delay) {
  const Combine combine;
  const int n = static_cast<int>(dist.size());
  for (int v = 0; v < n; ++v) {
    if (dist[v] == kInf) continue;
    hops[v] = static_cast<int>(dist[v].second);
    if (v == s) continue;
    int best = -1;
    std::uint64_t best_delay_ps = 0;
    for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
      const int u = static_cast<int>(boost::target(*e, g));
      if (dist[u] == kInf || combine(dist[u], g[*e].weight) != dist[v]) continue;
      if (best < 0 || u < best || (u == best && g[*e].delay_ps < best_delay_ps)) {
        best = u;
        best_delay_ps = g[*e].delay_ps;
      }
    }
    pred[v] = best;
    hop_delay[v] = best_delay_ps;
  }
}

}  // namespace

Routing::Routing(const Platform& platform, const std::vector<std::uint64_t>& link_metric)
    : n_(static_cast<int>(platform.sites.size())) {
  if (!link_metric.empty() && link_metric.size() != platform.links.size()) {
    throw std::invalid_argument(fmt::format("Routing: {} link metrics for {} links",
                                            link_metric.size(), platform.links.size()));
  }
  Graph g(n_);
  for (std::size_t i = 0; i < platform.links.size(); ++i) {
    const LinkSpec& l = platform.links[i];
    if (l.a < 0 || l.b < 0 || l.a >= n_ || l.b >= n_) {
      throw std::invalid_argument(fmt::format("Routing: link {} has an invalid site index", i));
    }
  }
  // The first link listed joins a pair.
  link_of_.assign(static_cast<std::size_t>(n_) * n_, -1);
  for (std::size_t i = 0; i < platform.links.size(); ++i) {
    const LinkSpec& l = platform.links[i];
    const std::uint64_t metric = link_metric.empty() ? l.params.delay_ps : link_metric[i];
    boost::add_edge(l.a, l.b, EdgeProps{Dist{metric, 1}, l.params.delay_ps}, g);
    for (auto [u, v] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}}) {
      int& slot = link_of_[static_cast<std::size_t>(u) * n_ + v];
      if (slot < 0) slot = static_cast<int>(i);
    }
  }
  dist_ps_.assign(n_, std::vector<std::uint64_t>(n_, kMax));
  pred_.assign(n_, std::vector<int>(n_, -1));
  hops_.assign(n_, std::vector<int>(n_, 0));
  first_.assign(n_, {});
  tree_rank_.assign(n_, {});
  tree_nodes_.assign(n_, {});
  tree_parent_.assign(n_, {});
  const auto index = boost::get(boost::vertex_index, g);
  const Combine combine;
  for (int s = 0; s < n_; ++s) {
    std::vector<Dist> dist(n_, kInf);
    std::vector<Graph::vertex_descriptor> pred(n_);
    std::vector<std::uint64_t> hop_delay(n_, 0);  // delay of the hop pred -> v, in ps
    boost::dijkstra_shortest_paths(
        g, static_cast<Graph::vertex_descriptor>(s),
        boost::weight_map(boost::get(&EdgeProps::weight, g))
            .distance_map(boost::make_iterator_property_map(dist.begin(), index))
            .predecessor_map(boost::make_iterator_property_map(pred.begin(), index))
            .distance_compare(std::less<Dist>())
            .distance_combine(combine)
            .distance_inf(kInf)
            .distance_zero(Dist{0, 0}));
    canonical_predecessors(g, dist, s, pred_[s], hops_[s], hop_delay);
    path_delays_from(s, hop_delay);
    first_hop_from(s);
    tree_order_from(s);
  }
  hops_ = {};  // set-up only: the trees keep the order it gave
}

void Routing::tree_order_from(int s) {
  const auto& dist = dist_ps_[s];
  const auto& hops = hops_[s];
  struct Key {  // (delay, hops, site): the sort reads its keys in place
    std::uint64_t dist;
    int hops, site;
  };
  std::vector<Key> keys;
  for (int v = 0; v < n_; ++v)
    if (v == s || pred_[s][v] >= 0) keys.push_back({dist[v], hops[v], v});
  std::sort(keys.begin(), keys.end(), [](const Key& x, const Key& y) {
    return std::tie(x.dist, x.hops, x.site) < std::tie(y.dist, y.hops, y.site);
  });
  std::vector<int> order(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) order[i] = keys[i].site;
  auto& rank = tree_rank_[s];
  rank.assign(n_, kNoRank);
  for (std::size_t i = 0; i < order.size(); ++i) rank[order[i]] = static_cast<std::uint32_t>(i);
  auto& nodes = tree_nodes_[s];
  nodes.assign(order.size(), TreeNode{s, -1});
  auto& parent = tree_parent_[s];
  parent.assign(order.size(), 0);
  for (std::size_t i = 1; i < order.size(); ++i) {
    const int u = pred_[s][order[i]];
    nodes[i] = TreeNode{order[i], link_index(u, order[i])};
    parent[i] = rank[u];
  }
}

// dist_ps_[s][v]: the delay along s's predecessor tree (parents first, by hop count), the
// routed path's delay whatever the metric.
void Routing::path_delays_from(int s, const std::vector<std::uint64_t>& hop_delay_ps) {
  std::vector<int> order;
  for (int v = 0; v < n_; ++v)
    if (v == s || pred_[s][v] >= 0) order.push_back(v);
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return hops_[s][x] < hops_[s][y]; });
  for (int v : order) {
    const int u = pred_[s][v];
    dist_ps_[s][v] = v == s ? 0 : dist_ps_[s][u] + hop_delay_ps[v];
  }
}

// first_[s][v]: v's ancestor next to s in s's predecessor tree, parents before children
// (a counting sort by hop count: hops strictly increase along predecessor edges), so
// that next_hop is one look-up instead of a walk up the tree.
void Routing::first_hop_from(int s) {
  std::vector<int>& first = first_[s];
  first.assign(n_, -1);
  std::vector<std::vector<int>> by_hops;
  for (int v = 0; v < n_; ++v) {
    if (v == s || dist_ps_[s][v] == kMax) continue;
    const auto h = static_cast<std::size_t>(hops_[s][v]);
    if (by_hops.size() <= h) by_hops.resize(h + 1);
    by_hops[h].push_back(v);
  }
  first[s] = s;
  for (const auto& layer : by_hops)
    for (int v : layer) first[v] = pred_[s][v] == s ? v : first[pred_[s][v]];
}

std::uint64_t Routing::delay_ps(int s, int d) const {
  if (s < 0 || d < 0 || s >= n_ || d >= n_) throw std::out_of_range("Routing::delay_ps");
  return dist_ps_[s][d];
}

std::vector<int> Routing::path(int s, int d) const {
  if (s < 0 || d < 0 || s >= n_ || d >= n_) throw std::out_of_range("Routing::path");
  if (s == d) return {s};
  if (dist_ps_[s][d] == kMax) return {};
  std::vector<int> rev = {d};
  for (int v = d; v != s;) {
    v = pred_[s][v];
    rev.push_back(v);
  }
  return std::vector<int>(rev.rbegin(), rev.rend());
}

int Routing::next_hop(int at, int d) const {
  if (at < 0 || d < 0 || at >= n_ || d >= n_) throw std::out_of_range("Routing::next_hop");
  return first_[at][d];
}

std::vector<std::pair<int, int>> Routing::multicast_tree(int src, const std::vector<int>& receivers,
                                                         std::vector<int>* hop_links) const {
  if (src < 0 || src >= n_) throw std::out_of_range("Routing::multicast_tree");
  // The tree in rank space (tree_rank_): a receiver's path climbs its ancestors' ranks up
  // to the first one on the tree so far, a bit per rank marking them; the set bits, read
  // in order, are the hops parents first. No sort, and the marks are n bits.
  const auto& rank = tree_rank_[src];
  const auto& nodes = tree_nodes_[src];
  const auto& parent = tree_parent_[src];
  thread_local std::vector<std::uint64_t> on_tree;
  on_tree.assign((nodes.size() + 63) / 64, 0);
  const auto mark = [&](std::uint32_t r) {  // whether r was marked before
    std::uint64_t& word = on_tree[r / 64];
    const std::uint64_t bit = std::uint64_t{1} << (r % 64);
    const bool was = (word & bit) != 0;
    word |= bit;
    return was;
  };
  mark(0);  // src
  std::size_t count = 0;
  for (int r : receivers) {
    if (r < 0 || r >= n_) throw std::out_of_range("Routing::multicast_tree: receiver");
    const std::uint32_t from = rank[static_cast<std::size_t>(r)];
    if (from == kNoRank) {
      throw std::invalid_argument("Routing::multicast_tree: receiver unreachable");
    }
    for (std::uint32_t x = from; !mark(x); x = parent[x]) ++count;
  }
  std::vector<std::pair<int, int>> hops;
  hops.reserve(count);
  if (hop_links) {
    hop_links->clear();
    hop_links->reserve(count);
  }
  for (std::size_t w = 0; w < on_tree.size(); ++w) {
    for (std::uint64_t bits = on_tree[w] & (w == 0 ? ~std::uint64_t{1} : ~std::uint64_t{0}); bits;
         bits &= bits - 1) {
      const std::size_t r = 64 * w + static_cast<std::size_t>(__builtin_ctzll(bits));
      const TreeNode& node = nodes[r];
      hops.emplace_back(nodes[parent[r]].site, node.site);
      if (hop_links) hop_links->push_back(node.link);
    }
  }
  return hops;
}

}  // namespace aggnet
