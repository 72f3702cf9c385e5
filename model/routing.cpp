// Shortest-delay routing over the platform's links (Boost.Graph Dijkstra).
#include "model/routing.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <limits>
#include <map>
#include <stdexcept>

namespace aggnet {

// ---------------------------------------------------------------------------------
// Routing
// ---------------------------------------------------------------------------------

namespace {

/// Path length as (one-way delay in ps, hop count), compared lexicographically: the
/// shortest delay wins, ties go to fewer hops, remaining ties to the lower-index
/// predecessor (see Routing::Routing).
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
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                    boost::no_property, EdgeProps>;

}  // namespace

Routing::Routing(const Platform& platform) : n_(static_cast<int>(platform.sites.size())) {
  Graph g(n_);
  for (std::size_t i = 0; i < platform.links.size(); ++i) {
    const LinkSpec& l = platform.links[i];
    if (l.a < 0 || l.b < 0 || l.a >= n_ || l.b >= n_) {
      throw std::invalid_argument(fmt::format("Routing: link {} has an invalid site index", i));
    }
    boost::add_edge(l.a, l.b, EdgeProps{Dist{l.params.delay_ps, 1}}, g);
    link_of_.emplace(std::make_pair(l.a, l.b), static_cast<int>(i));
    link_of_.emplace(std::make_pair(l.b, l.a), static_cast<int>(i));
  }
  dist_ps_.assign(n_, std::vector<std::uint64_t>(n_, kMax));
  pred_.assign(n_, std::vector<int>(n_, -1));
  const auto index = boost::get(boost::vertex_index, g);
  const Combine combine;
  for (int s = 0; s < n_; ++s) {
    std::vector<Dist> dist(n_, kInf);
    std::vector<Graph::vertex_descriptor> pred(n_);
    boost::dijkstra_shortest_paths(
        g, static_cast<Graph::vertex_descriptor>(s),
        boost::weight_map(boost::get(&EdgeProps::weight, g))
            .distance_map(boost::make_iterator_property_map(dist.begin(), index))
            .predecessor_map(boost::make_iterator_property_map(pred.begin(), index))
            .distance_compare(std::less<Dist>())
            .distance_combine(combine)
            .distance_inf(kInf)
            .distance_zero(Dist{0, 0}));
    // Canonical predecessor: the lowest-index neighbour u on a shortest (delay, hops)
    // path. Hop counts strictly increase along such edges, so this is a tree and does
    // not depend on the order of links in the file.
    for (int v = 0; v < n_; ++v) {
      if (dist[v] == kInf) continue;
      dist_ps_[s][v] = dist[v].first;
      if (v == s) continue;
      int best = -1;
      for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
        const int u = static_cast<int>(boost::target(*e, g));
        if (dist[u] != kInf && combine(dist[u], g[*e].weight) == dist[v] &&
            (best < 0 || u < best)) {
          best = u;
        }
      }
      pred_[s][v] = best;
    }
  }
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
  if (at == d) return d;
  const std::vector<int> p = path(at, d);
  return p.size() >= 2 ? p[1] : -1;
}

int Routing::link_index(int u, int v) const {
  auto it = link_of_.find({u, v});
  return it == link_of_.end() ? -1 : it->second;
}

std::vector<std::pair<int, int>> Routing::multicast_tree(int src,
                                                         const std::vector<int>& receivers) const {
  if (src < 0 || src >= n_) throw std::out_of_range("Routing::multicast_tree");
  std::set<int> in_tree = {src};
  std::vector<std::pair<int, int>> hops;
  for (int r : receivers) {
    if (r < 0 || r >= n_) throw std::out_of_range("Routing::multicast_tree: receiver");
    if (dist_ps_[src][r] == kMax) {
      throw std::invalid_argument("Routing::multicast_tree: receiver unreachable");
    }
    for (int v = r; in_tree.insert(v).second;) {
      const int u = pred_[src][v];
      hops.emplace_back(u, v);
      v = u;
    }
  }
  // Parents before children: order hops by the child's (delay, depth), then by index.
  auto depth = [&](int v) {
    int d = 0;
    for (; v != src; v = pred_[src][v]) ++d;
    return d;
  };
  std::sort(hops.begin(), hops.end(), [&](const auto& x, const auto& y) {
    return std::make_tuple(dist_ps_[src][x.second], depth(x.second), x.second) <
           std::make_tuple(dist_ps_[src][y.second], depth(y.second), y.second);
  });
  return hops;
}

}  // namespace aggnet
