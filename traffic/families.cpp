#include "traffic/families.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>

#include "common/config_error.h"
#include "model/reduction_forest.h"
#include "model/routing.h"

namespace aggnet {

std::vector<std::vector<int>> sites_by_continent(const Platform& platform) {
  std::vector<std::string> names;
  std::vector<std::vector<int>> groups;
  for (int i = 0; i < static_cast<int>(platform.sites.size()); ++i) {
    const std::string& c = platform.sites[i].continent;
    auto it = std::find(names.begin(), names.end(), c);
    if (it == names.end()) {
      names.push_back(c);
      groups.push_back({i});
    } else {
      groups[it - names.begin()].push_back(i);
    }
  }
  return groups;
}

std::vector<int> continent_order(const Platform& platform) {
  std::vector<int> order;
  for (const auto& g : sites_by_continent(platform)) order.insert(order.end(), g.begin(), g.end());
  return order;
}

std::vector<Round> affine_plane_classes(const std::vector<int>& points) {
  if (points.size() != 9) throw std::invalid_argument("affine_plane_classes: needs 9 points");
  auto pt = [&](int x, int y) { return points[3 * (((x % 3) + 3) % 3) + (((y % 3) + 3) % 3)]; };
  std::vector<Round> classes(4);
  for (int c = 0; c < 3; ++c) {
    Group row, col, s1, s2;
    for (int t = 0; t < 3; ++t) {
      row.sites.push_back(pt(c, t));         // x = c
      col.sites.push_back(pt(t, c));         // y = c
      s1.sites.push_back(pt(t, t + c));      // y = x + c
      s2.sites.push_back(pt(t, 2 * t + c));  // y = 2x + c
    }
    classes[0].groups.push_back(row);
    classes[1].groups.push_back(col);
    classes[2].groups.push_back(s1);
    classes[3].groups.push_back(s2);
  }
  return classes;
}

std::vector<Round> all_to_all_rounds(int n) {
  Group g;
  for (int i = 0; i < n; ++i) g.sites.push_back(i);
  return {Round{{g}}};
}

namespace {

std::vector<Round> round_robin_pairs(int n) {
  const int m = n % 2 ? n + 1 : n;  // m - 1 is a dummy "sit out" partner when n is odd
  std::vector<Round> rounds;
  for (int r = 0; r < m - 1; ++r) {
    Round round;
    auto add = [&](int a, int b) {
      if (a < n && b < n) round.groups.push_back(Group{{std::min(a, b), std::max(a, b)}});
    };
    add(m - 1, r);
    for (int i = 1; i < m / 2; ++i) add((r + i) % (m - 1), (r - i + (m - 1)) % (m - 1));
    rounds.push_back(round);
  }
  return rounds;
}

// The sites a round's groups are still taken from, ascending, each with its key: how
// many of the group being formed it has not met (the high half), then its unmet pairs.
struct Available {
  std::vector<int> site;
  std::vector<std::int64_t> key;
};

// A group of `size` from the available sites: the one with the most unmet pairs, then one
// at a time the site that meets most of the group for the first time (ties: most unmet,
// then the lowest index), the greatest key first. Each key grows as members join: O(n)
// per member instead of O(n k).
Group greedy_group(int size, const std::vector<std::vector<char>>& met,
                   const std::vector<int>& unmet, Available& avail) {
  Group g;
  std::vector<int>& site = avail.site;
  std::vector<std::int64_t>& key = avail.key;
  for (std::size_t i = 0; i < site.size(); ++i) key[i] = unmet[site[i]];
  while (static_cast<int>(g.sites.size()) < size) {
    std::int64_t most = key[0];
    for (const std::int64_t k : key) most = std::max(most, k);
    const auto at = std::find(key.begin(), key.end(), most) - key.begin();
    const int s = site[at];
    site.erase(site.begin() + at);
    key.erase(key.begin() + at);
    g.sites.push_back(s);
    // met is symmetric (greedy_cover marks both orders of a pair): s's row, read in order,
    // instead of a line of every other site's row.
    const std::vector<char>& met_s = met[s];
    for (std::size_t i = 0; i < site.size(); ++i)
      key[i] += static_cast<std::int64_t>(!met_s[site[i]]) << 32;
  }
  std::sort(g.sites.begin(), g.sites.end());
  return g;
}

// Rounds of groups of k until every pair has met, greedily (greedy_group); unmet pairs are
// counted per site as they meet (O(k^2) per group) instead of recounted every round.
std::vector<Round> greedy_cover(int n, int k) {
  std::vector<std::vector<char>> met(n, std::vector<char>(n, 0));
  std::vector<int> sat_out(n, 0), unmet(n, n - 1);
  long unmet_pairs = static_cast<long>(n) * (n - 1);  // ordered
  std::vector<Round> rounds;
  while (unmet_pairs > 0 && static_cast<int>(rounds.size()) < n * n) {
    std::vector<int> sizes(n / k, k);
    if (n % k >= 2) sizes.push_back(n % k);
    int out = -1;
    if (n % k == 1) {  // one site sits out: fewest unmet pairs, then fewest sit-outs
      out = 0;
      for (int s = 1; s < n; ++s) {
        if (std::make_pair(unmet[s], sat_out[s]) < std::make_pair(unmet[out], sat_out[out]))
          out = s;
      }
      ++sat_out[out];
    }
    Available avail;
    for (int s = 0; s < n; ++s)
      if (s != out) avail.site.push_back(s);
    avail.key.resize(avail.site.size());
    Round round;
    for (int size : sizes) round.groups.push_back(greedy_group(size, met, unmet, avail));
    long gained = 0;
    for (const auto& g : round.groups) {
      for (int a : g.sites)
        for (int b : g.sites)
          if (a != b && !met[a][b]) met[a][b] = 1, ++gained, --unmet[a];
    }
    unmet_pairs -= gained;
    rounds.push_back(round);
    if (gained == 0) break;  // cannot progress (degenerate sizes)
  }
  return rounds;
}

}  // namespace

std::vector<Round> rotating_rounds(int n, int k) {
  if (k < 2 || k > n) throw std::invalid_argument("rotating_rounds: need 2 <= k <= n");
  if (k == n) return all_to_all_rounds(n);
  if (n == 9 && k == 3) {
    std::vector<int> pts(9);
    std::iota(pts.begin(), pts.end(), 0);
    return affine_plane_classes(pts);
  }
  if (k == 2) return round_robin_pairs(n);
  return greedy_cover(n, k);
}

std::vector<Round> one_group_per_round(const std::vector<Round>& rounds) {
  std::vector<Round> out;
  for (const auto& r : rounds)
    for (const auto& g : r.groups) out.push_back(Round{{g}});
  return out;
}

std::vector<Round> sequential_rounds(int n, int k) {
  return one_group_per_round(rotating_rounds(n, k));
}

std::vector<Round> pairs_rounds(int n) {
  std::vector<Round> rounds;
  for (int bit = 1; bit < n; bit <<= 1) {
    Round round;
    for (int i = 0; i < n; ++i) {
      const int j = i ^ bit;
      if (j > i && j < n) round.groups.push_back(Group{{i, j}});
    }
    rounds.push_back(round);
  }
  if (rounds.empty()) rounds = all_to_all_rounds(n);
  return rounds;
}

std::vector<Round> random_rounds(int n, int k, std::uint64_t seed, int period) {
  if (k < 2 || k > n) throw std::invalid_argument("random_rounds: need 2 <= k <= n");
  std::mt19937_64 rng(seed);
  std::vector<Round> rounds;
  for (int r = 0; r < period; ++r) {
    std::vector<int> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    Round round;
    for (int i = 0; i + 1 < n; i += k) {
      Group g;
      for (int j = i; j < std::min(n, i + k); ++j) g.sites.push_back(perm[j]);
      std::sort(g.sites.begin(), g.sites.end());
      if (g.sites.size() >= 2) round.groups.push_back(g);
    }
    rounds.push_back(round);
  }
  return rounds;
}

namespace {
void partitions_rec(std::vector<char>& used, int n, int k, Round& cur, std::vector<Round>& out) {
  int first = -1;
  for (int i = 0; i < n; ++i)
    if (!used[i]) {
      first = i;
      break;
    }
  if (first < 0) {
    out.push_back(cur);
    return;
  }
  // Choose k-1 companions for `first` among the unused sites above it.
  std::vector<int> rest;
  for (int i = first + 1; i < n; ++i)
    if (!used[i]) rest.push_back(i);
  std::vector<char> pick(rest.size(), 0);
  std::fill(pick.begin(), pick.begin() + std::min<std::size_t>(k - 1, rest.size()), 1);
  do {
    Group g{{first}};
    for (std::size_t i = 0; i < rest.size(); ++i)
      if (pick[i]) g.sites.push_back(rest[i]);
    for (int s : g.sites) used[s] = 1;
    cur.groups.push_back(g);
    partitions_rec(used, n, k, cur, out);
    cur.groups.pop_back();
    for (int s : g.sites) used[s] = 0;
  } while (std::prev_permutation(pick.begin(), pick.end()));
}
}  // namespace

std::vector<Round> all_partitions(int n, int k) {
  if (k < 1 || n % k != 0 || n > 12) throw std::invalid_argument("all_partitions: bad n, k");
  std::vector<char> used(n, 0);
  Round cur;
  std::vector<Round> out;
  partitions_rec(used, n, k, cur, out);
  return out;
}

std::vector<int> ring_order(const Routing& routing) {
  const int n = routing.num_sites();
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (n <= 3) return order;
  auto cost = [&](const std::vector<int>& o) {
    double c = 0;
    for (int i = 0; i < n; ++i) c += static_cast<double>(routing.delay_ps(o[i], o[(i + 1) % n]));
    return c;
  };
  if (n <= 10) {
    std::vector<int> best = order, cur = order;
    double best_cost = cost(order);
    while (std::next_permutation(cur.begin() + 1, cur.end())) {
      if (cur[1] > cur[n - 1]) continue;  // each tour once (direction)
      const double c = cost(cur);
      if (c < best_cost - 1e-6) best_cost = c, best = cur;
    }
    return best;
  }
  // Nearest neighbour, then 2-opt.
  std::vector<char> used(n, 0);
  order = {0};
  used[0] = 1;
  while (static_cast<int>(order.size()) < n) {
    int at = order.back(), nxt = -1;
    for (int s = 0; s < n; ++s) {
      if (!used[s] && (nxt < 0 || routing.delay_ps(at, s) < routing.delay_ps(at, nxt))) nxt = s;
    }
    order.push_back(nxt);
    used[nxt] = 1;
  }
  // A reversal of order[i..j] replaces two edges of the tour (shortest delays are
  // symmetric: the links are), so its gain is four look-ups, not a tour's cost: O(n^2)
  // per pass instead of O(n^3), the same moves as comparing whole tours' costs (exact
  // integers either way).
  auto d = [&](int a, int b) {
    return static_cast<std::int64_t>(routing.delay_ps(order[a], order[b % n]));
  };
  for (bool improved = true; improved;) {
    improved = false;
    for (int i = 1; i < n - 1; ++i) {
      for (int j = i + 1; j < n; ++j) {
        if (d(i - 1, j) + d(i, j + 1) < d(i - 1, i) + d(j, j + 1)) {
          std::reverse(order.begin() + i, order.begin() + j + 1);
          improved = true;
        }
      }
    }
  }
  return order;
}

namespace {
Schedule named(std::string name, Collective c, std::vector<Round> rounds) {
  Schedule s;
  s.name = std::move(name);
  s.collective = c;
  s.rounds = std::move(rounds);
  return s;
}
int num_sites(const Platform& p) { return static_cast<int>(p.sites.size()); }
}  // namespace

Schedule all_to_all_schedule(const Platform& platform) {
  return named("all-to-all", Collective::kGroupAverage, all_to_all_rounds(num_sites(platform)));
}

Schedule triads_schedule(const Platform& platform) {
  if (num_sites(platform) != 9) {
    throw ConfigError(kCommandLine, 0, "schedule",
                      "'triads' needs a platform of 9 sites, got " +
                          std::to_string(num_sites(platform)) + " in " + platform.file);
  }
  return named("triads", Collective::kGroupAverage,
               affine_plane_classes(continent_order(platform)));
}

namespace {
// Groups of k for `family` (rotating-k, sequential-k): the 9 / 3 case on the continent
// labelling. Errors: ConfigError unless 2 <= k <= n.
std::vector<Round> rotating_groups(const Platform& platform, int k, const std::string& family) {
  const int n = num_sites(platform);
  if (k < 2 || k > n) {
    throw ConfigError(
        kCommandLine, 0, "schedule",
        family + "-k with 2 <= k <= " + std::to_string(n) + ", got k = " + std::to_string(k));
  }
  if (n == 9 && k == 3) return affine_plane_classes(continent_order(platform));
  return rotating_rounds(n, k);
}

}  // namespace

Schedule rotating_schedule(const Platform& platform, int k) {
  return named("rotating-" + std::to_string(k), Collective::kGroupAverage,
               rotating_groups(platform, k, "rotating"));
}

Schedule sequential_schedule(const Platform& platform, int k) {
  return named("sequential-" + std::to_string(k), Collective::kGroupAverage,
               one_group_per_round(rotating_groups(platform, k, "sequential")));
}

Schedule sequential_of(const Schedule& rotating, int k) {
  return named("sequential-" + std::to_string(k), Collective::kGroupAverage,
               one_group_per_round(rotating.rounds));
}

Schedule pairs_schedule(const Platform& platform) {
  return named("pairs", Collective::kGroupAverage, pairs_rounds(num_sites(platform)));
}

Schedule random_schedule(const Platform& platform, int k, std::uint64_t seed) {
  const int n = num_sites(platform);
  if (k < 2 || k > n) {
    throw ConfigError(kCommandLine, 0, "schedule",
                      "random-k:SEED with 2 <= k <= " + std::to_string(n));
  }
  return named("random-" + std::to_string(k) + ":" + std::to_string(seed),
               Collective::kGroupAverage, random_rounds(n, k, seed));
}

Schedule ring_schedule(const Platform& /*platform*/, const Routing& routing) {
  Group g{ring_order(routing)};
  return named("ring", Collective::kRing, {Round{{g}}});
}

Schedule ring_collective_schedule(const Platform& platform, const Routing& routing,
                                  Collective collective, RingStepRule rule) {
  Schedule s = ring_schedule(platform, routing);
  s.collective = collective;
  s.ring_step = rule;
  if (collective == Collective::kReduceScatter) s.name = "reduce-scatter";
  if (collective == Collective::kAllGather) s.name = "all-gather";
  if (rule == RingStepRule::kSendRecv) s.name += ":sendrecv";
  if (rule == RingStepRule::kBarrier) s.name += ":barrier";
  return s;
}

Schedule point_to_point_schedule(const Platform& platform,
                                 const std::vector<std::pair<int, int>>& pairs, int messages) {
  if (messages < 1)
    throw ConfigError(kCommandLine, 0, "schedule",
                      "at least 1 message per pair, got " + std::to_string(messages));
  Round round;
  std::string name = "p2p:";
  for (const auto& [a, b] : pairs) {
    if (a == b)
      throw ConfigError(
          kCommandLine, 0, "schedule",
          "a pair of two different sites, got " + platform.sites.at(a).code + " twice");
    round.groups.push_back(Group{{a, b}});
    name += (round.groups.size() > 1 ? "," : "") + platform.sites.at(a).code + "-" +
            platform.sites.at(b).code;
  }
  if (messages > 1) name += "x" + std::to_string(messages);
  Schedule s = named(name, Collective::kPointToPoint, {round});
  s.messages = messages;
  return s;
}

Schedule parameter_server_schedule(const Platform& platform, int server) {
  Group g{{server}};
  for (int i = 0; i < num_sites(platform); ++i)
    if (i != server) g.sites.push_back(i);
  return named("parameter-server:" + platform.sites.at(server).code, Collective::kParameterServer,
               {Round{{g}}});
}

Schedule unicast_all_to_all_schedule(const Platform& platform) {
  return named("unicast-all-to-all", Collective::kUnicastAllToAll,
               all_to_all_rounds(num_sites(platform)));
}

Schedule reduction_tree_schedule(const Platform& platform, const Routing& routing, int root,
                                 std::uint64_t chunk_bytes) {
  const bool chosen = root < 0;
  if (chosen) root = least_latency_root(platform, routing, chunk_bytes);
  Schedule s = named(chosen ? "reduction-tree" : "reduction-tree:" + platform.sites.at(root).code,
                     Collective::kReductionTree, all_to_all_rounds(num_sites(platform)));
  s.forest.push_back(shortest_path_tree(routing, root));
  return s;
}

Schedule hierarchical_schedule(const Platform& platform, const Routing& routing) {
  const auto conts = sites_by_continent(platform);
  if (conts.size() < 2) {
    throw ConfigError(kCommandLine, 0, "schedule",
                      "'hierarchical' needs sites on at least 2 continents, got " +
                          std::to_string(conts.size()) + " in " + platform.file);
  }
  Round local, global;
  Group reps;
  for (std::size_t c = 0; c < conts.size(); ++c) {
    if (conts[c].size() >= 2) local.groups.push_back(Group{conts[c]});
    int best = -1;
    double best_cost = std::numeric_limits<double>::infinity();
    for (int s : conts[c]) {
      double cost = 0;
      for (std::size_t o = 0; o < conts.size(); ++o) {
        if (o == c) continue;
        for (int t : conts[o]) cost += static_cast<double>(routing.delay_ps(s, t));
      }
      if (cost < best_cost) best_cost = cost, best = s;
    }
    reps.sites.push_back(best);
  }
  global.groups.push_back(reps);
  std::vector<Round> rounds;
  if (!local.groups.empty()) rounds.push_back(local);
  rounds.push_back(global);
  return named("hierarchical", Collective::kGroupAverage, rounds);
}

}  // namespace aggnet
