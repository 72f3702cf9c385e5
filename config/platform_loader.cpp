// Platform loading, validation and `--set` overrides. The YAML format is documented in
// platforms/README.md; every parameter key, its binding to a struct member and its
// checks come from the module parameter tables (model/param_info.h), and the keys it
// accepts beside them (a site's, a link's, a memory tier's) from their rows
// (common/param_rows.h): no key list is written here.
#include "config/platform_loader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "common/config_error.h"
#include "common/strings.h"
#include "config/yaml_reader.h"
#include "model/faults.h"

namespace aggnet {
namespace {

// ---------------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------------

/// The keys of one tier under `memory_tiers.<tier>` (docs/memory-tiers.md).
std::vector<std::string> tier_keys() {
  std::vector<std::string> keys;
  for (const MemoryTier& t : default_memory_tiers()) keys.push_back(t.key);
  return keys;
}

const std::string& link_section() { return WanLinkParams::table().info().section; }

/// The sections under `defaults:`, one per module.
std::vector<std::string> defaults_sections() {
  std::vector<std::string> out;
  for (const auto& m : all_module_params()) out.push_back(m.section);
  return out;
}

/// Keys accepted under `defaults.<section>`: all but those each entry must set itself.
std::vector<std::string> default_keys(const ModuleParamInfo& m) {
  std::vector<std::string> keys;
  for (const auto& p : m.params) {
    if (!p.check.required) keys.push_back(p.key);
  }
  return keys;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// A links[*] entry's keys: its own, the link parameters, its faults.
std::vector<std::string> link_entry_keys() {
  return concat(concat(section_keys("link_entry"), param_keys(WanLinkParams::table().info())),
                section_keys("link_fault"));
}

bool contains(const std::vector<std::string>& items, const std::string& s) {
  return std::find(items.begin(), items.end(), s) != items.end();
}

// ---------------------------------------------------------------------------------
// Reading parameter structs through their tables
// ---------------------------------------------------------------------------------

/// Where a parameter was last set: its value node (for the line) and dotted key.
struct Origin {
  YAML::Node node;
  std::string key;
};

/// A parameter struct being filled (defaults, then a site's or link's own keys), with
/// where each key was last set, for the checks that run once it is complete.
template <class T>
struct Filled {
  T params;
  std::map<std::string, Origin> origins;
};

/// The file being read and the key lines recorded into Platform::key_lines.
struct Reader {
  const std::string& file;
  std::map<std::string, int>& key_lines;
};

/// Reads every parameter of T present in mapping `m` into `out` (parsed and checked).
template <class T>
void read_params(const YamlMap& m, Filled<T>& out, Reader& r) {
  const ParamTable<T>& table = T::table();
  const std::vector<ParamInfo>& params = table.info().params;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const YAML::Node at = m.optional(params[i].key);
    if (!at) continue;
    out.params.*table.member(i) = m.param(params[i]);
    const std::string key = m.key_path(params[i].key);
    r.key_lines[key] = yaml_line(at);
    out.origins[params[i].key] = Origin{at, key};
  }
}

/// Reads the `link:`/`fpga:`/... mapping at `node`, which may hold only `allowed` keys.
template <class T>
void read_section(const YAML::Node& node, const std::string& path,
                  const std::vector<std::string>& allowed, Filled<T>& out, Reader& r) {
  YamlMap m(node, r.file, path);
  m.allow_keys(allowed);
  read_params(m, out, r);
}

/// Each required parameter of T must be a key of the list entry `m`.
template <class T>
void require_params(const YamlMap& m) {
  for (const ParamInfo& p : T::table().info().params) {
    if (p.check.required && !m.has(p.key)) {
      throw_at(m.node(), m.file(), m.key_path(p.key), "missing required key, the " + p.description);
    }
  }
}

/// Where to report a failed check across `keys`: the entry's own key (under
/// `own_path`), else the default it inherited; nullptr when none was set.
template <class T>
const Origin* blame(const Filled<T>& f, const std::vector<std::string>& keys,
                    const std::string& own_path) {
  for (bool own : {true, false}) {
    for (const std::string& k : keys) {
      const auto it = f.origins.find(k);
      if (it == f.origins.end()) continue;
      if (!own || it->second.key.rfind(own_path + ".", 0) == 0) return &it->second;
    }
  }
  return nullptr;
}

/// The table's checks across parameters, on the complete struct of the entry at `path`.
template <class T>
void check_invariants(const Filled<T>& f, const YAML::Node& entry, const std::string& file,
                      const std::string& path) {
  for (const Invariant<T>& inv : T::table().invariants()) {
    const std::string expected = inv.violation(f.params);
    if (expected.empty()) continue;
    if (const Origin* o = blame(f, inv.keys, path)) throw_at(o->node, file, o->key, expected);
    throw_at(entry, file, path + "." + inv.keys.front(), expected);
  }
}

/// The parameter structs of one site (or the defaults of every site).
struct SiteParams {
  Filled<FpgaParams> fpga;
  Filled<SwitchParams> sw;
  Filled<ClusterParams> cluster;

