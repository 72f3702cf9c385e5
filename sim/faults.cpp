#include "sim/faults.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/units.h"
#include "modules/core/time.h"
#include "sim/builder.h"

namespace aggnet {

namespace {
constexpr int kDown = 0, kUp = 1, kStall = 2;

// Every directed link of platform link `index` (the builder makes two per link, in order).
std::vector<const DirectedLink*> directions(const NetworkSystem& system, int index) {
  const auto& spec = system.platform().links.at(static_cast<std::size_t>(index));
  std::vector<const DirectedLink*> out;
  for (const auto& d : system.links())
    if ((d.from == spec.a && d.to == spec.b) || (d.from == spec.b && d.to == spec.a))
      out.push_back(&d);
  return out;
}

// A different stream of random numbers per directed link and per seed.
std::uint64_t loss_seed(std::uint64_t seed, std::size_t link) {
  return (seed + 1) * 0x9E3779B97F4A7C15ull ^
         (static_cast<std::uint64_t>(link) + 1) * 0xBF58476D1CE4E5B9ull;
}
}  // namespace

FaultInjector::FaultInjector(sc_core::sc_module_name name, const NetworkSystem& system)
    : sc_module(name),
      system_(system),
      up_(system.platform().links.size(), true),
      down_since_ps_(system.platform().links.size(), 0),
      down_windows_(system.platform().links.size(), 0) {
  const auto& plan = system.options().faults;
  const auto& platform = system.platform();
  check_faults(plan, platform);
  std::vector<double> rate(platform.links.size(), plan.wan_loss_rate);
  for (const auto& l : plan.link_loss) {
    auto& r = rate[static_cast<std::size_t>(find_link(platform, l.link))];
    r = std::max(r, l.rate);
  }
  for (std::size_t i = 0; i < system.links().size(); ++i) {
    const auto& d = system.links()[i];
    const int index = system.routing().link_index(d.from, d.to);
    const double r = rate[static_cast<std::size_t>(index)];
    if (r > 0) d.link->set_loss_rate(r, loss_seed(system.options().seed, i));
    d.link->set_test_miscount_losses(plan.test_hook == TestHook::kMiscountLoss);
  }
  for (const auto& o : plan.outages) {
    const int link = find_link(platform, o.link);
    events_.push_back({o.down_ps, kDown, link, 0});
    if (o.up_ps != std::numeric_limits<std::uint64_t>::max())
      events_.push_back({o.up_ps, kUp, link, 0});
  }
  for (const auto& st : plan.stalls)
    events_.push_back({st.from_ps, kStall, platform.site_index(st.site), st.to_ps});
  // At one instant a link goes down before it comes up: windows that touch stay one outage.
  std::stable_sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) {
    return a.at_ps != b.at_ps ? a.at_ps < b.at_ps : a.kind < b.kind;
  });
  if (events_.empty()) return;
  SC_HAS_PROCESS(FaultInjector);
  SC_THREAD(run);
}

const Routing& FaultInjector::routing() const { return routing_ ? *routing_ : system_.routing(); }

bool FaultInjector::all_finished() const {
  return std::all_of(system_.sites().begin(), system_.sites().end(),
                     [](const SiteModules& m) { return m.cluster->finished(); });
}

// A fault after every site has finished changes nothing the run reports: the injector
// stops there (a window beyond the run neither counts as down time nor holds the run).
void FaultInjector::run() {
  for (const auto& e : events_) {
    const sc_core::sc_time at = ps_time(e.at_ps);
    if (at > sc_core::sc_time_stamp()) wait(at - sc_core::sc_time_stamp());
    if (all_finished()) return;
    if (e.kind == kStall) {
      const auto& site = system_.sites().at(static_cast<std::size_t>(e.index));
      site.access_up->hold_until(ps_time(e.until_ps));
      site.access_down->hold_until(ps_time(e.until_ps));
      continue;
    }
    // Overlapping windows of one link: it is up again when the last of them has ended.
    auto& windows = down_windows_[static_cast<std::size_t>(e.index)];
    windows += e.kind == kUp ? -1 : 1;
    if (windows == 0 || (windows == 1 && e.kind == kDown)) set_link(e.index, windows == 0);
  }
}

void FaultInjector::set_link(int link, bool up) {
  if (up_[static_cast<std::size_t>(link)] == up) return;
  up_[static_cast<std::size_t>(link)] = up;
  if (!up) down_since_ps_[static_cast<std::size_t>(link)] = to_ps(sc_core::sc_time_stamp());
  for (const DirectedLink* d : directions(system_, link)) {
    if (up) {
      d->link->set_up();
    } else {
      d->link->set_down();
    }
  }
  reroute();
}

