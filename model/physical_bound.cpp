// The physical lower bound (docs/physical-bound.md). The network as a directed graph of
// clusters and switches: access links up (cluster -> its switch) and down (switch -> its
// cluster, through the FPGA, which a pass-through does not delay), WAN links both ways.
// A switch's forwarding latency is charged on every edge into it.
#include "model/physical_bound.h"

#include <fmt/format.h>

#include <algorithm>
// GCC 12 warns of uninitialized edge iterators inside Boost.Graph's max-flow (a false
// positive of its optional-based iterator); the headers' lines are exempt.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/boykov_kolmogorov_max_flow.hpp>
#pragma GCC diagnostic pop
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>

#include "model/network_math.h"

namespace aggnet {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Edge {
  int from = 0, to = 0;
  double rate_bytes_per_s = 0;  // payload: a packet of mtu wire bytes carries mtu - header
  double delay_s = 0;
  std::string label;
};

// Payload bytes per second a link carries at best (whole MTU-sized packets).
double payload_rate_bytes_per_s(const WanLinkParams& p) {
  const double mtu = static_cast<double>(p.mtu_bytes);
  return static_cast<double>(p.bandwidth_bps) / 8 * (mtu - static_cast<double>(p.header_bytes)) /
         mtu;
}

double seconds(std::uint64_t ps) { return static_cast<double>(ps) * 1e-12; }

class Network {
 public:
  explicit Network(const Platform& platform) : n_(static_cast<int>(platform.sites.size())) {
    const auto& sites = platform.sites;
    for (int i = 0; i < n_; ++i) {
      const WanLinkParams access = access_link(sites[i]);
      const double rate = payload_rate_bytes_per_s(access);
      const double up = seconds(access.delay_ps) + seconds(sites[i].sw.latency_ps);
      add({i, n_ + i, rate, up, sites[i].code + " access up"});
      add({n_ + i, i, rate, seconds(access.delay_ps), sites[i].code + " access down"});
    }
    for (const LinkSpec& l : platform.links) {
      const double rate = payload_rate_bytes_per_s(l.params);
      for (auto [u, v] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}}) {
        const double delay = seconds(l.params.delay_ps) + seconds(sites[v].sw.latency_ps);
        add({n_ + u, n_ + v, rate, delay, sites[u].code + "->" + sites[v].code});
      }
    }
  }

  int sites() const { return n_; }
  int nodes() const { return 2 * n_; }
  const std::vector<Edge>& edges() const { return edges_; }

  /// Shortest delay from any of `sources` to every node (reverse: from every node to any
  /// of them).
  std::vector<double> distances(const std::vector<int>& sources, bool reverse) const {
    std::vector<double> dist(static_cast<std::size_t>(nodes()), kInf);
    using Item = std::pair<double, int>;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
    for (int s : sources) {
      dist[s] = 0;
      queue.push({0, s});
    }
    const auto& adjacency = reverse ? in_ : out_;
    while (!queue.empty()) {
      const auto [d, u] = queue.top();
      queue.pop();
      if (d > dist[u]) continue;
      for (int e : adjacency[u]) {
        const int v = reverse ? edges_[e].from : edges_[e].to;
        const double via = d + edges_[e].delay_s;
        if (via < dist[v]) {
          dist[v] = via;
          queue.push({via, v});
        }
      }
    }
    return dist;
  }

 private:
  void add(Edge e) {
    out_.resize(static_cast<std::size_t>(nodes()));
    in_.resize(static_cast<std::size_t>(nodes()));
    out_[e.from].push_back(static_cast<int>(edges_.size()));
    in_[e.to].push_back(static_cast<int>(edges_.size()));
    edges_.push_back(std::move(e));
  }

  int n_;
  std::vector<Edge> edges_;
  std::vector<std::vector<int>> out_, in_;  // edge indices per node
};

// The largest cluster-to-cluster shortest delay: the last site's result depends on it.
BoundTerm path_term(const Network& net) {
  BoundTerm best;
  for (int s = 0; s < net.sites(); ++s) {
    const auto dist = net.distances({s}, false);
    for (int d = 0; d < net.sites(); ++d) {
      if (d == s || dist[d] <= best.time_s) continue;
      best.time_s = dist[d];
      best.sites = {s, d};
    }
  }
  return best;
}

