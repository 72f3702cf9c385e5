#include "modules/network/multicast_switch.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "modules/core/delivery_hint.h"
#include "modules/core/event_calendar.h"
#include "modules/core/time.h"
#include "modules/network/wan_link.h"

namespace aggnet {

MulticastSwitch::MulticastSwitch(sc_core::sc_module_name name, const SwitchParams& params)
    : sc_module(name),
      in("in"),
      out("out"),
      latency_(ps_time(params.latency_ps)),
      multicast_latency_(latency_),
      params_(params),
      peq_(this, &MulticastSwitch::on_ready) {
  // A delivering link fetches three lines from the multicast line (forward_multicast):
  // the default set must be the two after it.
  if (reinterpret_cast<const char*>(default_inline_.data()) !=
      reinterpret_cast<const char*>(&multicast_latency_) + 64)
    throw std::logic_error("MulticastSwitch: the default set does not follow its multicast line");
  in.bind(*this);
  refresh_entries();
}

void MulticastSwitch::refresh_entries() {
  tree_entries_ = tree_lists_.data();
  tree_count_ = tree_lists_.size();
  route_entries_ = routes_.data();
  default_words_ =
      default_trees_.size() <= kInlineDefaultWords ? default_inline_.data() : default_trees_.data();
}

void MulticastSwitch::set_unicast_route(int dst_site, int port) {
  if (dst_site < 0) throw std::invalid_argument(std::string(name()) + ": negative site");
  // Rerouting during the run (a refused route leaves the old one); before it the ports are
  // not bound yet, and start_of_simulation checks every route.
  if (ports_bound_) check_unicast_port(static_cast<std::size_t>(dst_site), port);
  if (static_cast<std::size_t>(dst_site) >= unicast_.size()) unicast_.resize(dst_site + 1, -1);
  unicast_[dst_site] = port < 0 ? -1 : port;
  forget_recent();
}

void MulticastSwitch::check_unicast_port(std::size_t dst_site, int port) const {
  if (port >= 0 && static_cast<std::size_t>(port) >= egress_.size()) {
    throw std::invalid_argument(std::string(name()) + ": the route to site " +
                                std::to_string(dst_site) + " leaves on port " +
                                std::to_string(port) + ", but the switch has " +
                                std::to_string(egress_.size()) + " ports");
  }
}

// From the destination's port: no per-destination table of sinks (at 1,000 sites that
// would be 16 MB of the switches', written at the start of the simulation).
const ChunkSink& MulticastSwitch::remember_unicast_sink(int dst_site) {
  static const ChunkSink unbound;
  const auto dst = static_cast<std::size_t>(dst_site);  // negative: out of range
  if (dst >= unicast_.size()) return unbound;
  const auto port = static_cast<std::size_t>(unicast_[dst]);  // -1: out of range
  if (port >= egress_.size() || !egress_[port].bound()) return unbound;
  const ChunkSink& sink = egress_[port];
  const std::uint32_t entry = recent_next_;
  recent_next_ ^= 1;
  recent_dst_[entry] = dst_site;
  recent_sink_[entry] = sink;
  return recent_sink_[entry];
}

void MulticastSwitch::clear_multicast_group(int tree_id) {
  drop_compact_entries();
  if (tree_id >= 0 && static_cast<std::size_t>(tree_id) < tree_lists_.size()) {
    tree_lists_[tree_id] = 0;
    mark_default(static_cast<std::size_t>(tree_id), false);
  }
  wide_lists_.erase(tree_id);
}

void MulticastSwitch::set_multicast_group(int tree_id, const std::vector<int>& ports) {
  if (ports.empty()) {
    throw std::invalid_argument(std::string(name()) + ": multicast group " +
                                std::to_string(tree_id) + " has no egress port");
  }
  if (tree_id < 0) throw std::invalid_argument(std::string(name()) + ": negative tree id");
  constexpr std::size_t kMax = 0xFFFF;
  const bool out_of_range = std::any_of(ports.begin(), ports.end(), [](int p) {
    return p < 0 || static_cast<std::size_t>(p) > kMax;
  });
  if (out_of_range || ports.size() > kMax) {
    throw std::invalid_argument(std::string(name()) + ": multicast group " +
                                std::to_string(tree_id) + " has a port outside [0, 65535] or " +
                                "more than 65,535 ports");
  }
  // During the run (rerouting) the ports are bound: a list is checked before it is kept.
  if (ports_bound_ && missing_port(ports) >= 0) throw_missing_port(tree_id, missing_port(ports));
  drop_compact_entries();
  if (static_cast<std::size_t>(tree_id) >= tree_lists_.size()) {
    tree_lists_.resize(tree_id + 1, 0);
    default_trees_.resize((tree_lists_.size() + 63) / 64, 0);
    refresh_entries();
  }
  const std::uint32_t list = list_index(ports);
  wide_lists_.erase(tree_id);
  if (list >= kWideList) wide_lists_[tree_id] = list;
  tree_lists_[tree_id] = static_cast<std::uint16_t>(std::min<std::uint32_t>(list, kWideList));
  mark_default(static_cast<std::size_t>(tree_id), default_list_ != 0 && list == default_list_);
}

// The list most trees leave on (the first such if several), and its trees marked.
void MulticastSwitch::choose_default_list() {
  std::vector<std::uint32_t> trees_on(lists_.size(), 0);
  for (std::uint16_t list : tree_lists_)
    if (list != 0 && list != kWideList) ++trees_on[list];
  default_list_ = 0;
  for (std::uint32_t list = 1; list < trees_on.size(); ++list)
    if (trees_on[list] > trees_on[default_list_]) default_list_ = list;
  for (std::size_t tree = 0; tree < tree_lists_.size(); ++tree)
    mark_default(tree, default_list_ != 0 && tree_lists_[tree] == default_list_);
}

// The index of `ports` in lists_, added if new. The order is the list's: a chunk leaves
// on the second to the last port in it, then on the first.
std::uint32_t MulticastSwitch::list_index(const std::vector<int>& ports) {
  const auto [it, added] =
      list_indices_.try_emplace(ports, static_cast<std::uint32_t>(lists_.size()));
  if (!added) return it->second;
  lists_.push_back(ports);
  routes_.emplace_back();
  refresh_entries();
  // Rerouting during the run; before it the ports are not bound yet, and
  // start_of_simulation resolves every list.
  if (ports_bound_) resolve_route(it->second);
  return it->second;
}

int MulticastSwitch::missing_port(const std::vector<int>& ports) const {
  for (int port : ports)
    if (static_cast<std::size_t>(port) >= egress_.size()) return port;
  return -1;
}

void MulticastSwitch::throw_missing_port(int tree_id, int port) const {
  throw std::invalid_argument(std::string(name()) + ": multicast group " + std::to_string(tree_id) +
                              " leaves on port " + std::to_string(port) + ", but the switch has " +
                              std::to_string(egress_.size()) + " ports");
}

// A list naming a port the switch lacks gets no route (start_of_simulation reports it if
// a tree uses it).
void MulticastSwitch::resolve_route(std::uint32_t list) {
  const std::vector<int>& ports = lists_[list];
  Route route;
  if (missing_port(ports) < 0) {
    route.count = static_cast<std::uint32_t>(ports.size());
    route.offset = static_cast<std::uint32_t>(spilled_ports_.size());
  }
  route.forwarded = routes_[list].forwarded;
  for (std::uint32_t i = 0; i < route.count; ++i) {
    if (i < kInlineSinks) {
      route.first[i] = egress_[static_cast<std::size_t>(ports[i])];
    } else {
      spilled_ports_.push_back(static_cast<std::uint16_t>(ports[i]));  // at most 65,535
    }
  }
  routes_[list] = route;
}

std::vector<int> MulticastSwitch::multicast_ports(int tree_id) const {
  return lists_[list_of(tree_id)];
}

tlm::tlm_sync_enum MulticastSwitch::nb_transport_fw(tlm::tlm_generic_payload& trans,
                                                    tlm::tlm_phase& /*phase: BEGIN_REQ*/,
                                                    sc_core::sc_time& delay) {
  forward_after(trans, delay + latency_);
  return tlm::TLM_COMPLETED;
}

void MulticastSwitch::forward_after(tlm::tlm_generic_payload& trans,
                                    const sc_core::sc_time& ready) {
  if (ready == sc_core::SC_ZERO_TIME) {
    forward(trans);
  } else {
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    peq_.notify(trans, phase, EventCalendar::kernel_delay(ready));
  }
}

void MulticastSwitch::start_of_simulation() {
  egress_.clear();
  for (int port = 0; port < static_cast<int>(out.size()); ++port)
    egress_.push_back(ChunkSink::of(out[port], this));
  forget_recent();
  for (std::size_t dst = 0; dst < unicast_.size(); ++dst) check_unicast_port(dst, unicast_[dst]);
  spilled_ports_.clear();
  for (std::uint32_t list = 1; list < lists_.size(); ++list) resolve_route(list);
  for (int tree = 0; tree < static_cast<int>(tree_lists_.size()); ++tree) {
    const std::uint32_t list = list_of(tree);
    if (list != 0 && routes_[list].count == 0) throw_missing_port(tree, missing_port(lists_[list]));
  }
  choose_default_list();
  build_compact_entries();
  ports_bound_ = true;
  if (share_request_ > 0 && !EventCalendar::current().sampled_at_timesteps()) build_fanout_log();
}

// Only while every list index fits a byte.
void MulticastSwitch::build_compact_entries() {
  compact_ = nullptr;
  compact_entries_.clear();
  if (lists_.size() > 256 || tree_count_ == 0) return;
  compact_nibbles_ = lists_.size() <= 16;
  compact_entries_.assign(compact_nibbles_ ? (tree_count_ + 1) / 2 : tree_count_, 0);
  for (std::size_t tree = 0; tree < tree_count_; ++tree) {
    const auto list = static_cast<std::uint8_t>(tree_lists_[tree]);
    if (compact_nibbles_) {
      compact_entries_[tree / 2] |= static_cast<std::uint8_t>(list << (4 * (tree % 2)));
    } else {
      compact_entries_[tree] = list;
    }
  }
  compact_ = compact_entries_.data();
}

// The lists with share_request_ or more ports bound directly to WanLinks.
void MulticastSwitch::build_fanout_log() {
  port_links_.assign(out.size(), nullptr);
  for (std::size_t port = 0; port < out.size(); ++port) {
    auto* link = dynamic_cast<WanLink*>(out[static_cast<int>(port)]);
    if (link != nullptr && egress_[port] == static_cast<NbTarget*>(link)->chunk_sink())
      port_links_[port] = link;
  }
  auto log = std::make_unique<FanoutLog>(static_cast<std::uint32_t>(out.size()));
  shared_.assign(lists_.size(), SharedList{});
  bool any = false;
  for (std::uint32_t list = 1; list < lists_.size(); ++list) {
    const std::vector<int>& ports = lists_[list];
    std::vector<std::uint32_t> fed;
    for (int port : ports)
      if (port_links_[static_cast<std::size_t>(port)])
        fed.push_back(static_cast<std::uint32_t>(port));
    if (routes_[list].count == 0 || fed.size() < share_request_) continue;
    SharedList& shared = shared_[list];
    routes_[list].shared = 1;
    shared.set = log->add_members(fed);
    shared.members = static_cast<std::uint32_t>(fed.size());
    for (std::size_t i = 0; i < kInlineSinks && i < ports.size(); ++i)
      shared.first[i] = static_cast<std::uint16_t>(ports[i]);
    any = true;
  }
  if (!any) return;
  for (std::uint32_t port = 0; port < port_links_.size(); ++port)
    if (port_links_[port] != nullptr) port_links_[port]->attach_fanout(*log, port);
  fanout_log_ = std::move(log);
}

std::size_t MulticastSwitch::shared_lists() const {
  if (!fanout_log_) return 0;
  return static_cast<std::size_t>(std::count_if(
      shared_.begin(), shared_.end(), [](const SharedList& s) { return s.set != kNoSet; }));
}

// Not through nb_transport_fw, a virtual call: the switch's vtable pointer is on a line
// of its own, a miss per crossing at hundreds of sites.
// The latency from the line the forward reads next.
void MulticastSwitch::receive(tlm::tlm_generic_payload& trans) {
  forward_after(trans, chunk_of(trans).tree_id < 0 ? latency_ : multicast_latency_);
}

void MulticastSwitch::on_ready(tlm::tlm_generic_payload& trans, const tlm::tlm_phase&) {
  forward(trans);
}

void MulticastSwitch::forward(tlm::tlm_generic_payload& trans) {
  const auto& chunk = chunk_of(trans);
  if (chunk.tree_id < 0) {
    forward_unicast(trans, chunk.dst_site);
  } else {
    forward_multicast(trans, chunk.tree_id);
  }
}

void MulticastSwitch::forward_unicast(tlm::tlm_generic_payload& trans, int dst_site) {
  ++unicast_forwarded_;
  const ChunkSink& sink = unicast_sink(dst_site);
  if (sink.bound()) {
    sink(trans);
    return;
  }
  ++unroutable_;  // unreachable after a link failure: dropped
  trans.release();
}

void MulticastSwitch::forward_multicast(tlm::tlm_generic_payload& trans, int tree_id) {
  // The link delivering here fetches this switch's multicast line and the default set
  // after it ahead of its next arrival, not the next link's lines: most of a tree's hops
  // end at a leaf, which hands over to no link.
  DeliveryHint::claim(&multicast_latency_);
  if (local_hint_ != nullptr) {
    __builtin_prefetch(local_hint_);
    __builtin_prefetch(local_hint_ + 64);
  }
  // By index, not by reference: a send may reroute, which can add routes (a route once
  // made never changes).
  const std::uint32_t list = multicast_list(tree_id);
  ++route_entries_[list].forwarded;
  const std::uint32_t count = route_entries_[list].count;
  if (count == 0) {  // this site left the tree when it was rerouted: dropped
    ++unroutable_;
    trans.release();
    return;
  }
  if (route_entries_[list].shared != 0) return fan_out_shared(trans, list, count);
  // Every port gets the same transaction, one reference each (taken before any is sent:
  // a link that is down releases its reference at once).
  for (std::uint32_t i = 1; i < count; ++i) trans.acquire();
  for (std::uint32_t i = 1; i < count; ++i) sink_at(route_entries_[list], i)(trans);
  route_entries_[list].first[0](trans);
}

// As forward_multicast's loop, in its order, but only the links not scheduled take the
// chunk now (the calendar entries they make are the same, made in the same order); the
// others take it from the log.
void MulticastSwitch::fan_out_shared(tlm::tlm_generic_payload& trans, std::uint32_t list,
                                     std::uint32_t count) {
  const SharedList& shared = shared_[list];  // (made once, at the start)
  for (std::uint32_t i = 1; i < count; ++i) trans.acquire();
  fanout_log_->append(trans, EventCalendar::now(), shared.set, shared.members);
  for (std::uint32_t n = 1; n <= count; ++n) {
    const std::uint32_t i = n % count;
    // By index: a send may reroute, which can add routes.
    const std::uint32_t port = i < kInlineSinks
                                   ? shared.first[i]
                                   : spilled_ports_[route_entries_[list].offset + i - kInlineSinks];
    WanLink* const link = port_links_[port];
    if (link == nullptr) {
      sink_at(route_entries_[list], i)(trans);
    } else if (fanout_log_->direct(port)) {
      link->catch_up();
    }
  }
}

std::uint64_t MulticastSwitch::forwarded() const {
  std::uint64_t multicast = 0;
  for (const Route& route : routes_) multicast += route.forwarded;
  return unicast_forwarded_ + multicast;
}

// Each multicast chunk forwarded on a list of n ports took n - 1 extra references.
std::uint64_t MulticastSwitch::replicated() const {
  std::uint64_t extra = 0;
  for (const Route& route : routes_)
    if (route.count > 0) extra += route.forwarded * (route.count - 1);
  return extra;
}

std::vector<Statistic> MulticastSwitch::statistics() const {
  return {{"forwarded", static_cast<double>(forwarded()), "chunks received and forwarded"},
          {"replicated", static_cast<double>(replicated()),
           "extra egress ports a multicast chunk left on (a reference each, no copy)"},
          {"unroutable", static_cast<double>(unroutable_),
           "chunks dropped without a route (a link failure cut the destination off)"}};
}

}  // namespace aggnet
