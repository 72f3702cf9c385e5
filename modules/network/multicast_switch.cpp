#include "modules/network/multicast_switch.h"

#include <stdexcept>
#include <string>

#include "modules/core/event_calendar.h"
#include "modules/core/time.h"

namespace aggnet {

MulticastSwitch::MulticastSwitch(sc_core::sc_module_name name, const SwitchParams& params,
                                 ChunkPool& pool)
    : sc_module(name),
      in("in"),
      out("out"),
      params_(params),
      latency_(ps_time(params.latency_ps)),
      pool_(pool),
      peq_(this, &MulticastSwitch::on_ready) {
  in.register_nb_transport_fw(this, &MulticastSwitch::nb_transport_fw);
}

void MulticastSwitch::set_unicast_route(int dst_site, int port) {
  if (dst_site < 0) throw std::invalid_argument(std::string(name()) + ": negative site");
  if (static_cast<std::size_t>(dst_site) >= unicast_.size()) unicast_.resize(dst_site + 1, -1);
  unicast_[dst_site] = port < 0 ? -1 : port;
}

void MulticastSwitch::clear_multicast_group(int tree_id) {
  if (tree_id >= 0 && static_cast<std::size_t>(tree_id) < tree_index_.size() &&
      tree_index_[tree_id] >= 0)
    tree_ports_[tree_index_[tree_id]].clear();
}

void MulticastSwitch::set_multicast_group(int tree_id, std::vector<int> ports) {
  if (ports.empty()) {
    throw std::invalid_argument(std::string(name()) + ": multicast group " +
                                std::to_string(tree_id) + " has no egress port");
  }
  if (tree_id < 0) throw std::invalid_argument(std::string(name()) + ": negative tree id");
  if (static_cast<std::size_t>(tree_id) >= tree_index_.size()) tree_index_.resize(tree_id + 1, -1);
  if (tree_index_[tree_id] < 0) {
    tree_index_[tree_id] = static_cast<std::int32_t>(tree_ports_.size());
    tree_ports_.emplace_back();
  }
  tree_ports_[tree_index_[tree_id]] = std::move(ports);
}

const std::vector<int>& MulticastSwitch::multicast_ports(int tree_id) const {
  static const std::vector<int> none;
  if (tree_id < 0 || static_cast<std::size_t>(tree_id) >= tree_index_.size()) return none;
  const std::int32_t i = tree_index_[tree_id];
  return i < 0 ? none : tree_ports_[i];
}

tlm::tlm_sync_enum MulticastSwitch::nb_transport_fw(int, tlm::tlm_generic_payload& trans,
                                                    tlm::tlm_phase& phase,
                                                    sc_core::sc_time& delay) {
  const sc_core::sc_time ready = delay + latency_;
  if (ready == sc_core::SC_ZERO_TIME) {
    forward(trans);
  } else {
    peq_.notify(trans, phase, EventCalendar::kernel_delay(ready));
  }
  return tlm::TLM_COMPLETED;
}

void MulticastSwitch::on_ready(tlm::tlm_generic_payload& trans, const tlm::tlm_phase&) {
  forward(trans);
}

void MulticastSwitch::forward(tlm::tlm_generic_payload& trans) {
  const auto& chunk = chunk_of(trans);
  ++forwarded_;
  if (chunk.tree_id < 0) {
    const int port =
        chunk.dst_site >= 0 && static_cast<std::size_t>(chunk.dst_site) < unicast_.size()
            ? unicast_[chunk.dst_site]
            : -1;
    if (port < 0) {  // unreachable after a link failure: dropped
      ++unroutable_;
      trans.release();
      return;
    }
    send(port, trans);
    return;
  }
  const auto& ports = multicast_ports(chunk.tree_id);
  if (ports.empty()) {  // this site left the tree when it was rerouted: dropped
    ++unroutable_;
    trans.release();
    return;
  }
  for (std::size_t i = 1; i < ports.size(); ++i) {
    ++replicated_;
    send(ports[i], pool_.clone(trans));
  }
  send(ports[0], trans);
}

void MulticastSwitch::send(int port, tlm::tlm_generic_payload& trans) {
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
  out[port]->nb_transport_fw(trans, phase, zero);
}

std::vector<Statistic> MulticastSwitch::statistics() const {
  return {{"forwarded", static_cast<double>(forwarded_), "chunks received and forwarded"},
          {"replicated", static_cast<double>(replicated_), "extra copies made by multicast"},
          {"unroutable", static_cast<double>(unroutable_),
           "chunks dropped without a route (a link failure cut the destination off)"}};
}

}  // namespace aggnet
