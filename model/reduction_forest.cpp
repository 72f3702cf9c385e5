#include "model/reduction_forest.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "common/units.h"
#include "model/arrival_latencies.h"
#include "model/network_math.h"

namespace aggnet {

std::vector<ChunkRange> split_chunks(const std::vector<double>& shares, std::uint64_t chunks) {
  if (shares.empty()) throw std::invalid_argument("split_chunks: no share");
  double total = 0;
  for (double s : shares) {
    if (!(s >= 0)) throw std::invalid_argument("split_chunks: a negative share");
    total += s;
  }
  if (!(total > 0)) throw std::invalid_argument("split_chunks: the shares sum to 0");
  std::vector<std::uint64_t> count(shares.size());
  std::vector<double> remainder(shares.size());
  std::uint64_t given = 0;
  for (std::size_t t = 0; t < shares.size(); ++t) {
    const double exact = shares[t] / total * static_cast<double>(chunks);
    count[t] = std::min<std::uint64_t>(static_cast<std::uint64_t>(std::floor(exact)), chunks);
    remainder[t] = exact - static_cast<double>(count[t]);
    given += count[t];
  }
  std::vector<std::size_t> order(shares.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
  for (std::size_t k = 0; given < chunks; k = (k + 1) % order.size(), ++given) ++count[order[k]];
  std::vector<ChunkRange> ranges;
  std::uint64_t first = 0;
  for (std::uint64_t c : count) {
    ranges.push_back({first, first + c});
    first += c;
  }
  return ranges;
}

std::vector<ChunkRange> forest_chunk_ranges(const std::vector<ReductionTree>& forest,
                                            std::uint64_t chunks) {
  if (!forest.empty() && !forest.front().broadcast)
    return std::vector<ChunkRange>(forest.size(), ChunkRange{0, chunks});
  std::vector<double> shares;
  for (const auto& tree : forest) shares.push_back(tree.share);
  return split_chunks(shares, chunks);
}

std::vector<int> tree_sites(const ReductionTree& tree) {
  std::vector<int> sites;
  for (std::size_t s = 0; s < tree.parent.size(); ++s)
    if (static_cast<int>(s) == tree.root || tree.parent[s] >= 0)
      sites.push_back(static_cast<int>(s));
  return sites;
}

std::vector<std::vector<int>> tree_children(const ReductionTree& tree) {
  std::vector<std::vector<int>> children(tree.parent.size());
  for (std::size_t s = 0; s < tree.parent.size(); ++s)
    if (tree.parent[s] >= 0)
      children[static_cast<std::size_t>(tree.parent[s])].push_back(static_cast<int>(s));
  return children;
}

namespace {

// Hops from s up to the root; -1 when its parents never reach it (a cycle, a bad index).
int depth_of(const ReductionTree& tree, int s) {
  const int n = static_cast<int>(tree.parent.size());
  int depth = 0;
  for (int u = s; u != tree.root; u = tree.parent[static_cast<std::size_t>(u)], ++depth)
    if (u < 0 || u >= n || depth > n) return -1;
  return depth;
}

}  // namespace

// Depths from the root down its children: each site's hops up to the root, as depth_of
// gives them, in O(n); -1 where the parents never reach the root.
std::vector<int> bottom_up_order(const ReductionTree& tree) {
  const std::size_t n = tree.parent.size();
  std::vector<std::vector<int>> children(n);
  for (std::size_t s = 0; s < n; ++s) {
    const int p = tree.parent[s];
    if (p >= 0 && static_cast<std::size_t>(p) < n && static_cast<int>(s) != tree.root)
      children[static_cast<std::size_t>(p)].push_back(static_cast<int>(s));
  }
  std::vector<int> depth(n, -1);
  if (tree.root >= 0 && static_cast<std::size_t>(tree.root) < n) {
    std::vector<int> queue{tree.root};
    depth[static_cast<std::size_t>(tree.root)] = 0;
    for (std::size_t k = 0; k < queue.size(); ++k)
      for (int c : children[static_cast<std::size_t>(queue[k])]) {
        depth[static_cast<std::size_t>(c)] = depth[static_cast<std::size_t>(queue[k])] + 1;
        queue.push_back(c);
      }
  }
  std::vector<int> order = tree_sites(tree);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return depth[static_cast<std::size_t>(a)] > depth[static_cast<std::size_t>(b)];
  });
  return order;
}

