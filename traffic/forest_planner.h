// The planned reduction forests: `reduction-forest`, a load-aware forest of reduce-then-
// broadcast trees for a platform and a gradient (model/tree_packing.h does the planning),
// and `reduction-in-trees`, one in-tree per receiver. Plain C++.
#pragma once

#include <cstdint>
#include <string>

#include "model/schedule.h"
#include "model/tree_packing.h"

namespace aggnet {

struct Platform;
class Routing;

/// What a reduce-then-broadcast forest can use on `platform`: the links that are their
/// ends' shortest route (a partial sum reaches its parent by unicast routing), at their
/// payload rates; each site's access link; each FPGA's datapath; a hop latency of the
/// largest switch latency, FPGA pipeline latency and chunk serialization (store and
/// forward: a relay sums a whole chunk before it sends it on).
TreeNetwork tree_network(const Platform& platform, const Routing& routing,
                         std::uint64_t chunk_bytes);

/// A kReductionTree schedule carrying `plan`: per tree its parents (from its root), its
/// share of the gradient (bytes / total) and a pacing interval that keeps each member's
/// stream at the tree's rate (chunk_bytes / rate, rounded up to the picosecond).
Schedule forest_schedule(const Platform& platform, const TreeNetwork& net,
                         const LoadAwareForest& plan, std::uint64_t chunk_bytes,
                         const std::string& name);

/// `reduction-forest`: plan_load_aware_forest on tree_network(platform) for this gradient.
/// Errors: ConfigError if the platform's links do not join every site.
Schedule reduction_forest_schedule(const Platform& platform, std::uint64_t gradient_bytes,
                                   std::uint64_t chunk_bytes);

/// `reduction-in-trees`: all-reduce as one reduction per receiver. Every site is the root of
/// its shortest-path in-tree (a result reaches it after its longest shortest-path delay,
/// the path bound's own term), carrying the whole gradient; every member's stream is paced
/// at the chunk time of the busiest resource (link, access link or FPGA) under all trees.
Schedule reduction_in_trees_schedule(const Platform& platform, std::uint64_t chunk_bytes);

}  // namespace aggnet
