// Building, reading, writing and validating schedules. Plain C++, no SystemC.
//
// Schedule file format (YAML, documented in traffic/README.md):
//
//   name: triads-pair                 # optional, default: the file's stem
//   collective: group-average         # optional: group-average (default) | ring |
//                                     #   reduce-scatter | all-gather | point-to-point |
//                                     #   parameter-server | unicast-all-to-all |
//                                     #   reduction-tree (then `trees` instead of `rounds`)
//   ring_step: receive                # ring family only: receive (default) | sendrecv | barrier
//   messages: 1                       # point-to-point only: concurrent messages per pair
//   rounds:                           # required: one entry per round of the period
//     - [[nyc, chi, lax], [lon, ams, fra], [tyo, sin, bom]]
//     - [[nyc, lon, tyo], [chi, ams, sin], [lax, fra, bom]]
//   trees:                            # reduction-tree only, one entry per tree:
//     - root: lon                     #   the root site
//       parents: {nyc: lon, ams: lon} #   child: parent (a direct link, its route)
//       share: 1                      #   fraction of the chunks; shares sum to 1
//       pacing: 100us                 #   optional: between a member's chunks
//       send_offsets: {nyc: 3ms}      #   optional; absent: aligned by the control plane
//
// Sites are named by their platform code. A ring schedule has exactly one round with
// one group, whose order is the ring order.
#pragma once

#include <cstdint>
#include <string>

#include "model/schedule.h"

namespace aggnet {

struct Platform;

/// Resolves a schedule by built-in name or file path, for a given platform.
/// Built-in names (n = number of sites):
///   `all-to-all`     one round, one group of all sites (rho = 0 after 1 round);
///   `triads`         the 4 parallel classes of the affine plane of order 3, rotating
///                    (needs 9 sites; see families.h for the labelling);
///   `ring`           Collective::kRing over all sites, ring order = shortest tour over
///                    shortest-path delays (ring_order() in families.h);
///   `pairs`          one-peer exponential pairs (site i with i XOR 2^t, t = 0..);
///   `rotating-k`     rotating groups of size k covering every pair (k >= 2);
///   `sequential-k`   the groups of `rotating-k` one per round: one group exchanges while
///                    every other site sits out, then the next group;
///   `random-k:SEED`  8 rounds of random partitions into groups of size k (mt19937_64);
///   `hierarchical`   groups inside each continent, then one representative per continent;
///   `ring:RULE`, `reduce-scatter[:RULE]`, `all-gather[:RULE]`   the ring family with a
///                    step rule (receive, sendrecv, barrier; default receive);
///   `p2p:A-B[,C-D...][xK]`   one-way transfers A -> B (concurrent pairs), K messages each;
///   `parameter-server:SITE`  SITE the server, every other site a worker;
///   `unicast-all-to-all`     all-reduce by direct exchange: every site sends its whole G
///                    to every other site over unicast and sums locally;
///   `reduction-forest`       in-network reduction on a load-aware forest of trees planned
///                    for the gradient (PlanInputs; traffic/forest_planner.h);
///   `reduction-in-trees`     in-network reduction to every site on its own shortest-path
///                    in-tree, each carrying the whole gradient (no broadcast);
///   `reduction-tree:SITE`    one reduction tree rooted at SITE (the shortest-path tree);
///   `reduction-tree`         the same, rooted where reduce-then-broadcast is quickest;
/// any other string is read as a schedule file (load_schedule).
/// Errors: ConfigError for an unknown name that is not an existing file, a family that
/// does not fit the platform (e.g. `triads` with 8 sites), and every error of
/// load_schedule.
Schedule make_schedule(const std::string& name_or_file, const Platform& platform);

/// What a planned schedule (`reduction-forest`) is planned for.
struct PlanInputs {
  std::uint64_t gradient_bytes = 1ull << 30;
  std::uint64_t chunk_bytes = 1ull << 20;
};

/// As above; `reduction-forest` is the load-aware forest of reduction trees planned for
/// `inputs` (traffic/forest_planner.h).
Schedule make_schedule(const std::string& name_or_file, const Platform& platform,
                       const PlanInputs& inputs);

/// Reads and validates a schedule YAML file against the platform's site codes.
/// Errors: ConfigError with the file and 1-based line for: unreadable file, malformed
/// YAML, unknown keys, a missing or empty `rounds`, an empty round, an empty group or a
/// group of one site, an unknown site code, a site twice in one round, an unknown
/// `collective`, a ring schedule that is not one round of one group; for `trees`: a
/// cycle, a parent without a direct link (or not routed over it), shares not summing to
/// 1, an unknown site or key.
Schedule load_schedule(const std::string& path, const Platform& platform);

/// As load_schedule, from YAML text; `file_label` is used in error messages.
Schedule parse_schedule(const std::string& yaml_text, const Platform& platform,
                        const std::string& file_label);

/// Schedule file text (the format above) that load_schedule reads back identically.
/// Precondition: `schedule` is valid for `platform` (validate_schedule).
std::string schedule_to_yaml(const Schedule& schedule, const Platform& platform);

/// Writes schedule_to_yaml() to `path`. Errors: std::runtime_error if it cannot write.
void save_schedule(const Schedule& schedule, const Platform& platform, const std::string& path);

/// Checks an in-memory schedule: non-empty, no empty round, groups of >= 2 sites, site
/// indices in range, no site twice in a round, ring = one round of one group.
/// Errors: ConfigError(file = `where`, line = 0, key = "rounds[r]...").
void validate_schedule(const Schedule& schedule, const Platform& platform,
                       const std::string& where = "<schedule>");

/// One-line description of a round: "{nyc chi lax} {lon ams fra} {tyo sin bom}".
std::string format_round(const Round& round, const Platform& platform);

/// Collective name as written in schedule files: "group-average", "ring",
/// "reduce-scatter", "all-gather", "point-to-point", "parameter-server" or
/// "unicast-all-to-all".
std::string collective_name(Collective c);

/// Ring step rule name as written in schedule files: "receive", "sendrecv" or "barrier".
std::string ring_step_rule_name(RingStepRule rule);

}  // namespace aggnet
