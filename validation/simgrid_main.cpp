// aggnet-simgrid: one aggnet scenario (platform YAML + schedule name) in SimGrid's S4U
// flow-level model, printing its time and the closed forms as JSON (docs/validation.md).
//
//   aggnet-simgrid --platform FILE [--set K=V]... --schedule NAME --gradient G [--chunk C]
//
// The platform is aggnet's: per site a host, an access link up and one down (its cluster's
// access bandwidth and delay), per WAN link one SimGrid link per direction, and routes
// along aggnet's shortest-delay paths. The network model is CM02 with the TCP window
// bound off (network/TCP-gamma:0) and no cross traffic, so a flow takes its route's
// latency plus its wire bytes at its max-min share of the bottleneck. Reduction trees
// (`reduction-tree[:SITE]`, `reduction-forest`, `reduction-in-trees`, forest files) run
// chunk by chunk instead, as the actors of simgrid_trees.h.
#include <simgrid/s4u.hpp>
// version.h needs xbt/base.h, which s4u.hpp includes first.
#include <simgrid/version.h>

#include <iostream>
#include <map>
#include <memory>

#include "common/config_error.h"
#include "model/network_math.h"
#include "model/routing.h"
#include "validation/scenario.h"
#include "validation/simgrid_trees.h"

namespace sg4 = simgrid::s4u;

namespace aggnet::validation {
namespace {

int token = 0;  // the payload pointer every message carries (its content is not modelled)

struct World {
  Scenario scenario;
  std::vector<sg4::Host*> hosts;
  std::map<int, double> done_s;  // site -> when its part of the collective ended
};

sg4::Link* make_link(sg4::NetZone* zone, const std::string& name, const WanLinkParams& params,
                     std::uint64_t extra_latency_ps) {
  auto* link = zone->create_link(name, static_cast<double>(params.bandwidth_bps) / 8.0);
  link->set_latency(static_cast<double>(params.delay_ps + extra_latency_ps) * 1e-12);
  return link->seal();
}

// Hosts, links and aggnet's routes; switch latency is added to the link after the switch.
void build_platform(World& w) {
  const Platform& p = w.scenario.platform;
  const Routing routing(p);
  auto* zone = sg4::create_full_zone("wan");
  const int n = static_cast<int>(p.sites.size());
  std::vector<sg4::Link*> up, down;
  std::map<std::pair<int, int>, sg4::Link*> wan;
  for (int i = 0; i < n; ++i) {
    w.hosts.push_back(zone->create_host(p.sites[i].code, 1e9));
    up.push_back(make_link(zone, "up_" + p.sites[i].code, access_link(p.sites[i]), 0));
    down.push_back(make_link(zone, "down_" + p.sites[i].code, access_link(p.sites[i]),
                             p.sites[i].sw.latency_ps));
  }
  for (const auto& spec : p.links) {
    for (auto [a, b] : {std::pair{spec.a, spec.b}, std::pair{spec.b, spec.a}})
      wan[{a, b}] = make_link(zone, "wan_" + p.sites[a].code + "_" + p.sites[b].code, spec.params,
                              p.sites[a].sw.latency_ps);
  }
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      std::vector<sg4::LinkInRoute> route{sg4::LinkInRoute(up[s])};
      const auto path = routing.path(s, d);
      for (std::size_t i = 0; i + 1 < path.size(); ++i)
        route.emplace_back(wan.at({path[i], path[i + 1]}));
      route.emplace_back(down[d]);
      zone->add_route(w.hosts[s]->get_netpoint(), w.hosts[d]->get_netpoint(), nullptr, nullptr,
                      route, false);
    }
  }
  zone->seal();
}

sg4::Mailbox* mailbox_of(const World& w, int site) {
  return sg4::Mailbox::by_name(w.scenario.platform.sites[site].code);
}

// Ring position `pos`: every receive posted at once (the receiver is always ready, as
// aggnet's clusters are), then per ring step: send, wait for the predecessor's segment,
// then the step rule's wait.
void ring_actor(World* w, int pos, sg4::BarrierPtr barrier) {
  const auto& order = w->scenario.schedule.rounds[0].groups[0].sites;
  const int n = static_cast<int>(order.size());
  const auto collective = w->scenario.schedule.collective;
  const int begin = collective == Collective::kAllGather ? n - 1 : 0;
  const int end = collective == Collective::kReduceScatter ? n - 1 : 2 * (n - 1);
  const std::uint64_t bytes = message_bytes_on_wire(w->scenario, ring_segment_bytes(w->scenario));
  auto* me = mailbox_of(*w, order[pos]);
  auto* succ = mailbox_of(*w, order[(pos + 1) % n]);
  std::vector<int*> got(end - begin, nullptr);
  std::vector<sg4::CommPtr> recvs, sends;
  for (int r = begin; r < end; ++r) recvs.push_back(me->get_async<int>(&got[r - begin]));
  for (int r = begin; r < end; ++r) {
    sends.push_back(succ->put_async(&token, bytes));
    recvs[r - begin]->wait();
    if (w->scenario.schedule.ring_step == RingStepRule::kSendRecv) sends.back()->wait();
    if (w->scenario.schedule.ring_step == RingStepRule::kBarrier) barrier->wait();
  }
  w->done_s[order[pos]] = sg4::Engine::get_clock();
  sg4::Comm::wait_all(sends);
}

void p2p_sender(World* w, int dst) {
  const std::uint64_t bytes = message_bytes_on_wire(w->scenario, w->scenario.gradient_bytes);
  std::vector<sg4::CommPtr> sends;
  for (int m = 0; m < w->scenario.schedule.messages; ++m)
    sends.push_back(mailbox_of(*w, dst)->put_async(&token, bytes));
  sg4::Comm::wait_all(sends);
}

