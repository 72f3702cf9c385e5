#include "model/tree_packing.h"

#include <glpk.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/kruskal_min_spanning_tree.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <queue>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

namespace aggnet {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPricingTolerance = 1e-9;
constexpr int kMaxPricingRounds = 200;
constexpr int kBisections = 60;
constexpr int kOuterRounds = 20;  // pricing at the bisection's time, then bisect again
constexpr std::size_t kSptCandidates = 8;

// Per site: (neighbour, link index) over the given links (all links when empty).
std::vector<std::vector<std::pair<int, int>>> adjacency(const TreeNetwork& net,
                                                        const std::vector<int>& links) {
  std::vector<std::vector<std::pair<int, int>>> adj(static_cast<std::size_t>(net.sites));
  auto add = [&](int i) {
    const auto& l = net.links[static_cast<std::size_t>(i)];
    adj[l.a].push_back({l.b, i});
    adj[l.b].push_back({l.a, i});
  };
  if (links.empty())
    for (int i = 0; i < static_cast<int>(net.links.size()); ++i) add(i);
  for (int i : links) add(i);
  return adj;
}

using Adjacency = std::vector<std::vector<std::pair<int, int>>>;

// Dijkstra from `root` over `adj`: each site's delay from the root and the link it is
// reached by (-1 for the root).
struct ShortestPaths {
  std::vector<double> dist;
  std::vector<int> via;

  ShortestPaths(const TreeNetwork& net, const Adjacency& adj, int root)
      : dist(static_cast<std::size_t>(net.sites), kInf),
        via(static_cast<std::size_t>(net.sites), -1) {
    using Item = std::pair<double, int>;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
    dist[root] = 0;
    queue.push({0, root});
    while (!queue.empty()) {
      const auto [d, v] = queue.top();
      queue.pop();
      if (d > dist[v]) continue;
      for (const auto& [w, i] : adj[v]) {
        const double through = d + net.links[i].delay_s + net.hop_latency_s;
        if (through < dist[w]) {
          dist[w] = through;
          via[w] = i;
          queue.push({through, w});
        }
      }
    }
  }

  std::vector<int> tree_links() const {
    std::vector<int> links;
    for (int i : via)
      if (i >= 0) links.push_back(i);
    std::sort(links.begin(), links.end());
    return links;
  }

  // tree_latency_s of the shortest-path tree at its root: its path delays are `dist`,
  // summed in the same order, so the value is the same to the bit.
  double latency_s(const TreeNetwork& net) const {
    double farthest = 0;
    for (std::size_t v = 0; v < dist.size(); ++v)
      farthest = std::max(farthest, dist[v] + net.access_delay_s[v]);
    return 2 * farthest;
  }
};

// The rows of the master problem: one per link, per access link, per FPGA.
struct Rows {
  int links = 0, sites = 0;
  int link(int i) const { return 1 + i; }
  int access(int v) const { return 1 + links + v; }
  int fpga(int v) const { return 1 + links + sites + v; }
  int count() const { return links + 2 * sites; }
};

// A column's coefficients: 1 on each tree link, 1 on every access row, and on each FPGA
// the inputs it sums (children plus its own contribution).
void column_entries(const TreeNetwork& net, const Rows& rows, const PackedTree& tree,
                    std::vector<int>& index, std::vector<double>& value) {
  index.assign(1, 0);  // GLPK's arrays are 1-based
  value.assign(1, 0.0);
  std::vector<int> degree(static_cast<std::size_t>(net.sites), 0);
  for (int i : tree.links) {
    index.push_back(rows.link(i));
    value.push_back(1.0);
    ++degree[net.links[i].a];
    ++degree[net.links[i].b];
  }
  for (int v = 0; v < net.sites; ++v) {
    index.push_back(rows.access(v));
    value.push_back(1.0);
    index.push_back(rows.fpga(v));
    value.push_back(degree[v] + (v == tree.root ? 1.0 : 0.0));
  }
}

struct GlpDeleter {
  void operator()(glp_prob* lp) const { glp_delete_prob(lp); }
};

// The master problem: maximise sum_k objective_k x_k over the trees' rates x_k (in units
// of `scale` bytes/s) within every row's capacity.
class MasterLp {
 public:
  explicit MasterLp(const TreeNetwork& net) : net_(net), lp_(glp_create_prob()) {
    rows_.links = static_cast<int>(net.links.size());
    rows_.sites = net.sites;
    for (const auto& l : net.links) scale_ = std::max(scale_, l.rate_bytes_per_s);
    glp_set_obj_dir(lp_.get(), GLP_MAX);
    glp_add_rows(lp_.get(), rows_.count());
    for (int i = 0; i < rows_.links; ++i) bound(rows_.link(i), net.links[i].rate_bytes_per_s);
    for (int v = 0; v < net.sites; ++v) {
      bound(rows_.access(v), net.access_bytes_per_s[v]);
      bound(rows_.fpga(v), net.fpga_bytes_per_s[v]);
    }
  }

