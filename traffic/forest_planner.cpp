#include "traffic/forest_planner.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "common/config_error.h"
#include "model/network_math.h"
#include "model/platform.h"
#include "model/reduction_forest.h"
#include "model/routing.h"

namespace aggnet {

namespace {

double seconds(std::uint64_t ps) { return static_cast<double>(ps) * 1e-12; }

// The tree's parent of every site, found from its root over the tree's links.
std::vector<int> parents(const TreeNetwork& net, const PackedTree& tree) {
  std::vector<int> parent(static_cast<std::size_t>(net.sites), -1);
  std::vector<char> seen(static_cast<std::size_t>(net.sites), 0);
  std::vector<int> stack{tree.root};
  seen[tree.root] = 1;
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    for (int i : tree.links) {
      const auto& l = net.links[i];
      const int w = l.a == v ? l.b : l.b == v ? l.a : -1;
      if (w < 0 || seen[w]) continue;
      seen[w] = 1;
      parent[w] = v;
      stack.push_back(w);
    }
  }
  return parent;
}

}  // namespace

TreeNetwork tree_network(const Platform& platform, const Routing& routing,
                         std::uint64_t chunk_bytes) {
  TreeNetwork net;
  net.sites = static_cast<int>(platform.sites.size());
  std::uint64_t hop_ps = 0;
  for (int i = 0; i < static_cast<int>(platform.links.size()); ++i) {
    const LinkSpec& l = platform.links[i];
    if (routing.link_index(l.a, l.b) != i || routing.path(l.a, l.b).size() != 2) continue;
    net.links.push_back(
        {l.a, l.b, payload_rate(l.params, chunk_bytes), seconds(l.params.delay_ps)});
    hop_ps = std::max(hop_ps, chunk_serialization_ps(l.params, chunk_bytes));
  }
  std::uint64_t site_ps = 0;
  for (const Site& s : platform.sites) {
    const WanLinkParams access = access_link(s);
    net.access_bytes_per_s.push_back(payload_rate(access, chunk_bytes));
    net.access_delay_s.push_back(seconds(access.delay_ps));
    net.fpga_bytes_per_s.push_back(static_cast<double>(s.fpga.throughput_bytes_per_s()));
    site_ps = std::max(site_ps, s.sw.latency_ps + s.fpga.latency_ps());
  }
  net.hop_latency_s = seconds(hop_ps + site_ps);
  return net;
}

Schedule forest_schedule(const Platform& platform, const TreeNetwork& net,
                         const LoadAwareForest& plan, std::uint64_t chunk_bytes,
                         const std::string& name) {
  Schedule s;
  s.name = name;
  s.collective = Collective::kReductionTree;
  Group everyone;
  for (int i = 0; i < static_cast<int>(platform.sites.size()); ++i) everyone.sites.push_back(i);
  s.rounds.push_back(Round{{everyone}});
  double total = 0;
  for (const PackedTree& t : plan.trees) total += t.bytes;
  for (const PackedTree& t : plan.trees) {
    ReductionTree tree;
    tree.root = t.root;
    tree.parent = parents(net, t);
    tree.share = t.bytes / total;
    tree.pacing_interval_ps = static_cast<std::uint64_t>(
        std::ceil(static_cast<double>(chunk_bytes) / t.rate_bytes_per_s * 1e12));
    s.forest.push_back(std::move(tree));
  }
  return s;
}

Schedule reduction_forest_schedule(const Platform& platform, std::uint64_t gradient_bytes,
                                   std::uint64_t chunk_bytes) {
  const Routing routing(platform);
  const TreeNetwork net = tree_network(platform, routing, chunk_bytes);
  try {
    const LoadAwareForest plan = plan_load_aware_forest(net, static_cast<double>(gradient_bytes));
    return forest_schedule(platform, net, plan, chunk_bytes, "reduction-forest");
  } catch (const std::invalid_argument& e) {
    throw ConfigError(platform.file, 0, "reduction-forest", e.what());
  }
}

Schedule reduction_in_trees_schedule(const Platform& platform, std::uint64_t chunk_bytes) {
  const Routing routing(platform);
  Schedule s;
  s.name = "reduction-in-trees";
  s.collective = Collective::kReductionTree;
  Group everyone;
  for (int i = 0; i < static_cast<int>(platform.sites.size()); ++i) everyone.sites.push_back(i);
  TreeWork work, one_chunk;
  for (int root : everyone.sites) {
    ReductionTree tree = shortest_path_tree(routing, root);
    tree.broadcast = false;
    add_tree_work(platform, routing, tree, everyone.sites, chunk_bytes, 1.0, work, one_chunk);
    s.forest.push_back(std::move(tree));
  }
  double busiest_ps = 0;
  for (const auto& [resource, ps] : work) busiest_ps = std::max(busiest_ps, ps);
  for (ReductionTree& tree : s.forest)
    tree.pacing_interval_ps = static_cast<std::uint64_t>(std::ceil(busiest_ps));
  s.rounds.push_back(Round{{std::move(everyone)}});
  return s;
}

}  // namespace aggnet