std::string tree_error(const Platform& platform, const Routing& routing, const ReductionTree& tree,
                       const std::vector<int>& members) {
  const int n = static_cast<int>(platform.sites.size());
  auto code = [&](int s) { return platform.sites[static_cast<std::size_t>(s)].code; };
  if (static_cast<int>(tree.parent.size()) != n) return "a parent entry for every site";
  if (tree.root < 0 || tree.root >= n) return "a root that is a platform site";
  if (tree.parent[static_cast<std::size_t>(tree.root)] != -1) return "no parent for the root";
  if (!(tree.share > 0 && tree.share <= 1)) return "a share in (0, 1]";
  for (int s = 0; s < n; ++s) {
    const int p = tree.parent[static_cast<std::size_t>(s)];
    if (p < -1 || p >= n) return "parents that are platform sites";
    if (p < 0) continue;
    if (depth_of(tree, s) < 0) return "no cycle (" + code(s) + "'s parents never reach the root)";
    if (routing.link_index(s, p) < 0)
      return "a parent joined to its child by a direct link (" + code(s) + "-" + code(p) +
             " has none)";
    if (routing.next_hop(s, p) != p || routing.next_hop(p, s) != s)
      return "a parent whose route to its child is their direct link (" + code(s) + "-" + code(p) +
             " is routed through another site)";
  }
  for (int m : members)
    if (m != tree.root && tree.parent[static_cast<std::size_t>(m)] < 0)
      return "every member in the tree (" + code(m) + " has no parent)";
  return "";
}

ReductionTree shortest_path_tree(const Routing& routing, int root) {
  ReductionTree tree;
  tree.root = root;
  tree.parent.assign(static_cast<std::size_t>(routing.num_sites()), -1);
  for (int s = 0; s < routing.num_sites(); ++s)
    if (s != root) tree.parent[static_cast<std::size_t>(s)] = routing.next_hop(s, root);
  return tree;
}

namespace {

// Per site of n: whether it is one of `members` (a look-up per site, not a search).
std::vector<char> membership(const std::vector<int>& members, std::size_t n) {
  std::vector<char> is_member(n, 0);
  for (int m : members)
    if (m >= 0 && static_cast<std::size_t>(m) < n) is_member[static_cast<std::size_t>(m)] = 1;
  return is_member;
}

// A member's own chunk from its cluster to its FPGA: access up, its switch.
std::uint64_t own_input_ps(const Platform& platform, int s, std::uint64_t bytes) {
  const auto& site = platform.sites[static_cast<std::size_t>(s)];
  const WanLinkParams up = access_link(site);
  return chunk_serialization_ps(up, bytes) + up.delay_ps + site.sw.latency_ps;
}

// A chunk from u's FPGA (or, for the result, u's switch output) to v's FPGA: u's switch,
// the link u -> v, v's switch.
std::uint64_t hop_ps(const Platform& platform, const Routing& routing, int u, int v,
                     std::uint64_t bytes) {
  const auto& link = platform.links[static_cast<std::size_t>(routing.link_index(u, v))].params;
  return platform.sites[static_cast<std::size_t>(u)].sw.latency_ps +
         chunk_serialization_ps(link, bytes) + link.delay_ps +
         platform.sites[static_cast<std::size_t>(v)].sw.latency_ps;
}

std::uint64_t service_ps(const Platform& platform, int s, std::uint64_t bytes) {
  return serialization_ps(
      bytes, platform.sites[static_cast<std::size_t>(s)].fpga.throughput_bytes_per_s() * 8);
}

std::uint64_t latency_ps(const Platform& platform, int s) {
  return platform.sites[static_cast<std::size_t>(s)].fpga.latency_ps();
}

// The result from s's switch into its cluster: access down.
std::uint64_t down_ps(const Platform& platform, int s, std::uint64_t bytes) {
  const WanLinkParams down = access_link(platform.sites[static_cast<std::size_t>(s)]);
  return chunk_serialization_ps(down, bytes) + down.delay_ps;
}

}  // namespace