// cut_time_s, sorting `rate_and_start` in place.
double water_fill(std::vector<std::pair<double, double>>& rate_and_start, double payload_bytes) {
  std::sort(rate_and_start.begin(), rate_and_start.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  // With the first k edges delivering: T = (payload + sum r c) / sum r, valid while T is
  // not past the next edge's start.
  double rate = 0, weighted = 0;
  for (std::size_t k = 0; k < rate_and_start.size(); ++k) {
    rate += rate_and_start[k].first;
    weighted += rate_and_start[k].first * rate_and_start[k].second;
    const double t = (payload_bytes + weighted) / rate;
    if (k + 1 == rate_and_start.size() || t <= rate_and_start[k + 1].second) return t;
  }
  return kInf;  // nothing crosses
}

// A cut: `inside` marks the nodes on the sending side; the clusters inside are S. Up to
// kPairCutsMaxSites sites each pair (s in S, t outside) is scored on its own: t needs G
// bytes of s's gradient, and edge e = (u -> v) delivers them to t no sooner than
// d(s, u) + delay_e + d(v, t). Beyond, one start per edge: the nearest s and t.
//
// With `sources_apart` (plans that sum only at the receiving edge) the cut carries every
// inside cluster's gradient on its own, |S| G bytes, and each outside t is scored with each
// edge's earliest start over the inside sources.
class CutEvaluator {
 public:
  CutEvaluator(const Network& net, double payload_bytes, bool sources_apart = false)
      : net_(net), payload_(payload_bytes), sources_apart_(sources_apart) {
    if (net.sites() > kPairCutsMaxSites) return;
    for (int i = 0; i < net.sites(); ++i) {
      from_cluster_.push_back(net.distances({i}, false));
      to_cluster_.push_back(net.distances({i}, true));
    }
  }

  // Sets the clusters on the sending side (and their distances); then score any
  // switch side with those clusters.
  void set_clusters(const std::vector<char>& cluster_inside) {
    in_.clear();
    out_.clear();
    for (int i = 0; i < net_.sites(); ++i) (cluster_inside[i] ? in_ : out_).push_back(i);
    if (!from_cluster_.empty()) return;
    from_inside_ = net_.distances(in_, false);
    to_outside_ = net_.distances(out_, true);
  }

  // The cut's time alone: no allocation (every cut of a platform is scored this way).
  double time_of(const std::vector<char>& inside) {
    ++evaluated_;
    return largest_pair(inside).first;
  }

  // Scores the cut and keeps it in `best` if it is larger.
  void keep_if_larger(const std::vector<char>& inside, BoundTerm& best) {
    if (time_of(inside) > best.time_s) best = describe(inside);
  }

  // The cut with its crossing edges named (those that carry the binding pair's data).
  BoundTerm describe(const std::vector<char>& inside) {
    const auto [time_s, pair] = largest_pair(inside);
    BoundTerm term;
    term.kind = BoundTerm::Kind::kCut;
    for (const Edge& e : net_.edges()) {
      if (!inside[e.from] || inside[e.to] || !reaches(e, pair.first, pair.second)) continue;
      term.capacity_bps += e.rate_bytes_per_s * 8;
      term.edges.push_back(e.label);
    }
    term.time_s = time_s;
    term.source = pair.first;
    term.destination = pair.second;
    for (int i = 0; i < net_.sites(); ++i)
      if (inside[i]) term.sites.push_back(i);
    return term;
  }

  std::uint64_t evaluated() const { return evaluated_; }

 private:
  // Whether edge e delivers anything of s's gradient to t (s < 0 <= t: of any inside one).
  bool reaches(const Edge& e, int s, int t) const {
    if (s >= 0 || t < 0) return start(e, s, t) != kInf;
    return std::any_of(in_.begin(), in_.end(), [&](int i) { return start(e, i, t) != kInf; });
  }

  // When edge e can first deliver s's data to t (s, t < 0: the nearest of each side).
  double start(const Edge& e, int s, int t) const {
    if (s < 0) return from_inside_[e.from] + e.delay_s + to_outside_[e.to];
    return from_cluster_[s][e.from] + e.delay_s + to_cluster_[t][e.to];
  }

  double pair_time(const std::vector<char>& inside, int s, int t) {
    items_.clear();
    for (const Edge& e : net_.edges()) {
      if (!inside[e.from] || inside[e.to]) continue;
      const double at = start(e, s, t);
      if (at != kInf) items_.push_back({e.rate_bytes_per_s, at});
    }
    return water_fill(items_, payload_);
  }

  // With sources apart: the time for every inside gradient to reach t (t < 0: the nearest).
  double all_sources_time(const std::vector<char>& inside, int t) {
    items_.clear();
    for (const Edge& e : net_.edges()) {
      if (!inside[e.from] || inside[e.to]) continue;
      double at = t < 0 ? start(e, -1, -1) : kInf;
      if (t >= 0)
        for (int s : in_) at = std::min(at, start(e, s, t));
      if (at != kInf) items_.push_back({e.rate_bytes_per_s, at});
    }
    return water_fill(items_, payload_ * static_cast<double>(in_.size()));
  }

  // The cut's time and the (s, t) pair that sets it ({-1, -1}: per-edge nearest starts;
  // {-1, t}: every inside gradient at t).
  std::pair<double, std::pair<int, int>> largest_pair(const std::vector<char>& inside) {
    if (sources_apart_) {
      if (from_cluster_.empty()) return {all_sources_time(inside, -1), {-1, -1}};
      std::pair<double, std::pair<int, int>> best{-1, {-1, -1}};
      for (int t : out_) best = std::max(best, {all_sources_time(inside, t), {-1, t}});
      return best;
    }
    if (from_cluster_.empty()) return {pair_time(inside, -1, -1), {-1, -1}};
    std::pair<double, std::pair<int, int>> best{-1, {-1, -1}};
    for (int s : in_)
      for (int t : out_) best = std::max(best, {pair_time(inside, s, t), {s, t}});
    return best;
  }

  const Network& net_;
  double payload_;
  bool sources_apart_;
  std::vector<int> in_, out_;
  std::vector<double> from_inside_, to_outside_;
  std::vector<std::vector<double>> from_cluster_, to_cluster_;  // [site][node]
  std::vector<std::pair<double, double>> items_;
  std::uint64_t evaluated_ = 0;
};

void keep_larger(BoundTerm& best, BoundTerm candidate) {
  if (candidate.time_s > best.time_s) best = std::move(candidate);
}

std::vector<char> cluster_mask(int n, std::uint64_t bits) {
  std::vector<char> mask(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) mask[i] = static_cast<char>(bits >> i & 1u);
  return mask;
}

// Every split of the clusters, and for it every split of the switches.
BoundTerm all_cuts(const Network& net, CutEvaluator& eval, bool switches_follow_clusters) {
  const int n = net.sites();
  const std::uint64_t all = (std::uint64_t{1} << n) - 1;
  BoundTerm best;
  std::vector<char> inside(static_cast<std::size_t>(net.nodes()));
  for (std::uint64_t s = 1; s < all; ++s) {
    const auto clusters = cluster_mask(n, s);
    eval.set_clusters(clusters);
    std::copy(clusters.begin(), clusters.end(), inside.begin());
    const std::uint64_t first = switches_follow_clusters ? s : 0;
    const std::uint64_t last = switches_follow_clusters ? s : all;
    for (std::uint64_t w = first;; ++w) {
      for (int i = 0; i < n; ++i) inside[n + i] = static_cast<char>(w >> i & 1u);
      eval.keep_if_larger(inside, best);
      if (w == last) break;
    }
  }
  return best;
}

// One cluster alone on either side (its access link up or down, and more if its switch
// has less capacity out than the access link).
BoundTerm access_cuts(const Network& net, CutEvaluator& eval) {
  const int n = net.sites();
  BoundTerm best;
  for (int i = 0; i < n; ++i) {
    for (bool alone_inside : {true, false}) {
      std::vector<char> clusters(static_cast<std::size_t>(n), alone_inside ? 0 : 1);
      clusters[i] = alone_inside ? 1 : 0;
      eval.set_clusters(clusters);
      std::vector<char> inside(static_cast<std::size_t>(net.nodes()), alone_inside ? 0 : 1);
      inside[i] = clusters[i];
      eval.keep_if_larger(inside, best);
    }
  }
  return best;
}

// The minimum cut between two clusters (Boost.Graph's Boykov-Kolmogorov max-flow): the
// nodes still reachable from the source in the residual graph.
std::vector<char> min_cut(const Network& net, int source, int sink) {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  struct EdgeProps {
    double capacity = 0, residual = 0;
    Traits::edge_descriptor reverse;
  };
  using Graph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS,
      boost::property<boost::vertex_index_t, long,
                      boost::property<boost::vertex_color_t, boost::default_color_type,
                                      boost::property<boost::vertex_distance_t, long,
                                                      boost::property<boost::vertex_predecessor_t,
                                                                      Traits::edge_descriptor>>>>,
      EdgeProps>;
  Graph g(static_cast<std::size_t>(net.nodes()));
  for (const Edge& e : net.edges()) {
    const auto fwd = boost::add_edge(e.from, e.to, g).first;
    const auto back = boost::add_edge(e.to, e.from, g).first;
    g[fwd].capacity = e.rate_bytes_per_s;
    g[back].capacity = 0;
    g[fwd].reverse = back;
    g[back].reverse = fwd;
  }
  boost::boykov_kolmogorov_max_flow(
      g, boost::get(&EdgeProps::capacity, g), boost::get(&EdgeProps::residual, g),
      boost::get(&EdgeProps::reverse, g), boost::get(boost::vertex_index, g),
      static_cast<std::size_t>(source), static_cast<std::size_t>(sink));
  std::vector<char> reached(static_cast<std::size_t>(net.nodes()));
  std::vector<std::size_t> stack = {static_cast<std::size_t>(source)};
  reached[source] = 1;
  while (!stack.empty()) {
    const auto u = stack.back();
    stack.pop_back();
    for (auto [it, end] = boost::out_edges(u, g); it != end; ++it) {
      const auto v = boost::target(*it, g);
      if (reached[v] || g[*it].residual <= g[*it].capacity * 1e-12) continue;
      reached[v] = 1;
      stack.push_back(v);
    }
  }
  return reached;
}

BoundTerm max_flow_cuts(const Network& net, CutEvaluator& eval) {
  BoundTerm best;
  for (int d = 1; d < net.sites(); ++d) {
    for (auto [s, t] : {std::pair{0, d}, std::pair{d, 0}}) {
      const auto inside = min_cut(net, s, t);
      eval.set_clusters(std::vector<char>(inside.begin(), inside.begin() + net.sites()));
      eval.keep_if_larger(inside, best);
    }
  }
  return best;
}

std::string site_list(const Platform& platform, const std::vector<int>& sites) {
  std::string out;
  for (int s : sites) out += (out.empty() ? "" : " ") + platform.sites[s].code;
  return out;
}

}  // namespace

