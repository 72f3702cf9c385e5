#include "traffic/closed_form.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <stdexcept>
#include <tuple>

#include "common/units.h"
#include "model/network_math.h"
#include "model/reduction_forest.h"

namespace aggnet {

namespace {
constexpr double kPs = 1e-12;

int mod(int a, int n) { return ((a % n) + n) % n; }

// The WAN links (as directed pairs) of the path s -> d.
std::vector<std::pair<int, int>> wan_hops(const Routing& routing, int s, int d) {
  const auto path = routing.path(s, d);
  std::vector<std::pair<int, int>> hops;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) hops.emplace_back(path[i], path[i + 1]);
  return hops;
}
}  // namespace

std::vector<WanLinkParams> route_links(const Platform& platform, const Routing& routing, int s,
                                       int d) {
  std::vector<WanLinkParams> links{access_link(platform.sites[s])};
  for (const auto& [u, v] : wan_hops(routing, s, d))
    links.push_back(platform.links[routing.link_index(u, v)].params);
  links.push_back(access_link(platform.sites[d]));
  return links;
}

std::uint64_t route_switch_latency_ps(const Platform& platform, const Routing& routing, int s,
                                      int d) {
  std::uint64_t t = platform.sites[d].sw.latency_ps;
  for (const auto& hop : wan_hops(routing, s, d)) t += platform.sites[hop.first].sw.latency_ps;
  return t;
}

std::uint64_t message_wire_bytes(const WanLinkParams& link, std::uint64_t bytes,
                                 std::uint64_t chunk_bytes) {
  std::uint64_t total = 0;
  for (std::uint64_t off = 0; off < bytes; off += chunk_bytes)
    total += wire_bytes(std::min(chunk_bytes, bytes - off), link.mtu_bytes, link.header_bytes);
  return total;
}

std::uint64_t store_and_forward_ps(const Platform& platform, const Routing& routing, int s, int d,
                                   std::uint64_t bytes, std::uint64_t chunk_bytes, int messages) {
  if (chunk_bytes == 0 || bytes % chunk_bytes != 0)
    throw std::invalid_argument("store_and_forward_ps: bytes must be a multiple of the chunk");
  const std::uint64_t chunks = bytes / chunk_bytes * static_cast<std::uint64_t>(messages);
  std::uint64_t t = route_switch_latency_ps(platform, routing, s, d), slowest = 0;
  for (const auto& link : route_links(platform, routing, s, d)) {
    const std::uint64_t ser = chunk_serialization_ps(link, chunk_bytes);
    t += ser + link.delay_ps;
    slowest = std::max(slowest, ser);
  }
  return t + (chunks - 1) * slowest;
}

double flow_level_s(const Platform& platform, const Routing& routing, int s, int d,
                    std::uint64_t bytes, std::uint64_t chunk_bytes, int messages) {
  double latency = static_cast<double>(route_switch_latency_ps(platform, routing, s, d)) * kPs;
  double slowest_bps = 1e300;
  const auto links = route_links(platform, routing, s, d);
  for (const auto& link : links) {
    latency += static_cast<double>(link.delay_ps) * kPs;
    slowest_bps = std::min(slowest_bps, static_cast<double>(link.bandwidth_bps));
  }
  const double wire = static_cast<double>(message_wire_bytes(links.front(), bytes, chunk_bytes));
  return latency + messages * wire * 8 / slowest_bps;
}

double packet_level_s(const Platform& platform, const Routing& routing, int s, int d,
                      std::uint64_t bytes, std::uint64_t chunk_bytes, int messages) {
  const auto links = route_links(platform, routing, s, d);
  const std::uint64_t per = links.front().mtu_bytes - links.front().header_bytes;
  const std::uint64_t first = std::min(per, std::min(bytes, chunk_bytes));
  const std::uint64_t last_chunk = bytes - (bytes - 1) / chunk_bytes * chunk_bytes;
  const std::uint64_t last = last_chunk - (last_chunk - 1) / per * per;
  std::size_t b = 0;
  for (std::size_t k = 1; k < links.size(); ++k)
    if (links[k].bandwidth_bps < links[b].bandwidth_bps) b = k;
  std::uint64_t t = route_switch_latency_ps(platform, routing, s, d);
  for (std::size_t k = 0; k < links.size(); ++k) {
    t += links[k].delay_ps;
    if (k < b) t += chunk_serialization_ps(links[k], first);
    if (k > b) t += chunk_serialization_ps(links[k], last);
  }
  const double wire = static_cast<double>(message_wire_bytes(links[b], bytes, chunk_bytes));
  return static_cast<double>(t) * kPs +
         messages * wire * 8 / static_cast<double>(links[b].bandwidth_bps);
}

