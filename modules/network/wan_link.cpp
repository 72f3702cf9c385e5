#include "modules/network/wan_link.h"

#include <algorithm>

#include "common/units.h"
#include "modules/core/chunk.h"
#include "modules/core/time.h"

namespace aggnet {

using sc_core::SC_PS;
using sc_core::sc_time;

WanLink::WanLink(sc_core::sc_module_name name, const WanLinkParams& params, bool jitter_enabled,
                 std::uint64_t seed)
    : sc_module(name),
      in("in"),
      out("out"),
      params_(params),
      delay_(ps_time(params.delay_ps)),
      jitter_enabled_(jitter_enabled && params.jitter_ps > 0),
      rng_(seed),
      input_peq_(this, &WanLink::on_input),
      arrivals_("arrivals", [this](tlm::tlm_generic_payload& t) { on_arrival(t); }) {
  in.register_nb_transport_fw(this, &WanLink::nb_transport_fw);
}

tlm::tlm_sync_enum WanLink::nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                            sc_time& delay) {
  if (delay == sc_core::SC_ZERO_TIME) {
    accept(trans);
  } else {
    input_peq_.notify(trans, phase, delay);
  }
  return tlm::TLM_COMPLETED;
}

void WanLink::on_input(tlm::tlm_generic_payload& trans, const tlm::tlm_phase&) { accept(trans); }

void WanLink::accept(tlm::tlm_generic_payload& trans) {
  const sc_time now = sc_core::sc_time_stamp();
  const auto& chunk = chunk_of(trans);
  const std::uint64_t wire =
      aggnet::wire_bytes(chunk.payload_bytes, params_.mtu_bytes, params_.header_bytes);
  const sc_time serialization = ps_time(serialization_ps(wire, params_.bandwidth_bps));
  const sc_time start = std::max(now, busy_until_);
  busy_until_ = start + serialization;
  sc_time arrival = busy_until_ + delay_;
  if (jitter_enabled_) arrival = std::max(arrival + jitter_sample(), last_arrival_);
  last_arrival_ = arrival;

  queueing_ns_.add((start - now).to_seconds() * 1e9);
  busy_ += serialization;
  bytes_in_flight_ += wire;
  payload_bytes_ += chunk.payload_bytes;
  wire_bytes_ += wire;
  ++chunks_;
  arrivals_.notify(trans, arrival - now);
}

void WanLink::on_arrival(tlm::tlm_generic_payload& trans) {
  bytes_in_flight_ -=
      aggnet::wire_bytes(chunk_of(trans).payload_bytes, params_.mtu_bytes, params_.header_bytes);
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_time zero = sc_core::SC_ZERO_TIME;
  out->nb_transport_fw(trans, phase, zero);
}

sc_time WanLink::jitter_sample() {
  const sc_time now = sc_core::sc_time_stamp();
  if (now >= jitter_until_) {
    // Extra one-way delay: |N(0, jitter)|, held for one jitter epoch.
    std::normal_distribution<double> dist(0.0, static_cast<double>(params_.jitter_ps));
    jitter_ = ps_time(static_cast<std::uint64_t>(std::abs(dist(rng_))));
    jitter_until_ = now + ps_time(kJitterEpochPs);
  }
  return jitter_;
}

double WanLink::utilization(const sc_time& window) const {
  return window == sc_core::SC_ZERO_TIME ? 0.0 : busy_.to_seconds() / window.to_seconds();
}

std::vector<Statistic> WanLink::statistics(const sc_time& window) const {
  return {
      {"chunks", static_cast<double>(chunks_), "chunks carried"},
      {"payload_bytes", static_cast<double>(payload_bytes_), "gradient bytes carried"},
      {"wire_bytes", static_cast<double>(wire_bytes_), "bytes on the wire incl. headers"},
      {"busy_time_s", busy_.to_seconds(), "total serialization time"},
      {"utilization", utilization(window), "busy time / simulated time"},
      {"queueing_delay_mean_ns", queueing_ns_.mean(), "mean wait before serialization"},
      {"queueing_delay_max_ns", queueing_ns_.max(), "max wait before serialization"},
  };
}

std::vector<NamedHistogram> WanLink::histograms() const {
  return {{"queueing_delay_ns", &queueing_ns_, "wait before serialization starts"}};
}

}  // namespace aggnet
