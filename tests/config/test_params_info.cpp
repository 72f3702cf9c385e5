// The ParamInfo tables: exact key names, and default_value strings that parse to the
// structs' own defaults.
#include <gtest/gtest.h>

#include "config/yaml_reader.h"
#include "model/params/cluster.h"
#include "model/params/fpga.h"
#include "model/params/network.h"

namespace aggnet {
namespace {

std::uint64_t default_of(const ModuleParamInfo& m, const std::string& key) {
  for (const auto& p : m.params) {
    if (p.key == key) return parse_param_value(p, p.default_value).u;
  }
  ADD_FAILURE() << "no key " << key << " in " << m.module;
  return 0;
}

TEST(ParamsInfo, KeyNames) {
  const auto& all = all_module_params();
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].module, "WanLink");
  EXPECT_EQ(param_keys(all[0]),
            (std::vector<std::string>{"delay", "bandwidth", "mtu", "header", "jitter"}));
  EXPECT_EQ(all[1].module, "MulticastSwitch");
  EXPECT_EQ(param_keys(all[1]), (std::vector<std::string>{"latency"}));
  EXPECT_EQ(all[2].module, "FpgaAggregator");
  EXPECT_EQ(param_keys(all[2]),
            (std::vector<std::string>{"datapath_width", "clock", "latency_cycles", "buffer"}));
  EXPECT_EQ(all[3].module, "Cluster");
  EXPECT_EQ(param_keys(all[3]),
            (std::vector<std::string>{"compute_time", "access_bandwidth", "access_delay"}));
  for (const auto& m : all) {
    EXPECT_FALSE(m.description.empty());
    for (const auto& p : m.params) {
      EXPECT_FALSE(p.description.empty()) << p.key;
      EXPECT_FALSE(p.unit.empty()) << p.key;
    }
  }
}

TEST(ParamsInfo, DefaultsParseToStructDefaults) {
  const WanLinkParams l;
  EXPECT_EQ(default_of(WanLinkParams::info(), "delay"), l.delay_ps);
  EXPECT_EQ(default_of(WanLinkParams::info(), "bandwidth"), l.bandwidth_bps);
  EXPECT_EQ(default_of(WanLinkParams::info(), "mtu"), l.mtu_bytes);
  EXPECT_EQ(default_of(WanLinkParams::info(), "header"), l.header_bytes);
  EXPECT_EQ(default_of(WanLinkParams::info(), "jitter"), l.jitter_ps);
  const SwitchParams s;
  EXPECT_EQ(default_of(SwitchParams::info(), "latency"), s.latency_ps);
  const FpgaParams f;
  EXPECT_EQ(default_of(FpgaParams::info(), "datapath_width"), f.datapath_bits);
  EXPECT_EQ(default_of(FpgaParams::info(), "clock"), f.clock_hz);
  EXPECT_EQ(default_of(FpgaParams::info(), "latency_cycles"), f.latency_cycles);
  EXPECT_EQ(default_of(FpgaParams::info(), "buffer"), f.buffer_bytes);
  const ClusterParams c;
  EXPECT_EQ(default_of(ClusterParams::info(), "compute_time"), c.compute_ps);
  EXPECT_EQ(default_of(ClusterParams::info(), "access_bandwidth"), c.access_bandwidth_bps);
  EXPECT_EQ(default_of(ClusterParams::info(), "access_delay"), c.access_delay_ps);
  // And the hand values from the headers' comments.
  EXPECT_EQ(f.buffer_bytes, 67'108'864ull);
  EXPECT_EQ(l.bandwidth_bps, 100'000'000'000ull);
}

}  // namespace
}  // namespace aggnet