double ring_time(const std::vector<double>& edge_latency, int begin, int end, RingStepRule rule) {
  const int n = static_cast<int>(edge_latency.size());
  std::vector<double> start(n, 0.0), arrival(n, 0.0), done(n, 0.0);
  for (int r = begin; r < end; ++r) {
    for (int i = 0; i < n; ++i) arrival[i] = start[mod(i - 1, n)] + edge_latency[mod(i - 1, n)];
    const double all = *std::max_element(arrival.begin(), arrival.end());
    for (int i = 0; i < n; ++i) {
      if (rule == RingStepRule::kReceive) done[i] = arrival[i];
      if (rule == RingStepRule::kSendRecv) done[i] = std::max(arrival[i], arrival[mod(i + 1, n)]);
      if (rule == RingStepRule::kBarrier) done[i] = all;
    }
    start = done;
  }
  return *std::max_element(done.begin(), done.end());
}

namespace {

ClosedForm point_to_point(const Platform& platform, const Routing& routing,
                          const Schedule& schedule, std::uint64_t g, std::uint64_t c) {
  ClosedForm f;
  const auto& groups = schedule.rounds.at(0).groups;
  if (schedule.rounds.size() != 1 || groups.size() != 1) {
    f.why = "concurrent pairs share links: no closed form for the per-pair times";
    return f;
  }
  const int s = groups[0].sites[0], d = groups[0].sites[1];
  const int m = schedule.messages;
  f.applicable = true;
  f.store_and_forward_s =
      static_cast<double>(store_and_forward_ps(platform, routing, s, d, g, c, m)) * kPs;
  f.flow_level_s = flow_level_s(platform, routing, s, d, g, c, m);
  f.packet_level_s = packet_level_s(platform, routing, s, d, g, c, m);
  const auto up = access_link(platform.sites[s]);
  f.transmit_complete_s = static_cast<double>(chunk_serialization_ps(up, c)) * kPs *
                          static_cast<double>(g / c * static_cast<std::uint64_t>(m));
  f.formula =
      "sum_k (ser_k(c) + prop_k) + (M N - 1) max_k ser_k(c)  vs  sum_k prop_k + M W / min_k B_k";
  return f;
}

// Whether the ring's edges (each a path) share a directed WAN link: then steps contend
// and the per-edge latencies no longer add up.
bool edges_share_links(const Routing& routing, const std::vector<int>& order) {
  std::set<std::pair<int, int>> used;
  const int n = static_cast<int>(order.size());
  for (int i = 0; i < n; ++i) {
    for (const auto& hop : wan_hops(routing, order[i], order[mod(i + 1, n)]))
      if (!used.insert(hop).second) return true;
  }
  return false;
}

ClosedForm ring_family(const Platform& platform, const Routing& routing, const Schedule& schedule,
                       std::uint64_t g, std::uint64_t c) {
  ClosedForm f;
  const auto& order = schedule.rounds.at(0).groups.at(0).sites;
  const int n = static_cast<int>(order.size());
  if (edges_share_links(routing, order)) {
    f.why = "two ring edges share a WAN link";
    return f;
  }
  const auto offsets = ring_segment_offsets(g, static_cast<std::uint64_t>(n));
  const std::uint64_t segment = offsets[1] - offsets[0];
  if (offsets.back() != segment * static_cast<std::uint64_t>(n) || segment % c != 0) {
    f.why = "G is not a multiple of n x chunk";
    return f;
  }
  std::vector<double> sf(n), flow(n), packet(n);
  for (int i = 0; i < n; ++i) {
    const int s = order[i], d = order[mod(i + 1, n)];
    sf[i] = static_cast<double>(store_and_forward_ps(platform, routing, s, d, segment, c)) * kPs;
    flow[i] = flow_level_s(platform, routing, s, d, segment, c);
    packet[i] = packet_level_s(platform, routing, s, d, segment, c);
  }
  int begin = 0, end = 2 * (n - 1);
  if (schedule.collective == Collective::kReduceScatter) end = n - 1;
  if (schedule.collective == Collective::kAllGather) begin = n - 1;
  f.applicable = true;
  f.store_and_forward_s = ring_time(sf, begin, end, schedule.ring_step);
  f.flow_level_s = ring_time(flow, begin, end, schedule.ring_step);
  f.packet_level_s = ring_time(packet, begin, end, schedule.ring_step);
  f.formula = "ring recurrence over edge latencies L_i (store-and-forward / flow-level)";
  return f;
}

// --- Contended phases: every flow of a phase starts at 0; a link's work is conserved ---

// A directed resource: WAN link (u, v), access up (s, -1) or access down (-1, d).
using LinkKey = std::pair<int, int>;

struct RouteHop {
  LinkKey key;
  WanLinkParams params;
  std::uint64_t switch_ps = 0;  // switch latency paid before this link
};

std::vector<RouteHop> hops_of(const Platform& platform, const Routing& routing, int s, int d) {
  std::vector<RouteHop> hops{{{s, -1}, access_link(platform.sites[s]), 0}};
  for (const auto& [u, v] : wan_hops(routing, s, d))
    hops.push_back(
        {{u, v}, platform.links[routing.link_index(u, v)].params, platform.sites[u].sw.latency_ps});
  hops.push_back({{-1, d}, access_link(platform.sites[d]), platform.sites[d].sw.latency_ps});
  return hops;
}

// Flow-level: a flow pays its route latency, then shares bandwidth. On each link the
// flows through it keep it busy from the first one's end of latency until all their
// bytes are through (if it never idles; otherwise the lone flows' times bound it):
//   T = max( max_f lat_f + W_f / min B_f,  max_link min_f lat_f + sum_f W_f / B_link ).
double phase_flow_level(const Platform& platform, const Routing& routing,
                        const std::vector<Flow>& flows, std::uint64_t chunk) {
  std::map<LinkKey, std::pair<double, double>> load;  // link -> (min latency, seconds of work)
  double t = 0;
  for (const auto& f : flows) {
    const auto hops = hops_of(platform, routing, f.s, f.d);
    double lat = 0, slowest = 1e300;
    for (const auto& h : hops) {
      lat += static_cast<double>(h.params.delay_ps + h.switch_ps) * kPs;
      slowest = std::min(slowest, static_cast<double>(h.params.bandwidth_bps));
    }
    const double wire_bits =
        8.0 * static_cast<double>(message_wire_bytes(hops[0].params, f.bytes, chunk));
    t = std::max(t, lat + wire_bits / slowest);
    for (const auto& h : hops) {
      auto [it, fresh] = load.try_emplace(h.key, lat, 0.0);
      it->second.first = std::min(it->second.first, lat);
      it->second.second += wire_bits / static_cast<double>(h.params.bandwidth_bps);
    }
  }
  for (const auto& [key, l] : load) t = std::max(t, l.first + l.second);
  return t;
}

// Store-and-forward per chunk: a link is busy from the first chunk's arrival (uncontended
// upstream) for all chunks of its flows; the last chunk out belongs to the flow that
// arrives last, which here also has the longest way on:
//   T = max over links of first arrival + sum_f N_f ser(c) + max_f (downstream of f).
double phase_store_and_forward(const Platform& platform, const Routing& routing,
                               const std::vector<Flow>& flows, std::uint64_t chunk,
                               std::uint64_t& slack_ps) {
  struct Load {
    std::uint64_t first = UINT64_MAX, chunks = 0, ser = 0, downstream = 0;
  };
  std::map<LinkKey, Load> load;
  for (const auto& f : flows) {
    const auto hops = hops_of(platform, routing, f.s, f.d);
    std::vector<std::uint64_t> cost;  // per hop: switch + serialization + propagation
    for (const auto& h : hops)
      cost.push_back(h.switch_ps + chunk_serialization_ps(h.params, chunk) + h.params.delay_ps);
    std::uint64_t before = 0;
    for (std::size_t k = 0; k < hops.size(); ++k) {
      auto& l = load[hops[k].key];
      l.ser = chunk_serialization_ps(hops[k].params, chunk);
      l.first = std::min(l.first, before + hops[k].switch_ps);
      l.chunks += f.bytes / chunk;
      std::uint64_t after = hops[k].params.delay_ps;
      for (std::size_t j = k + 1; j < hops.size(); ++j) after += cost[j];
      l.downstream = std::max(l.downstream, after);
      before += cost[k];
    }
  }
  std::uint64_t t = 0;
  for (const auto& [key, l] : load) {
    t = std::max(t, l.first + l.chunks * l.ser + l.downstream);
    slack_ps = std::max(slack_ps, l.ser);
  }
  for (const auto& f : flows)
    t = std::max(t, store_and_forward_ps(platform, routing, f.s, f.d, f.bytes, chunk));
  return static_cast<double>(t) * kPs;
}

ClosedForm contended(const Platform& platform, const Routing& routing,
                     const std::vector<std::vector<Flow>>& phases, std::uint64_t chunk) {
  ClosedForm f;
  f.applicable = true;
  for (const auto& phase : phases) {
    std::uint64_t slack_ps = 0;
    f.store_and_forward_s += phase_store_and_forward(platform, routing, phase, chunk, slack_ps);
    f.tolerance_s += static_cast<double>(slack_ps * phase.size()) * kPs;
    f.flow_level_s += phase_flow_level(platform, routing, phase, chunk);
  }
  f.formula =
      "per phase, max over links: first arrival + sum N ser(c) + downstream  vs  "
      "min latency + sum W / B";
  return f;
}

ClosedForm unicast_all_to_all(const Platform& platform, const Routing& routing,
                              const Schedule& schedule, std::uint64_t g, std::uint64_t c) {
  ClosedForm f;
  if (g % c != 0) {
    f.why = "G is not a multiple of the chunk";
    return f;
  }
  const auto flows = unicast_all_to_all_flows(schedule.rounds.at(0).groups.at(0).sites, g);
  f.applicable = true;
  f.store_and_forward_s =
      static_cast<double>(fifo_recurrence_ps(platform, routing, flows, c)) * kPs;
  f.flow_level_s = weighted_max_min_s(platform, routing, flows, c);
  f.formula =
      "per-link FIFO (Lindley) recurrence over every chunk  vs  latency, then weighted "
      "max-min sharing (weight 1 / latency)";
  return f;
}

}  // namespace

