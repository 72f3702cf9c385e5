// Platform loading, validation, `--set` overrides and shortest-delay routing.
// The YAML format is documented in platforms/README.md; the parameter keys come from
// the module parameter tables (WanLinkParams::info(), ...), the single source of keys.
#include "config/platform_loader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "common/config_error.h"
#include "common/units.h"
#include "config/yaml_reader.h"

namespace aggnet {
namespace {

// ---------------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------------

const std::vector<std::string> kTopKeys = {"name",      "description", "defaults",
                                           "colocated", "sites",       "links"};
const std::vector<std::string> kDefaultsKeys = {"link", "switch", "fpga", "cluster"};
const std::vector<std::string> kSiteFields = {"code", "name", "continent", "lat_deg", "lng_deg"};
const std::vector<std::string> kSiteSections = {"fpga", "switch", "cluster"};

/// Link keys allowed under defaults.link: every WanLink key except the per-link delay.
std::vector<std::string> default_link_keys() {
  std::vector<std::string> keys;
  for (const auto& k : param_keys(WanLinkParams::info())) {
    if (k != "delay") keys.push_back(k);
  }
  return keys;
}

std::vector<std::string> link_entry_keys() {
  std::vector<std::string> keys = {"a", "b", "source"};
  for (const auto& k : param_keys(WanLinkParams::info())) keys.push_back(k);
  return keys;
}

std::vector<std::string> site_entry_keys() {
  std::vector<std::string> keys = kSiteFields;
  keys.insert(keys.end(), kSiteSections.begin(), kSiteSections.end());
  return keys;
}

const ModuleParamInfo& section_info(const std::string& section) {
  if (section == "link") return WanLinkParams::info();
  if (section == "switch") return SwitchParams::info();
  if (section == "fpga") return FpgaParams::info();
  if (section == "cluster") return ClusterParams::info();
  throw std::logic_error("no parameter section " + section);
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool contains(const std::vector<std::string>& items, const std::string& s) {
  return std::find(items.begin(), items.end(), s) != items.end();
}

// ---------------------------------------------------------------------------------
// Parameter bindings: config key -> struct member. Every key of every info() table
// must be bound (a missing binding is a programming error, caught by the tests that
// load a platform setting every key).
// ---------------------------------------------------------------------------------

[[noreturn]] void unbound(const std::string& module, const std::string& key) {
  throw std::logic_error("no binding for parameter " + module + "." + key);
}

void set_param(WanLinkParams& p, const std::string& key, const ParamValue& v) {
  if (key == "delay") {
    p.delay_ps = v.u;
  } else if (key == "bandwidth") {
    p.bandwidth_bps = v.u;
  } else if (key == "mtu") {
    p.mtu_bytes = v.u;
  } else if (key == "header") {
    p.header_bytes = v.u;
  } else if (key == "jitter") {
    p.jitter_ps = v.u;
  } else {
    unbound("WanLink", key);
  }
}

void set_param(SwitchParams& p, const std::string& key, const ParamValue& v) {
  if (key == "latency") {
    p.latency_ps = v.u;
  } else {
    unbound("MulticastSwitch", key);
  }
}

void set_param(FpgaParams& p, const std::string& key, const ParamValue& v) {
  if (key == "datapath_width") {
    p.datapath_bits = v.u;
  } else if (key == "clock") {
    p.clock_hz = v.u;
  } else if (key == "latency_cycles") {
    p.latency_cycles = v.u;
  } else if (key == "buffer") {
    p.buffer_bytes = v.u;
  } else {
    unbound("FpgaAggregator", key);
  }
}

void set_param(ClusterParams& p, const std::string& key, const ParamValue& v) {
  if (key == "compute_time") {
    p.compute_ps = v.u;
  } else if (key == "access_bandwidth") {
    p.access_bandwidth_bps = v.u;
  } else if (key == "access_delay") {
    p.access_delay_ps = v.u;
  } else {
    unbound("Cluster", key);
  }
}

/// Single-value constraints; returns what was expected, or "" when the value is fine.
std::string check_value(const std::string& module, const ParamInfo& p, const ParamValue& v) {
  const std::string m = module + "." + p.key;
  if ((m == "WanLink.bandwidth" || m == "Cluster.access_bandwidth") && v.u == 0) {
    return "expected a positive rate like '100Gbps'";
  }
  if (m == "WanLink.mtu" && v.u == 0) return "expected a positive size like '2048B'";
  if (m == "FpgaAggregator.clock" && v.u == 0) return "expected a positive frequency like '500MHz'";
  if (m == "FpgaAggregator.buffer" && v.u == 0) {
    return "expected a positive size like '64MiB' (the buffer holds the aggregation slots)";
  }
  if (m == "FpgaAggregator.datapath_width" && (v.u == 0 || v.u % 8 != 0)) {
    return "expected a positive multiple of 8 bits like '512'";
  }
  return "";
}

/// Where each parameter of a struct was last set: its node (for the line) and dotted key.
struct Origin {
  YAML::Node node;
  std::string key;
};
using Origins = std::map<std::string, Origin>;
using KeyLines = std::map<std::string, int>;

/// Reads the parameter keys of a `link:`/`fpga:`/... mapping into `params` (which
/// holds the values inherited so far). `allowed` restricts the keys (default: all).
/// Records the 1-based line of every key read into `key_lines` (Platform::key_lines).
template <class Params>
void read_section(const YAML::Node& node, const std::string& file, const std::string& path,
                  Params& params, KeyLines& key_lines, Origins* origins,
                  const std::vector<std::string>& allowed) {
  YamlMap m(node, file, path);
  m.allow_keys(allowed);
  const ModuleParamInfo& info = Params::info();
  m.read_params(info, [&](const ParamInfo& p, const ParamValue& v, const YAML::Node& at) {
    const std::string bad = check_value(info.module, p, v);
    if (!bad.empty()) throw_at(at, file, m.key_path(p.key), bad, at.Scalar());
    set_param(params, p.key, v);
    key_lines[m.key_path(p.key)] = yaml_line(at);
    if (origins) (*origins)[p.key] = Origin{at, m.key_path(p.key)};
  });
}

template <class Params>
void read_section(const YAML::Node& node, const std::string& file, const std::string& path,
                  Params& params, KeyLines& key_lines, Origins* origins = nullptr) {
  read_section(node, file, path, params, key_lines, origins, param_keys(Params::info()));
}

/// MTU must exceed the header; reported at whichever of the two was set last (the
/// link's own key, else the default it inherited).
void check_mtu(const WanLinkParams& p, const Origins& origins, const YAML::Node& fallback,
               const std::string& file, const std::string& fallback_key) {
  if (p.mtu_bytes > p.header_bytes) return;
  const std::string expected =
      fmt::format("expected an MTU larger than the per-packet header ({} B), got mtu {} B",
                  p.header_bytes, p.mtu_bytes);
  for (const char* k : {"mtu", "header"}) {
    auto it = origins.find(k);
    if (it != origins.end()) throw_at(it->second.node, file, it->second.key, expected);
  }
  throw_at(fallback, file, fallback_key + ".mtu", expected);
}

bool valid_code(const std::string& code) {
  if (code.empty()) return false;
  for (char c : code) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '_')) {
      return false;
    }
  }
  return true;
}

