// The keys of a platform file beside the module parameters (common/param_rows.h): the
// loader accepts exactly the rows' keys at each place of the file, and reads every row
// into the platform. The expected keys and effects are written out by hand: a key added
// to the loader but not to the rows, or a row the loader does not read, fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/config_error.h"
#include "common/param_rows.h"
#include "config/platform_loader.h"
#include "tests/config/temp_files.h"

namespace aggnet {
namespace {

using Keys = std::vector<std::string>;

const char* kSites = "sites: [{code: aaa}, {code: bbb}]\n";
const char* kLinks = "links: [{a: aaa, b: bbb, delay: 5ms}]\n";

using test::write_temp;

/// The keys the loader lists as accepted when `yaml` holds the unknown key `zz_unknown`.
Keys listed_keys(const std::string& yaml) {
  try {
    load_platform(write_temp("aggnet_rows.yaml", yaml));
  } catch (const ConfigError& e) {
    const std::string what = e.what(), marker = "expected one of: ";
    const auto at = what.find(marker);
    if (at == std::string::npos) return {what};
    Keys keys;
    std::istringstream in(what.substr(at + marker.size()));
    for (std::string k; std::getline(in, k, ',');)
      keys.push_back(k.substr(k.find_first_not_of(' ')));
    return keys;
  }
  return {"(no error for the unknown key)"};
}

Keys concat(Keys a, const Keys& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(PlatformRows, TheLoaderAcceptsExactlyTheRowsKeysAtEachPlace) {
  const Keys top = {"name",  "description", "defaults",    "colocated",
                    "sites", "links",       "memory_tiers"};
  const Keys site = {"code", "name", "continent", "lat_deg", "lng_deg"};
  const Keys link = {"a", "b", "source"}, faults = {"loss", "down"};
  const Keys tier = {"capacity", "bandwidth", "cost", "energy"};
  EXPECT_EQ(platform_top_keys(), top);
  EXPECT_EQ(section_keys("platform"), Keys({"name", "description"}));
  EXPECT_EQ(section_keys("site"), site);
  EXPECT_EQ(section_keys("link_entry"), link);
  EXPECT_EQ(section_keys("link_fault"), faults);
  EXPECT_EQ(section_keys("memory_tier"), tier);

  EXPECT_EQ(listed_keys(std::string(kSites) + kLinks + "zz_unknown: 1\n"), top);
  EXPECT_EQ(listed_keys(std::string("sites: [{code: aaa, zz_unknown: 1}, {code: bbb}]\n") + kLinks),
            concat(site, {"fpga", "switch", "cluster"}));
  EXPECT_EQ(
      listed_keys(std::string(kSites) + "links: [{a: aaa, b: bbb, delay: 5ms, zz_unknown: 1}]\n"),
      concat(concat(link, {"delay", "bandwidth", "mtu", "header", "jitter"}), faults));
  EXPECT_EQ(listed_keys(std::string(kSites) + kLinks + "memory_tiers: {hbm: {zz_unknown: 1}}\n"),
            tier);
}

// A `--set` path may end in every row but those naming the entry (a site's code, a
// link's ends): the path names the entry by them.
TEST(PlatformRows, OverridesTakeTheRowsThatDoNotNameTheEntry) {
  const std::string file = write_temp("aggnet_rows_set.yaml", std::string(kSites) + kLinks);
  const auto listed = [&](const std::string& path) -> std::string {
    try {
      load_platform(file, {{path, "1"}});
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      return what.substr(what.find("expected one of: "));
    }
    return "(accepted)";
  };
  // What follows the list is a did-you-mean, if any.
  const auto starts = [](const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
  };
  EXPECT_PRED2(starts, listed("sites.aaa.code"),
               "expected one of: name, continent, lat_deg, lng_deg");
  EXPECT_PRED2(starts, listed("links.aaa-bbb.a"),
               "expected one of: delay, bandwidth, mtu, header, jitter, source, loss, down");
  EXPECT_PRED2(starts, listed("memory_tiers.hbm.zz"),
               "expected one of: capacity, bandwidth, cost, energy");
  EXPECT_EQ(section_keys("site", /*settable_only=*/true),
            Keys({"name", "continent", "lat_deg", "lng_deg"}));
  EXPECT_EQ(section_keys("link_entry", /*settable_only=*/true), Keys({"source"}));
}

/// How one row shows in the loaded platform: the override that sets it (none: the
/// two-site file does) and what it must then hold.
struct Effect {
  std::string path, value;
  std::function<bool(const Platform&)> holds;
};

bool has(const Keys& faults, const std::string& spec) {
  return std::find(faults.begin(), faults.end(), spec) != faults.end();
}

const MemoryTier& hbm(const Platform& p) {
  for (const MemoryTier& t : p.memory_tiers)
    if (t.key == "hbm") return t;
  throw std::logic_error("no hbm tier");
}

std::map<std::string, Effect> effects() {
  using P = const Platform&;
  return {
      {"platform.name", {"name", "ours", [](P p) { return p.name == "ours"; }}},
      {"site.code", {"", "", [](P p) { return p.sites[1].code == "bbb"; }}},
      {"site.name", {"sites.bbb.name", "Bee", [](P p) { return p.sites[1].name == "Bee"; }}},
      {"site.continent",
       {"sites.bbb.continent", "asia", [](P p) { return p.sites[1].continent == "asia"; }}},
      {"site.lat_deg",
       {"sites.bbb.lat_deg", "51.5", [](P p) { return p.sites[1].lat_deg == 51.5; }}},
      {"site.lng_deg",
       {"sites.bbb.lng_deg", "-0.25", [](P p) { return p.sites[1].lng_deg == -0.25; }}},
      {"link_entry.a", {"", "", [](P p) { return p.links[0].a == 0; }}},
      {"link_entry.b", {"", "", [](P p) { return p.links[0].b == 1; }}},
      {"link_entry.source",
       {"links.bbb-aaa.source", "atlas", [](P p) { return p.links[0].source == "atlas"; }}},
      {"link_fault.loss",
       {"links.aaa-bbb.loss", "0.01",
        [](P p) { return has(p.links[0].faults, "loss:aaa-bbb=0.01"); }}},
      {"link_fault.down",
       {"links.aaa-bbb.down", "1s-2s",
        [](P p) { return has(p.links[0].faults, "down:aaa-bbb@1s-2s"); }}},
      // 1 GiB; 1 GB/s is 1e9 bytes/s.
      {"memory_tier.capacity",
       {"memory_tiers.hbm.capacity", "1GiB",
        [](P p) { return hbm(p).capacity_bytes == 1073741824u; }}},
      {"memory_tier.bandwidth",
       {"memory_tiers.hbm.bandwidth", "1GB/s",
        [](P p) { return hbm(p).bandwidth_bytes_per_s == 1e9; }}},
      {"memory_tier.cost",
       {"memory_tiers.hbm.cost", "3.5", [](P p) { return hbm(p).cost_usd_per_gib == 3.5; }}},
      {"memory_tier.energy",
       {"memory_tiers.hbm.energy", "7", [](P p) { return hbm(p).energy_pj_per_bit == 7; }}},
  };
}

// Every row reaches the platform: a row the loader accepts but does not read has no
// effect to list here, and a row without one listed fails. One load sets them all.
TEST(PlatformRows, EveryRowReachesThePlatform) {
  const std::string file = write_temp("aggnet_rows_effect.yaml", std::string(kSites) + kLinks);
  const std::map<std::string, Effect> all = effects();
  std::vector<Override> overrides;
  for (const auto& [id, e] : all)
    if (!e.path.empty()) overrides.push_back({e.path, e.value});
  const Platform plat = load_platform(file, overrides);
  for (const ParamRow& row : platform_field_rows()) {
    const std::string id = std::string(row.section) + "." + row.key;
    if (id == "platform.description") continue;  // read and checked below; the platform keeps none
    const auto it = all.find(id);
    ASSERT_NE(it, all.end()) << id << ": no effect listed";
    EXPECT_TRUE(it->second.holds(plat)) << id;
  }
  // `description` is free text: a mapping there is an error at its key.
  try {
    load_platform(write_temp("aggnet_rows_desc.yaml",
                             std::string(kSites) + kLinks + "description: {a: 1}\n"));
    ADD_FAILURE() << "a mapping as the description was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("description"), std::string::npos) << e.what();
  }
  EXPECT_EQ(platform_field_rows().size(), all.size() + 1);
}

}  // namespace
}  // namespace aggnet
