// The parameter tables (model/param_info.h) as the one source: their keys, defaults that
// round-trip to the structs' own, every key bound to its member, and the three surfaces
// derived from them (the keys the loader accepts, the rows of `aggnet params`, the
// committed docs/modules pages) compared with the tables.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "common/config_error.h"
#include "config/platform_loader.h"
#include "model/params/cluster.h"
#include "model/params/fpga.h"
#include "model/params/network.h"
#include "tests/config/temp_files.h"

namespace aggnet {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = AGGNET_SOURCE_DIR;

using test::write_temp;

const std::string& two_sites() {
  static const std::string path = write_temp("aggnet_params_two_sites.yaml",
                                             "sites: [{code: aaa}, {code: bbb}]\n"
                                             "links: [{a: aaa, b: bbb, delay: 5ms}]\n");
  return path;
}

TEST(ParamsInfo, KeyNames) {
  const auto& all = all_module_params();
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].module, "WanLink");
  EXPECT_EQ(all[0].section, "link");
  EXPECT_EQ(param_keys(all[0]),
            (std::vector<std::string>{"delay", "bandwidth", "mtu", "header", "jitter"}));
  EXPECT_EQ(all[1].module, "MulticastSwitch");
  EXPECT_EQ(all[1].section, "switch");
  EXPECT_EQ(param_keys(all[1]), (std::vector<std::string>{"latency"}));
  EXPECT_EQ(all[2].module, "FpgaAggregator");
  EXPECT_EQ(all[2].section, "fpga");
  EXPECT_EQ(param_keys(all[2]),
            (std::vector<std::string>{"datapath_width", "clock", "latency_cycles", "buffer"}));
  EXPECT_EQ(all[3].module, "Cluster");
  EXPECT_EQ(all[3].section, "cluster");
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

template <class T>
void expect_defaults_round_trip() {
  const ParamTable<T>& table = T::table();
  const T defaults{};
  for (std::size_t i = 0; i < table.info().params.size(); ++i) {
    const ParamInfo& p = table.info().params[i];
    EXPECT_EQ(parse_param_value(p, p.default_value), defaults.*table.member(i)) << p.key;
    EXPECT_EQ(check_violation(p, defaults.*table.member(i)), "") << p.key;
  }
  for (const Invariant<T>& inv : table.invariants()) EXPECT_EQ(inv.violation(defaults), "");
}

TEST(ParamsInfo, DefaultsAreTheStructsOwnAndPassTheChecks) {
  expect_defaults_round_trip<WanLinkParams>();
  expect_defaults_round_trip<SwitchParams>();
  expect_defaults_round_trip<FpgaParams>();
  expect_defaults_round_trip<ClusterParams>();
  // The defaults as the docs show them, and the hand values from the tables' sources.
  std::map<std::string, std::string> shown;
  for (const auto& m : all_module_params()) {
    for (const auto& p : m.params) shown[m.section + "." + p.key] = p.default_value;
  }
  EXPECT_EQ(shown["link.bandwidth"], "100Gbps");
  EXPECT_EQ(shown["link.delay"], "0ms");
  EXPECT_EQ(shown["link.mtu"], "2048B");
  EXPECT_EQ(shown["fpga.buffer"], "64MiB");
  EXPECT_EQ(shown["fpga.clock"], "500MHz");
  EXPECT_EQ(shown["fpga.datapath_width"], "512");
  EXPECT_EQ(shown["cluster.compute_time"], "1s");
  EXPECT_EQ(shown["cluster.access_delay"], "2us");
  EXPECT_EQ(FpgaParams{}.buffer_bytes, 67'108'864ull);
  EXPECT_EQ(WanLinkParams{}.bandwidth_bps, 100'000'000'000ull);
}

// Each table binds exactly its section's rows of common/param_rows.cpp, in order: a key
// the rows do not have, one out of order, or a row left without a member is refused.
struct TwoTimes {
  std::uint64_t delay_ps = 0;
  std::uint64_t jitter_ps = 0;
};

TEST(ParamsInfo, TablesBindExactlyTheirSectionsRows) {
  for (const auto& m : all_module_params()) {
    const std::vector<const ParamRow*> rows = section_rows(m.section);
    ASSERT_EQ(rows.size(), m.params.size()) << m.section;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(m.params[i].key, rows[i]->key);
      EXPECT_EQ(m.params[i].quantity, rows[i]->quantity) << rows[i]->key;
      EXPECT_EQ(m.params[i].unit, rows[i]->unit) << rows[i]->key;
    }
  }
  using T = TwoTimes;
  EXPECT_THROW(ParamTable<T>("X", "switch", "", {{"latencyy", &T::delay_ps, "d"}}),
               std::logic_error);
  EXPECT_THROW(ParamTable<T>("X", "link", "", {{"jitter", &T::jitter_ps, "j"}}), std::logic_error);
  EXPECT_THROW(ParamTable<T>("X", "link", "", {{"delay", &T::delay_ps, "d"}}), std::logic_error);
  EXPECT_NO_THROW(ParamTable<T>("X", "switch", "", {{"latency", &T::delay_ps, "d"}}));
}