std::string file_stem(const std::string& path) {
  std::string base =
      path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  const auto dot = base.find_last_of('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

// ---------------------------------------------------------------------------------
// --set overrides
// ---------------------------------------------------------------------------------

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

[[noreturn]] void bad_override(const std::string& path, const std::string& expected) {
  throw ConfigError(kOverrideFile, 0, path, expected);
}

/// The child mapping `key` of `parent`, created when absent. Errors when it exists but
/// is not a mapping.
YAML::Node child_map(YAML::Node parent, const std::string& key, const std::string& file,
                     const std::string& path) {
  YAML::Node existing(YAML::NodeType::Undefined);
  for (auto it = parent.begin(); it != parent.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) existing = it->second;
  }
  if (existing.IsDefined() && !existing.IsNull()) {
    if (!existing.IsMap())
      throw_at(existing, file, path, "expected a mapping of 'key: value' entries");
    return parent[key];  // a handle on the map itself: `existing` holds an iterator's copy
  }
  YAML::Node fresh(YAML::NodeType::Map);
  parent[key] = fresh;
  return parent[key];
}

/// The list entries of `root[list]` (a sequence), or bad_override when missing.
YAML::Node sequence_of(const YAML::Node& root, const std::string& list, const std::string& path,
                       const std::string& file) {
  const YAML::Node seq = root.IsMap() ? root[list] : YAML::Node(YAML::NodeType::Undefined);
  if (!seq || seq.IsNull()) bad_override(path, fmt::format("{} has no '{}' list", file, list));
  if (!seq.IsSequence()) throw_at(seq, file, list, "expected a list");
  return seq;
}

std::string scalar_field(const YAML::Node& entry, const char* key) {
  if (!entry.IsMap()) return "";
  const YAML::Node v = entry[key];
  return v && v.IsScalar() ? v.Scalar() : "";
}

void set_leaf(YAML::Node map, const std::string& key, const std::string& value) {
  map[key] = YAML::Node(value);
}

/// Applies one `path=value` override to the YAML tree. Paths:
///   name | description
///   defaults.<link|switch|fpga|cluster>.<param>
///   colocated.link.<param>
///   sites.<code>.<name|continent|lat_deg|lng_deg>
///   sites.<code>.<fpga|switch|cluster>.<param>
///   links.<a>-<b>.<param|source>           (either order of a and b)
void apply_override(YAML::Node& root, const std::string& file, const Override& ov) {
  const std::string& path = ov.first;
  const std::string& value = ov.second;
  const std::vector<std::string> parts = split(path, '.');
  for (const auto& p : parts) {
    if (p.empty()) bad_override(path, "expected a dotted path like 'defaults.link.bandwidth'");
  }
  if (!root.IsMap()) {
    if (root.IsNull()) {
      root = YAML::Node(YAML::NodeType::Map);
    } else {
      throw ConfigError(file, yaml_line(root), "", "expected a mapping at the top level");
    }
  }
  const std::string& top = parts[0];
  auto require_key = [&](const std::string& key, const std::vector<std::string>& allowed,
                         const std::string& at) {
    if (!contains(allowed, key)) {
      bad_override(at, "unknown key '" + key + "', expected one of: " + join(allowed));
    }
  };
  const std::vector<std::string> tops = kTopKeys;
  require_key(top, tops, path);
  if (parts.size() == 1) {
    if (top != "name" && top != "description") {
      bad_override(path, "expected a longer path under '" + top + "', e.g. " +
                             (top == "sites"       ? "sites.lon.fpga.buffer"
                              : top == "links"     ? "links.nyc-lon.delay"
                              : top == "colocated" ? "colocated.link.delay"
                                                   : "defaults.link.bandwidth"));
    }
    set_leaf(root, top, value);
    return;
  }
  if (top == "defaults") {
    require_key(parts[1], kDefaultsKeys, path);
    const std::vector<std::string> keys =
        parts[1] == "link" ? default_link_keys() : param_keys(section_info(parts[1]));
    if (parts.size() != 3) bad_override(path, "expected defaults." + parts[1] + ".<key>");
    require_key(parts[2], keys, path);
    YAML::Node d = child_map(root, "defaults", file, "defaults");
    set_leaf(child_map(d, parts[1], file, "defaults." + parts[1]), parts[2], value);
    return;
  }
  if (top == "colocated") {
    require_key(parts[1], {"link"}, path);
    if (parts.size() != 3) bad_override(path, "expected colocated.link.<key>");
    require_key(parts[2], param_keys(WanLinkParams::info()), path);
    YAML::Node c = child_map(root, "colocated", file, "colocated");
    set_leaf(child_map(c, "link", file, "colocated.link"), parts[2], value);
    return;
  }
  if (top == "sites") {
    YAML::Node seq = sequence_of(root, "sites", path, file);
    std::vector<std::string> codes;
    for (std::size_t i = 0; i < seq.size(); ++i) codes.push_back(scalar_field(seq[i], "code"));
    const auto found = std::find(codes.begin(), codes.end(), parts[1]);
    if (found == codes.end())
      bad_override(path, "no site '" + parts[1] + "', sites are: " + join(codes));
    // A handle made by indexing shares the tree's memory; assigning a node into a
    // handle of its own (yaml-cpp 0.7) would leave keys added later dangling.
    YAML::Node site = seq[static_cast<std::size_t>(found - codes.begin())];
    if (parts.size() == 3 && contains(kSiteSections, parts[2])) {
      bad_override(path, "expected sites." + parts[1] + "." + parts[2] +
                             ".<key>, one of: " + join(param_keys(section_info(parts[2]))));
    }
    if (parts.size() == 3) {
      std::vector<std::string> fields(kSiteFields.begin() + 1, kSiteFields.end());
      require_key(parts[2], fields, path);
      set_leaf(site, parts[2], value);
      return;
    }
    if (parts.size() == 4) {
      require_key(parts[2], kSiteSections, path);
      require_key(parts[3], param_keys(section_info(parts[2])), path);
      set_leaf(child_map(site, parts[2], file, "sites." + parts[1] + "." + parts[2]), parts[3],
               value);
      return;
    }
    bad_override(path, "expected sites.<code>.<field> or sites.<code>.<fpga|switch|cluster>.<key>");
  }
  if (top == "links") {
    if (parts.size() != 3) bad_override(path, "expected links.<a>-<b>.<key>");
    const std::vector<std::string> ends = split(parts[1], '-');
    if (ends.size() != 2) bad_override(path, "expected a link named '<a>-<b>' like 'nyc-lon'");
    std::vector<std::string> keys = param_keys(WanLinkParams::info());
    keys.push_back("source");
    require_key(parts[2], keys, path);
    YAML::Node seq = sequence_of(root, "links", path, file);
    for (std::size_t i = 0; i < seq.size(); ++i) {
      const std::string a = scalar_field(seq[i], "a"), b = scalar_field(seq[i], "b");
      if ((a == ends[0] && b == ends[1]) || (a == ends[1] && b == ends[0])) {
        set_leaf(seq[i], parts[2], value);
        return;
      }
    }
    bad_override(path, "no link between '" + ends[0] + "' and '" + ends[1] + "'");
  }
  bad_override(path,
               "unknown key '" + top +
                   "', expected one of: name, description, defaults, colocated, sites, links");
}

}  // namespace

