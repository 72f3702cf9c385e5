// Schedule families: the candidate space of the schedule generator. Plain C++.
//
// Functions taking only `n` work on site indices 0..n-1 and need no platform; the
// Platform overloads name the schedule and use geography (continents, delays).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/schedule.h"

namespace aggnet {

struct Platform;
class Routing;

/// Site indices grouped by continent: continents in order of first appearance in
/// Platform::sites, sites of one continent in platform order. Shape: n indices.
std::vector<int> continent_order(const Platform& platform);

/// The sites of each continent (same ordering as continent_order).
std::vector<std::vector<int>> sites_by_continent(const Platform& platform);

/// The 4 parallel classes of the affine plane AG(2,3) on 9 points. `points[3*x + y]` is
/// the point (x, y), x = row, y = column (both in Z_3). Labelling:
///   class 0: rows       {(x, y) : x = c}          (with continent_order: same continent)
///   class 1: columns    {(x, y) : y = c}          (one site per continent)
///   class 2: slope 1    {(x, y) : y - x = c mod 3}
///   class 3: slope 2    {(x, y) : y - 2x = c mod 3}
/// Each class is a round of 3 disjoint triples covering all 9 points; every pair of
/// points lies in exactly one class. Precondition: points.size() == 9.
std::vector<Round> affine_plane_classes(const std::vector<int>& points);

/// One round, one group of all n sites.
std::vector<Round> all_to_all_rounds(int n);

/// Rotating groups of size k (2 <= k <= n) until every pair of sites has met:
///   n = 9, k = 3: the 4 affine-plane classes on 0..8;
///   k = 2: round-robin tournament (circle method; one site sits out per round if n odd);
///   otherwise: greedy covers, each round ceil-ish partitions into groups of k plus one
///   smaller group of the remainder (a single leftover site sits out), groups chosen
///   greedily to meet the most not-yet-met pairs (deterministic).
std::vector<Round> rotating_rounds(int n, int k);

/// The groups of `rounds` one per round, in order (round by round, each round's groups in
/// order): one group exchanges while every other site sits out, then the next group.
std::vector<Round> one_group_per_round(const std::vector<Round>& rounds);

/// Sequential groups of size k (2 <= k <= n): the groups of rotating_rounds(n, k), one per
/// round (one_group_per_round), so every pair of sites still meets over the period. n = 9,
/// k = 3: the 12 lines of the affine plane, class by class.
std::vector<Round> sequential_rounds(int n, int k);

/// One-peer exponential pairs: round t pairs site i with i XOR 2^t (when < n), for
/// t = 0 .. ceil(log2 n) - 1; unpaired sites sit out. Exact average after log2 n rounds
/// when n is a power of two.
std::vector<Round> pairs_rounds(int n);

/// `period` rounds of uniformly random partitions (std::mt19937_64 seeded with `seed`)
/// into groups of size k; a remainder of >= 2 sites forms a smaller group, a single
/// leftover site sits out.
std::vector<Round> random_rounds(int n, int k, std::uint64_t seed, int period = 8);

/// All partitions of n sites into groups of size k (n divisible by k). n = 9, k = 3
/// gives 280 partitions. Precondition: the count is small (n <= 12).
std::vector<Round> all_partitions(int n, int k);

/// Ring order minimising the total one-way delay of the ring (exhaustive over tours for
/// n <= 10, nearest-neighbour + 2-opt beyond), starting at site 0. Shape: n indices.
std::vector<int> ring_order(const Routing& routing);

// --- Named schedules for a platform (Schedule::name set to the built-in name) ---
Schedule all_to_all_schedule(const Platform& platform);
/// The 4 affine classes on continent_order(platform) (class 0 = same continent when the
/// platform has 3 continents of 3 sites). Errors: ConfigError unless 9 sites.
Schedule triads_schedule(const Platform& platform);
Schedule rotating_schedule(const Platform& platform, int k);
/// `sequential-K`: the groups of rotating_schedule(platform, k), one per round (9 sites,
/// k = 3: the 12 affine lines on continent_order, class 0 first). Errors: as rotating.
Schedule sequential_schedule(const Platform& platform, int k);
/// sequential_schedule(platform, k) from rotating_schedule(platform, k), its groups.
Schedule sequential_of(const Schedule& rotating, int k);
Schedule pairs_schedule(const Platform& platform);
Schedule random_schedule(const Platform& platform, int k, std::uint64_t seed);
Schedule ring_schedule(const Platform& platform, const Routing& routing);
/// A ring collective (kRing, kReduceScatter or kAllGather) over ring_order(routing) with
/// the given step rule; named "ring", "reduce-scatter" or "all-gather", with ":RULE"
/// appended unless the rule is `receive`.
Schedule ring_collective_schedule(const Platform& platform, const Routing& routing,
                                  Collective collective, RingStepRule rule);
/// One-way transfers: one round, one group [sender, receiver] per pair (concurrent),
/// `messages` concurrent messages of G bytes per pair. Errors: ConfigError for a site in
/// two pairs, a pair of one site twice, messages < 1.
Schedule point_to_point_schedule(const Platform& platform,
                                 const std::vector<std::pair<int, int>>& pairs, int messages);
/// Parameter server at `server`, every other site a worker: group [server, workers...].
Schedule parameter_server_schedule(const Platform& platform, int server);
/// `unicast-all-to-all`: one round, one group of every site in platform order; each member
/// sends its whole G to every other member over unicast (Collective::kUnicastAllToAll).
Schedule unicast_all_to_all_schedule(const Platform& platform);
/// `reduction-tree:SITE`: one reduction tree over every site, the shortest-path tree over
/// the routes towards `root` (model/reduction_forest.h), share 1; one round, one group of
/// every site (Collective::kReductionTree). root < 0: the root with the least
/// reduce-then-broadcast latency for a chunk of `chunk_bytes`, named `reduction-tree`.
Schedule reduction_tree_schedule(const Platform& platform, const Routing& routing, int root,
                                 std::uint64_t chunk_bytes);

/// Round 0: one group per continent (continents of one site sit out); round 1: one
/// representative per continent, the site with the least total delay to the other
/// continents' sites. Errors: ConfigError with fewer than 2 continents.
Schedule hierarchical_schedule(const Platform& platform, const Routing& routing);

}  // namespace aggnet
