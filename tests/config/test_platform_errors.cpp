// One test per kind of bad input: each asserts the ConfigError names the file, the
// right (1-based) line and the key, in the one-line "<file>:<line>: <key>: ..." form.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/config_error.h"
#include "config/platform_loader.h"
#include "model/routing.h"
#include "tests/config/temp_files.h"

namespace aggnet {
namespace {

// A valid three-site platform; line numbers are 1-based.
const std::vector<std::string> kBase = {
    "name: tiny",                         // 1
    "sites:",                             // 2
    "  - {code: aaa, name: A}",           // 3
    "  - {code: bbb, name: B}",           // 4
    "  - {code: ccc, name: C}",           // 5
    "links:",                             // 6
    "  - {a: aaa, b: bbb, delay: 10ms}",  // 7
    "  - {a: bbb, b: ccc, delay: 20ms}",  // 8
};

/// kBase with line `line` (1-based) replaced by `text`; line kBase.size()+1 appends.
std::string with(std::size_t line, const std::string& text) {
  std::vector<std::string> lines = kBase;
  if (line == lines.size() + 1) {
    lines.push_back(text);
  } else {
    lines.at(line - 1) = text;
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string write_file(const std::string& yaml) {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  return test::write_temp(std::string("aggnet_") + info->name() + ".yaml", yaml);
}

/// Loads `yaml` and checks the error: file, line, key, and a fragment of the message.
void expect_error(const std::string& yaml, int line, const std::string& key,
                  const std::string& fragment, const std::vector<Override>& overrides = {}) {
  const std::string path = write_file(yaml);
  try {
    load_platform(path, overrides);
    FAIL() << "no ConfigError for:\n" << yaml;
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.file(), path) << what;
    EXPECT_EQ(e.line(), line) << what;
    EXPECT_EQ(e.key(), key) << what;
    const std::string head =
        path + ":" + std::to_string(line) + ": " + (key.empty() ? "" : key + ": ");
    EXPECT_EQ(what.rfind(head, 0), 0u) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

/// For --set problems: "--set: <key>: ..." with no line.
void expect_override_error(const Override& ov, const std::string& fragment) {
  const std::string path = write_file(with(8, kBase[7]));
  try {
    load_platform(path, {ov});
    FAIL() << "no ConfigError for --set " << ov.first << "=" << ov.second;
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.file(), "--set") << what;
    EXPECT_EQ(e.line(), 0) << what;
    EXPECT_EQ(e.key(), ov.first) << what;
    EXPECT_EQ(what.rfind("--set: " + ov.first + ": ", 0), 0u) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

TEST(PlatformErrors, BaseIsValid) {
  const Platform p = load_platform(write_file(with(8, kBase[7])));
  EXPECT_EQ(p.sites.size(), 3u);
  EXPECT_EQ(p.links.size(), 2u);
}

TEST(PlatformErrors, MalformedYaml) {
  // yaml-cpp reports "illegal map value" at the second ':' on line 9.
  expect_error(with(9, "defaults: link: x"), 9, "", "malformed YAML");
}

TEST(PlatformErrors, UnknownKey) {
  expect_error(with(7, "  - {a: aaa, b: bbb, delay: 10ms, bandwith: 10Gbps}"), 7,
               "links.aaa-bbb.bandwith",
               "unknown key, expected one of: a, b, source, delay, bandwidth");
}

TEST(PlatformErrors, UnknownTopLevelKey) {
  expect_error(with(9, "sitez: []"), 9, "sitez", "unknown key");
}

TEST(PlatformErrors, DelayIsPerLinkNotADefault) {
  expect_error(with(9, "defaults: {link: {delay: 3ms}}"), 9, "defaults.link.delay",
               "unknown key, expected one of: bandwidth, mtu, header, jitter");
}

TEST(PlatformErrors, UnknownCity) {
  expect_error(with(8, "  - {a: bbb, b: zzz, delay: 20ms}"), 8, "links.bbb-zzz.b",
               "expected a site code defined under sites (aaa, bbb, ccc), got 'zzz'");
}

TEST(PlatformErrors, ZeroBandwidthOnALink) {
  expect_error(with(7, "  - {a: aaa, b: bbb, delay: 10ms, bandwidth: 0Gbps}"), 7,
               "links.aaa-bbb.bandwidth", "expected a positive rate like '100Gbps', got '0Gbps'");
}

TEST(PlatformErrors, ZeroBandwidthInDefaults) {
  expect_error(with(9, "defaults: {link: {bandwidth: 0bps}}"), 9, "defaults.link.bandwidth",
               "positive rate");
}

TEST(PlatformErrors, NegativeBandwidth) {
  expect_error(with(7, "  - {a: aaa, b: bbb, delay: 10ms, bandwidth: -10Gbps}"), 7,
               "links.aaa-bbb.bandwidth", "negative values are not allowed), got '-10Gbps'");
}

TEST(PlatformErrors, DisconnectedGraph) {
  // aaa-bbb and ccc-ddd: ccc and ddd cannot be reached from aaa. Reported at `links:`.
  const std::string yaml =
      "name: tiny\nsites:\n  - {code: aaa}\n  - {code: bbb}\n  - {code: ccc}\n  - {code: ddd}\n"
      "links:\n  - {a: aaa, b: bbb, delay: 10ms}\n  - {a: ccc, b: ddd, delay: 20ms}\n";
  expect_error(yaml, 7, "links", "not reachable from 'aaa': ccc, ddd");
}

TEST(PlatformErrors, NoLinksAtAll) {
  // Without a links: list the error points at sites: (line 1).
  const std::string yaml = "sites:\n  - {code: aaa}\n  - {code: bbb}\n";
  expect_error(yaml, 1, "links", "not reachable from 'aaa': bbb");
}

TEST(PlatformErrors, BadBufferZero) {
  expect_error(with(5, "  - {code: ccc, name: C, fpga: {buffer: 0B}}"), 5, "sites.ccc.fpga.buffer",
               "expected a positive size");
}

TEST(PlatformErrors, DuplicateSite) {
  expect_error(with(4, "  - {code: aaa, name: B}"), 4, "sites.aaa.code",
               "duplicate site code (first defined at line 3)");
}

TEST(PlatformErrors, SelfLink) {
  expect_error(with(8, "  - {a: bbb, b: bbb, delay: 20ms}"), 8, "links.bbb-bbb",
               "two different sites");
}

TEST(PlatformErrors, DuplicateLinkEitherOrder) {
  expect_error(with(8, "  - {a: bbb, b: aaa, delay: 20ms}"), 8, "links.bbb-aaa",
               "already linked at line 7");
}

TEST(PlatformErrors, MtuNotAboveHeader) {
  expect_error(with(7, "  - {a: aaa, b: bbb, delay: 10ms, mtu: 80B}"), 7, "links.aaa-bbb.mtu",
               "expected an MTU larger than the per-packet header (80 B)");
}

TEST(PlatformErrors, MtuFromDefaultsReportedAtTheDefault) {
  expect_error(with(9, "defaults: {link: {header: 4KiB}}"), 9, "defaults.link.header",
               "MTU larger than the per-packet header (4096 B)");
}

TEST(PlatformErrors, MtuReportedAtTheLinksOwnKeyBeforeTheDefault) {
  const std::string yaml = with(7, "  - {a: aaa, b: bbb, delay: 10ms, header: 2KiB}") +
                           "defaults: {link: {mtu: 1500B}}\n";
  expect_error(yaml, 7, "links.aaa-bbb.header", "MTU larger than the per-packet header (2048 B)");
}

TEST(PlatformErrors, LatencyCyclesDoNotWrapIn64Bits) {
  // 2e7 cycles x 1e12 ps/s is past 2^64 before the division by the clock; the latency
  // itself, 40 ms at 500 MHz, fits.
  const Platform p =
      load_platform(write_file(with(5, "  - {code: ccc, name: C, fpga: {latency_cycles: 2e7}}")));
  EXPECT_EQ(p.sites[2].fpga.latency_cycles, 20'000'000ull);
  EXPECT_EQ(p.sites[2].fpga.latency_ps(), 40'000'000'000ull);
}

TEST(PlatformErrors, LatencyBeyond64BitPicoseconds) {
  expect_error(with(5, "  - {code: ccc, name: C, fpga: {latency_cycles: 2e7, clock: 1Hz}}"), 5,
               "sites.ccc.fpga.latency_cycles",
               "expected a pipeline latency latency_cycles / clock of at most 1000 s, got 20000000 "
               "cycles at 1 Hz");
}

TEST(PlatformErrors, LatencyOverflowFromASitesClockNamesTheSitesKey) {
  const std::string yaml = with(5, "  - {code: ccc, name: C, fpga: {clock: 1Hz}}") +
                           "defaults: {fpga: {latency_cycles: 20000000}}\n";
  expect_error(yaml, 5, "sites.ccc.fpga.clock", "of at most 1000 s");
}

TEST(PlatformErrors, LatencyOverflowInDefaults) {
  expect_error(with(9, "defaults: {fpga: {clock: 1Hz, latency_cycles: 2e7}}"), 9,
               "defaults.fpga.latency_cycles", "of at most 1000 s");
}

TEST(PlatformErrors, ThroughputBeyond64Bits) {
  expect_error(with(4, "  - {code: bbb, name: B, fpga: {datapath_width: 1e12}}"), 4,
               "sites.bbb.fpga.datapath_width",
               "expected a throughput datapath_width x clock below 2^64 bit/s, got "
               "1000000000000 bit at 500000000 Hz");
}

TEST(PlatformErrors, CountTooLarge) {
  expect_error(with(4, "  - {code: bbb, name: B, fpga: {latency_cycles: 1e20}}"), 4,
               "sites.bbb.fpga.latency_cycles", "(value too large), got '1e20'");
}

TEST(PlatformErrors, DatapathWidthNotAMultipleOf8) {
  expect_error(with(4, "  - {code: bbb, name: B, fpga: {datapath_width: 100}}"), 4,
               "sites.bbb.fpga.datapath_width",
               "expected a positive multiple of 8 bits like '512', got '100'");
}

TEST(PlatformErrors, MissingDelay) {
  expect_error(with(8, "  - {a: bbb, b: ccc}"), 8, "links.bbb-ccc.delay", "missing required key");
}

TEST(PlatformErrors, DelayWithoutUnit) {
  expect_error(with(8, "  - {a: bbb, b: ccc, delay: 20}"), 8, "links.bbb-ccc.delay",
               "a unit is required), got '20'");
}

TEST(PlatformErrors, EmptySites) {
  expect_error("name: tiny\nsites: []\n", 2, "sites", "expected at least two sites");
}

// Averaging needs two sites: one was loaded, then its run failed in SystemC's binding, its
// bound and its schedules each their own way. Named at the line of `sites:` (a block list
// starts on the next line).
TEST(PlatformErrors, OneSite) {
  const std::string yaml = "name: one\nsites:\n  - {code: aaa, name: A}\n";
  // The head (file:2: sites: ) and this tail are the whole line.
  expect_error(yaml, 2, "sites", "expected at least two sites (averaging needs two), got 1");
  const std::string path = write_file(yaml);
  EXPECT_THROW(
      {
        try {
          load_platform(path, {});
        } catch (const ConfigError& e) {
          EXPECT_STREQ(e.what(),
                       (path + ":2: sites: expected at least two sites (averaging needs two), "
                               "got 1")
                           .c_str());
          throw;
        }
      },
      ConfigError);
}

TEST(PlatformErrors, SitesWrongType) {
  expect_error("name: tiny\nsites: 3\n", 2, "sites", "expected a list of sites");
}

TEST(PlatformErrors, BadSiteCode) {
  expect_error(with(4, "  - {code: B-B}"), 4, "sites[1].code", "lowercase letters");
}

TEST(PlatformErrors, LatitudeOutOfRange) {
  expect_error(with(3, "  - {code: aaa, lat_deg: 91}"), 3, "sites.aaa.lat_deg",
               "expected a number in [-90, 90], got '91'");
}

TEST(PlatformErrors, OverrideUnknownPath) {
  expect_override_error({"defaults.link.bandwdth", "1Gbps"}, "unknown key 'bandwdth'");
  expect_override_error({"defaults.lnk.bandwidth", "1Gbps"}, "unknown key 'lnk'");
  expect_override_error({"sites.zzz.fpga.buffer", "1GiB"}, "no site 'zzz'");
  expect_override_error({"links.aaa-ccc.delay", "1ms"}, "no link between 'aaa' and 'ccc'");
  expect_override_error({"foo", "1"}, "unknown key 'foo'");
}

TEST(PlatformErrors, OverrideBadValue) {
  // Reported under the link's name in the file (aaa-bbb), whichever order --set used.
  expect_override_error({"links.aaa-bbb.delay", "40"}, "a unit is required), got '40'");
  expect_override_error({"sites.bbb.fpga.buffer", "0B"}, "expected a positive size");
  expect_override_error({"sites.bbb.fpga.latency_cycles", "1e19"}, "of at most 1000 s");
}

// memory_tiers: (docs/memory-tiers.md): the keys given replace those tiers' defaults.
TEST(PlatformErrors, MemoryTiersReplaceTheDefaults) {
  const Platform p = load_platform(
      write_file(with(9,
                      "memory_tiers: {hbm: {capacity: 16GiB, bandwidth: 800GB/s, cost: 12.5, "
                      "energy: 3.5}}")));
  ASSERT_EQ(p.memory_tiers.size(), 3u);
  const MemoryTier& hbm = p.memory_tiers[1];
  EXPECT_EQ(hbm.name, "HBM");
  EXPECT_EQ(hbm.capacity_bytes, 16ull << 30);
  EXPECT_DOUBLE_EQ(hbm.bandwidth_bytes_per_s, 800e9);  // 6.4 Tbps / 8
  EXPECT_DOUBLE_EQ(hbm.cost_usd_per_gib, 12.5);
  EXPECT_DOUBLE_EQ(hbm.energy_pj_per_bit, 3.5);
  EXPECT_EQ(p.memory_tiers[0].capacity_bytes, default_memory_tiers()[0].capacity_bytes);
  EXPECT_DOUBLE_EQ(p.memory_tiers[2].cost_usd_per_gib, default_memory_tiers()[2].cost_usd_per_gib);
  // Without the section: the cited defaults.
  const Platform d = load_platform(write_file(with(8, kBase[7])));
  EXPECT_EQ(d.memory_tiers[1].capacity_bytes, 8ull << 30);
  EXPECT_DOUBLE_EQ(d.memory_tiers[2].bandwidth_bytes_per_s, 77e9);
}

TEST(PlatformErrors, MemoryTierErrors) {
  expect_error(with(9, "memory_tiers: {hmb: {capacity: 16GiB}}"), 9, "memory_tiers.hmb",
               "unknown key, expected one of: on_chip, hbm, ddr (did you mean 'hbm'?)");
  expect_error(with(9, "memory_tiers: {ddr: {capacty: 16GiB}}"), 9, "memory_tiers.ddr.capacty",
               "(did you mean 'capacity'?)");
  expect_error(with(9, "memory_tiers: {ddr: {capacity: 16}}"), 9, "memory_tiers.ddr.capacity",
               "got '16'");
  expect_error(with(9, "memory_tiers: {ddr: {bandwidth: 0GB/s}}"), 9, "memory_tiers.ddr.bandwidth",
               "expected a positive rate");
  expect_error(with(9, "memory_tiers: {on_chip: {cost: -1}}"), 9, "memory_tiers.on_chip.cost",
               "expected a number in [0, 1000000000], got '-1'");
}

TEST(PlatformErrors, MemoryTierOverrides) {
  const std::string path = write_file(with(8, kBase[7]));
  const Platform p = load_platform(
      path, {{"memory_tiers.on_chip.capacity", "64MiB"}, {"memory_tiers.ddr.cost", "2"}});
  EXPECT_EQ(p.memory_tiers[0].capacity_bytes, 64ull << 20);
  EXPECT_DOUBLE_EQ(p.memory_tiers[2].cost_usd_per_gib, 2.0);
  expect_override_error({"memory_tiers.hmb.cost", "1"}, "(did you mean 'hbm'?)");
  expect_override_error({"memory_tiers.hbm.enrgy", "1"}, "(did you mean 'energy'?)");
  expect_override_error({"memory_tiers.hbm", "1"}, "expected memory_tiers.<tier>.<key>");
  expect_override_error({"memory_tiers.hbm.capacity", "0B"}, "expected a positive size");
}

TEST(PlatformErrors, MissingFile) {
  try {
    load_platform("/nonexistent/p.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "/nonexistent/p.yaml");
  }
}

}  // namespace
}  // namespace aggnet