double cut_time_s(std::vector<std::pair<double, double>> rate_and_start, double payload_bytes) {
  return water_fill(rate_and_start, payload_bytes);
}

double forest_rate_bytes_per_s(const Platform& platform, std::vector<int>* parts) {
  const int n = static_cast<int>(platform.sites.size());
  if (n < 2 || n > kForestMaxSites)
    throw std::invalid_argument("forest rate: expected 2 to 10 sites");
  // Partitions as restricted growth strings: part[0] = 0, part[i] <= 1 + max(part[0..i)).
  std::vector<int> part(static_cast<std::size_t>(n), 0), best_part;
  double best = kInf;
  while (true) {
    const int count = 1 + *std::max_element(part.begin(), part.end());
    if (count >= 2) {
      double crossing = 0;
      for (const LinkSpec& l : platform.links)
        if (part[l.a] != part[l.b]) crossing += payload_rate_bytes_per_s(l.params);
      if (crossing / (count - 1) < best) {
        best = crossing / (count - 1);
        best_part = part;
      }
    }
    int i = n - 1;  // the next string: increase the last position that may grow
    for (; i > 0; --i) {
      const int prefix_max = *std::max_element(part.begin(), part.begin() + i);
      if (part[i] <= prefix_max) break;
    }
    if (i == 0) break;
    ++part[i];
    std::fill(part.begin() + i + 1, part.end(), 0);
  }
  if (parts) *parts = best_part;
  return best;
}