void p2p_receiver(World* w, int me) {
  std::vector<int*> got(w->scenario.schedule.messages, nullptr);
  std::vector<sg4::CommPtr> recvs;
  for (auto& g : got) recvs.push_back(mailbox_of(*w, me)->get_async<int>(&g));
  sg4::Comm::wait_all(recvs);
  w->done_s[me] = sg4::Engine::get_clock();
}

// Parameter server: every worker's G in, then G out to every worker at once.
void ps_server(World* w, std::vector<int> workers, int me) {
  const std::uint64_t bytes = message_bytes_on_wire(w->scenario, w->scenario.gradient_bytes);
  std::vector<int*> got(workers.size(), nullptr);
  std::vector<sg4::CommPtr> comms;
  for (auto& g : got) comms.push_back(mailbox_of(*w, me)->get_async<int>(&g));
  sg4::Comm::wait_all(comms);
  comms.clear();
  for (int d : workers) comms.push_back(mailbox_of(*w, d)->put_async(&token, bytes));
  sg4::Comm::wait_all(comms);
}

void ps_worker(World* w, int server, int me) {
  const std::uint64_t bytes = message_bytes_on_wire(w->scenario, w->scenario.gradient_bytes);
  int* got = nullptr;
  auto recv = mailbox_of(*w, me)->get_async<int>(&got);
  auto send = mailbox_of(*w, server)->put_async(&token, bytes);
  recv->wait();
  w->done_s[me] = sg4::Engine::get_clock();
  send->wait();
}

// Unicast all-to-all: G to every other member at once (members i+1, i+2, ... as aggnet
// orders its copies), every receive posted at once; done when all have completed.
void a2a_member(World* w, int pos) {
  const auto& members = w->scenario.schedule.rounds[0].groups[0].sites;
  const int n = static_cast<int>(members.size());
  const std::uint64_t bytes = message_bytes_on_wire(w->scenario, w->scenario.gradient_bytes);
  std::vector<int*> got(n - 1, nullptr);
  std::vector<sg4::CommPtr> comms;
  for (auto& g : got) comms.push_back(mailbox_of(*w, members[pos])->get_async<int>(&g));
  for (int k = 1; k < n; ++k)
    comms.push_back(mailbox_of(*w, members[(pos + k) % n])->put_async(&token, bytes));
  sg4::Comm::wait_all(comms);
  w->done_s[members[pos]] = sg4::Engine::get_clock();
}

void spawn_actors(World& w) {
  const Schedule& s = w.scenario.schedule;
  const auto& group = s.rounds.at(0).groups.at(0).sites;
  if (is_ring_collective(s.collective)) {
    auto barrier = sg4::Barrier::create(static_cast<unsigned>(group.size()));
    for (std::size_t pos = 0; pos < group.size(); ++pos)
      sg4::Actor::create("ring", w.hosts[group[pos]], ring_actor, &w, static_cast<int>(pos),
                         barrier);
  } else if (s.collective == Collective::kPointToPoint) {
    for (const auto& pair : s.rounds.at(0).groups) {
      sg4::Actor::create("send", w.hosts[pair.sites[0]], p2p_sender, &w, pair.sites[1]);
      sg4::Actor::create("recv", w.hosts[pair.sites[1]], p2p_receiver, &w, pair.sites[1]);
    }
  } else if (s.collective == Collective::kParameterServer) {
    const std::vector<int> workers(group.begin() + 1, group.end());
    sg4::Actor::create("server", w.hosts[group[0]], ps_server, &w, workers, group[0]);
    for (int d : workers) sg4::Actor::create("worker", w.hosts[d], ps_worker, &w, group[0], d);
  } else if (s.collective == Collective::kUnicastAllToAll) {
    for (std::size_t pos = 0; pos < group.size(); ++pos)
      sg4::Actor::create("a2a", w.hosts[group[pos]], a2a_member, &w, static_cast<int>(pos));
  } else {
    throw ConfigError("<command line>", 0, "--schedule",
                      "a host-based collective (ring family, p2p:, parameter-server:, "
                      "unicast-all-to-all) or reduction trees");
  }
}

int harness(int argc, char** argv) {
  std::vector<std::string> rest;
  World w{parse_scenario(argc, argv, rest), {}, {}};
  std::vector<std::string> sg_args{"aggnet-simgrid", "--log=root.thresh:critical"};
  sg_args.insert(sg_args.end(), rest.begin(), rest.end());
  std::vector<char*> sg_argv;
  for (auto& a : sg_args) sg_argv.push_back(a.data());
  int sg_argc = static_cast<int>(sg_argv.size());
  sg4::Engine engine(&sg_argc, sg_argv.data());
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/TCP-gamma:0");
  sg4::Engine::set_config("network/crosstraffic:0");
  std::shared_ptr<TreeRun> trees;
  if (w.scenario.schedule.collective == Collective::kReductionTree) {
    trees = start_reduction_trees(w.scenario);
  } else {
    build_platform(w);
    spawn_actors(w);
  }
  engine.run();
  double time_s = 0;
  for (const auto& [site, t] : trees ? tree_done_s(*trees) : w.done_s) time_s = std::max(time_s, t);
  nlohmann::json out{{"simulator", "simgrid"},
                     {"version", std::to_string(SIMGRID_VERSION_MAJOR) + "." +
                                     std::to_string(SIMGRID_VERSION_MINOR)},
                     {"time_s", time_s},
                     {"closed_form", closed_form_json(w.scenario)}};
  std::cout << out.dump(1) << "\n";
  return 0;
}

}  // namespace
}  // namespace aggnet::validation

int main(int argc, char** argv) {
  return aggnet::validation::run_main(aggnet::validation::harness, argc, argv);
}