  /// Calls f(filled) for each struct.
  template <class F>
  void for_each(F f) {
    f(fpga);
    f(sw);
    f(cluster);
  }
};

template <class T>
const ModuleParamInfo& info_of(const Filled<T>&) {
  return T::table().info();
}

/// The parameter sections of a site ("fpga", "switch", "cluster").
const std::vector<std::string>& site_sections() {
  static const std::vector<std::string> sections = [] {
    std::vector<std::string> out;
    SiteParams().for_each([&](const auto& filled) { out.push_back(info_of(filled).section); });
    return out;
  }();
  return sections;
}

// ---------------------------------------------------------------------------------
// --set overrides
// ---------------------------------------------------------------------------------

[[noreturn]] void bad_override(const std::string& path, const std::string& expected) {
  throw ConfigError(kOverrideFile, 0, path, expected);
}

/// The child mapping `key` of `parent`, created when absent. Errors when it exists but
/// is not a mapping.
YAML::Node child_map(YAML::Node parent, const std::string& key, const std::string& file,
                     const std::string& path) {
  // A copy of the iterator's node, not an assignment to a node of its own: assigning
  // would merge the whole document's node memory into that node's.
  std::optional<YAML::Node> existing;
  for (auto it = parent.begin(); it != parent.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) existing.emplace(it->second);
  }
  if (existing && !existing->IsNull()) {
    if (!existing->IsMap())
      throw_at(*existing, file, path, "expected a mapping of 'key: value' entries");
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

void require_key(const std::string& key, const std::vector<std::string>& allowed,
                 const std::string& path) {
  if (!contains(allowed, key)) {
    bad_override(path, "unknown key '" + key + "', expected one of: " + join(allowed) +
                           did_you_mean(key, allowed));
  }
}

/// The parameter keys of section `section` (one of `sections`), for an override path.
const ModuleParamInfo& override_module(const std::string& section,
                                       const std::vector<std::string>& sections,
                                       const std::string& path) {
  require_key(section, sections, path);
  return *find_module_by_section(section);
}

struct OverrideCtx {
  YAML::Node& root;
  const std::string& file;
  const std::string& path;
  const std::string& value;
  const std::vector<std::string>& parts;
};

void override_top(const OverrideCtx& o) {
  const std::string& top = o.parts[0];
  if (top != "name" && top != "description") {
    bad_override(o.path, "expected a longer path under '" + top + "', e.g. " +
                             (top == "sites"          ? "sites.lon.fpga.buffer"
                              : top == "links"        ? "links.nyc-lon.delay"
                              : top == "colocated"    ? "colocated.link.delay"
                              : top == "memory_tiers" ? "memory_tiers.hbm.capacity"
                                                      : "defaults.link.bandwidth"));
  }
  set_leaf(o.root, top, o.value);
}

void override_defaults(const OverrideCtx& o) {
  const ModuleParamInfo& m = override_module(o.parts[1], defaults_sections(), o.path);
  if (o.parts.size() != 3) bad_override(o.path, "expected defaults." + o.parts[1] + ".<key>");
  require_key(o.parts[2], default_keys(m), o.path);
  YAML::Node d = child_map(o.root, "defaults", o.file, "defaults");
  set_leaf(child_map(d, o.parts[1], o.file, "defaults." + o.parts[1]), o.parts[2], o.value);
}

void override_colocated(const OverrideCtx& o) {
  const ModuleParamInfo& m = override_module(o.parts[1], {link_section()}, o.path);
  if (o.parts.size() != 3) bad_override(o.path, "expected colocated.link.<key>");
  require_key(o.parts[2], param_keys(m), o.path);
  YAML::Node c = child_map(o.root, "colocated", o.file, "colocated");
  set_leaf(child_map(c, o.parts[1], o.file, "colocated." + o.parts[1]), o.parts[2], o.value);
}

void override_site(const OverrideCtx& o) {
  YAML::Node seq = sequence_of(o.root, "sites", o.path, o.file);
  std::vector<std::string> codes;
  for (std::size_t i = 0; i < seq.size(); ++i) codes.push_back(scalar_field(seq[i], "code"));
  const auto found = std::find(codes.begin(), codes.end(), o.parts[1]);
  if (found == codes.end())
    bad_override(o.path, "no site '" + o.parts[1] + "', sites are: " + join(codes) +
                             did_you_mean(o.parts[1], codes));
  // A handle made by indexing shares the tree's memory; assigning a node into a
  // handle of its own (yaml-cpp 0.7) would leave keys added later dangling.
  YAML::Node site = seq[static_cast<std::size_t>(found - codes.begin())];
  const std::string at = "sites." + o.parts[1];
  if (o.parts.size() == 3 && contains(site_sections(), o.parts[2])) {
    bad_override(o.path, "expected " + at + "." + o.parts[2] + ".<key>, one of: " +
                             join(param_keys(*find_module_by_section(o.parts[2]))));
  }
  if (o.parts.size() == 3) {
    require_key(o.parts[2], section_keys("site", /*settable_only=*/true), o.path);
    set_leaf(site, o.parts[2], o.value);
    return;
  }
  if (o.parts.size() != 4) {
    bad_override(o.path, "expected sites.<code>.<field> or sites.<code>.<" +
                             join(site_sections(), "|") + ">.<key>");
  }
  const ModuleParamInfo& m = override_module(o.parts[2], site_sections(), o.path);
  require_key(o.parts[3], param_keys(m), o.path);
  set_leaf(child_map(site, o.parts[2], o.file, at + "." + o.parts[2]), o.parts[3], o.value);
}

void override_memory_tier(const OverrideCtx& o) {
  if (o.parts.size() != 3) bad_override(o.path, "expected memory_tiers.<tier>.<key>");
  require_key(o.parts[1], tier_keys(), o.path);
  require_key(o.parts[2], section_keys("memory_tier"), o.path);
  YAML::Node tiers = child_map(o.root, "memory_tiers", o.file, "memory_tiers");
  set_leaf(child_map(tiers, o.parts[1], o.file, "memory_tiers." + o.parts[1]), o.parts[2], o.value);
}

void override_link(const OverrideCtx& o) {
  if (o.parts.size() != 3) bad_override(o.path, "expected links.<a>-<b>.<key>");
  const std::vector<std::string> ends = split(o.parts[1], '-');
  if (ends.size() != 2) bad_override(o.path, "expected a link named '<a>-<b>' like 'nyc-lon'");
  require_key(o.parts[2],
              concat(concat(param_keys(WanLinkParams::table().info()),
                            section_keys("link_entry", /*settable_only=*/true)),
                     section_keys("link_fault")),
              o.path);
  YAML::Node seq = sequence_of(o.root, "links", o.path, o.file);
  std::vector<std::string> names;  // both ways round: a did-you-mean for either
  for (std::size_t i = 0; i < seq.size(); ++i) {
    const std::string a = scalar_field(seq[i], "a"), b = scalar_field(seq[i], "b");
    if ((a == ends[0] && b == ends[1]) || (a == ends[1] && b == ends[0])) {
      set_leaf(seq[i], o.parts[2], o.value);
      return;
    }
    names.push_back(a + "-" + b);
    names.push_back(b + "-" + a);
  }
  // A misspelt end, not two sites without a link between them, gets a suggestion.
  const YAML::Node sites = sequence_of(o.root, "sites", o.path, o.file);
  std::size_t known = 0;
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const std::string code = scalar_field(sites[i], "code");
    known += (code == ends[0]) + (code == ends[1]);
  }
  bad_override(o.path, "no link between '" + ends[0] + "' and '" + ends[1] + "'" +
                           (known < 2 ? did_you_mean(o.parts[1], names) : ""));
}

/// Applies one `path=value` override to the YAML tree. Paths:
///   name | description
///   defaults.<section>.<param>          (section: link, switch, fpga, cluster)
///   colocated.link.<param>
///   sites.<code>.<name|continent|lat_deg|lng_deg>
///   sites.<code>.<fpga|switch|cluster>.<param>
///   links.<a>-<b>.<param|source|loss|down> (either order of a and b)
///   memory_tiers.<on_chip|hbm|ddr>.<capacity|bandwidth|cost|energy>
void apply_override(YAML::Node& root, const std::string& file, const Override& ov) {
  const std::vector<std::string> parts = split(ov.first, '.');
  for (const auto& p : parts) {
    if (p.empty()) bad_override(ov.first, "expected a dotted path like 'defaults.link.bandwidth'");
  }
  if (!root.IsMap()) {
    if (!root.IsNull()) {
      throw ConfigError(file, yaml_line(root), "", "expected a mapping at the top level");
    }
    root = YAML::Node(YAML::NodeType::Map);
  }
  require_key(parts[0], platform_top_keys(), ov.first);
  const OverrideCtx o{root, file, ov.first, ov.second, parts};
  if (parts.size() == 1) return override_top(o);
  if (parts[0] == "defaults") return override_defaults(o);
  if (parts[0] == "colocated") return override_colocated(o);
  if (parts[0] == "sites") return override_site(o);
  if (parts[0] == "links") return override_link(o);
  if (parts[0] == "memory_tiers") return override_memory_tier(o);
  bad_override(ov.first, "unknown key '" + parts[0] +
                             "', expected one of: " + join(platform_top_keys()) +
                             did_you_mean(parts[0], platform_top_keys()));
}

// ---------------------------------------------------------------------------------
// Sections of the platform file
// ---------------------------------------------------------------------------------

struct Defaults {
  Filled<WanLinkParams> link;
  SiteParams site;
};

Defaults read_defaults(const YamlMap& top, Reader& r) {
  Defaults d;
  const YAML::Node node = top.optional("defaults");
  if (!node) return d;
  YamlMap dm(node, r.file, "defaults");
  dm.allow_keys(defaults_sections());
  auto read = [&](auto& filled) {
    const ModuleParamInfo& m = info_of(filled);
    if (const YAML::Node n = dm.optional(m.section)) {
      read_section(n, "defaults." + m.section, default_keys(m), filled, r);
    }
  };
  read(d.link);
  d.site.for_each(read);
  return d;
}

/// The co-located reference's link: a data-centre link, 2 us and 400 Gbps unless given
/// (our estimate of an intra-DC path between two clusters' edges); it does not inherit
/// defaults.link.
WanLinkParams read_colocated(const YamlMap& top, Reader& r) {
  Filled<WanLinkParams> link;
  link.params.delay_ps = 2'000'000;
  link.params.bandwidth_bps = 400'000'000'000;
  const YAML::Node c = top.optional("colocated");
  if (!c) return link.params;
  YamlMap cm(c, r.file, "colocated");
  cm.allow_keys({link_section()});
  if (const YAML::Node n = cm.optional(link_section())) {
    read_section(n, "colocated." + link_section(), param_keys(WanLinkParams::table().info()), link,
                 r);
    check_invariants(link, n, r.file, "colocated." + link_section());
  }
  return link.params;
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

/// The site's code; it names the site in every later message ("sites.lon.fpga.buffer").
std::string read_code(const YAML::Node& entry, std::size_t i, std::map<std::string, int>& seen,
                      const std::string& file) {
  const YamlMap sm(entry, file, fmt::format("sites[{}]", i));
  const std::string code = sm.scalar("code");
  const YAML::Node code_node = sm.required("code");
  if (!valid_code(code)) {
    throw_at(code_node, file, sm.key_path("code"),
             "expected a site code of lowercase letters, digits and '_' like 'lon'", code);
  }
  auto [it, inserted] = seen.emplace(code, yaml_line(code_node));
  if (!inserted) {
    throw_at(code_node, file, "sites." + code + ".code",
             fmt::format("duplicate site code (first defined at line {})", it->second));
  }
  return code;
}

Site read_site(const YAML::Node& entry, const std::string& code, const SiteParams& defaults,
               Reader& r) {
  YamlMap named(entry, r.file, "sites." + code);
  named.allow_keys(concat(section_keys("site"), site_sections()));
  Site s;
  s.code = code;
  s.name = named.scalar_or("name", s.code);
  s.continent = named.scalar_or("continent", "");
  s.lat_deg = named.number_or("lat_deg", 0.0, -90.0, 90.0);
  s.lng_deg = named.number_or("lng_deg", 0.0, -180.0, 180.0);
  SiteParams p = defaults;
  p.for_each([&](auto& filled) {
    const ModuleParamInfo& m = info_of(filled);
    const std::string path = named.key_path(m.section);
    const YAML::Node n = named.optional(m.section);
    if (n) read_section(n, path, param_keys(m), filled, r);
    check_invariants(filled, n ? n : entry, r.file, path);
  });
  s.fpga = p.fpga.params;
  s.sw = p.sw.params;
  s.cluster = p.cluster.params;
  return s;
}

void read_sites(const YamlMap& top, const SiteParams& defaults, Platform& plat, Reader& r) {
  const YAML::Node sites = top.required("sites");
  if (!sites.IsSequence()) {
    throw_at(sites, r.file, "sites", "expected a list of sites ('- code: lon ...')");
  }
  // Averaging needs two sites: a platform of one has no WAN to simulate (its run, bound and
  // schedules all fail later, each its own way). Named at the `sites:` line.
  if (sites.size() < 2) {
    const YAML::Node key = top.key_node("sites");
    throw_at(
        yaml_has_position(key) ? key : sites, r.file, "sites",
        "expected at least two sites (averaging needs two), got " + std::to_string(sites.size()));
  }
  std::map<std::string, int> code_line;
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const std::string code = read_code(sites[i], i, code_line, r.file);
    plat.sites.push_back(read_site(sites[i], code, defaults, r));
  }
}

std::vector<std::string> site_codes(const Platform& plat) {
  std::vector<std::string> codes;
  for (const auto& s : plat.sites) codes.push_back(s.code);
  return codes;
}

/// A link's declared faults, `loss: RATE` and `down: T1[-T2]` or a list of windows, as
/// the `--fault` specs loss:A-B=RATE and down:A-B@T1[-T2]: one parser and one set of
/// checks for both (model/faults.h). Errors: ConfigError at the key.
std::vector<std::string> read_link_faults(const YamlMap& lm, const std::string& a,
                                          const std::string& b) {
  std::vector<std::pair<YAML::Node, std::string>> specs;  // node, spec
  if (const YAML::Node loss = lm.optional("loss"))
    specs.emplace_back(loss, "loss:" + a + "-" + b + "=" + lm.scalar("loss"));
  if (const YAML::Node down = lm.optional("down")) {
    const bool list = down.IsSequence();
    if (list && down.size() == 0)
      throw_at(down, lm.file(), lm.key_path("down"), "expected a window T1[-T2] or a list of them");
    for (std::size_t i = 0; i < (list ? down.size() : 1); ++i) {
      const YAML::Node window = list ? down[i] : down;
      if (!window.IsScalar())
        throw_at(window, lm.file(), lm.key_path("down"),
                 "expected a window T1[-T2] or a list of them, e.g. [1s-2s, 5s]");
      specs.emplace_back(window, "down:" + a + "-" + b + "@" + window.Scalar());
    }
  }
  std::vector<std::string> out;
  for (const auto& [node, spec] : specs) {
    FaultPlan check;
    try {
      add_fault_spec(check, spec);
    } catch (const FaultSpecError& e) {  // the value is what was got, not the spec
      const std::string key = spec.rfind("loss:", 0) == 0 ? "loss" : "down";
      throw_at(node, lm.file(), lm.key_path(key), e.expected(), node.Scalar());
    }
    out.push_back(spec);
  }
  return out;
}

/// One links[*] entry, named "links.<a>-<b>" in every message (as in --set paths).
LinkSpec read_link(const YAML::Node& entry, std::size_t i, const Platform& plat,
                   const Filled<WanLinkParams>& defaults, std::map<std::pair<int, int>, int>& seen,
                   Reader& r) {
  const YamlMap first(entry, r.file, fmt::format("links[{}]", i));
  const std::string a = first.scalar("a"), b = first.scalar("b");
  const std::string label = "links." + a + "-" + b;
  YamlMap lm(entry, r.file, label);
  lm.allow_keys(link_entry_keys());
  LinkSpec l;
  l.a = plat.site_index(a);
  l.b = plat.site_index(b);
  const std::string known =
      "expected a site code defined under sites (" + join(site_codes(plat)) + ")";
  for (const auto& [index, end] :
       {std::pair{l.a, std::string("a")}, std::pair{l.b, std::string("b")}}) {
    const std::string code = end == "a" ? a : b;
    if (index < 0)
      throw_at(lm.required(end), r.file, label + "." + end,
               known + ", got '" + code + "'" + did_you_mean(code, site_codes(plat)));
  }
  if (l.a == l.b) throw_at(entry, r.file, label, "expected a link between two different sites");
  auto [it, inserted] = seen.emplace(std::minmax(l.a, l.b), yaml_line(entry));
  if (!inserted) {
    throw_at(
        entry, r.file, label,
        fmt::format("duplicate link (the same pair is already linked at line {})", it->second));
  }
  require_params<WanLinkParams>(lm);
  Filled<WanLinkParams> params = defaults;
  read_params(lm, params, r);
  check_invariants(params, entry, r.file, label);
  l.params = params.params;
  l.source = lm.scalar_or("source", "");
  l.faults = read_link_faults(lm, a, b);
  return l;
}

void read_links(const YamlMap& top, const Filled<WanLinkParams>& defaults, Platform& plat,
                Reader& r) {
  const YAML::Node links = top.optional("links");
  if (links && !links.IsNull() && !links.IsSequence()) {
    throw_at(links, r.file, "links", "expected a list of links ('- {a: nyc, b: lon, delay: ...}')");
  }
  std::map<std::pair<int, int>, int> link_line;
  const std::size_t num_links = links && links.IsSequence() ? links.size() : 0;
  for (std::size_t i = 0; i < num_links; ++i) {
    plat.links.push_back(read_link(links[i], i, plat, defaults, link_line, r));
  }
}

/// The tier's row `key` as a positive parameter, `like` its example in errors.
ParamInfo tier_param(const std::string& key, const std::string& like) {
  for (const ParamRow* row : section_rows("memory_tier"))
    if (key == row->key) return ParamInfo{row->key, row->quantity, row->unit, "", kPositive, like};
  throw std::logic_error("no memory_tier row '" + key + "'");
}

/// One tier's keys under `memory_tiers.<tier>`, over its defaults.
void read_tier(const YAML::Node& node, const std::string& path, MemoryTier& t,
               const std::string& file) {
  YamlMap m(node, file, path);
  m.allow_keys(section_keys("memory_tier"));
  const ParamInfo capacity = tier_param("capacity", "32MiB");
  const ParamInfo bandwidth = tier_param("bandwidth", "460GB/s");
  if (m.has("capacity")) t.capacity_bytes = m.param(capacity);
  if (m.has("bandwidth")) t.bandwidth_bytes_per_s = static_cast<double>(m.param(bandwidth)) / 8;
  t.cost_usd_per_gib = m.number_or("cost", t.cost_usd_per_gib, 0, 1e9);
  t.energy_pj_per_bit = m.number_or("energy", t.energy_pj_per_bit, 0, 1e6);
}

/// `memory_tiers:` (optional): per tier, the values that replace the defaults.
std::vector<MemoryTier> read_memory_tiers(const YamlMap& top, const std::string& file) {
  std::vector<MemoryTier> tiers = default_memory_tiers();
  const YAML::Node node = top.optional("memory_tiers");
  if (!node) return tiers;
  YamlMap tm(node, file, "memory_tiers");
  tm.allow_keys(tier_keys());
  for (MemoryTier& t : tiers) {
    if (const YAML::Node n = tm.optional(t.key)) read_tier(n, tm.key_path(t.key), t, file);
  }
  return tiers;
}

/// The codes of the sites not reachable from the first one over the links.
std::vector<std::string> unreachable_sites(const Platform& plat) {
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
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    if (!seen[i]) out.push_back(plat.sites[i].code);
  }
  return out;
}

void check_connected(const YamlMap& top, const Platform& plat, const std::string& file) {
  const std::vector<std::string> unreachable = unreachable_sites(plat);
  if (unreachable.empty()) return;
  const YAML::Node at = top.has("links") ? top.key_node("links") : top.key_node("sites");
  throw_at(at, file, "links",
           fmt::format("expected links connecting all sites; not reachable from '{}': {}",
                       plat.sites[0].code, join(unreachable)));
}

std::string file_stem(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const std::string base = path.substr(slash == std::string::npos ? 0 : slash + 1);
  const auto dot = base.find_last_of('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

}  // namespace

const ParamInfo* override_param(const std::string& path) {
  const std::vector<std::string> parts = split(path, '.');
  const ModuleParamInfo* m = nullptr;
  if (parts.size() == 3 && parts[0] == "defaults") m = find_module_by_section(parts[1]);
  if (parts.size() == 3 && parts[0] == "colocated" && parts[1] == link_section())
    m = &WanLinkParams::table().info();
  if (parts.size() == 3 && parts[0] == "links") m = &WanLinkParams::table().info();
  if (parts.size() == 4 && parts[0] == "sites" && contains(site_sections(), parts[2]))
    m = find_module_by_section(parts[2]);
  const ParamInfo* p = m ? find_param(*m, parts.back()) : nullptr;
  return p && parts[0] == "defaults" && p->check.required ? nullptr : p;
}

Platform load_platform(const std::string& path, const std::vector<Override>& overrides) {
  YAML::Node root = load_yaml_file(path);
  if ((!root.IsDefined() || root.IsNull()) && overrides.empty()) {
    throw ConfigError(path, 1, "",
                      "expected a platform (a mapping with keys " + join(platform_top_keys()) +
                          "), got an empty file");
  }
  for (const Override& ov : overrides) apply_override(root, path, ov);

  YamlMap top(root, path, "");
  top.allow_keys(platform_top_keys());
  Platform plat;
  plat.file = path;
  plat.name = top.scalar_or("name", file_stem(path));
  top.scalar_or("description", "");
  Reader r{path, plat.key_lines};
  const Defaults defaults = read_defaults(top, r);
  plat.colocated.link = read_colocated(top, r);
  read_sites(top, defaults.site, plat, r);
  read_links(top, defaults.link, plat, r);
  check_connected(top, plat, path);
  plat.memory_tiers = read_memory_tiers(top, path);
  return plat;
}

}  // namespace aggnet
