#include "sim/builder.h"

#include <algorithm>

namespace aggnet {

namespace {
std::string link_name(const Platform& p, int from, int to) {
  return "link_" + p.sites[from].code + "_" + p.sites[to].code;
}
}  // namespace

NetworkSystem::NetworkSystem(sc_core::sc_module_name name, const Platform& platform,
                             const Schedule& schedule, const RunOptions& options)
    : sc_module(name),
      platform_(platform),
      schedule_(schedule),
      options_(options),
      routing_(platform_),
      steps_(options.steps > 0 ? options.steps
                               : static_cast<int>(std::max<std::size_t>(schedule.period(), 1))),
      port_to_(platform_.sites.size()),
      local_port_(platform_.sites.size(), -1) {
  if (schedule_.collective == Collective::kGroupAverage) {
    for (const auto& round : schedule_.rounds)
      plans_.push_back(plan_round(platform_, routing_, round, options_));
  }
  build_sites();
  build_links();
  install_routes();
}

ComputeClusterConfig NetworkSystem::cluster_config(int site) const {
  ComputeClusterConfig c;
  c.site = site;
  c.params = platform_.sites[site].cluster;
  c.gradient_bytes = options_.gradient_bytes;
  c.chunk_bytes = options_.chunk_bytes;
  c.steps = steps_;
  c.flow_control = options_.flow_control;
  c.multicast = options_.multicast;
  c.aggregation = options_.aggregation;
  c.functional = options_.functional;
  if (schedule_.collective == Collective::kRing) {
    c.ring = true;
    if (!schedule_.rounds.empty() && !schedule_.rounds[0].groups.empty())
      c.ring_order = schedule_.rounds[0].groups[0].sites;
    return c;
  }
  const int n = static_cast<int>(platform_.sites.size());
  for (std::size_t r = 0; r < plans_.size(); ++r) {
    ClusterRoundPlan round;
    for (const auto& group : plans_[r].groups) {
      if (std::find(group.members.begin(), group.members.end(), site) == group.members.end())
        continue;
      round.group = group.members;
      if (group.members.size() < 2) break;
      round.tree_id = static_cast<int>(r) * n + site;
      round.pacing_interval_ps = group.pacing_interval_ps;
      round.aligned_start = options_.aligned_start;
      round.start_delay_ps = group.start_delay_ps;
      round.send_offset_ps = group.send_offset_ps.at(site);
      round.own_slots = group.slots.at(site);
    }
    c.rounds.push_back(std::move(round));
  }
  return c;
}

void NetworkSystem::build_sites() {
  const bool ring = schedule_.collective == Collective::kRing;
  for (std::size_t i = 0; i < platform_.sites.size(); ++i) {
    const auto& site = platform_.sites[i];
    const int s = static_cast<int>(i);
    SiteModules m;
    m.cluster = std::make_unique<ComputeCluster>(("cluster_" + site.code).c_str(),
                                                 cluster_config(s), pool_);
    m.access_up = std::make_unique<WanLink>(("access_up_" + site.code).c_str(), access_link(site));
    m.access_down =
        std::make_unique<WanLink>(("access_down_" + site.code).c_str(), access_link(site));
    m.sw = std::make_unique<MulticastSwitch>(("switch_" + site.code).c_str(), site.sw, pool_);
    FpgaAggregatorConfig fc;
    fc.site = s;
    fc.params = site.fpga;
    if (options_.buffer_bytes) fc.params.buffer_bytes = options_.buffer_bytes;
    fc.slot_bytes = options_.chunk_bytes;
    fc.aggregate = options_.aggregation && !ring;
    fc.return_credits = options_.flow_control == FlowControl::kCredit && !ring;
    fc.credit_bytes = options_.credit_bytes;
    m.fpga = std::make_unique<FpgaAggregator>(("fpga_" + site.code).c_str(), fc, pool_);

    m.cluster->out.bind(m.access_up->in);
    m.access_up->out.bind(m.sw->in);
    m.fpga->out.bind(m.access_down->in);
    m.access_down->out.bind(m.cluster->in);
    m.fpga->to_network.bind(m.sw->in);
    sites_.push_back(std::move(m));
  }
}

void NetworkSystem::build_links() {
  std::vector<int> next_port(platform_.sites.size(), 0);
  std::uint64_t seed = options_.seed;
  for (const auto& spec : platform_.links) {
    for (auto [from, to] : {std::pair{spec.a, spec.b}, std::pair{spec.b, spec.a}}) {
      DirectedLink d;
      d.from = from;
      d.to = to;
      d.link = std::make_unique<WanLink>(link_name(platform_, from, to).c_str(), spec.params,
                                         options_.jitter, seed++);
      sites_[from].sw->out.bind(d.link->in);
      d.link->out.bind(sites_[to].sw->in);
      port_to_[from][to] = next_port[from]++;
      links_.push_back(std::move(d));
    }
  }
  for (std::size_t s = 0; s < sites_.size(); ++s) {
    sites_[s].sw->out.bind(sites_[s].fpga->in);
    local_port_[s] = next_port[s]++;
  }
}

void NetworkSystem::install_routes() {
  const int n = static_cast<int>(platform_.sites.size());
  for (int u = 0; u < n; ++u) {
    for (int d = 0; d < n; ++d) {
      sites_[u].sw->set_unicast_route(
          d, d == u ? local_port_[u] : port_to_[u][routing_.next_hop(u, d)]);
    }
  }
  if (!options_.multicast) return;
  for (std::size_t r = 0; r < plans_.size(); ++r) {
    for (const auto& group : plans_[r].groups) {
      for (const auto& [sender, hops] : group.hops) {
        const int tree_id = static_cast<int>(r) * n + sender;
        std::map<int, std::vector<int>> ports;
        for (const auto& [u, v] : hops) ports[u].push_back(port_to_[u][v]);
        for (int d : group.members)
          if (d != sender) ports[d].push_back(local_port_[d]);
        for (auto& [site, list] : ports) sites_[site].sw->set_multicast_group(tree_id, list);
      }
    }
  }
}

}  // namespace aggnet