TreeChunkTimes tree_chunk_times(const Platform& platform, const Routing& routing,
                                const ReductionTree& tree, const std::vector<int>& members,
                                const std::vector<std::uint64_t>& offset_ps,
                                std::uint64_t chunk_bytes) {
  const std::size_t n = platform.sites.size();
  TreeChunkTimes t;
  for (auto* v : {&t.first_input_ps, &t.last_input_ps, &t.sum_done_ps, &t.result_ps})
    v->assign(n, 0);
  t.first_from.assign(n, -1);
  t.last_from.assign(n, -1);
  const auto children = tree_children(tree);
  const auto is_member = membership(members, n);
  auto order = bottom_up_order(tree);
  std::vector<std::pair<std::uint64_t, int>> inputs;  // arrival, from
  for (int u : order) {
    const auto su = static_cast<std::size_t>(u);
    inputs.clear();
    if (is_member[su])
      inputs.emplace_back(
          (offset_ps.empty() ? 0 : offset_ps[su]) + own_input_ps(platform, u, chunk_bytes), u);
    for (int c : children[su])
      inputs.emplace_back(
          t.sum_done_ps[static_cast<std::size_t>(c)] + hop_ps(platform, routing, c, u, chunk_bytes),
          c);
    std::sort(inputs.begin(), inputs.end());
    std::uint64_t free = 0;
    for (const auto& input : inputs)
      free = std::max(free, input.first) + service_ps(platform, u, chunk_bytes);
    t.sum_done_ps[su] = free + latency_ps(platform, u);
    if (inputs.empty()) continue;
    std::tie(t.first_input_ps[su], t.first_from[su]) = inputs.front();
    std::tie(t.last_input_ps[su], t.last_from[su]) = inputs.back();
  }
  // The result: from the root's FPGA down the tree edges, through each switch once.
  std::reverse(order.begin(), order.end());
  std::vector<std::uint64_t> at_switch(n, 0);  // leaves the switch of the site
  for (int u : order) {
    const auto su = static_cast<std::size_t>(u);
    const int p = tree.parent[su];
    at_switch[su] = p < 0 ? t.sum_done_ps[su] + platform.sites[su].sw.latency_ps
                          : at_switch[static_cast<std::size_t>(p)] +
                                hop_ps(platform, routing, p, u, chunk_bytes) -
                                platform.sites[static_cast<std::size_t>(p)].sw.latency_ps;
    if (is_member[su] && (tree.broadcast || u == tree.root))
      t.result_ps[su] = at_switch[su] + down_ps(platform, u, chunk_bytes);
  }
  return t;
}

void add_tree_work(const Platform& platform, const Routing& routing, const ReductionTree& tree,
                   const std::vector<int>& members, std::uint64_t chunk_bytes, double chunks,
                   TreeWork& work, TreeWork& one_chunk) {
  const auto children = tree_children(tree);
  const auto is_member = membership(members, tree.parent.size());
  auto add = [&](std::tuple<char, int, int> key, double ps) {
    work[key] += chunks * ps;
    one_chunk[key] = std::max(one_chunk[key], ps);
  };
  for (int u : tree_sites(tree)) {
    const auto su = static_cast<std::size_t>(u);
    const bool member = is_member[su];
    const auto& site = platform.sites[su];
    add({'f', u, u}, static_cast<double>(service_ps(platform, u, chunk_bytes)) *
                         static_cast<double>(children[su].size() + (member ? 1 : 0)));
    const double access =
        static_cast<double>(chunk_serialization_ps(access_link(site), chunk_bytes));
    if (member) add({'u', u, u}, access);
    if (member && (tree.broadcast || u == tree.root)) add({'d', u, u}, access);
    const int p = tree.parent[su];
    if (p < 0) continue;
    const auto& link = platform.links[static_cast<std::size_t>(routing.link_index(u, p))].params;
    const double wire = static_cast<double>(chunk_serialization_ps(link, chunk_bytes));
    add({'l', u, p}, wire);
    if (tree.broadcast) add({'l', p, u}, wire);
  }
}

std::uint64_t tree_round_trip_ps(const Platform& platform, const Routing& routing,
                                 const ReductionTree& tree, const std::vector<int>& members,
                                 std::uint64_t chunk_bytes) {
  const auto t = tree_chunk_times(platform, routing, tree, members, {}, chunk_bytes);
  return *std::max_element(t.result_ps.begin(), t.result_ps.end());
}

int least_latency_root(const Platform& platform, const Routing& routing,
                       std::uint64_t chunk_bytes) {
  std::vector<int> everyone(platform.sites.size());
  std::iota(everyone.begin(), everyone.end(), 0);
  int best = 0;
  std::uint64_t best_ps = ~std::uint64_t{0};
  for (int r = 0; r < static_cast<int>(platform.sites.size()); ++r) {
    const std::uint64_t ps = tree_round_trip_ps(platform, routing, shortest_path_tree(routing, r),
                                                everyone, chunk_bytes);
    if (ps < best_ps) best = r, best_ps = ps;
  }
  return best;
}

