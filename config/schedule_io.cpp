#include "config/schedule_io.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "common/atomic_file.h"
#include "common/config_error.h"
#include "common/input_file.h"
#include "common/schedule_names.h"
#include "common/strings.h"
#include "common/units.h"
#include "config/yaml_reader.h"
#include "model/reduction_forest.h"
#include "model/routing.h"
#include "traffic/families.h"
#include "traffic/forest_planner.h"

namespace aggnet {

namespace {

// A family's seed; too many digits is bad input, not a crash.
std::uint64_t family_seed(const std::string& digits, const std::string& name) {
  try {
    return std::stoull(digits);
  } catch (const std::logic_error&) {  // out_of_range; invalid_argument cannot happen (\\d+)
    throw ConfigError(kCommandLine, 0, "schedule", "expected a seed below 2^64", name);
  }
}

// Hand-written matchers for schedule names (std::regex compiled each pattern per call,
// a tenth of a short run's start-up). \d is [0-9] and \w is [A-Za-z0-9_], as in
// ECMAScript regular expressions.
bool is_digit_char(char c) { return c >= '0' && c <= '9'; }
bool is_word_char(char c) {
  return is_digit_char(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
// \d+ and \w+
bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_digit_char);
}
bool all_word(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_word_char);
}

// The rest of `name` after `prefix`, or nullopt if it does not start with it.
std::optional<std::string> after(const std::string& name, const std::string& prefix) {
  if (name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  return name.substr(prefix.size());
}

// `PREFIX(\d+)`: the digits, or nullopt.
std::optional<std::string> numbered(const std::string& name, const std::string& prefix) {
  const auto rest = after(name, prefix);
  if (!rest || !all_digits(*rest)) return std::nullopt;
  return rest;
}

// A count written as digits without a leading zero, from `low` to `high` (at most 9
// digits, so it fits an int); nullopt otherwise. One rule for schedule files and names.
std::optional<int> bounded_count(const std::string& digits, int low, int high) {
  if (!all_digits(digits) || digits.size() > 9 || digits[0] == '0') return std::nullopt;
  const int value = std::stoi(digits);
  if (value < low || value > high) return std::nullopt;
  return value;
}

// A family's count on the command line (a group size K, a message count); else one error
// naming the whole schedule name.
int family_count(const std::string& digits, const std::string& name, int low, int high,
                 const std::string& what) {
  if (const auto value = bounded_count(digits, low, high)) return *value;
  throw ConfigError(
      kCommandLine, 0, "schedule",
      "expected " + what + " from " + std::to_string(low) + " to " + std::to_string(high), name);
}

int line_of(const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  return m.line >= 0 ? m.line + 1 : 0;
}

std::string idx(const std::string& base, std::size_t i) {
  return base + "[" + std::to_string(i) + "]";
}

std::map<std::string, int> code_index(const Platform& platform) {
  std::map<std::string, int> m;
  for (std::size_t i = 0; i < platform.sites.size(); ++i) m[platform.sites[i].code] = i;
  return m;
}

std::string known_codes(const Platform& platform) {
  std::string s;
  for (const auto& site : platform.sites) s += (s.empty() ? "" : ", ") + site.code;
  return s;
}

std::vector<std::string> code_list(const Platform& platform) {
  std::vector<std::string> codes;
  for (const auto& site : platform.sites) codes.push_back(site.code);
  return codes;
}

const std::vector<std::string> kScheduleKeys = {"name",      "description", "collective", "rounds",
                                                "ring_step", "messages",    "trees"};
const std::vector<std::string> kTreeKeys = {"root",   "parents",      "share",
                                            "pacing", "send_offsets", "broadcast"};
}  // namespace

const std::vector<std::pair<Collective, std::string>>& collective_names() {
  static const std::vector<std::pair<Collective, std::string>> names = {
      {Collective::kGroupAverage, "group-average"},
      {Collective::kRing, "ring"},
      {Collective::kReduceScatter, "reduce-scatter"},
      {Collective::kAllGather, "all-gather"},
      {Collective::kPointToPoint, "point-to-point"},
      {Collective::kParameterServer, "parameter-server"},
      {Collective::kUnicastAllToAll, "unicast-all-to-all"},
      {Collective::kReductionTree, "reduction-tree"}};
  return names;
}

const std::vector<std::pair<RingStepRule, std::string>>& ring_step_rule_names() {
  static const std::vector<std::pair<RingStepRule, std::string>> names = {
      {RingStepRule::kReceive, "receive"},
      {RingStepRule::kSendRecv, "sendrecv"},
      {RingStepRule::kBarrier, "barrier"}};
  return names;
}

namespace {
template <typename E>
std::vector<std::string> names_of(const std::vector<std::pair<E, std::string>>& table) {
  std::vector<std::string> names;
  for (const auto& [value, name] : table) names.push_back(name);
  return names;
}

template <typename E>
std::optional<E> value_named(const std::vector<std::pair<E, std::string>>& table,
                             const std::string& name) {
  for (const auto& [value, n] : table)
    if (n == name) return value;
  return std::nullopt;
}

std::string joined_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// One of the names of `table` at `node`. Errors: ConfigError naming them (did-you-mean).
template <typename E>
E read_named(const YAML::Node& node, const std::vector<std::pair<E, std::string>>& table,
             const std::string& key, const std::string& file_label) {
  const std::string text = node.IsScalar() ? node.Scalar() : "";
  if (auto value = value_named(table, text)) return *value;
  throw ConfigError(file_label, line_of(node), key,
                    "one of " + joined_names(names_of(table)) + ", got '" + text + "'" +
                        did_you_mean(text, names_of(table)));
}

// What a one-group collective's group order means, in its error message.
std::string group_order_meaning(Collective c) {
  if (c == Collective::kParameterServer) return "the server first";
  if (c == Collective::kUnicastAllToAll || c == Collective::kReductionTree) return "the members";
  return "the ring order";
}

// The structure each collective needs: the ring family, the parameter server and the
// unicast all-to-all one round of one group, point-to-point groups of two. Returns what
// is wrong, or "".
std::string structure_error(const Schedule& schedule) {
  const Collective c = schedule.collective;
  const bool one_group = schedule.rounds.size() == 1 && schedule.rounds[0].groups.size() == 1;
  const bool needs_one_group = is_ring_collective(c) || c == Collective::kParameterServer ||
                               c == Collective::kUnicastAllToAll || c == Collective::kReductionTree;
  if (needs_one_group && !one_group)
    return "a " + collective_name(c) + " schedule of exactly one round with one group (" +
           group_order_meaning(c) + ")";
  if (c == Collective::kPointToPoint) {
    for (const auto& round : schedule.rounds)
      for (const auto& g : round.groups)
        if (g.sites.size() != 2)
          return "point-to-point groups of exactly 2 sites [sender, receiver]";
  }
  if (c == Collective::kReductionTree && schedule.forest.empty())
    return "a reduction-tree schedule with at least one tree (trees)";
  if (c != Collective::kReductionTree && !schedule.forest.empty())
    return "trees only with collective reduction-tree";
  if (schedule.messages < 1) return "messages >= 1";
  if (schedule.messages > 1 && c != Collective::kPointToPoint)
    return "messages only with collective point-to-point";
  if (schedule.ring_step != RingStepRule::kReceive && !is_ring_collective(c))
    return "ring_step only with collective ring, reduce-scatter or all-gather";
  return "";
}
}  // namespace

std::string collective_name(Collective c) {
  for (const auto& [value, name] : collective_names())
    if (value == c) return name;
  return "group-average";
}

std::string ring_step_rule_name(RingStepRule rule) {
  for (const auto& [value, name] : ring_step_rule_names())
    if (value == rule) return name;
  return "receive";
}

std::string format_round(const Round& round, const Platform& platform) {
  std::string out;
  for (const auto& g : round.groups) {
    out += out.empty() ? "{" : " {";
    for (std::size_t i = 0; i < g.sites.size(); ++i) {
      const int s = g.sites[i];
      out += (i ? " " : "");
      out += (s >= 0 && s < static_cast<int>(platform.sites.size())) ? platform.sites[s].code
                                                                     : std::to_string(s);
    }
    out += "}";
  }
  return out;
}

namespace {
// The shares of a forest sum to 1 (to within rounding of a decimal file); in-trees each
// carry the whole gradient (plan_forest checks one per member).
bool shares_sum_to_one(const std::vector<ReductionTree>& forest) {
  if (std::any_of(forest.begin(), forest.end(), [](const auto& t) { return !t.broadcast; }))
    return true;
  double sum = 0;
  for (const auto& tree : forest) sum += tree.share;
  return std::abs(sum - 1.0) <= 1e-6;
}

void validate_forest(const Schedule& schedule, const Platform& platform, const std::string& where) {
  const Routing routing(platform);
  const auto& members = schedule.rounds.at(0).groups.at(0).sites;
  for (std::size_t t = 0; t < schedule.forest.size(); ++t) {
    const std::string wrong = tree_error(platform, routing, schedule.forest[t], members);
    if (!wrong.empty()) throw ConfigError(where, 0, idx("trees", t), wrong);
  }
  if (!shares_sum_to_one(schedule.forest))
    throw ConfigError(where, 0, "trees", "shares summing to 1");
}
}  // namespace

void validate_schedule(const Schedule& schedule, const Platform& platform,
                       const std::string& where) {
  const int n = static_cast<int>(platform.sites.size());
  if (schedule.rounds.empty()) {
    throw ConfigError(where, 0, "rounds", "a non-empty list of rounds");
  }
  if (const std::string wrong = structure_error(schedule); !wrong.empty())
    throw ConfigError(where, 0, "rounds", wrong);
  for (std::size_t r = 0; r < schedule.rounds.size(); ++r) {
    const Round& round = schedule.rounds[r];
    if (round.groups.empty()) {
      throw ConfigError(where, 0, idx("rounds", r), "a round with at least one group");
    }
    std::vector<int> seen(n, -1);
    for (std::size_t g = 0; g < round.groups.size(); ++g) {
      const auto& sites = round.groups[g].sites;
      const std::string gkey = idx(idx("rounds", r), g);
      if (sites.size() < 2) throw ConfigError(where, 0, gkey, "a group of at least 2 sites");
      for (int s : sites) {
        if (s < 0 || s >= n) {
          throw ConfigError(
              where, 0, gkey,
              "site indices in 0.." + std::to_string(n - 1) + ", got " + std::to_string(s));
        }
        if (seen[s] >= 0) {
          throw ConfigError(where, 0, gkey,
                            "each site at most once per round, got '" + platform.sites[s].code +
                                "' again (already in group " + std::to_string(seen[s]) + ")");
        }
        seen[s] = static_cast<int>(g);
      }
    }
  }
  if (schedule.collective == Collective::kReductionTree) validate_forest(schedule, platform, where);
}

// The mapping form of a group: `members` plus optional `send_offsets` (site: time after
// the agreed start; members left out start at 0).
// A mapping key as text; a key that is not a plain scalar is an error at its line.
std::string key_text(const YAML::Node& key, const std::string& where,
                     const std::string& file_label) {
  if (!key.IsScalar()) throw ConfigError(file_label, line_of(key), where, "a plain key");
  return key.Scalar();
}

// Keys of a mapping, each once. Errors: ConfigError naming the repeated key.
void check_unique_keys(const YAML::Node& map, const std::string& where,
                       const std::string& file_label) {
  std::map<std::string, int> seen;  // key -> its line
  for (const auto& kv : map) {
    const std::string key = key_text(kv.first, where, file_label);
    const auto [first, fresh] = seen.emplace(key, line_of(kv.first));
    if (!fresh)
      throw ConfigError(
          file_label, line_of(kv.first), where + (where.empty() ? "" : ".") + key,
          fmt::format("each key once (duplicate key, first given on line {})", first->second));
  }
}

// A send offset: a time after the agreed start, at most a day (a larger one is surely a
// typo, and sums of offsets and delays must stay far from the 64-bit ps range).
std::uint64_t send_offset_ps(const YAML::Node& value, const std::string& key,
                             const std::string& file_label) {
  constexpr std::uint64_t kDayPs = 86'400ull * 1'000'000'000'000ull;
  const std::string text = value.IsScalar() ? value.Scalar() : "";
  std::uint64_t ps = 0;
  try {
    ps = parse_time_ps(text);
  } catch (const std::exception&) {
    throw ConfigError(file_label, line_of(value), key, "a time like 3ms", text);
  }
  if (ps > kDayPs) throw ConfigError(file_label, line_of(value), key, "at most 24h", text);
  return ps;
}

// The mapping form of a group: `members` plus optional `send_offsets` (site: time after
// the agreed start; members left out start at 0).
void read_group_map(const YAML::Node& gn, const std::string& gkey, const std::string& file_label,
                    const Platform& platform, Group& group) {
  for (const auto& kv : gn) {
    const std::string key = key_text(kv.first, gkey, file_label);
    if (key == "members") continue;
    if (key != "send_offsets") {
      throw ConfigError(
          file_label, line_of(kv.first), gkey + "." + key,
          "one of the keys members, send_offsets" + did_you_mean(key, {"members", "send_offsets"}));
    }
    if (!kv.second.IsMap() || kv.second.size() == 0) {
      throw ConfigError(file_label, line_of(kv.second), gkey + "." + key,
                        "a mapping site: time, like {lon: 3ms}");
    }
    check_unique_keys(kv.second, gkey + "." + key, file_label);
    group.send_offset_ps.assign(group.sites.size(), 0);
    for (const auto& o : kv.second) {
      const std::string code = o.first.Scalar();
      const std::string okey = gkey + ".send_offsets." + code;
      std::size_t i = 0;
      while (i < group.sites.size() && platform.sites[group.sites[i]].code != code) ++i;
      if (i == group.sites.size()) {
        std::vector<std::string> members;
        for (int s : group.sites) members.push_back(platform.sites[s].code);
        throw ConfigError(file_label, line_of(o.first), okey,
                          "a member of this group" + did_you_mean(code, members));
      }
      group.send_offset_ps[i] = send_offset_ps(o.second, okey, file_label);
    }
  }
}

namespace {

// A site code of the platform at `node`. Errors: ConfigError with did-you-mean.
int read_site(const YAML::Node& node, const std::string& key, const std::string& file_label,
              const Platform& platform) {
  const std::string code = node.IsScalar() ? node.Scalar() : "";
  const auto codes = code_index(platform);
  const auto it = codes.find(code);
  if (it == codes.end())
    throw ConfigError(file_label, line_of(node), key,
                      "a site code of platform '" + platform.name + "' (" + known_codes(platform) +
                          "), got '" + code + "'" + did_you_mean(code, code_list(platform)));
  return it->second;
}

// A mapping site: value, each site read by read_site, each value by `value`.
template <class Value>
void read_site_map(const YAML::Node& map, const std::string& key, const std::string& file_label,
                   const Platform& platform, const char* example, Value value) {
  if (!map.IsMap() || map.size() == 0)
    throw ConfigError(file_label, line_of(map), key, std::string("a mapping like ") + example);
  check_unique_keys(map, key, file_label);
  for (const auto& kv : map) {
    const std::string skey = key + "." + (kv.first.IsScalar() ? kv.first.Scalar() : "?");
    value(read_site(kv.first, skey, file_label, platform), kv.second, skey);
  }
}

// One entry of `trees`: root, parents (child: parent), share, optional pacing and
// send_offsets. Checked at once (tree_error) against its own sites, which must be those of
// the first tree.
ReductionTree read_tree(const YAML::Node& tn, const std::string& tkey,
                        const std::string& file_label, const Platform& platform,
                        const Routing& routing) {
  if (!tn.IsMap())
    throw ConfigError(file_label, line_of(tn), tkey,
                      "a tree {root: SITE, parents: {SITE: PARENT, ...}, share: F}");
  check_unique_keys(tn, tkey, file_label);
  ReductionTree tree;
  tree.parent.assign(platform.sites.size(), -1);
  for (const auto& kv : tn) {
    const std::string key = kv.first.Scalar(), k = tkey + "." + key;
    const YAML::Node& v = kv.second;
    if (key == "root") {
      tree.root = read_site(v, k, file_label, platform);
    } else if (key == "parents") {
      read_site_map(v, k, file_label, platform, "{nyc: lon, ams: lon}",
                    [&](int child, const YAML::Node& p, const std::string& ck) {
                      tree.parent[static_cast<std::size_t>(child)] =
                          read_site(p, ck, file_label, platform);
                    });
    } else if (key == "share") {
      const std::string text = v.IsScalar() ? v.Scalar() : "";
      double share = 0;
      try {
        std::size_t used = 0;
        share = std::stod(text, &used);
        if (used != text.size()) share = -1;
      } catch (const std::exception&) {
        share = -1;
      }
      if (!(share > 0 && share <= 1))
        throw ConfigError(file_label, line_of(v), k, "a fraction in (0, 1]", text);
      tree.share = share;
    } else if (key == "pacing") {
      tree.pacing_interval_ps = send_offset_ps(v, k, file_label);
    } else if (key == "broadcast") {
      const std::string text = v.IsScalar() ? v.Scalar() : "";
      if (text != "true" && text != "false")
        throw ConfigError(file_label, line_of(v), k, "true or false", text);
      tree.broadcast = text == "true";
    } else if (key == "send_offsets") {
      tree.send_offset_ps.assign(platform.sites.size(), 0);
      read_site_map(v, k, file_label, platform, "{lon: 3ms}",
                    [&](int site, const YAML::Node& o, const std::string& ok) {
                      tree.send_offset_ps[static_cast<std::size_t>(site)] =
                          send_offset_ps(o, ok, file_label);
                    });
    } else {
      throw ConfigError(file_label, line_of(kv.first), k,
                        "one of the keys root, parents, share, pacing, send_offsets, broadcast" +
                            did_you_mean(key, kTreeKeys));
    }
  }
  if (tree.root < 0) throw ConfigError(file_label, line_of(tn), tkey + ".root", "a root site");
  const auto sites = tree_sites(tree);
  const std::string wrong = tree_error(platform, routing, tree, sites);
  if (!wrong.empty()) throw ConfigError(file_label, line_of(tn), tkey, wrong);
  return tree;
}

std::vector<ReductionTree> read_trees(const YAML::Node& v, const std::string& file_label,
                                      const Platform& platform) {
  if (!v.IsSequence() || v.size() == 0)
    throw ConfigError(file_label, line_of(v), "trees", "a non-empty list of trees");
  const Routing routing(platform);
  std::vector<ReductionTree> forest;
  for (std::size_t t = 0; t < v.size(); ++t) {
    forest.push_back(read_tree(v[t], idx("trees", t), file_label, platform, routing));
    if (tree_sites(forest.back()) != tree_sites(forest.front()))
      throw ConfigError(file_label, line_of(v[t]), idx("trees", t),
                        "the same sites as trees[0] (every member in every tree)");
  }
  if (!shares_sum_to_one(forest))
    throw ConfigError(file_label, line_of(v), "trees", "shares summing to 1");
  if (const std::string wrong = in_trees_error(platform, forest, tree_sites(forest.front()));
      !wrong.empty())
    throw ConfigError(file_label, line_of(v), "trees", wrong);
  return forest;
}

}  // namespace

namespace {

// One group of a round: a list of site codes, or a map with members and send offsets.
// `seen` holds the round's sites so far (site -> group), for the at-most-once check.
Group read_group(const YAML::Node& gn, const std::string& gkey, std::size_t g,
                 const std::string& file_label, const Platform& platform,
                 const std::map<std::string, int>& codes, std::map<int, std::size_t>& seen) {
  if (gn.IsMap()) check_unique_keys(gn, gkey, file_label);
  const YAML::Node members = gn.IsMap() ? gn["members"] : gn;
  if (!members.IsDefined() || !members.IsSequence() || members.size() < 2) {
    throw ConfigError(file_label, line_of(gn), gkey,
                      "a group of at least 2 site codes like [lon, ams], or "
                      "{members: [lon, ams], send_offsets: {lon: 3ms}}");
  }
  Group group;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const YAML::Node& sn = members[i];
    if (!sn.IsScalar()) {
      throw ConfigError(file_label, line_of(sn), idx(gkey, i), "a site code");
    }
    const std::string code = sn.as<std::string>();
    auto it = codes.find(code);
    if (it == codes.end()) {
      throw ConfigError(file_label, line_of(sn), idx(gkey, i),
                        "a site code of platform '" + platform.name + "' (" +
                            known_codes(platform) + "), got '" + code + "'" +
                            did_you_mean(code, code_list(platform)));
    }
    auto dup = seen.find(it->second);
    if (dup != seen.end()) {
      throw ConfigError(file_label, line_of(sn), idx(gkey, i),
                        "each site at most once per round, got '" + code +
                            "' again (already in group " + std::to_string(dup->second) +
                            " of this round)");
    }
    seen[it->second] = g;
    group.sites.push_back(it->second);
  }
  if (gn.IsMap()) read_group_map(gn, gkey, file_label, platform, group);
  return group;
}

// The `rounds` key: a non-empty list of rounds, each a non-empty list of groups.
std::vector<Round> read_rounds(const YAML::Node& v, const std::string& file_label,
                               const Platform& platform) {
  if (!v.IsSequence() || v.size() == 0) {
    throw ConfigError(file_label, line_of(v), "rounds",
                      "a non-empty list of rounds, each a list of groups of site codes");
  }
  const auto codes = code_index(platform);
  std::vector<Round> rounds;
  for (std::size_t r = 0; r < v.size(); ++r) {
    const YAML::Node& rn = v[r];
    const std::string rkey = idx("rounds", r);
    if (!rn.IsSequence() || rn.size() == 0) {
      throw ConfigError(file_label, line_of(rn), rkey,
                        "a non-empty round: a list of groups like [[lon, ams], [nyc, chi]]");
    }
    Round round;
    std::map<int, std::size_t> seen;  // site -> group
    for (std::size_t g = 0; g < rn.size(); ++g)
      round.groups.push_back(read_group(rn[g], idx(rkey, g), g, file_label, platform, codes, seen));
    rounds.push_back(round);
  }
  return rounds;
}

// The rounds (or trees) fit the collective: the error at the rounds' (or trees') line.
void check_structure(const Schedule& schedule, const YAML::Node& root,
                     const std::string& file_label) {
  if (const std::string wrong = structure_error(schedule); !wrong.empty()) {
    const bool trees = root["trees"].IsDefined();
    const YAML::Node at = trees ? root["trees"] : root["rounds"];
    throw ConfigError(file_label, line_of(at.IsDefined() ? at : root), trees ? "trees" : "rounds",
                      wrong);
  }
  for (const auto& round : schedule.rounds)
    for (const auto& g : round.groups)
      if (schedule.collective != Collective::kGroupAverage && !g.send_offset_ps.empty())
        throw ConfigError(file_label, line_of(root["rounds"]), "rounds",
                          "no send_offsets in a " + collective_name(schedule.collective) +
                              " schedule (they apply to group averages)");
}

}  // namespace

