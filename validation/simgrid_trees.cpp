#include "validation/simgrid_trees.h"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/config_error.h"
#include "model/network_math.h"
#include "model/reduction_forest.h"
#include "model/routing.h"
#include "traffic/closed_form.h"

namespace sg4 = simgrid::s4u;

namespace aggnet::validation {

namespace {

// An own contribution on its way to its FPGA, a partial sum on its way to the parent's
// FPGA, or the complete sum on its way down.
enum class Kind { kInput, kSum, kResult };

struct Chunk {
  int tree = 0;
  std::uint64_t index = 0;
  std::uint64_t bytes = 0;  // payload
  Kind kind = Kind::kInput;
};

// A FIFO queue between actors. What an actor receives (an Inbox) is one: a mailbox
// would match one comm at a time, so a busy FPGA would hold back the arrivals behind it.
template <typename T>
class Queue {
 public:
  void push(T item) {
    const std::unique_lock lock(*mutex_);
    queue_.push_back(item);
    ready_->notify_all();
  }
  T pop() {
    std::unique_lock lock(*mutex_);
    while (queue_.empty()) ready_->wait(lock);
    T item = queue_.front();
    queue_.pop_front();
    return item;
  }

 private:
  sg4::MutexPtr mutex_ = sg4::Mutex::create();
  sg4::ConditionVariablePtr ready_ = sg4::ConditionVariable::create();
  std::deque<T> queue_;
};

using Inbox = Queue<const Chunk*>;

// A constant delay (a link's propagation, an FPGA's pipeline): what enters at t reaches
// its inbox at t + delay. Entries come in time order and leave in it, so one actor
// sleeping to each one's due time is exact.
struct DelayLine {
  struct Entry {
    double due_s;
    const Chunk* chunk;
    Inbox* to;
  };
  double delay_s = 0;
  Queue<Entry> entries;

  void push(const Chunk* c, Inbox* to) {
    entries.push({sg4::Engine::get_clock() + delay_s, c, to});
  }
  void run() {
    for (;;) {
      const Entry e = entries.pop();
      sg4::this_actor::sleep_until(e.due_s);
      e.to->push(e.chunk);
    }
  }
};

// A directed link as a FIFO output port: its wire (a SimGrid link at the link's bandwidth,
// no latency) carries one chunk at a time, the port's actor matching the chunks put into
// `wire` in their order; the propagation and the receiving switch's latency then pass in
// the port's delay line, so chunks overlap in flight as on the real link.
struct Port {
  WanLinkParams params;
  sg4::Host* host = nullptr;  // the port's actor: the wire's far end
  sg4::Mailbox* wire = nullptr;
  DelayLine* delay = nullptr;
  int to_site = 0;
  bool to_cluster = false;  // access down: into the cluster
};

}  // namespace

struct TreeRun {
  const Scenario& sc;
  Routing routing;
  ForestPlan plan;
  std::vector<std::vector<std::vector<int>>> children;  // [tree][site]
  std::vector<std::vector<int>> inputs;                 // [tree][site]: inputs of its sum
  std::map<std::pair<int, int>, Port> wan;              // (from, to)
  std::vector<Port> up, down;                           // [site]
  std::deque<Chunk> chunks;                             // every chunk sent, alive to the end
  std::map<int, double> done_s;

  std::deque<Inbox> fpga, sw, cluster;  // [site]
  std::deque<DelayLine> delays;         // the ports' propagation, the FPGAs' pipelines
  std::vector<DelayLine*> pipeline;     // [site]