// Bottom up, the earliest instant every input of a site's sum can be there together (its
// own chunk sent at offset 0, its children's sums at their earliest); top down, each child
// is given the instant its parent's inputs meet, less its sum's time to the parent; a
// member's offset is its instant less its own chunk's latency.
std::vector<std::uint64_t> aligned_tree_offsets(const Platform& platform, const Routing& routing,
                                                const ReductionTree& tree,
                                                const std::vector<int>& members,
                                                std::uint64_t chunk_bytes,
                                                std::vector<std::uint64_t>* first_input_ps) {
  const std::size_t n = platform.sites.size();
  const auto children = tree_children(tree);
  const auto is_member = membership(members, n);
  std::vector<std::uint64_t> meet(n, 0),
      up(n, 0);  // up: from all inputs there to the parent's FPGA
  const std::vector<int> order = bottom_up_order(tree);
  for (int u : order) {
    const auto su = static_cast<std::size_t>(u);
    const bool member = is_member[su];
    std::uint64_t earliest = member ? own_input_ps(platform, u, chunk_bytes) : 0;
    for (int c : children[su])
      earliest =
          std::max(earliest, meet[static_cast<std::size_t>(c)] + up[static_cast<std::size_t>(c)]);
    meet[su] = earliest;
    const int p = tree.parent[su];
    const std::uint64_t inputs = children[su].size() + (member ? 1 : 0);
    if (p >= 0)
      up[su] = inputs * service_ps(platform, u, chunk_bytes) + latency_ps(platform, u) +
               hop_ps(platform, routing, u, p, chunk_bytes);
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const auto su = static_cast<std::size_t>(*it);
    const int p = tree.parent[su];
    if (p >= 0) meet[su] = meet[static_cast<std::size_t>(p)] - up[su];
  }
  std::vector<std::uint64_t> offset(n, 0);
  for (int u : order)
    if (is_member[static_cast<std::size_t>(u)])
      offset[static_cast<std::size_t>(u)] =
          meet[static_cast<std::size_t>(u)] - own_input_ps(platform, u, chunk_bytes);
  if (first_input_ps) *first_input_ps = meet;
  return offset;
}

namespace {

std::uint64_t ready_start_delay_ps(const Platform& platform, const Routing& routing,
                                   const std::vector<int>& members, std::uint64_t bytes) {
  std::uint64_t delay = 0;
  const std::uint64_t queued = members.size() >= 2 ? members.size() - 2 : 0;
  for (int s : members) {
    ArrivalLatencies ready(platform, routing, s, bytes), bare(platform, routing, s, 0);
    for (int d : members) {
      if (s == d) continue;
      const std::uint64_t arrival = ready.to(d);
      const std::uint64_t serialization = arrival - bare.to(d);
      delay = std::max(delay, arrival + down_ps(platform, d, bytes) + queued * serialization);
    }
  }
  return delay;
}

}  // namespace

std::string in_trees_error(const Platform& platform, const std::vector<ReductionTree>& forest,
                           const std::vector<int>& members) {
  const auto in_tree = [](const ReductionTree& t) { return !t.broadcast; };
  const auto count = std::count_if(forest.begin(), forest.end(), in_tree);
  if (count == 0) return "";
  if (count != static_cast<std::ptrdiff_t>(forest.size()))
    return "in-trees only or broadcast trees only, not both";
  std::vector<int> roots;
  for (const auto& t : forest) roots.push_back(t.root);
  std::sort(roots.begin(), roots.end());
  std::vector<int> want = members;
  std::sort(want.begin(), want.end());
  if (roots != want) {
    std::string codes;
    for (int m : want) codes += (codes.empty() ? "" : ",") + platform.sites.at(m).code;
    return "one in-tree rooted at each member (" + codes + ")";
  }
  return "";
}