std::vector<Flow> unicast_all_to_all_flows(const std::vector<int>& members,
                                           std::uint64_t gradient_bytes) {
  const int n = static_cast<int>(members.size());
  std::vector<Flow> flows;
  for (int i = 0; i < n; ++i)
    for (int k = 1; k < n; ++k)
      flows.push_back({members[i], members[mod(i + k, n)], gradient_bytes});
  return flows;
}

std::uint64_t fifo_recurrence_ps(const Platform& platform, const Routing& routing,
                                 const std::vector<Flow>& flows, std::uint64_t chunk_bytes) {
  std::vector<std::vector<RouteHop>> routes;
  for (const auto& f : flows) routes.push_back(hops_of(platform, routing, f.s, f.d));
  // Chunks in emission order: per sender, chunk i of each of its flows in turn; the
  // access link up serves them in that order (all handed over at 0).
  using Event = std::tuple<std::uint64_t, std::uint64_t, std::size_t, std::size_t>;  // arrival,
                                                                                     // order,
                                                                                     // flow,
                                                                                     // hop
  std::priority_queue<Event, std::vector<Event>, std::greater<>> ready;
  std::uint64_t chunks_max = 0, order = 0;
  for (const auto& f : flows) chunks_max = std::max(chunks_max, f.bytes / chunk_bytes);
  for (std::uint64_t i = 0; i < chunks_max; ++i)
    for (std::size_t k = 0; k < flows.size(); ++k)
      if (i < flows[k].bytes / chunk_bytes) ready.emplace(0, order++, k, 0);
  std::map<LinkKey, std::uint64_t> free_at;
  std::uint64_t last = 0;
  while (!ready.empty()) {
    const auto [arrival, seq, k, h] = ready.top();
    ready.pop();
    const RouteHop& hop = routes[k][h];
    std::uint64_t& link_free = free_at[hop.key];
    link_free = std::max(arrival, link_free) + chunk_serialization_ps(hop.params, chunk_bytes);
    const std::uint64_t at_end = link_free + hop.params.delay_ps;
    if (h + 1 == routes[k].size()) {
      last = std::max(last, at_end);
    } else {
      ready.emplace(at_end + routes[k][h + 1].switch_ps, seq, k, h + 1);
    }
  }
  return last;
}