  explicit TreeRun(const Scenario& s)
      : sc(s), routing(s.platform), fpga(n()), sw(n()), cluster(n()) {}
  DelayLine* delay_line(std::uint64_t delay_ps) {
    delays.emplace_back();
    delays.back().delay_s = static_cast<double>(delay_ps) * 1e-12;
    return &delays.back();
  }
  std::size_t n() const { return sc.platform.sites.size(); }
  bool member(int s) const {
    return std::find(plan.members.begin(), plan.members.end(), s) != plan.members.end();
  }
  std::uint64_t chunk_count() const { return num_chunks(sc.gradient_bytes, sc.chunk_bytes); }
  std::uint64_t bytes_of(std::uint64_t index) const {
    return std::min(sc.chunk_bytes, sc.gradient_bytes - index * sc.chunk_bytes);
  }
  // Hands a copy of `c` of `kind` to `port`'s wire; the port carries it when it is free.
  void send(const Port& port, const Chunk& c, Kind kind) {
    chunks.push_back(c);
    chunks.back().kind = kind;
    port.wire->put_init(&chunks.back(), message_wire_bytes(port.params, c.bytes, sc.chunk_bytes))
        ->detach();
  }
};

namespace {

double to_s(std::uint64_t ps) { return static_cast<double>(ps) * 1e-12; }

sg4::Link* wire_link(sg4::NetZone* zone, const std::string& name, const WanLinkParams& params) {
  return zone->create_link(name, static_cast<double>(params.bandwidth_bps) / 8.0)->seal();
}

void route(sg4::NetZone* zone, sg4::Host* from, sg4::Host* to, sg4::Link* link) {
  zone->add_route(from->get_netpoint(), to->get_netpoint(), nullptr, nullptr,
                  {sg4::LinkInRoute(link)}, false);
}

struct Hosts {
  std::vector<sg4::Host*> cluster, sw, fpga;
};

// Port `name` from host `from`: its wire to its own host, then `delay_ps` to `to_site`.
Port make_port(TreeRun& r, sg4::NetZone* zone, const std::string& name, const WanLinkParams& params,
               std::uint64_t delay_ps, sg4::Host* from, int to_site) {
  Port p;
  p.host = zone->create_host("port:" + name, 1);
  route(zone, from, p.host, wire_link(zone, "wire:" + name, params));
  p.params = params;
  p.delay = r.delay_line(delay_ps);
  p.to_site = to_site;
  p.wire = sg4::Mailbox::by_name("wire:" + name);
  return p;
}

Hosts build_platform(TreeRun& r) {
  const Platform& p = r.sc.platform;
  auto* zone = sg4::create_full_zone("trees");
  Hosts h;
  const int n = static_cast<int>(p.sites.size());
  for (int s = 0; s < n; ++s) {
    const auto& site = p.sites[s];
    h.cluster.push_back(zone->create_host("cluster:" + site.code, 1));
    h.sw.push_back(zone->create_host("switch:" + site.code, 1));
    h.fpga.push_back(zone->create_host("fpga:" + site.code, site.fpga.throughput_bytes_per_s()));
  }
  for (int s = 0; s < n; ++s) {
    const auto& site = p.sites[s];
    const WanLinkParams access = access_link(site);
    r.up.push_back(make_port(r, zone, "up:" + site.code, access,
                             access.delay_ps + site.sw.latency_ps, h.cluster[s], s));
    r.down.push_back(make_port(r, zone, "down:" + site.code, access, access.delay_ps, h.sw[s], s));
    r.down.back().to_cluster = true;
    r.pipeline.push_back(r.delay_line(site.fpga.latency_ps() + site.sw.latency_ps));
  }
  for (const auto& spec : p.links)
    for (auto [a, b] : {std::pair{spec.a, spec.b}, std::pair{spec.b, spec.a}}) {
      r.wan[{a, b}] = make_port(r, zone, p.sites[a].code + ">" + p.sites[b].code, spec.params,
                                spec.params.delay_ps + p.sites[b].sw.latency_ps, h.sw[a], b);
    }
  zone->seal();
  return h;
}

// Daemons (the run ends with the clusters): ports, FPGAs and switches serve forever.
void port_actor(TreeRun* r, const Port* port) {
  for (;;) {
    auto* c = port->wire->get<Chunk>();
    const auto s = static_cast<std::size_t>(port->to_site);
    Inbox* to = port->to_cluster           ? &r->cluster[s]
                : c->kind == Kind::kResult ? &r->sw[s]
                                           : &r->fpga[s];
    port->delay->push(c, to);
  }
}

// One FIFO server at the datapath rate (host speed = bytes/s): each input one service of
// its payload bytes; a slot's last input sends the sum through the pipeline (its latency)
// to the switch's output (the switch's latency).
void fpga_actor(TreeRun* r, int site) {
  std::map<std::pair<int, std::uint64_t>, int> held;
  for (;;) {
    const Chunk* c = r->fpga[static_cast<std::size_t>(site)].pop();
    sg4::this_actor::execute(static_cast<double>(c->bytes));
    const auto key = std::pair{c->tree, c->index};
    if (++held[key] < r->inputs[c->tree][site]) continue;
    held.erase(key);
    r->chunks.push_back(*c);
    r->chunks.back().kind =
        r->sc.schedule.forest[c->tree].root == site ? Kind::kResult : Kind::kSum;
    r->pipeline[static_cast<std::size_t>(site)]->push(&r->chunks.back(),
                                                      &r->sw[static_cast<std::size_t>(site)]);
  }
}

// A partial sum goes up to the parent; the complete sum is multicast down the tree edges
// and to the site's own cluster (an in-tree's only to its root's).
void switch_actor(TreeRun* r, int site) {
  for (;;) {
    const Chunk* c = r->sw[static_cast<std::size_t>(site)].pop();
    const ReductionTree& tree = r->sc.schedule.forest[c->tree];
    if (c->kind == Kind::kSum) {
      r->send(r->wan.at({site, tree.parent[site]}), *c, Kind::kSum);
      continue;
    }
    if (tree.broadcast)
      for (int child : r->children[c->tree][site]) r->send(r->wan.at({site, child}), *c, c->kind);
    if (r->member(site) && (tree.broadcast || site == tree.root))
      r->send(r->down[site], *c, Kind::kResult);
  }
}

// A member: one paced stream per tree (its chunk range from its offset, one chunk per
// interval; the streams merged in time order, ties the earlier tree first, as
// PacedSchedule), then every chunk index's result.
void cluster_actor(TreeRun* r, int site) {
  struct Stream {
    std::uint64_t next_ps, chunk, end, interval_ps;
    int tree;
  };
  std::vector<Stream> streams;
  for (std::size_t t = 0; t < r->sc.schedule.forest.size(); ++t)
    streams.push_back({r->plan.offset_ps[t][site], r->plan.ranges[t].first, r->plan.ranges[t].end,
                       r->sc.schedule.forest[t].pacing_interval_ps, static_cast<int>(t)});
  for (;;) {
    Stream* next = nullptr;
    for (auto& s : streams)
      if (s.chunk < s.end && (next == nullptr || s.next_ps < next->next_ps)) next = &s;
    if (next == nullptr) break;
    sg4::this_actor::sleep_until(to_s(next->next_ps));
    r->send(r->up[site], Chunk{next->tree, next->chunk, r->bytes_of(next->chunk)}, Kind::kInput);
    ++next->chunk;
    next->next_ps += next->interval_ps;
  }
  for (std::uint64_t i = 0; i < r->chunk_count(); ++i)
    r->cluster[static_cast<std::size_t>(site)].pop();
  r->done_s[site] = sg4::Engine::get_clock();
}

void plan(TreeRun& r) {
  RunOptions o;
  o.gradient_bytes = r.sc.gradient_bytes;
  o.chunk_bytes = r.sc.chunk_bytes;
  o.steps = 1;
  try {
    r.plan = plan_forest(r.sc.platform, r.routing, r.sc.schedule, o);
  } catch (const std::invalid_argument& e) {
    throw ConfigError("<command line>", 0, "--schedule", "a forest the control plane plans",
                      e.what());
  }
  for (const auto& tree : r.sc.schedule.forest) {
    r.children.push_back(tree_children(tree));
    auto& in = r.inputs.emplace_back();
    for (std::size_t s = 0; s < tree.parent.size(); ++s)
      in.push_back(static_cast<int>(r.children.back()[s].size()) +
                   (r.member(static_cast<int>(s)) ? 1 : 0));
  }
}

template <typename F, typename... Args>
void daemon(const std::string& name, sg4::Host* host, F f, Args... args) {
  sg4::Actor::create(name, host, f, args...)->daemonize();
}

}  // namespace

std::shared_ptr<TreeRun> start_reduction_trees(const Scenario& scenario) {
  auto r = std::make_shared<TreeRun>(scenario);
  plan(*r);
  const Hosts h = build_platform(*r);
  const int n = static_cast<int>(scenario.platform.sites.size());
  for (auto& [key, port] : r->wan) daemon("port", port.host, port_actor, r.get(), &port);
  for (int s = 0; s < n; ++s) {
    daemon("port", r->up[s].host, port_actor, r.get(), &r->up[s]);
    daemon("port", r->down[s].host, port_actor, r.get(), &r->down[s]);
    daemon("fpga", h.fpga[s], fpga_actor, r.get(), s);
    daemon("switch", h.sw[s], switch_actor, r.get(), s);
  }
  for (DelayLine& line : r->delays) daemon("delay", h.sw[0], [&line] { line.run(); });
  for (int s : r->plan.members)
    sg4::Actor::create("cluster", h.cluster[s], cluster_actor, r.get(), s);
  return r;
}

const std::map<int, double>& tree_done_s(const TreeRun& run) { return run.done_s; }

}  // namespace aggnet::validation