TEST(ParamsInfo, ValuesAreWrittenExactlyInTheirUnit) {
  EXPECT_EQ(format_param_value(Quantity::kTime, "ms", 33'465'000'000ull), "33.465ms");
  EXPECT_EQ(format_param_value(Quantity::kBytes, "MiB", 1'572'864ull), "1.5MiB");
  EXPECT_EQ(format_param_value(Quantity::kRate, "Gbps", 12'500'000'000ull), "12.5Gbps");
  EXPECT_EQ(format_param_value(Quantity::kCount, "cycle", 64), "64");
  EXPECT_EQ(format_param_value(Quantity::kTime, "ms", 1), "0.000000001ms");
  // No exact decimal: a table whose default cannot be shown in its unit is a bug.
  EXPECT_THROW(format_param_value(Quantity::kTime, "min", 1), std::logic_error);
}

TEST(ParamsInfo, ChecksAreShownAndExplained) {
  const ModuleParamInfo& fpga = FpgaParams::table().info();
  const ParamInfo& width = *find_param(fpga, "datapath_width");
  EXPECT_EQ(check_text(width.check), "> 0, multiple of 8");
  EXPECT_EQ(check_violation(width, 12), "expected a positive multiple of 8 bits like '512'");
  EXPECT_EQ(check_violation(width, 0), "expected a positive multiple of 8 bits like '512'");
  EXPECT_EQ(check_violation(*find_param(fpga, "clock"), 0),
            "expected a positive frequency like '500MHz'");
  EXPECT_EQ(check_text(find_param(WanLinkParams::table().info(), "delay")->check),
            "required, <= 1000s");
  EXPECT_EQ(check_text(find_param(WanLinkParams::table().info(), "jitter")->check), "<= 1000s");
  EXPECT_EQ(WanLinkParams::table().info().invariants,
            (std::vector<std::string>{"`mtu` > `header`"}));
}

TEST(ParamsInfo, OverridePathsNameTheirParameter) {
  EXPECT_EQ(override_param("sites.lon.fpga.buffer")->quantity, Quantity::kBytes);
  EXPECT_EQ(override_param("defaults.link.bandwidth")->quantity, Quantity::kRate);
  EXPECT_EQ(override_param("links.nyc-lon.jitter")->quantity, Quantity::kTime);
  EXPECT_EQ(override_param("colocated.link.delay")->key, "delay");
  EXPECT_EQ(override_param("defaults.fpga.latency_cycles")->quantity, Quantity::kCount);
  EXPECT_EQ(override_param("defaults.cluster.compute_time")->unit, "s");
  EXPECT_EQ(override_param("sites.lon.name"), nullptr);
  EXPECT_EQ(override_param("links.nyc-lon.source"), nullptr);
  EXPECT_EQ(override_param("defaults.link.delay"), nullptr);  // per link only
  EXPECT_EQ(override_param("colocated.fpga.buffer"), nullptr);
  EXPECT_EQ(override_param("sites.lon.link.delay"), nullptr);
  EXPECT_EQ(override_param("defaults.fpga.bufer"), nullptr);
}

/// A valid value other than the default: twice it, or one unit when it is zero.
std::string other_value(const ParamInfo& p, std::uint64_t def) {
  const std::uint64_t v = def != 0 ? 2 * def : parse_param_value(p, "1" + p.unit);
  return format_param_value(p.quantity, p.unit, v);
}

/// Sets every parameter of T by `--set prefix<key>=value` and reads it back from the
/// member the table binds it to.
template <class T, class Get>
void expect_every_key_reaches_its_member(const std::string& prefix, Get get) {
  const ParamTable<T>& table = T::table();
  for (std::size_t i = 0; i < table.info().params.size(); ++i) {
    const ParamInfo& p = table.info().params[i];
    const std::string value = other_value(p, T{}.*table.member(i));
    const Platform plat = load_platform(two_sites(), {{prefix + p.key, value}});
    EXPECT_EQ(get(plat).*table.member(i), parse_param_value(p, value)) << prefix << p.key;
    EXPECT_NE(get(plat).*table.member(i), T{}.*table.member(i)) << prefix << p.key;
  }
}

TEST(ParamsInfo, EveryKeyReachesItsMember) {
  expect_every_key_reaches_its_member<WanLinkParams>(
      "links.aaa-bbb.", [](const Platform& p) { return p.links[0].params; });
  expect_every_key_reaches_its_member<WanLinkParams>(
      "colocated.link.", [](const Platform& p) { return p.colocated.link; });
  expect_every_key_reaches_its_member<SwitchParams>(
      "sites.bbb.switch.", [](const Platform& p) { return p.sites[1].sw; });
  expect_every_key_reaches_its_member<FpgaParams>(
      "sites.bbb.fpga.", [](const Platform& p) { return p.sites[1].fpga; });
  expect_every_key_reaches_its_member<ClusterParams>(
      "defaults.cluster.", [](const Platform& p) { return p.sites[0].cluster; });
}

// ---------------------------------------------------------------------------------------
// The surfaces derived from the tables

using Rows = std::map<std::string, std::vector<std::string>>;  // module -> its keys

/// What the tables say each surface must list.
Rows table_keys(bool defaults_only = false) {
  Rows rows;
  for (const auto& m : all_module_params()) {
    for (const auto& p : m.params) {
      if (!(defaults_only && p.check.required)) rows[m.module].push_back(p.key);
    }
  }
  return rows;
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::istringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item.substr(item.find_first_not_of(' ')));
  return out;
}

/// The keys the loader accepts in the mapping at `path`, from the "expected one of"
/// list of its error for an unknown key there, minus the entry's own fields.
std::vector<std::string> accepted_keys(const std::string& path,
                                       const std::set<std::string>& fields = {}) {
  try {
    load_platform(two_sites(), {{path + ".zz_unknown", "1"}});
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    const std::string marker = "expected one of: ";
    const auto at = what.find(marker);
    if (at == std::string::npos) return {what};
    std::vector<std::string> keys;
    for (const auto& k : split_list(what.substr(at + marker.size()))) {
      if (fields.count(k) == 0) keys.push_back(k);
    }
    return keys;
  }
  return {"(no error for an unknown key under " + path + ")"};
}

/// The keys the loader accepts at every place a module's section appears.
std::map<std::string, Rows> loader_keys() {
  const auto& m = all_module_params();
  std::map<std::string, Rows> by_place;
  for (const auto& mod : m)
    by_place["defaults"][mod.module] = accepted_keys("defaults." + mod.section);
  // Besides the parameters: the link's `source` and its faults (`loss`, `down`).
  by_place["links[*]"]["WanLink"] = accepted_keys("links.aaa-bbb", {"source", "loss", "down"});
  by_place["colocated"]["WanLink"] = accepted_keys("colocated.link");
  for (const auto& mod : m) {
    if (mod.section != "link")
      by_place["sites[*]"][mod.module] = accepted_keys("sites.aaa." + mod.section);
  }
  return by_place;
}

TEST(ParamSurfaces, LoaderAcceptsExactlyTheTableKeys) {
  const std::map<std::string, Rows> places = loader_keys();
  const Rows all = table_keys(), defaults = table_keys(/*defaults_only=*/true);
  EXPECT_EQ(places.at("defaults"), defaults);
  EXPECT_EQ(places.at("links[*]").at("WanLink"), all.at("WanLink"));
  EXPECT_EQ(places.at("colocated").at("WanLink"), all.at("WanLink"));
  Rows site = all;
  site.erase("WanLink");
  EXPECT_EQ(places.at("sites[*]"), site);
}

/// Runs `aggnet params` and returns its rows: module -> keys, and module -> the
/// row's first columns (key quantity unit default), by key.
std::string aggnet_params_output() {
  FILE* pipe = popen((std::string(AGGNET_EXE) + " params").c_str(), "r");
  if (pipe == nullptr) return "";
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  const int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return out;
}

/// The expected columns of a row: key, quantity, unit, default, check.
std::vector<std::string> table_row(const ParamInfo& p) {
  return {p.key, quantity_name(p.quantity), p.unit, p.default_value, check_text(p.check)};
}

std::map<std::string, std::map<std::string, std::vector<std::string>>> expected_rows() {
  std::map<std::string, std::map<std::string, std::vector<std::string>>> rows;
  for (const auto& m : all_module_params()) {
    for (const auto& p : m.params) rows[m.module][p.key] = table_row(p);
  }
  return rows;
}

TEST(ParamSurfaces, AggnetParamsPrintsEveryTableRow) {
  std::map<std::string, std::map<std::string, std::vector<std::string>>> printed;
  std::istringstream in(aggnet_params_output());
  std::string line, module;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ') module = line.substr(0, line.find(' '));
    if (line.rfind("  ", 0) != 0 || line.rfind("  * ", 0) == 0) continue;
    std::istringstream cols(line);
    std::vector<std::string> row(4);
    cols >> row[0] >> row[1] >> row[2] >> row[3];
    printed[module][row[0]] = row;
  }
  auto expected = expected_rows();
  for (auto& [m, rows] : expected) {
    for (auto& [k, row] : rows) row.pop_back();  // the check column may be blank
  }
  EXPECT_EQ(printed, expected);
}

// `aggnet params --format json`: the same tables, every field, machine-readable.
TEST(ParamSurfaces, AggnetParamsJsonHoldsEveryTableRow) {
  FILE* pipe = popen((std::string(AGGNET_EXE) + " params --format json").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const nlohmann::json j = nlohmann::json::parse(out);
  const auto& modules = all_module_params();
  ASSERT_EQ(j.size(), modules.size());
  for (std::size_t m = 0; m < modules.size(); ++m) {
    EXPECT_EQ(j[m]["module"], modules[m].module);
    EXPECT_EQ(j[m]["section"], modules[m].section);
    EXPECT_EQ(j[m]["invariants"].get<std::vector<std::string>>(), modules[m].invariants);
    ASSERT_EQ(j[m]["params"].size(), modules[m].params.size()) << modules[m].module;
    for (std::size_t i = 0; i < modules[m].params.size(); ++i) {
      const ParamInfo& p = modules[m].params[i];
      const auto& row = j[m]["params"][i];
      EXPECT_EQ(table_row(p), (std::vector<std::string>{row["key"], row["quantity"], row["unit"],
                                                        row["default"], row["check"]["text"]}));
      EXPECT_EQ(row["check"]["required"], p.check.required);
      EXPECT_EQ(row["check"]["positive"], p.check.positive);
      EXPECT_EQ(row["check"]["multiple_of"], p.check.multiple_of);
      EXPECT_EQ(row["check"].contains("max"), p.check.max != UINT64_MAX);
      EXPECT_EQ(row["description"], p.description);
    }
  }
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The cells of a markdown table row "| a | b |", without backticks.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line.substr(1));
  std::string cell;
  while (std::getline(in, cell, '|')) {
    std::string c;
    for (char ch : cell)
      if (ch != '`') c += ch;
    const auto b = c.find_first_not_of(' '), e = c.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : c.substr(b, e - b + 1));
  }
  return out;
}

TEST(ParamSurfaces, DocsPagesListEveryTableRow) {
  std::map<std::string, std::map<std::string, std::vector<std::string>>> documented;
  std::set<std::string> pages;
  for (const auto& entry : fs::directory_iterator(kSource / "docs/modules")) {
    if (entry.path().filename() == "README.md") continue;
    pages.insert(entry.path().filename());
    std::istringstream in(read_text(entry.path()));
    std::string line, module;
    while (std::getline(in, line)) {
      if (line.rfind("# ", 0) == 0) module = line.substr(2);
      if (line.rfind("| `", 0) != 0) continue;
      std::vector<std::string> row = cells(line);
      row.resize(5);
      documented[module][row[0]] = row;
    }
  }
  EXPECT_EQ(documented, expected_rows());
  const std::string index = read_text(kSource / "docs/modules/README.md");
  for (const auto& page : pages) EXPECT_NE(index.find("(" + page + ")"), std::string::npos) << page;
}

}  // namespace
}  // namespace aggnet
