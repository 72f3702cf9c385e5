#include "sim/builder.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/host.h"
#include "modules/core/event_calendar.h"
#include "sim/faults.h"
#include "sim/watchdog.h"

namespace aggnet {

namespace {

// A site's scope in the module hierarchy: no processes, it only names its children.
struct SiteScope : sc_core::sc_module {
  explicit SiteScope(sc_core::sc_module_name name) : sc_module(name) {}
};

// Runs `make` with `scope` on top of the kernel's module hierarchy, so the modules it
// constructs become children of `scope`; the construction order (and so the order of
// processes the kernel starts) stays that of a flat build.
template <class Make>
auto in_scope(sc_core::sc_module& scope, Make make) {
  struct Pushed {
    explicit Pushed(sc_core::sc_module& m) {
      sc_core::sc_get_curr_simcontext()->hierarchy_push(&m);
    }
    ~Pushed() { sc_core::sc_get_curr_simcontext()->hierarchy_pop(); }
  } pushed(scope);
  return make();
}

}  // namespace

NetworkSystem::NetworkSystem(sc_core::sc_module_name name, const Platform& platform,
                             const Schedule& schedule, const RunOptions& options)
    : sc_module(name),
      platform_(platform),
      schedule_(schedule),
      options_(options),
      routing_(platform_, options.link_metric),
      steps_(options.steps > 0 ? options.steps
                               : static_cast<int>(std::max<std::size_t>(schedule.period(), 1))),
      port_to_(platform_.sites.size()),
      local_port_(platform_.sites.size(), -1) {
  if (schedule_.collective == Collective::kGroupAverage) {
    ArrivalLatencyCache latencies(platform_, routing_);  // the period meets senders again
    for (const auto& round : schedule_.rounds) {
      // Kept for the report, the watchdog and rerouting, which read neither the round's
      // streams per hop nor, for a round that does not run, its trees (install_routes
      // installs those of the rounds that run).
      plans_.push_back(plan_round(latencies, round, per_transaction(options_), false));
      if (plans_.size() > static_cast<std::size_t>(steps_))
        for (auto& group : plans_.back().groups) group.hops.clear();
      // A round's groups are disjoint (model/schedule.h).
      auto& index = group_of_.emplace_back(platform_.sites.size(), -1);
      const auto& groups = plans_.back().groups;
      for (std::size_t g = 0; g < groups.size(); ++g)
        for (int m : groups[g].members)
          if (index[static_cast<std::size_t>(m)] < 0)
            index[static_cast<std::size_t>(m)] = static_cast<int>(g);
    }
  }
  if (schedule_.collective == Collective::kReductionTree)
    forest_ = plan_forest(platform_, routing_, schedule_, options_);
  if (schedule_.ring_step != RingStepRule::kReceive)
    ring_progress_ = std::make_shared<RingProgress>();
  // Every module attached to the calendar's clients is ours: they may run ahead.
  EventCalendar::current().enable_run_ahead();
  build_sites();
  build_links();
  install_routes();
  faults_ = std::make_unique<FaultInjector>("faults", *this);  // loss, outages, stalls
  watchdog_ = std::make_unique<Watchdog>("watchdog", *this, faults_.get());
  const std::uint64_t chunk_memory = memory_limit_bytes() / 4;
  pool_.set_limit(chunk_memory, [this, chunk_memory] { watchdog_->stop_for_memory(chunk_memory); });
}

NetworkSystem::~NetworkSystem() = default;

ColocatedReference colocated_reference(const Platform& platform, const Schedule& schedule,
                                       const RunOptions& options) {
  // Step k runs round k mod period.
  const std::size_t steps = options.steps > 0 ? static_cast<std::size_t>(options.steps)
                                              : std::max<std::size_t>(schedule.period(), 1);
  ColocatedReference ref{platform.colocated_variant(), schedule};
  for (std::size_t r = steps; r < ref.schedule.rounds.size(); ++r)
    ref.schedule.rounds[r].groups.clear();  // never runs: nothing to plan
  return ref;
}

ComputeClusterConfig NetworkSystem::cluster_config(int site) const {
  ComputeClusterConfig c;
  c.site = site;
  c.params = platform_.sites[site].cluster;
  c.gradient_bytes = options_.gradient_bytes;
  c.chunk_bytes = transaction_bytes(options_);  // a burst is timed as one transaction
  c.burst_chunk_bytes = options_.burst_chunks > 1 ? options_.chunk_bytes : 0;
  c.steps = steps_;
  c.credit = options_.flow_control == FlowControl::kCredit;
  c.multicast = options_.multicast;
  c.aggregation = options_.aggregation;
  c.functional = options_.functional;
  c.control_bytes = options_.credit_bytes;
  c.params.compute_time_ps = slowed_compute_ps(options_.faults, platform_, site);
  c.reliable = loss_recovery(options_.faults, options_.flow_control) &&
               schedule_.collective == Collective::kGroupAverage;
  c.retransmit_backoff_max = options_.faults.retransmit_backoff_max;
  if (schedule_.collective == Collective::kReductionTree) return reduction_tree_config(c);
  if (schedule_.collective != Collective::kGroupAverage) return host_collective_config(c);
  const int n = static_cast<int>(platform_.sites.size());
  // Step k runs round k mod period: with fewer steps than rounds, those from the steps'
  // count on never run, and k mod steps is k (a 1,000-site rotating-3's one step needs 1 of
  // about 500 rounds per site).
  const std::size_t rounds = std::min(plans_.size(), static_cast<std::size_t>(steps_));
  for (std::size_t r = 0; r < rounds; ++r) {
    ClusterRoundPlan round;
    const int g = group_of_[r][static_cast<std::size_t>(site)];
    const GroupPlan* group_plan = g < 0 ? nullptr : &plans_[r].groups[static_cast<std::size_t>(g)];
    if (group_plan) round.group = group_plan->members;
    if (group_plan && group_plan->members.size() >= 2) {
      const GroupPlan& group = *group_plan;
      round.tree_id = static_cast<int>(r) * n + site;
      round.pacing_interval_ps = group.pacing_interval_ps;
      round.aligned_start = options_.aligned_start;
      round.start_delay_ps = group.start_delay_ps;
      const auto& offsets = group.send_offset_ps.at(site);
      round.send_offset_ps = SendOffsets({offsets.begin(), offsets.end()});
      round.own_slots = group.slots.at(site);
      // Only loss recovery uses it; the default costs O(members^2) paths per member.
      if (c.reliable)
        round.retransmit_timeout_ps =
            options_.faults.retransmit_timeout_ps
                ? options_.faults.retransmit_timeout_ps
                : retransmit_timeout_ps(platform_, routing_, group, per_transaction(options_));
    }
    c.rounds.push_back(std::move(round));
  }
  return c;
}

// Host-based collectives: the ring family (its step range and rule), the parameter
// server (order = [server, workers...]) and point-to-point transfers (one round
// plan per round, group = the member pair of this site, if any).
ComputeClusterConfig NetworkSystem::host_collective_config(ComputeClusterConfig c) const {
  const auto collective = schedule_.collective;
  c.collective = collective;
  c.access = access_link(platform_.sites[c.site]);
  c.messages = schedule_.messages;
  c.ring = is_ring_collective(collective);
  if (collective != Collective::kPointToPoint) {
    c.order = schedule_.rounds.at(0).groups.at(0).sites;
    const int n = static_cast<int>(c.order.size());
    if (collective == Collective::kReduceScatter) c.ring_steps_end = n - 1;
    if (collective == Collective::kAllGather) c.ring_steps_begin = n - 1;
    c.ring_step_rule = schedule_.ring_step;
    c.ring_progress = ring_progress_;
    return c;
  }
  for (const auto& round : schedule_.rounds) {
    ClusterRoundPlan plan;
    for (const auto& group : round.groups)
      if (std::find(group.sites.begin(), group.sites.end(), c.site) != group.sites.end())
        plan.group = group.sites;
    c.rounds.push_back(std::move(plan));
  }
  return c;
}

// A reduction forest's member: one round plan (the members, the aligned start) and one
// stream per tree (its chunks, pacing and this site's offset). Others sit it out.
ComputeClusterConfig NetworkSystem::reduction_tree_config(ComputeClusterConfig c) const {
  c.collective = Collective::kReductionTree;
  ClusterRoundPlan round;
  const auto& members = forest_.members;
  if (std::find(members.begin(), members.end(), c.site) != members.end()) {
    round.group = members;
    round.aligned_start = ready_exchange(options_, Collective::kReductionTree);
    round.start_delay_ps = forest_.start_delay_ps;
    for (std::size_t t = 0; t < schedule_.forest.size(); ++t)
      c.trees.push_back({static_cast<int>(t), forest_.ranges[t].first, forest_.ranges[t].end,
                         schedule_.forest[t].pacing_interval_ps,
                         forest_.offset_ps[t].at(static_cast<std::size_t>(c.site))});
  }
  c.rounds.push_back(std::move(round));
  return c;
}

// A fabric's multicast lists this wide go through its shared buffer (FanoutLog): an
// all-to-all's fan-outs beyond a few dozen sites, where handing each port its copy at once
// made the co-located reference most of a run.
constexpr std::uint32_t kSharedFanoutPorts = 32;

void NetworkSystem::build_sites() {
  const bool ring = schedule_.collective != Collective::kGroupAverage;  // host-based
  for (std::size_t i = 0; i < platform_.sites.size(); ++i) {
    const auto& site = platform_.sites[i];
    const int s = static_cast<int>(i);
    scopes_.push_back(std::make_unique<SiteScope>(site.code.c_str()));
    if (site.switch_only) {
      fabric_.push_back(in_scope(
          *scopes_.back(), [&] { return std::make_unique<MulticastSwitch>("switch", site.sw); }));
      fabric_.back()->share_fanouts(kSharedFanoutPorts);
      continue;
    }
    if (!fabric_.empty())
      throw std::invalid_argument("NetworkSystem: a site with a cluster after a switch-only site");
    SiteModules m = in_scope(*scopes_.back(), [&] {
      SiteModules made;
      made.cluster = std::make_unique<ComputeCluster>("cluster", cluster_config(s), pool_);
      const WanLinkParams access = access_link(site);
      made.access_up = std::make_unique<WanLink>("access_up", access, false, 1, prices_.of(access));
      made.access_down =
          std::make_unique<WanLink>("access_down", access, false, 1, prices_.of(access));
      made.sw = std::make_unique<MulticastSwitch>("switch", site.sw);
      FpgaAggregatorConfig fc;
      fc.site = s;
      fc.params = site.fpga;
      fc.params.buffer_bytes = fpga_buffer_bytes(options_, site.fpga);
      fc.slot_bytes = transaction_bytes(options_);  // a burst holds its K chunks' slots
      // A reduction tree's relays sum whatever --aggregation says.
      fc.aggregate =
          (options_.aggregation && !ring) || schedule_.collective == Collective::kReductionTree;
      fc.return_credits = options_.flow_control == FlowControl::kCredit && !ring;
      fc.credit_bytes = options_.credit_bytes;
      fc.reliable = loss_recovery(options_.faults, options_.flow_control) && !ring;
      fc.drop_when_full = options_.flow_control == FlowControl::kDrop && !ring;
      fc.test_hook = options_.faults.test_hook;
      made.fpga = std::make_unique<FpgaAggregator>("fpga", fc, pool_);
      return made;
    });

    m.cluster->out.bind(m.access_up->in);
    m.access_up->out.bind(m.sw->in);
    m.fpga->out.bind(m.access_down->in);
    m.access_down->out.bind(m.cluster->in);
    m.fpga->set_out_hint(m.cluster->hot_state());
    m.fpga->to_network.bind(m.sw->in);
    sites_.push_back(std::move(m));
  }
}

// Host-based collectives without losses or outages send only along the unicast routes
// (next hop by next hop, as the switches forward) between members of a group: links off
// those routes would carry nothing, and their modules cost start-up time (a transfer
// between two of nine sites needs 1 of 12 links). Group-average runs, whose multicast
// trees and control messages follow the round plans, and runs with losses or link
// outages (`FaultSpec::lossy`), which may reroute, keep every link.
std::vector<bool> NetworkSystem::links_in_use() const {
  const bool host = schedule_.collective != Collective::kGroupAverage;
  if (!host || options_.faults.lossy()) return std::vector<bool>(platform_.links.size(), true);
  std::vector<bool> used(platform_.links.size(), false);
  for (const auto& tree : schedule_.forest)  // a relay outside the group too
    for (std::size_t s = 0; s < tree.parent.size(); ++s)
      if (tree.parent[s] >= 0)
        used[static_cast<std::size_t>(routing_.link_index(static_cast<int>(s), tree.parent[s]))] =
            true;
  for (const auto& round : schedule_.rounds)
    for (const auto& group : round.groups)
      for (int a : group.sites)
        for (int b : group.sites)
          for (int u = a; u != b && u >= 0;) {
            const int v = routing_.next_hop(u, b);
            const int link = routing_.link_index(u, v);
            if (link >= 0) used[static_cast<std::size_t>(link)] = true;
            u = v;
          }
  return used;
}

void NetworkSystem::build_links() {
  std::vector<int> next_port(platform_.sites.size(), 0);
  const std::vector<bool> used = links_in_use();
  for (std::size_t i = 0; i < platform_.links.size(); ++i) {
    if (!used[i]) continue;
    const auto& spec = platform_.links[i];
    std::uint64_t seed =
        options_.seed + 2 * static_cast<std::uint64_t>(spec.seed_index >= 0 ? spec.seed_index : i);
    for (auto [from, to] : {std::pair{spec.a, spec.b}, std::pair{spec.b, spec.a}}) {
      DirectedLink d;
      d.from = from;
      d.to = to;
      const std::string name = "link_to_" + platform_.sites[to].code;
      d.link = in_scope(*scopes_[from], [&] {
        return std::make_unique<WanLink>(name.c_str(), spec.params, options_.jitter, seed,
                                         prices_.of(spec.params));
      });
      ++seed;
      switch_of(from).out.bind(d.link->in);
      d.link->out.bind(switch_of(to).in);
      port_to_[from][to] = next_port[from]++;
      links_.push_back(std::move(d));
    }
  }
  for (std::size_t s = 0; s < sites_.size(); ++s) {
    sites_[s].sw->out.bind(sites_[s].fpga->in);
    sites_[s].sw->set_local_hint(sites_[s].fpga->hot_state());
    local_port_[s] = next_port[s]++;
  }
}

MulticastSwitch& NetworkSystem::switch_of(int site) const {
  const std::size_t s = static_cast<std::size_t>(site);
  return s < sites_.size() ? *sites_[s].sw : *fabric_.at(s - sites_.size());
}

void NetworkSystem::install_routes() {
  const int n = static_cast<int>(platform_.sites.size());
  for (int u = 0; u < n; ++u) {
    for (int d = 0; d < n; ++d) {
      const int hop = routing_.next_hop(u, d);  // -1: unreachable (a partial co-located mesh)
      const int port = d == u ? local_port_[u] : hop >= 0 ? port_to(u, hop) : -1;
      if (port >= 0) switch_of(u).set_unicast_route(d, port);  // no port: link not built
    }
  }
  install_reduction_trees();
  if (!options_.multicast) return;
  // Trees only for the rounds that run (step k runs round k mod period).
  const std::size_t rounds_run = std::min(plans_.size(), static_cast<std::size_t>(steps_));
  // Per site of a tree, its ports in the order of the hops, then its cluster's; kept from
  // tree to tree (an all-to-all of 1,000 sites installs a million of them).
  std::vector<std::vector<int>> ports(static_cast<std::size_t>(n));
  std::vector<int> sites;
  const auto add = [&](int site, int port) {
    auto& list = ports[static_cast<std::size_t>(site)];
    if (list.empty()) sites.push_back(site);
    list.push_back(port);
  };
  for (std::size_t r = 0; r < rounds_run; ++r) {
    for (const auto& group : plans_[r].groups) {
      for (const auto& [sender, hops] : group.hops) {
        const int tree_id = static_cast<int>(r) * n + sender;
        for (const auto& [u, v] : hops) add(u, port_to_[u][v]);
        for (int d : group.members)
          if (d != sender) add(d, local_port_[d]);
        std::sort(sites.begin(), sites.end());  // by site, as before
        for (int site : sites) {
          switch_of(site).set_multicast_group(tree_id, ports[static_cast<std::size_t>(site)]);
          ports[static_cast<std::size_t>(site)].clear();
        }
        sites.clear();
      }
    }
  }
}

// Per tree t, at every site of it: its FPGA's role (parent, children, whether its cluster
// contributes, the members below it) for chunks marked t, and the result's multicast
// group t from the root down the tree edges, into every member's FPGA (which passes the
// result to its cluster). Partial sums go to the parent by unicast: the builder checked
// that the route is their direct link (plan_forest).
void NetworkSystem::install_reduction_trees() {
  const auto& members = forest_.members;
  auto member = [&](int s) {
    return std::find(members.begin(), members.end(), s) != members.end();
  };
  for (std::size_t t = 0; t < schedule_.forest.size(); ++t) {
    const ReductionTree& tree = schedule_.forest[t];
    const auto children = tree_children(tree);
    std::vector<int> below(platform_.sites.size(), 0);
    for (int u : bottom_up_order(tree)) {
      const auto su = static_cast<std::size_t>(u);
      below[su] += member(u) ? 1 : 0;
      if (tree.parent[su] >= 0) below[static_cast<std::size_t>(tree.parent[su])] += below[su];
      ReductionRole role;
      role.parent_site = tree.parent[su];
      role.children = static_cast<int>(children[su].size());
      role.member = member(u);
      role.subtree_members = below[su];
      role.result_tree_id = tree.parent[su] < 0 ? static_cast<int>(t) : -1;
      sites_[su].fpga->set_reduction_role(static_cast<int>(t), role);
      std::vector<int> ports;  // an in-tree's result stays at its root
      if (role.member && (tree.broadcast || u == tree.root)) ports.push_back(local_port_[su]);
      if (tree.broadcast)
        for (int c : children[su]) ports.push_back(port_to(u, c));
      if (!ports.empty()) sites_[su].sw->set_multicast_group(static_cast<int>(t), ports);
    }
  }
}

}  // namespace aggnet