namespace {
// One interval of weighted max-min (progressive filling): the rate of each active flow.
std::vector<double> max_min_rates(const std::vector<std::vector<LinkKey>>& links_of,
                                  const std::map<LinkKey, double>& capacity,
                                  const std::vector<double>& weight,
                                  const std::vector<char>& active) {
  std::vector<double> rate(links_of.size(), 0.0);
  std::vector<char> frozen(links_of.size(), 0);
  std::map<LinkKey, double> left = capacity;
  for (;;) {
    std::map<LinkKey, double> weights;
    for (std::size_t f = 0; f < links_of.size(); ++f)
      if (active[f] && !frozen[f])
        for (const auto& l : links_of[f]) weights[l] += weight[f];
    if (weights.empty()) return rate;
    LinkKey bottleneck = weights.begin()->first;
    double level = 1e300;
    for (const auto& [l, w] : weights)
      if (left[l] / w < level) level = left[l] / w, bottleneck = l;
    for (std::size_t f = 0; f < links_of.size(); ++f) {
      if (!active[f] || frozen[f] ||
          std::find(links_of[f].begin(), links_of[f].end(), bottleneck) == links_of[f].end())
        continue;
      frozen[f] = 1;
      rate[f] = level * weight[f];
      for (const auto& l : links_of[f]) left[l] -= rate[f];
    }
  }
}
}  // namespace