Schedule parse_schedule(const std::string& yaml_text, const Platform& platform,
                        const std::string& file_label) {
  const YAML::Node root = parse_yaml(yaml_text, file_label);
  if (!root.IsDefined() || root.IsNull())
    throw ConfigError(file_label, 1, "",
                      "expected a schedule (keys name, collective, rounds), "
                      "got an empty file");
  if (!root.IsMap()) {
    throw ConfigError(file_label, line_of(root), "<root>",
                      "a mapping with keys name, collective, rounds");
  }
  Schedule schedule;
  schedule.name = std::filesystem::path(file_label).stem().string();
  bool have_rounds = false;
  check_unique_keys(root, "", file_label);
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& v = kv.second;
    if (key == "name") {
      if (!v.IsScalar()) throw ConfigError(file_label, line_of(v), key, "a string");
      schedule.name = v.as<std::string>();
    } else if (key == "description") {
      // free text, ignored
    } else if (key == "collective") {
      schedule.collective = read_named(v, collective_names(), key, file_label);
    } else if (key == "ring_step") {
      schedule.ring_step = read_named(v, ring_step_rule_names(), key, file_label);
    } else if (key == "messages") {
      const std::string text = v.IsScalar() ? v.Scalar() : "";
      const auto messages = bounded_count(text, 1, 999'999);
      if (!messages)
        throw ConfigError(file_label, line_of(v), key, "a whole number from 1 to 999999", text);
      schedule.messages = *messages;
    } else if (key == "trees") {
      schedule.forest = read_trees(v, file_label, platform);
    } else if (key == "rounds") {
      have_rounds = true;
      schedule.rounds = read_rounds(v, file_label, platform);
    } else {
      throw ConfigError(file_label, line_of(kv.first), key,
                        "one of the keys name, description, collective, rounds, ring_step, "
                        "messages, trees" +
                            did_you_mean(key, kScheduleKeys));
    }
  }
  // A forest's members are its trees' sites: one round, one group.
  if (!have_rounds && !schedule.forest.empty())
    schedule.rounds = {Round{{Group{tree_sites(schedule.forest.front())}}}};
  if (!have_rounds && schedule.forest.empty())
    throw ConfigError(file_label, line_of(root), "rounds", "a list of rounds");
  check_structure(schedule, root, file_label);
  validate_schedule(schedule, platform, file_label);
  return schedule;
}

