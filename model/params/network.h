// Parameters of the network modules, in plain units (no SystemC types), so the
// platform loader and the analytic time model can use them without a kernel.
#pragma once

#include <cstdint>

#include "model/param_info.h"

namespace aggnet {

/// One direction of a WAN (or access / data-centre) link.
/// Defaults: MTU 2048 B is the reference network's underlay minimum (DoubleZero
/// contributor requirements); header 80 B = preamble+IFG 20 + Ethernet 18 + IPv4 20 +
/// UDP 8 + aggregation header 14 (our estimate of the framing).
struct WanLinkParams {
  std::uint64_t delay_ps = 0;                     ///< one-way propagation delay
  std::uint64_t bandwidth_bps = 100'000'000'000;  ///< line rate
  std::uint64_t mtu_bytes = 2048;                 ///< max packet size, header included
  std::uint64_t header_bytes = 80;                ///< per-packet overhead on the wire
  std::uint64_t jitter_ps = 0;                    ///< std-dev of extra one-way delay
  static const ModuleParamInfo& info();
};

/// A site's multicast switch.
struct SwitchParams {
  std::uint64_t latency_ps = 0;  ///< forwarding latency per chunk (after last bit in)
  static const ModuleParamInfo& info();
};

}  // namespace aggnet
