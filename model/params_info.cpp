// The parameter tables of the module parameter structs: the single source of the
// config keys (platform YAML, `--set` overrides, `aggnet params`, docs/modules).
// Each default_value is written as a user would write it and parses to exactly the
// struct's default (pinned by tests/config/test_params_info.cpp).
#include "model/params/cluster.h"
#include "model/param_info.h"
#include "model/params/fpga.h"
#include "model/params/network.h"

namespace aggnet {

const ModuleParamInfo& WanLinkParams::info() {
  static const ModuleParamInfo info{
      "WanLink",
      "One direction of a WAN link (YAML: links[*], defaults.link, colocated.link). "
      "Sources: MTU 2048 B is the DoubleZero underlay minimum; header 80 B is our framing "
      "estimate (preamble+IFG 20, Ethernet 18, IPv4 20, UDP 8, aggregation header 14).",
      {
          {"delay", Quantity::kTime, "ms", "0ms",
           "one-way propagation delay (RTT/2 for measured links); required on every link"},
          {"bandwidth", Quantity::kRate, "Gbps", "100Gbps", "line rate of each direction"},
          {"mtu", Quantity::kBytes, "B", "2048B", "maximum packet size, header included"},
          {"header", Quantity::kBytes, "B", "80B", "per-packet overhead on the wire"},
          {"jitter", Quantity::kTime, "ms", "0ms",
           "standard deviation of the extra one-way delay per chunk"},
      }};
  return info;
}

const ModuleParamInfo& SwitchParams::info() {
  static const ModuleParamInfo info{
      "MulticastSwitch",
      "A site's multicast switch, the edge device (YAML: defaults.switch, sites[*].switch).",
      {
          {"latency", Quantity::kTime, "ns", "0ns",
           "forwarding latency per chunk, counted from its last bit in"},
      }};
  return info;
}

const ModuleParamInfo& FpgaParams::info() {
  static const ModuleParamInfo info{
      "FpgaAggregator",
      "In-line FPGA aggregator pipeline and its buffer memory at a site's edge (YAML: "
      "defaults.fpga, sites[*].fpga). Throughput = datapath_width / 8 x clock bytes/s. "
      "Defaults are estimates: a 512-bit Versal AXI-stream datapath at 500 MHz (32 GB/s), "
      "64 cycles latency, 64 MiB buffer (on-chip SRAM scale of the AMD V80, 'tens of MB'; "
      "its 32 GB HBM is the other end of a buffer sweep).",
      {
          {"datapath_width", Quantity::kCount, "bit", "512",
           "width of the reduction datapath in bits (a multiple of 8)"},
          {"clock", Quantity::kFrequency, "MHz", "500MHz", "pipeline clock"},
          {"latency_cycles", Quantity::kCount, "cycle", "64", "pipeline fill latency in cycles"},
          {"buffer", Quantity::kBytes, "MiB", "64MiB",
           "buffer memory for aggregation slots (one chunk per slot)"},
      }};
  return info;
}

const ModuleParamInfo& ClusterParams::info() {
  static const ModuleParamInfo info{
      "Cluster",
      "The GPU cluster behind a site's edge and its access link (YAML: defaults.cluster, "
      "sites[*].cluster). Defaults are illustrative of one training step of a large model "
      "(our estimate).",
      {
          {"compute_time", Quantity::kTime, "s", "1s", "compute phase per training step"},
          {"access_bandwidth", Quantity::kRate, "Gbps", "400Gbps",
           "rate of the cluster <-> edge access link"},
          {"access_delay", Quantity::kTime, "us", "2us",
           "one-way delay of the cluster <-> edge access link"},
      }};
  return info;
}

const std::vector<ModuleParamInfo>& all_module_params() {
  static const std::vector<ModuleParamInfo> all{WanLinkParams::info(), SwitchParams::info(),
                                                FpgaParams::info(), ClusterParams::info()};
  return all;
}

}  // namespace aggnet
