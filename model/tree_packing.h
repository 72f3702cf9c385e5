// Reduce-then-broadcast forests: which spanning trees of the WAN to run in-network
// reduction on, at what rate, and how much of the gradient each carries. Plain C++
// (GLPK's simplex, Boost.Graph's Kruskal). docs/reduction-trees.md states the model.
#pragma once

#include <vector>

namespace aggnet {

/// The network a reduce-then-broadcast forest runs on. A tree edge carries its tree's
/// rate once in each direction (partial sums up, the result down); every tree's
/// contribution goes up each site's access link and its result comes down it; each input
/// of a sum (a child's partial sum, the site's own contribution) passes the site's FPGA
/// datapath once.
struct TreeNetwork {
  struct Link {
    int a = 0, b = 0;
    double rate_bytes_per_s = 0;  ///< payload, the smaller of its two directions
    double delay_s = 0;           ///< one way
  };
  int sites = 0;
  std::vector<Link> links;
  std::vector<double> access_bytes_per_s;  ///< per site, payload
  std::vector<double> access_delay_s;      ///< per site, one way
  std::vector<double> fpga_bytes_per_s;    ///< per site: input bytes summed per second
  double hop_latency_s = 0;                ///< per tree edge and direction (switch, FPGA pipeline)
};

/// A spanning tree, its root, and the rate every member's stream runs at on it.
struct PackedTree {
  std::vector<int> links;  ///< indices into TreeNetwork::links, sites - 1 of them, sorted
  int root = 0;
  double rate_bytes_per_s = 0;
  double latency_s = 0;  ///< tree_latency_s(links, root)
  double bytes = 0;      ///< payload bytes of the gradient it carries (plan_load_aware_forest)
};

struct LoadAwareForest {
  std::vector<PackedTree> trees;   ///< the trees that carry bytes > 0
  double time_s = 0;               ///< the estimate: every tree's latency_s + bytes / rate
  double packing_bytes_per_s = 0;  ///< the largest total rate of any spanning-tree packing
};

/// Reduce-then-broadcast latency of one byte on the tree `links` rooted at `root`: twice
/// the largest delay from a member's cluster to the root (its access delay, the tree's
/// link delays and a hop latency per edge).
double tree_latency_s(const TreeNetwork& net, const std::vector<int>& links, int root);

/// tree_latency_s for every root of the tree, in O(n) (rerooting). Shape: one per site.
std::vector<double> root_latencies_s(const TreeNetwork& net, const std::vector<int>& links);

/// The shortest-delay spanning tree from `root` (Dijkstra over the links).
std::vector<int> shortest_path_tree(const TreeNetwork& net, int root);

/// The largest total rate of spanning trees the network carries at once (fractional,
/// capacitated, with the access and FPGA rows): column generation over trees, GLPK's
/// simplex for the master problem, a minimum spanning tree under its duals (Kruskal)
/// for the pricing. Returns the trees with a positive rate.
/// Throws std::invalid_argument if the links do not join every site.
std::vector<PackedTree> pack_spanning_trees(const TreeNetwork& net);

/// The forest that gets `gradient_bytes` of every site's gradient summed and back to
/// every site soonest by the estimate latency + bytes / rate: the least T such that some
/// packing carries sum_k rate_k (T - latency_k) >= G, found by bisection on T over the LP
/// "maximise sum_k (T - latency_k) rate_k" with columns from the packing's generation,
/// every root's shortest-path tree and pricing at T. A small gradient rides on the
/// lowest-latency tree alone; a large one spreads over the packing.
LoadAwareForest plan_load_aware_forest(const TreeNetwork& net, double gradient_bytes);

}  // namespace aggnet