// Routes over the links up now: the platform without the dead links.
void FaultInjector::reroute() {
  Platform alive = system_.platform();
  alive.links.clear();
  const std::vector<std::uint64_t>& metric = system_.options().link_metric;
  std::vector<std::uint64_t> alive_metric;
  for (std::size_t i = 0; i < system_.platform().links.size(); ++i) {
    if (!up_[i]) continue;
    alive.links.push_back(system_.platform().links[i]);
    if (!metric.empty()) alive_metric.push_back(metric[i]);
  }
  routing_ = std::make_unique<Routing>(alive, alive_metric);
  ++reroutes_;
  const int n = static_cast<int>(system_.sites().size());
  for (int u = 0; u < n; ++u) {
    for (int d = 0; d < n; ++d) {
      const int hop = routing_->next_hop(u, d);
      const int port = d == u ? system_.local_port(u) : hop < 0 ? -1 : system_.port_to(u, hop);
      system_.sites()[static_cast<std::size_t>(u)].sw->set_unicast_route(d, port);
    }
  }
  if (system_.options().multicast) install_trees(*routing_);
}

namespace {
bool same_ports(std::vector<int> a, std::vector<int> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}
}  // namespace

// Each sender's tree: the union of its shortest paths to the members it still reaches. A
// sender whose tree changed is told (its ready message may be on the old one).
void FaultInjector::install_trees(const Routing& routing) {
  const int n = static_cast<int>(system_.sites().size());
  for (std::size_t r = 0; r < system_.round_plans().size(); ++r) {
    for (const auto& group : system_.round_plans()[r].groups) {
      if (group.members.size() < 2) continue;
      for (int sender : group.members) {
        const int tree_id = static_cast<int>(r) * n + sender;
        if (set_tree(tree_id, tree_ports(routing, group.members, sender)))
          system_.sites()[static_cast<std::size_t>(sender)].cluster->tree_rerouted(tree_id);
      }
    }
  }
}

// Installs tree `tree_id` (per switch on it, its egress ports); true if it reaches other
// ports than before (not only in another order).
bool FaultInjector::set_tree(int tree_id, const std::map<int, std::vector<int>>& ports) {
  bool changed = false;
  for (std::size_t u = 0; u < system_.sites().size(); ++u) {
    auto& sw = *system_.sites()[u].sw;
    const auto it = ports.find(static_cast<int>(u));
    const std::vector<int> now = it == ports.end() ? std::vector<int>{} : it->second;
    const std::vector<int> before = sw.multicast_ports(tree_id);
    if (before == now) continue;
    changed = changed || !same_ports(before, now);
    if (now.empty()) {
      sw.clear_multicast_group(tree_id);
    } else {
      sw.set_multicast_group(tree_id, now);
    }
  }
  return changed;
}

// Per switch on the tree, its egress ports.
std::map<int, std::vector<int>> FaultInjector::tree_ports(const Routing& routing,
                                                          const std::vector<int>& members,
                                                          int sender) const {
  std::map<int, std::vector<int>> ports;
  std::set<std::pair<int, int>> hops;
  for (int d : members) {
    if (d == sender) continue;
    const auto path = routing.path(sender, d);
    if (path.empty()) continue;  // cut off
    for (std::size_t i = 0; i + 1 < path.size(); ++i)
      if (hops.insert({path[i], path[i + 1]}).second)
        ports[path[i]].push_back(system_.port_to(path[i], path[i + 1]));
    ports[d].push_back(system_.local_port(d));
  }
  return ports;
}

std::string FaultInjector::outages() const {
  std::string out;
  const auto& platform = system_.platform();
  for (std::size_t i = 0; i < up_.size(); ++i) {
    if (up_[i]) continue;
    const auto& l = platform.links[i];
    out += fmt::format("{}{}-{} down since {}", out.empty() ? "" : "; ",
                       platform.sites[static_cast<std::size_t>(l.a)].code,
                       platform.sites[static_cast<std::size_t>(l.b)].code,
                       format_time_ps(static_cast<double>(down_since_ps_[i])));
  }
  return out;
}

std::vector<int> FaultInjector::unreachable_from(int site, const std::vector<int>& members) const {
  std::vector<int> out;
  for (int m : members)
    if (m != site && (routing().path(site, m).empty() || routing().path(m, site).empty()))
      out.push_back(m);
  return out;
}

}  // namespace aggnet