Schedule load_schedule(const std::string& path, const Platform& platform) {
  return parse_schedule(read_input_file(path), platform, path);
}

namespace {
// The forest: its members are its trees' sites (no rounds written). Shares with 17
// significant digits read back to the same double.
void write_trees(std::ostringstream& out, const Schedule& schedule, const Platform& platform) {
  const auto code = [&](int s) { return platform.sites[static_cast<std::size_t>(s)].code; };
  out << "trees:\n";
  for (const auto& tree : schedule.forest) {
    out << "  - root: " << code(tree.root) << "\n    parents: {";
    bool first = true;
    for (std::size_t s = 0; s < tree.parent.size(); ++s)
      if (tree.parent[s] >= 0) {
        out << (first ? "" : ", ") << code(static_cast<int>(s)) << ": " << code(tree.parent[s]);
        first = false;
      }
    out << "}\n" << fmt::format("    share: {:.17g}\n", tree.share);
    if (tree.pacing_interval_ps) out << "    pacing: " << tree.pacing_interval_ps << "ps\n";
    if (!tree.broadcast) out << "    broadcast: false\n";
    if (tree.send_offset_ps.empty()) continue;
    out << "    send_offsets: {";
    first = true;
    for (int s : tree_sites(tree)) {
      out << (first ? "" : ", ") << code(s) << ": "
          << tree.send_offset_ps[static_cast<std::size_t>(s)] << "ps";
      first = false;
    }
    out << "}\n";
  }
}
}  // namespace