double weighted_max_min_s(const Platform& platform, const Routing& routing,
                          const std::vector<Flow>& flows, std::uint64_t chunk_bytes) {
  const std::size_t m = flows.size();
  std::vector<std::vector<LinkKey>> links_of(m);
  std::map<LinkKey, double> capacity;  // bytes/s
  std::vector<double> latency(m, 0.0), weight(m), left(m);
  for (std::size_t f = 0; f < m; ++f) {
    const auto hops = hops_of(platform, routing, flows[f].s, flows[f].d);
    for (const auto& h : hops) {
      links_of[f].push_back(h.key);
      capacity[h.key] = static_cast<double>(h.params.bandwidth_bps) / 8.0;
      latency[f] += static_cast<double>(h.params.delay_ps + h.switch_ps) * kPs;
    }
    weight[f] = 1.0 / latency[f];
    left[f] = static_cast<double>(message_wire_bytes(hops[0].params, flows[f].bytes, chunk_bytes));
  }
  double now = 0, end = 0;
  std::vector<char> active(m, 0), done(m, 0);
  for (std::size_t finished = 0; finished < m;) {
    for (std::size_t f = 0; f < m; ++f) active[f] = !done[f] && latency[f] <= now;
    const auto rate = max_min_rates(links_of, capacity, weight, active);
    double next = 1e300;
    for (std::size_t f = 0; f < m; ++f) {
      if (!done[f] && !active[f]) next = std::min(next, latency[f]);
      if (active[f] && rate[f] > 0) next = std::min(next, now + left[f] / rate[f]);
    }
    for (std::size_t f = 0; f < m; ++f) {
      if (!active[f]) continue;
      left[f] -= rate[f] * (next - now);
      if (left[f] <= 1e-9 * static_cast<double>(chunk_bytes)) done[f] = 1, ++finished, end = next;
    }
    now = next;
  }
  return end;
}