  const std::vector<PackedTree>& trees() const { return trees_; }

  // Adds the tree unless it is there already; true if added.
  bool add(const PackedTree& tree) {
    if (!known_.insert({tree.links, tree.root}).second) return false;
    const int col = glp_add_cols(lp_.get(), 1);
    glp_set_col_bnds(lp_.get(), col, GLP_LO, 0.0, 0.0);
    std::vector<int> index;
    std::vector<double> value;
    column_entries(net_, rows_, tree, index, value);
    glp_set_mat_col(lp_.get(), col, static_cast<int>(index.size()) - 1, index.data(), value.data());
    trees_.push_back(tree);
    return true;
  }

  double solve(const std::function<double(const PackedTree&)>& objective) {
    for (std::size_t k = 0; k < trees_.size(); ++k)
      glp_set_obj_coef(lp_.get(), static_cast<int>(k) + 1, objective(trees_[k]));
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    if (glp_simplex(lp_.get(), &parm) != 0 || glp_get_status(lp_.get()) != GLP_OPT)
      throw std::runtime_error("tree packing: the simplex found no optimum");
    return glp_get_obj_val(lp_.get()) * scale_;
  }

  double rate_bytes_per_s(std::size_t k) const {
    return glp_get_col_prim(lp_.get(), static_cast<int>(k) + 1) * scale_;
  }
  // Duals per unit of rate (1/scale of the row's dual in the scaled problem).
  double dual(int row) const { return glp_get_row_dual(lp_.get(), row) / scale_; }
  const Rows& rows() const { return rows_; }

 private:
  void bound(int row, double capacity_bytes_per_s) {
    glp_set_row_bnds(lp_.get(), row, GLP_UP, 0.0, capacity_bytes_per_s / scale_);
  }

