// The physical lower bound on the time to an exact average: no schedule, tree, buffer or
// flow control can reach it sooner on the given network (docs/physical-bound.md states and
// proves it). Plain C++ (Boost.Graph for shortest paths and max-flow).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/platform.h"

namespace aggnet {

/// One term of the bound: a cut whose crossing links must carry the gradient, or the
/// longest shortest path a result depends on.
struct BoundTerm {
  enum class Kind { kPath, kCut };
  Kind kind = Kind::kPath;
  double time_s = 0;
  /// kPath: the two sites (source, destination). kCut: the sites whose clusters are on the
  /// sending side of the cut.
  std::vector<int> sites;
  /// kCut: the directed edges crossing it, as text ("nyc->lon", "nyc access up", ...).
  std::vector<std::string> edges;
  double capacity_bps = 0;  ///< kCut: payload capacity crossing it (headers taken off)
  /// kCut: the site whose gradient must cross and the site outside that needs it (-1:
  /// every edge at its nearest pair, beyond kPairCutsMaxSites sites).
  int source = -1, destination = -1;
  /// One line: "path nyc -> sin, 120.3 ms" or "cut {nyc chi} -> rest ... (nyc's gradient
  /// at lon)".
  std::string describe(const Platform& platform) const;
};

/// How the cuts were chosen (exact for small platforms, max-flow cuts beyond).
enum class BoundMethod {
  kAllCuts,     ///< every subset of clusters and switches (n <= kAllCutsMaxSites)
  kSiteCuts,    ///< every subset of sites (clusters with their switches) and access cuts
  kMaxFlowCuts  ///< the minimum cuts of 2(n-1) max-flows (Boost.Graph) and access cuts
};

struct PhysicalBound {
  double bound_s = 0;  ///< the largest term
  BoundTerm binding;   ///< the term that sets it
  BoundTerm path;      ///< the largest path term
  BoundTerm cut;       ///< the largest cut term
  BoundMethod method = BoundMethod::kAllCuts;
  std::uint64_t cuts_evaluated = 0;
};

constexpr int kAllCutsMaxSites = 6;
constexpr int kSiteCutsMaxSites = 20;
/// Up to this many sites a cut is scored per pair of sites (docs/physical-bound.md); beyond,
/// per edge from the nearest pair (2^16 site cuts x 64 pairs stays under a second).
constexpr int kPairCutsMaxSites = 16;
constexpr int kForestMaxSites = 10;  ///< forest_rate_bytes_per_s enumerates partitions

/// The bound for averaging `gradient_bytes` per site over `platform`. Throws
/// std::invalid_argument for a platform with fewer than two sites or an empty gradient.
PhysicalBound physical_bound(const Platform& platform, std::uint64_t gradient_bytes);

/// The same with the cuts chosen by `method` (tests compare the methods).
PhysicalBound physical_bound(const Platform& platform, std::uint64_t gradient_bytes,
                             BoundMethod method);

/// A tighter bound for plans that sum only at the receiving edge (all-to-all: every site
/// multicasts its whole gradient and each receiver's FPGA sums what arrives), whatever
/// their multicast trees: no relay combines streams, so across any split of the sites
/// (clusters with their switches) the WAN links out of S carry each inside site's gradient
/// apart, |S| G payload bytes, and an outside site t receives none of them before each
/// link's earliest start for t. Site cuts, and physical_bound's cuts (which bind every plan:
/// a slow access link), so it is never below physical_bound. Throws std::invalid_argument
/// as physical_bound does, and above kSiteCutsMaxSites sites.
PhysicalBound edge_summation_bound(const Platform& platform, std::uint64_t gradient_bytes);

const char* bound_method_name(BoundMethod method);

/// Spanning-tree packing of the WAN (Nash-Williams and Tutte, fractional and weighted):
/// the most payload bytes/s a set of trees spanning every site can carry when each tree
/// edge carries its tree's rate in each direction (a reduce-then-broadcast forest), i.e.
/// the least over partitions P of the sites (|P| >= 2) of the payload rate of the links
/// joining different parts over |P| - 1. Exact by enumerating the partitions (Bell(n):
/// 21,147 for nine sites); `parts` gets the partition that sets it (a part per site).
/// Throws std::invalid_argument above kForestMaxSites sites.
double forest_rate_bytes_per_s(const Platform& platform, std::vector<int>* parts = nullptr);

/// Time for the edges of a cut to carry `payload_bytes` when edge i can start delivering
/// useful bytes only c_i seconds after the start and carries r_i payload bytes/s: the
/// smallest T with sum_i r_i max(0, T - c_i) >= payload_bytes (water-filling).
double cut_time_s(std::vector<std::pair<double, double>> rate_and_start, double payload_bytes);

}  // namespace aggnet