std::string schedule_to_yaml(const Schedule& schedule, const Platform& platform) {
  std::ostringstream out;
  out << "# aggnet schedule file (format: traffic/README.md)\n";
  out << "name: " << YAML::Node(schedule.name) << "\n";
  out << "collective: " << collective_name(schedule.collective) << "\n";
  if (schedule.ring_step != RingStepRule::kReceive)
    out << "ring_step: " << ring_step_rule_name(schedule.ring_step) << "\n";
  if (schedule.messages != 1) out << "messages: " << schedule.messages << "\n";
  if (schedule.collective == Collective::kReductionTree) {
    write_trees(out, schedule, platform);
    return out.str();
  }
  out << "rounds:\n";
  for (const auto& round : schedule.rounds) {
    out << "  - [";
    for (std::size_t g = 0; g < round.groups.size(); ++g) {
      const Group& group = round.groups[g];
      out << (g ? ", " : "") << (group.send_offset_ps.empty() ? "[" : "{members: [");
      for (std::size_t i = 0; i < group.sites.size(); ++i) {
        out << (i ? ", " : "") << platform.sites[group.sites[i]].code;
      }
      out << "]";
      if (!group.send_offset_ps.empty()) {
        out << ", send_offsets: {";
        for (std::size_t i = 0; i < group.sites.size(); ++i)
          out << (i ? ", " : "") << platform.sites[group.sites[i]].code << ": "
              << group.send_offset_ps[i] << "ps";
        out << "}}";
      }
    }
    out << "]\n";
  }
  return out.str();
}