double reduction_tree_time(const Platform& platform, const Routing& routing,
                           const Schedule& schedule, const RunOptions& options) {
  const ForestPlan plan = plan_forest(platform, routing, schedule, options);
  const std::uint64_t chunk = transaction_bytes(options);
  // Each tree is done after its first chunk's latency and its paced chunks; the busiest
  // resource, once the earliest first chunk reaches it, after all its work.
  double trees_done_ps = 0, first_latency_ps = -1;
  TreeWork work, one_chunk;
  for (std::size_t t = 0; t < schedule.forest.size(); ++t) {
    const ReductionTree& tree = schedule.forest[t];
    const std::uint64_t n = plan.ranges[t].size();
    if (n == 0) continue;
    const auto times =
        tree_chunk_times(platform, routing, tree, plan.members, plan.offset_ps[t], chunk);
    const double latency_ps =
        static_cast<double>(*std::max_element(times.result_ps.begin(), times.result_ps.end()));
    const double pacing_ps =
        static_cast<double>(n - 1) * static_cast<double>(tree.pacing_interval_ps);
    trees_done_ps = std::max(trees_done_ps, latency_ps + pacing_ps);
    first_latency_ps = first_latency_ps < 0 ? latency_ps : std::min(first_latency_ps, latency_ps);
    add_tree_work(platform, routing, tree, plan.members, chunk, static_cast<double>(n), work,
                  one_chunk);
  }
  double busiest_ps = 0;
  for (const auto& [key, ps] : work) busiest_ps = std::max(busiest_ps, ps - one_chunk[key]);
  const double start_ps = ready_exchange(options, Collective::kReductionTree)
                              ? static_cast<double>(plan.start_delay_ps)
                              : 0;
  return (start_ps + std::max(trees_done_ps, first_latency_ps + busiest_ps)) * 1e-12;
}

ClosedForm closed_form(const Platform& platform, const Schedule& schedule,
                       std::uint64_t gradient_bytes, std::uint64_t chunk_bytes) {
  if (chunk_bytes == 0 || gradient_bytes % chunk_bytes != 0) {
    ClosedForm f;
    f.why = "G is not a multiple of the chunk";
    return f;
  }
  const Routing routing(platform);
  if (schedule.collective == Collective::kPointToPoint && schedule.rounds.at(0).groups.size() > 1) {
    std::vector<Flow> flows;
    for (const auto& g : schedule.rounds.at(0).groups)
      for (int m = 0; m < schedule.messages; ++m)
        flows.push_back({g.sites[0], g.sites[1], gradient_bytes});
    return contended(platform, routing, {flows}, chunk_bytes);
  }
  if (schedule.collective == Collective::kParameterServer) {
    const auto& group = schedule.rounds.at(0).groups.at(0).sites;
    std::vector<Flow> gather, scatter;
    for (std::size_t i = 1; i < group.size(); ++i) {
      gather.push_back({group[i], group[0], gradient_bytes});
      scatter.push_back({group[0], group[i], gradient_bytes});
    }
    return contended(platform, routing, {gather, scatter}, chunk_bytes);
  }
  if (schedule.collective == Collective::kPointToPoint)
    return point_to_point(platform, routing, schedule, gradient_bytes, chunk_bytes);
  if (schedule.collective == Collective::kUnicastAllToAll)
    return unicast_all_to_all(platform, routing, schedule, gradient_bytes, chunk_bytes);
  if (is_ring_collective(schedule.collective))
    return ring_family(platform, routing, schedule, gradient_bytes, chunk_bytes);
  if (schedule.collective == Collective::kReductionTree) {
    RunOptions o;
    o.gradient_bytes = gradient_bytes;
    o.chunk_bytes = chunk_bytes;
    o.aligned_start = false;
    ClosedForm f;
    f.applicable = true;
    f.store_and_forward_s = reduction_tree_time(platform, routing, schedule, o);
    f.formula = "reduction forest: first chunk up and down + busiest resource's other chunks";
    return f;
  }
  ClosedForm f;
  f.why = "no closed form for " + std::string(schedule.collective == Collective::kParameterServer
                                                  ? "the parameter server (flows contend)"
                                                  : "this collective");
  return f;
}

}  // namespace aggnet
