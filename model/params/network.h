// Parameters of the network modules, in plain units (no SystemC types), so the
// platform loader and the analytic time model can use them without a kernel. Each
// struct's table declares its parameters once (model/param_info.h).
#pragma once

#include <cstdint>
#include <string>

#include "model/param_info.h"

namespace aggnet {

/// A link's jitter is |N(0, jitter)| of extra one-way delay, drawn anew every epoch
/// (modules/network/wan_link.h); the buffer sizing's jitter bound reads it too.
inline constexpr std::uint64_t kJitterEpochPs = 10'000'000'000;  // 10 ms

/// One direction of a WAN (or access / data-centre) link.
struct WanLinkParams {
  std::uint64_t delay_ps = 0;
  std::uint64_t bandwidth_bps = 100'000'000'000;
  std::uint64_t mtu_bytes = 2048;
  std::uint64_t header_bytes = 80;
  std::uint64_t jitter_ps = 0;
  static const ParamTable<WanLinkParams>& table();
};

inline const ParamTable<WanLinkParams>& WanLinkParams::table() {
  using P = WanLinkParams;
  static const ParamTable<P> table{
      "WanLink",
      "link",
      "One direction of a WAN link (YAML: links[*], defaults.link, colocated.link). "
      "Sources: MTU 2048 B is the DoubleZero underlay minimum; header 80 B is our framing "
      "estimate (preamble+IFG 20, Ethernet 18, IPv4 20, UDP 8, aggregation header 14).",
      {
          {"delay", &P::delay_ps, "one-way propagation delay (RTT/2 for measured links)",
           kRequiredDelay},
          {"bandwidth", &P::bandwidth_bps, "line rate of each direction", kPositive},
          {"mtu", &P::mtu_bytes, "maximum packet size, header included", kPositive},
          {"header", &P::header_bytes, "per-packet overhead on the wire"},
          {"jitter", &P::jitter_ps, "standard deviation of the extra one-way delay per chunk",
           kDelay},
      },
      {{"`mtu` > `header`", {"mtu", "header"}, [](const P& p) -> std::string {
          if (p.mtu_bytes > p.header_bytes) return "";
          return "expected an MTU larger than the per-packet header (" +
                 std::to_string(p.header_bytes) + " B), got mtu " + std::to_string(p.mtu_bytes) +
                 " B";
        }}}};
  return table;
}

/// A site's multicast switch.
struct SwitchParams {
  std::uint64_t latency_ps = 0;
  static const ParamTable<SwitchParams>& table();
};

inline const ParamTable<SwitchParams>& SwitchParams::table() {
  static const ParamTable<SwitchParams> table{
      "MulticastSwitch",
      "switch",
      "A site's multicast switch, the edge device (YAML: defaults.switch, sites[*].switch).",
      {
          {"latency", &SwitchParams::latency_ps,
           "forwarding latency per chunk, counted from its last bit in", kDelay},
      }};
  return table;
}

}  // namespace aggnet