void save_schedule(const Schedule& schedule, const Platform& platform, const std::string& path) {
  write_file_atomically(path, schedule_to_yaml(schedule, platform));
}

namespace {
int site_named(const std::string& code, const Platform& platform, const std::string& name) {
  for (std::size_t i = 0; i < platform.sites.size(); ++i)
    if (platform.sites[i].code == code) return static_cast<int>(i);
  throw ConfigError(kCommandLine, 0, "schedule",
                    "site codes of platform '" + platform.name + "' (" + known_codes(platform) +
                        ") in '" + name + "', got '" + code + "'" +
                        did_you_mean(code, code_list(platform)));
}

// Pairs `A-B[,C-D...]` as site indices; nullopt unless made of word characters, ',' and '-'.
// Errors: ConfigError for a malformed pair or an unknown site.
std::optional<std::vector<std::pair<int, int>>> site_pairs(const std::string& list,
                                                           const std::string& name,
                                                           const Platform& platform) {
  const auto list_char = [](char c) { return is_word_char(c) || c == ',' || c == '-'; };
  if (list.empty() || !std::all_of(list.begin(), list.end(), list_char)) return std::nullopt;
  std::vector<std::pair<int, int>> pairs;
  for (const auto& pair : split(list, ',')) {
    const std::size_t dash = pair.find('-');
    const std::string from = pair.substr(0, dash);
    const std::string to = dash == std::string::npos ? "" : pair.substr(dash + 1);
    if (!all_word(from) || !all_word(to))
      throw ConfigError(kCommandLine, 0, "schedule",
                        "pairs SRC-DST like p2p:lon-nyc,ams-chi, got '" + pair + "'");
    pairs.emplace_back(site_named(from, platform, name), site_named(to, platform, name));
  }
  return pairs;
}

// Whether `list` reads as pairs of the platform's sites.
bool reads_as_pairs(const std::string& list, const std::string& name, const Platform& platform) {
  try {
    return site_pairs(list, name, platform).has_value();
  } catch (const ConfigError&) {
    return false;
  }
}

// `p2p:` followed by `spec`: pairs `A-B[,C-D...]` and an optional `xK` (K messages);
// nullopt unless the pairs are made of word characters, ',' and '-'. A site code may end
// in x and digits: `lon-nyx2` on a platform with sites ny and nyx2 reads both ways and is
// refused rather than guessed.
std::optional<Schedule> point_to_point_named(const std::string& spec, const std::string& name,
                                             const Platform& platform) {
  std::string list = spec;
  std::optional<std::string> count;
  const std::size_t x = spec.rfind('x');
  if (x != std::string::npos && x > 0 && all_digits(spec.substr(x + 1))) {
    const std::string before = spec.substr(0, x);
    const bool counted = reads_as_pairs(before, name, platform);
    const bool whole = reads_as_pairs(spec, name, platform);
    if (counted && whole)
      throw ConfigError(kCommandLine, 0, "schedule",
                        "an unambiguous p2p list, got '" + name + "': the last site is '" +
                            spec.substr(spec.rfind('-') + 1) + "' with one message or '" +
                            before.substr(before.rfind('-') + 1) + "' with " + spec.substr(x + 1) +
                            "; write p2p:" + spec +
                            "x1 for the first, a schedule file with messages: for the other");
    if (!whole) {
      list = before;
      count = spec.substr(x + 1);
    }
  }
  const auto pairs = site_pairs(list, name, platform);
  if (!pairs) return std::nullopt;
  const int messages = count ? family_count(*count, name, 1, 999'999, "a message count xK") : 1;
  Schedule s = point_to_point_schedule(platform, *pairs, messages);
  validate_schedule(s, platform, kCommandLine);
  return s;
}

// `ring[:RULE]`, `reduce-scatter[:RULE]`, `all-gather[:RULE]`, `p2p:A-B[,C-D...][xK]`,
// `parameter-server:SITE`, `unicast-all-to-all`; nullopt for any other name.
std::optional<Schedule> host_collective_schedule(const std::string& name,
                                                 const Platform& platform) {
  const std::size_t colon = name.find(':');
  const std::string base = name.substr(0, colon);
  if (base == "ring" || base == "reduce-scatter" || base == "all-gather") {
    const auto collective = *value_named(collective_names(), base);
    auto rule = RingStepRule::kReceive;
    if (colon != std::string::npos) {
      const std::string rule_name = name.substr(colon + 1);
      const auto named_rule = value_named(ring_step_rule_names(), rule_name);
      if (!named_rule)
        throw ConfigError(kCommandLine, 0, "schedule",
                          "a ring step rule (" + joined_names(names_of(ring_step_rule_names())) +
                              ") after '" + base + ":', got '" + rule_name + "'" +
                              did_you_mean(rule_name, names_of(ring_step_rule_names())));
      rule = *named_rule;
    }
    return ring_collective_schedule(platform, Routing(platform), collective, rule);
  }
  if (name == "unicast-all-to-all") return unicast_all_to_all_schedule(platform);
  if (name == "reduction-tree")
    return reduction_tree_schedule(platform, Routing(platform), -1, RunOptions{}.chunk_bytes);
  if (const auto root = after(name, "reduction-tree:"); root && all_word(*root)) {
    Schedule s = reduction_tree_schedule(
        platform, Routing(platform), site_named(*root, platform, name), RunOptions{}.chunk_bytes);
    validate_schedule(s, platform, kCommandLine);
    return s;
  }
  if (const auto server = after(name, "parameter-server:"); server && all_word(*server))
    return parameter_server_schedule(platform, site_named(*server, platform, name));
  if (const auto p2p = after(name, "p2p:")) return point_to_point_named(*p2p, name, platform);
  return std::nullopt;
}
}  // namespace

Schedule make_schedule(const std::string& name, const Platform& platform) {
  return make_schedule(name, platform, PlanInputs{});
}

Schedule make_schedule(const std::string& name, const Platform& platform,
                       const PlanInputs& inputs) {
  if (name == "reduction-forest")
    return reduction_forest_schedule(platform, inputs.gradient_bytes, inputs.chunk_bytes);
  if (name == "reduction-in-trees")
    return reduction_in_trees_schedule(platform, inputs.chunk_bytes);
  if (auto host = host_collective_schedule(name, platform)) return *host;
  if (name == "all-to-all") return all_to_all_schedule(platform);
  if (name == "triads") return triads_schedule(platform);
  if (name == "pairs") return pairs_schedule(platform);
  if (name == "ring") return ring_schedule(platform, Routing(platform));
  if (name == "hierarchical") return hierarchical_schedule(platform, Routing(platform));
  const int n = static_cast<int>(platform.sites.size());
  const std::string group_size =
      "a group size K (the platform has " + std::to_string(n) + " sites)";
  if (const auto k = numbered(name, "rotating-"))
    return rotating_schedule(platform, family_count(*k, name, 2, n, group_size));
  if (const auto k = numbered(name, "sequential-"))
    return sequential_schedule(platform, family_count(*k, name, 2, n, group_size));
  if (const auto rest = after(name, "random-")) {
    const std::size_t colon = rest->find(':');
    const std::string k = rest->substr(0, colon);
    const std::string seed = colon == std::string::npos ? "" : rest->substr(colon + 1);
    if (all_digits(k) && all_digits(seed))
      return random_schedule(platform, family_count(k, name, 2, n, group_size),
                             family_seed(seed, name));
  }
  std::error_code ec;
  if (std::filesystem::is_regular_file(name, ec)) return load_schedule(name, platform);
  throw ConfigError(kCommandLine, 0, "schedule",
                    "expected " + schedule_name_list() + " or an existing schedule file, got '" +
                        name + "'" + did_you_mean(name, schedule_name_words()));
}

}  // namespace aggnet