const char* bound_method_name(BoundMethod method) {
  switch (method) {
    case BoundMethod::kAllCuts:
      return "all cuts";
    case BoundMethod::kSiteCuts:
      return "site cuts";
    case BoundMethod::kMaxFlowCuts:
      return "max-flow cuts";
  }
  return "?";
}

std::string BoundTerm::describe(const Platform& platform) const {
  if (kind == Kind::kPath) {
    return fmt::format("path {} -> {}: {:.3f} ms", platform.sites[sites.at(0)].code,
                       platform.sites[sites.at(1)].code, time_s * 1e3);
  }
  std::string crossing;
  for (const auto& e : edges) crossing += (crossing.empty() ? "" : ", ") + e;
  std::string pair;
  if (source >= 0)
    pair = fmt::format(" for {}'s gradient at {}", platform.sites[source].code,
                       platform.sites[destination].code);
  else if (destination >= 0)
    pair = fmt::format(" for {} gradients apart at {}", sites.size(),
                       platform.sites[destination].code);
  return fmt::format("cut {{{}}} -> rest: {:.3f} ms over {:.4g} Gbps ({}){}",
                     site_list(platform, sites), time_s * 1e3, capacity_bps * 1e-9, crossing, pair);
}

PhysicalBound physical_bound(const Platform& platform, std::uint64_t gradient_bytes) {
  const int n = static_cast<int>(platform.sites.size());
  const BoundMethod method = n <= kAllCutsMaxSites    ? BoundMethod::kAllCuts
                             : n <= kSiteCutsMaxSites ? BoundMethod::kSiteCuts
                                                      : BoundMethod::kMaxFlowCuts;
  return physical_bound(platform, gradient_bytes, method);
}