  const TreeNetwork& net_;
  std::unique_ptr<glp_prob, GlpDeleter> lp_;
  Rows rows_;
  double scale_ = 1.0;
  std::vector<PackedTree> trees_;
  std::set<std::pair<std::vector<int>, int>> known_;
};

// Minimum spanning tree under the given link weights (Boost.Graph's Kruskal).
std::vector<int> minimum_spanning_tree(const TreeNetwork& net, const std::vector<double>& weight) {
  struct EdgeData {
    double weight = 0;
    int link = 0;
  };
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                      boost::no_property, EdgeData>;
  Graph g(static_cast<std::size_t>(net.sites));
  for (int i = 0; i < static_cast<int>(net.links.size()); ++i)
    boost::add_edge(net.links[i].a, net.links[i].b, EdgeData{weight[i], i}, g);
  std::vector<boost::graph_traits<Graph>::edge_descriptor> chosen;
  boost::kruskal_minimum_spanning_tree(g, std::back_inserter(chosen),
                                       boost::weight_map(boost::get(&EdgeData::weight, g)));
  std::vector<int> links;
  for (const auto& e : chosen) links.push_back(g[e].link);
  std::sort(links.begin(), links.end());
  return links;
}

// The tree's price under the duals: what one unit of its rate costs in the rows.
struct Pricing {
  std::vector<double> link_weight;  // link dual + both ends' FPGA duals
  double access = 0;                // sum of the access duals
  std::vector<double> fpga;         // per site: a root's extra input
};

Pricing pricing(const TreeNetwork& net, const MasterLp& lp) {
  const Rows& rows = lp.rows();
  Pricing p;
  p.fpga.resize(static_cast<std::size_t>(net.sites));
  for (int v = 0; v < net.sites; ++v) {
    p.access += lp.dual(rows.access(v));
    p.fpga[v] = lp.dual(rows.fpga(v));
  }
  for (int i = 0; i < static_cast<int>(net.links.size()); ++i) {
    const auto& l = net.links[i];
    p.link_weight.push_back(lp.dual(rows.link(i)) + p.fpga[l.a] + p.fpga[l.b]);
  }
  return p;
}

double price(const Pricing& p, const PackedTree& tree) {
  double sum = p.access + p.fpga[tree.root];
  for (int i : tree.links) sum += p.link_weight[i];
  return sum;
}

PackedTree rooted(const TreeNetwork& net, std::vector<int> links, int root) {
  PackedTree t;
  t.links = std::move(links);
  t.root = root;
  t.latency_s = tree_latency_s(net, t.links, root);
  return t;
}

// tree_latency_s for every root at once, in O(n): the farthest member below each site
// (down) and outside its subtree (up), rooted at site 0.
std::vector<double> latencies_of_every_root(const TreeNetwork& net, const std::vector<int>& links) {
  const auto adj = adjacency(net, links);
  const auto n = static_cast<std::size_t>(net.sites);
  std::vector<int> order, parent(n, -1);
  std::vector<double> weight(n, 0), down(n, 0), up(n, -kInf);
  std::vector<char> seen(n, 0);
  order.push_back(0);
  seen[0] = 1;
  for (std::size_t k = 0; k < order.size(); ++k)
    for (const auto& [w, i] : adj[order[k]])
      if (!seen[w]) {
        seen[w] = 1;
        parent[w] = order[k];
        weight[w] = net.links[i].delay_s + net.hop_latency_s;
        order.push_back(w);
      }
  for (std::size_t k = n; k-- > 0;) {
    const int v = order[k];
    down[v] = std::max(down[v], net.access_delay_s[v]);
    if (parent[v] >= 0) down[parent[v]] = std::max(down[parent[v]], weight[v] + down[v]);
  }
  for (const int v : order) {
    double best = std::max(net.access_delay_s[v], up[v]), second = -kInf;
    for (const auto& [w, i] : adj[v]) {
      if (parent[w] != v) continue;
      const double via = weight[w] + down[w];
      if (via > best) {
        second = best;
        best = via;
      } else {
        second = std::max(second, via);
      }
    }
    for (const auto& [w, i] : adj[v])
      if (parent[w] == v) {
        const double via = weight[w] + down[w];
        up[w] = weight[w] + (via == best ? std::max({second, net.access_delay_s[v], up[v]}) : best);
      }
  }
  std::vector<double> latency(n);
  for (std::size_t v = 0; v < n; ++v) latency[v] = 2 * std::max(down[v], up[v]);
  return latency;
}

// The best root of `links` for an objective value(tree) - price(tree). A root changes the
// price only by its FPGA dual, and most are alike (0 where the FPGA has room), so the
// price, summed as price() sums it, is computed once per distinct dual.
PackedTree best_rooted(const TreeNetwork& net, std::vector<int> links, const Pricing& p,
                       const std::function<double(const PackedTree&)>& value) {
  const std::vector<double> latency = latencies_of_every_root(net, links);
  PackedTree t;
  t.links = std::move(links);
  std::unordered_map<std::uint64_t, double> price_by_dual;
  double best_gain = -kInf;
  int best_root = 0;
  for (int r = 0; r < net.sites; ++r) {
    t.root = r;
    t.latency_s = latency[r];
    std::uint64_t dual_bits = 0;
    std::memcpy(&dual_bits, &p.fpga[r], sizeof dual_bits);
    auto it = price_by_dual.find(dual_bits);
    if (it == price_by_dual.end()) it = price_by_dual.emplace(dual_bits, price(p, t)).first;
    const double gain = value(t) - it->second;
    if (gain > best_gain) {
      best_gain = gain;
      best_root = r;
    }
  }
  t.root = best_root;
  t.latency_s = latency[best_root];
  return t;
}

// One pricing step: adds the tree that most improves `value` (per unit of rate) under the
// current duals; false if none does.
bool price_once(const TreeNetwork& net, MasterLp& lp,
                const std::function<double(const PackedTree&)>& value) {
  const Pricing p = pricing(net, lp);
  const PackedTree t = best_rooted(net, minimum_spanning_tree(net, p.link_weight), p, value);
  if (value(t) - price(p, t) <= kPricingTolerance * std::max(1.0, value(t))) return false;
  return lp.add(t);
}

// Column generation: adds priced trees until none improves `value`.
double generate(const TreeNetwork& net, MasterLp& lp,
                const std::function<double(const PackedTree&)>& value) {
  lp.solve(value);
  for (int round = 0; round < kMaxPricingRounds && price_once(net, lp, value); ++round)
    lp.solve(value);
  return lp.solve(value);
}

// The shortest-path trees of the kSptCandidates roots whose own tree has the least latency.
std::vector<PackedTree> quickest_shortest_path_trees(const TreeNetwork& net) {
  const Adjacency adj = adjacency(net, {});
  std::vector<std::pair<double, int>> by_latency;  // (latency, root), compared by latency only
  for (int r = 0; r < net.sites; ++r)
    by_latency.push_back({ShortestPaths(net, adj, r).latency_s(net), r});
  const std::size_t keep = std::min(kSptCandidates, by_latency.size());
  std::partial_sort(by_latency.begin(), by_latency.begin() + static_cast<std::ptrdiff_t>(keep),
                    by_latency.end(),
                    [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<PackedTree> trees;
  for (std::size_t k = 0; k < keep; ++k) {
    const int root = by_latency[k].second;
    trees.push_back(rooted(net, ShortestPaths(net, adj, root).tree_links(), root));
  }
  return trees;
}

void check_network(const TreeNetwork& net) {
  const auto n = static_cast<std::size_t>(net.sites);
  if (net.sites < 2 || net.access_bytes_per_s.size() != n || net.access_delay_s.size() != n ||
      net.fpga_bytes_per_s.size() != n)
    throw std::invalid_argument("tree packing: expected at least 2 sites and one value per site");
  if (shortest_path_tree(net, 0).size() + 1 != n)
    throw std::invalid_argument("tree packing: the links do not join every site");
}

// The packing from the `quickest` shortest-path trees: the trees with a positive rate.
std::vector<PackedTree> pack(const TreeNetwork& net, const std::vector<PackedTree>& quickest) {
  MasterLp lp(net);
  for (const PackedTree& t : quickest) lp.add(t);
  generate(net, lp, [](const PackedTree&) { return 1.0; });
  std::vector<PackedTree> used;
  for (std::size_t k = 0; k < lp.trees().size(); ++k) {
    if (lp.rate_bytes_per_s(k) <= 0) continue;
    used.push_back(lp.trees()[k]);
    used.back().rate_bytes_per_s = lp.rate_bytes_per_s(k);
  }
  return used;
}

}  // namespace

double tree_latency_s(const TreeNetwork& net, const std::vector<int>& links, int root) {
  const auto adj = adjacency(net, links);
  double farthest = 0;
  std::vector<char> seen(static_cast<std::size_t>(net.sites), 0);
  std::vector<std::pair<int, double>> stack{{root, 0.0}};
  seen[root] = 1;
  while (!stack.empty()) {
    const auto [v, d] = stack.back();
    stack.pop_back();
    farthest = std::max(farthest, d + net.access_delay_s[v]);
    for (const auto& [w, i] : adj[v]) {
      if (seen[w]) continue;
      seen[w] = 1;
      stack.push_back({w, d + net.links[i].delay_s + net.hop_latency_s});
    }
  }
  return 2 * farthest;
}

std::vector<double> root_latencies_s(const TreeNetwork& net, const std::vector<int>& links) {
  return latencies_of_every_root(net, links);
}

std::vector<int> shortest_path_tree(const TreeNetwork& net, int root) {
  return ShortestPaths(net, adjacency(net, {}), root).tree_links();
}

std::vector<PackedTree> pack_spanning_trees(const TreeNetwork& net) {
  check_network(net);
  return pack(net, quickest_shortest_path_trees(net));
}

LoadAwareForest plan_load_aware_forest(const TreeNetwork& net, double gradient_bytes) {
  if (!(gradient_bytes > 0)) throw std::invalid_argument("tree packing: expected a gradient");
  check_network(net);
  const std::vector<PackedTree> quickest = quickest_shortest_path_trees(net);
  LoadAwareForest plan;
  MasterLp lp(net);
  double lowest = kInf, highest = 0;
  for (const PackedTree& t : pack(net, quickest)) {
    lp.add(t);
    plan.packing_bytes_per_s += t.rate_bytes_per_s;
    highest = std::max(highest, t.latency_s);
  }
  for (const PackedTree& t : quickest) {
    lowest = std::min(lowest, t.latency_s);
    lp.add(t);
  }
  // By t_high the packing alone delivers G; what the trees deliver grows with the time.
  double t_high = highest + gradient_bytes / plan.packing_bytes_per_s;
  auto by = [](double t) {
    return [t](const PackedTree& k) { return std::max(0.0, t - k.latency_s); };
  };
  for (int outer = 0; outer < kOuterRounds; ++outer) {
    double t_low = lowest;
    for (int i = 0; i < kBisections && t_high - t_low > 1e-12 * t_high; ++i) {
      const double mid = (t_low + t_high) / 2;
      (lp.solve(by(mid)) >= gradient_bytes ? t_high : t_low) = mid;
    }
    if (!price_once(net, lp, by(t_high))) break;
  }
  const double carried = lp.solve(by(t_high));
  for (std::size_t k = 0; k < lp.trees().size(); ++k) {
    PackedTree t = lp.trees()[k];
    t.rate_bytes_per_s = lp.rate_bytes_per_s(k);
    t.bytes = t.rate_bytes_per_s * std::max(0.0, t_high - t.latency_s) * gradient_bytes / carried;
    if (t.bytes <= 1e-9 * gradient_bytes) continue;
    plan.time_s = std::max(plan.time_s, t.latency_s + t.bytes / t.rate_bytes_per_s);
    plan.trees.push_back(std::move(t));
  }
  return plan;
}

}  // namespace aggnet