Platform load_platform(const std::string& path, const std::vector<Override>& overrides) {
  YAML::Node root = load_yaml_file(path);
  if (!root.IsDefined() || root.IsNull()) {
    if (overrides.empty()) throw ConfigError(path, 0, "", "empty platform file");
  }
  for (const Override& ov : overrides) apply_override(root, path, ov);

  YamlMap top(root, path, "");
  top.allow_keys(kTopKeys);
  Platform plat;
  plat.file = path;
  plat.name = top.scalar_or("name", file_stem(path));
  top.scalar_or("description", "");

  // defaults: start from the structs' own defaults (the ParamInfo default_value).
  WanLinkParams link_defaults;
  Origins link_default_origins;
  SwitchParams switch_defaults;
  FpgaParams fpga_defaults;
  ClusterParams cluster_defaults;
  if (const YAML::Node d = top.optional("defaults")) {
    YamlMap dm(d, path, "defaults");
    dm.allow_keys(kDefaultsKeys);
    if (auto n = dm.optional("link")) {
      read_section(n, path, "defaults.link", link_defaults, plat.key_lines, &link_default_origins,
                   default_link_keys());
    }
    if (auto n = dm.optional("switch"))
      read_section(n, path, "defaults.switch", switch_defaults, plat.key_lines);
    if (auto n = dm.optional("fpga"))
      read_section(n, path, "defaults.fpga", fpga_defaults, plat.key_lines);
    if (auto n = dm.optional("cluster"))
      read_section(n, path, "defaults.cluster", cluster_defaults, plat.key_lines);
  }

  // colocated: a data-centre link, 2 us and 400 Gbps unless given (our estimate of an
  // intra-DC path between two clusters' edges), MTU and header as WanLinkParams.
  plat.colocated.link.delay_ps = 2'000'000;
  plat.colocated.link.bandwidth_bps = 400'000'000'000;
  if (const YAML::Node c = top.optional("colocated")) {
    YamlMap cm(c, path, "colocated");
    cm.allow_keys({"link"});
    if (auto n = cm.optional("link")) {
      Origins origins;
      read_section(n, path, "colocated.link", plat.colocated.link, plat.key_lines, &origins);
      check_mtu(plat.colocated.link, origins, n, path, "colocated.link");
    }
  }

  // sites
  const YAML::Node sites = top.required("sites");
  if (!sites.IsSequence()) {
    throw_at(sites, path, "sites", "expected a list of sites ('- code: lon ...')");
  }
  if (sites.size() == 0) throw_at(sites, path, "sites", "expected at least one site");
  std::map<std::string, int> code_line;
  for (std::size_t i = 0; i < sites.size(); ++i) {
    // The code names the site in every later message ("sites.lon.fpga.buffer").
    const YamlMap sm(sites[i], path, fmt::format("sites[{}]", i));
    Site s;
    s.code = sm.scalar("code");
    const YAML::Node code_node = sm.required("code");
    if (!valid_code(s.code)) {
      throw_at(code_node, path, sm.key_path("code"),
               "expected a site code of lowercase letters, digits and '_' like 'lon'", s.code);
    }
    const std::string sp = "sites." + s.code;
    YamlMap named(sites[i], path, sp);
    named.allow_keys(site_entry_keys());
    auto [it, inserted] = code_line.emplace(s.code, yaml_line(code_node));
    if (!inserted) {
      throw_at(code_node, path, sp + ".code",
               fmt::format("duplicate site code (first defined at line {})", it->second));
    }
    s.name = named.scalar_or("name", s.code);
    s.continent = named.scalar_or("continent", "");
    s.lat_deg = named.number_or("lat_deg", 0.0, -90.0, 90.0);
    s.lng_deg = named.number_or("lng_deg", 0.0, -180.0, 180.0);
    s.fpga = fpga_defaults;
    s.cluster = cluster_defaults;
    s.sw = switch_defaults;
    if (auto n = named.optional("fpga"))
      read_section(n, path, sp + ".fpga", s.fpga, plat.key_lines);
    if (auto n = named.optional("cluster"))
      read_section(n, path, sp + ".cluster", s.cluster, plat.key_lines);
    if (auto n = named.optional("switch"))
      read_section(n, path, sp + ".switch", s.sw, plat.key_lines);
    plat.sites.push_back(std::move(s));
  }
  std::vector<std::string> all_codes;
  for (const auto& s : plat.sites) all_codes.push_back(s.code);

  // links
  const YAML::Node links = top.optional("links");
  if (links && !links.IsNull() && !links.IsSequence()) {
    throw_at(links, path, "links", "expected a list of links ('- {a: nyc, b: lon, delay: ...}')");
  }
  std::map<std::pair<int, int>, int> link_line;
  const std::size_t num_links = links && links.IsSequence() ? links.size() : 0;
  for (std::size_t i = 0; i < num_links; ++i) {
    // The link is named "links.<a>-<b>" in every later message (as in --set paths).
    const YamlMap first(links[i], path, fmt::format("links[{}]", i));
    const std::string a = first.scalar("a"), b = first.scalar("b");
    const std::string label = "links." + a + "-" + b;
    YamlMap lm(links[i], path, label);
    lm.allow_keys(link_entry_keys());
    LinkSpec l;
    l.a = plat.site_index(a);
    l.b = plat.site_index(b);
    const std::string known = "expected a site code defined under sites (" + join(all_codes) + ")";
    if (l.a < 0) throw_at(lm.required("a"), path, label + ".a", known, a);
    if (l.b < 0) throw_at(lm.required("b"), path, label + ".b", known, b);
    if (l.a == l.b) throw_at(links[i], path, label, "expected a link between two different sites");
    const auto key = std::minmax(l.a, l.b);
    auto [it, inserted] = link_line.emplace(key, yaml_line(links[i]));
    if (!inserted) {
      throw_at(
          links[i], path, label,
          fmt::format("duplicate link (the same pair is already linked at line {})", it->second));
    }
    if (!lm.has("delay")) {
      throw_at(links[i], path, label + ".delay",
               "missing required key (one-way propagation delay, e.g. RTT/2)");
    }
    l.params = link_defaults;
    Origins origins = link_default_origins;
    read_section(links[i], path, label, l.params, plat.key_lines, &origins, link_entry_keys());
    check_mtu(l.params, origins, links[i], path, label);
    l.source = lm.scalar_or("source", "");
    plat.links.push_back(std::move(l));
  }

  // connectivity: every site reachable from the first one.
  const int n = static_cast<int>(plat.sites.size());
  std::vector<std::vector<int>> adj(n);
  for (const auto& l : plat.links) {
    adj[l.a].push_back(l.b);
    adj[l.b].push_back(l.a);
  }
  std::vector<bool> seen(n, false);
  std::vector<int> stack = {0};
  seen[0] = true;
  while (!stack.empty()) {
    const int u = stack.back();
    stack.pop_back();
    for (int v : adj[u]) {
      if (!seen[v]) {
        seen[v] = true;
        stack.push_back(v);
      }
    }
  }
  std::vector<std::string> unreachable;
  for (int i = 0; i < n; ++i) {
    if (!seen[i]) unreachable.push_back(plat.sites[i].code);
  }
  if (!unreachable.empty()) {
    const YAML::Node at = links ? top.key_node("links") : top.key_node("sites");
    throw_at(at, path, "links",
             fmt::format("expected links connecting all sites; not reachable from '{}': {}",
                         plat.sites[0].code, join(unreachable)));
  }
  return plat;
}

}  // namespace aggnet