PhysicalBound physical_bound(const Platform& platform, std::uint64_t gradient_bytes,
                             BoundMethod method) {
  const int n = static_cast<int>(platform.sites.size());
  if (n < 2) throw std::invalid_argument("physical bound: expected at least two sites");
  if (gradient_bytes == 0) throw std::invalid_argument("physical bound: expected a gradient");
  if (method != BoundMethod::kMaxFlowCuts && n > kSiteCutsMaxSites)
    throw std::invalid_argument("physical bound: too many sites to enumerate cuts");
  const Network net(platform);
  CutEvaluator eval(net, static_cast<double>(gradient_bytes));
  PhysicalBound b;
  b.method = method;
  b.path = path_term(net);
  b.cut = method == BoundMethod::kAllCuts ? all_cuts(net, eval, false) : access_cuts(net, eval);
  if (method == BoundMethod::kSiteCuts) keep_larger(b.cut, all_cuts(net, eval, true));
  if (method == BoundMethod::kMaxFlowCuts) keep_larger(b.cut, max_flow_cuts(net, eval));
  b.cuts_evaluated = eval.evaluated();
  b.binding = b.cut.time_s > b.path.time_s ? b.cut : b.path;
  b.bound_s = b.binding.time_s;
  return b;
}

PhysicalBound edge_summation_bound(const Platform& platform, std::uint64_t gradient_bytes) {
  const int n = static_cast<int>(platform.sites.size());
  if (n < 2) throw std::invalid_argument("edge-summation bound: expected at least two sites");
  if (gradient_bytes == 0) throw std::invalid_argument("edge-summation bound: expected a gradient");
  if (n > kSiteCutsMaxSites)
    throw std::invalid_argument("edge-summation bound: too many sites to enumerate cuts");
  const Network net(platform);
  CutEvaluator eval(net, static_cast<double>(gradient_bytes), true);
  PhysicalBound b;
  b.method = BoundMethod::kSiteCuts;
  b.path = path_term(net);
  b.cut = all_cuts(net, eval, true);
  b.cuts_evaluated = eval.evaluated();
  // Every plan's bound holds for these plans too: an access link slower than the WAN's
  // cuts (a site's gradient up, its result down) binds them as it binds any plan.
  const PhysicalBound any_plan = physical_bound(platform, gradient_bytes);
  keep_larger(b.cut, any_plan.cut);
  b.cuts_evaluated += any_plan.cuts_evaluated;
  b.binding = b.cut.time_s > b.path.time_s ? b.cut : b.path;
  b.bound_s = b.binding.time_s;
  return b;
}

}  // namespace aggnet