ForestPlan plan_forest(const Platform& platform, const Routing& routing, const Schedule& schedule,
                       const RunOptions& options) {
  ForestPlan plan;
  if (schedule.forest.empty()) throw std::invalid_argument("reduction forest: no tree");
  // The FPGA's slot keys hold a tree in 12 bits and a step in 20 (FpgaAggregator::key_of).
  if (schedule.forest.size() >= 4096 || options.steps >= (1 << 20))
    throw std::invalid_argument("reduction forest: expected fewer than 4096 trees and 2^20 steps");
  if (!schedule.rounds.empty() && !schedule.rounds[0].groups.empty())
    plan.members = schedule.rounds[0].groups[0].sites;
  if (const std::string wrong = in_trees_error(platform, schedule.forest, plan.members);
      !wrong.empty())
    throw std::invalid_argument("reduction forest: expected " + wrong);
  const std::uint64_t chunk = transaction_bytes(options);
  const std::uint64_t chunks = num_chunks(options.gradient_bytes, chunk);
  plan.ranges = forest_chunk_ranges(schedule.forest, chunks);
  // Offsets count from the agreed start, or with an immediate start from each member's
  // own: members ready together (equal compute) then align without the ready exchange.
  const bool align = options.alignment != SendAlignment::kNone;
  for (std::size_t t = 0; t < schedule.forest.size(); ++t) {
    const ReductionTree& tree = schedule.forest[t];
    if (const std::string wrong = tree_error(platform, routing, tree, plan.members); !wrong.empty())
      throw std::invalid_argument("reduction tree " + std::to_string(t) + ": expected " + wrong);
    const std::uint64_t first_bytes =
        std::min(chunk, options.gradient_bytes -
                            std::min(options.gradient_bytes, plan.ranges[t].first * chunk));
    if (!tree.send_offset_ps.empty()) {
      plan.offset_ps.push_back(tree.send_offset_ps);
    } else if (align && plan.ranges[t].size() > 0) {
      plan.offset_ps.push_back(
          aligned_tree_offsets(platform, routing, tree, plan.members, first_bytes));
    } else {
      plan.offset_ps.emplace_back(platform.sites.size(), 0);
    }
  }
  plan.start_delay_ps = ready_start_delay_ps(platform, routing, plan.members, options.credit_bytes);
  return plan;
}

std::vector<int> tree_inputs(const ReductionTree& tree, const std::vector<int>& members) {
  const auto children = tree_children(tree);
  const auto is_member = membership(members, tree.parent.size());
  std::vector<int> inputs(tree.parent.size(), 0);
  for (int u : tree_sites(tree)) {
    const auto su = static_cast<std::size_t>(u);
    inputs[su] = static_cast<int>(children[su].size()) + (is_member[su] ? 1 : 0);
  }
  return inputs;
}

std::vector<double> tree_chunk_spacing_ps(const Platform& platform, const Routing& routing,
                                          const std::vector<ReductionTree>& forest,
                                          const ForestPlan& plan, std::uint64_t chunk_bytes) {
  TreeWork all, one_chunk;
  std::vector<TreeWork> own(forest.size());
  for (std::size_t t = 0; t < forest.size(); ++t) {
    const auto n = static_cast<double>(plan.ranges[t].size());
    add_tree_work(platform, routing, forest[t], plan.members, chunk_bytes, n, all, one_chunk);
    TreeWork ignored;
    add_tree_work(platform, routing, forest[t], plan.members, chunk_bytes, 1, own[t], ignored);
  }
  std::vector<double> spacing(forest.size(), 0);
  for (std::size_t t = 0; t < forest.size(); ++t) {
    const auto n = static_cast<double>(plan.ranges[t].size());
    if (n == 0) continue;
    spacing[t] = static_cast<double>(forest[t].pacing_interval_ps);
    for (const auto& [resource, ps] : own[t]) spacing[t] = std::max(spacing[t], all[resource] / n);
  }
  return spacing;
}

std::vector<double> tree_access_bytes_per_s(const Platform& platform, const Routing& routing,
                                            const std::vector<ReductionTree>& forest,
                                            const ForestPlan& plan, std::uint64_t chunk_bytes) {
  const auto spacing = tree_chunk_spacing_ps(platform, routing, forest, plan, chunk_bytes);
  std::vector<double> access(platform.sites.size(), 0.0);
  for (std::size_t t = 0; t < forest.size(); ++t) {
    if (spacing[t] <= 0) continue;
    const double rate = static_cast<double>(chunk_bytes) / spacing[t] * 1e12;
    const auto inputs = tree_inputs(forest[t], plan.members);
    for (std::size_t u = 0; u < access.size(); ++u) access[u] += 2.0 * inputs[u] * rate;
  }
  return access;
}

}  // namespace aggnet
