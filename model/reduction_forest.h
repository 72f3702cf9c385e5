// Reduction trees and forests (Collective::kReductionTree): which chunks each tree carries,
// the trees' structure and checks, the built-in trees, and the send offsets that make every
// input of every relay's sum reach its FPGA at the same instant. Plain C++, no SystemC: the
// builder, the cluster programs, the schedule files and the analytic model all call it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "model/platform.h"
#include "model/routing.h"
#include "model/run_options.h"
#include "model/schedule.h"

namespace aggnet {

/// Chunks [first, end) of the gradient.
struct ChunkRange {
  std::uint64_t first = 0, end = 0;
  std::uint64_t size() const { return end - first; }
};

/// Contiguous chunk ranges, one per share in order, splitting `chunks` by largest
/// remainder: tree t gets floor(share_t x chunks) and the chunks left go one each to the
/// largest fractional parts (ties: the earlier tree). Shares are normalised by their sum.
/// Errors: std::invalid_argument for no share, a negative share or a zero sum.
std::vector<ChunkRange> split_chunks(const std::vector<double>& shares, std::uint64_t chunks);

/// split_chunks over the forest's shares; a forest of in-trees (broadcast false): every
/// tree carries every chunk.
std::vector<ChunkRange> forest_chunk_ranges(const std::vector<ReductionTree>& forest,
                                            std::uint64_t chunks);

/// The tree's sites: its root and every site with a parent.
std::vector<int> tree_sites(const ReductionTree& tree);

/// Per site, its children in the tree (ascending).
std::vector<std::vector<int>> tree_children(const ReductionTree& tree);

/// Per site, the inputs of its FPGA's sum in the tree: its children's partial sums and, for
/// one of `members`, its cluster's chunk (0 off the tree).
std::vector<int> tree_inputs(const ReductionTree& tree, const std::vector<int>& members);

/// The tree's sites, every child before its parent (the root last).
std::vector<int> bottom_up_order(const ReductionTree& tree);

/// What is wrong with `tree` on this platform for these members ("" if nothing): a parent
/// vector not one entry per site, a root or parent that is no site, a cycle (a site whose
/// parents never reach the root), a member outside the tree, a parent joined to its child
/// by no direct link, or one whose route to the child is not that link, a share outside
/// (0, 1].
std::string tree_error(const Platform& platform, const Routing& routing, const ReductionTree& tree,
                       const std::vector<int>& members);

/// The shortest-path tree over the routes towards `root`: every other site's parent is its
/// next hop towards the root. Share 1, no pacing, offsets left to the control plane.
ReductionTree shortest_path_tree(const Routing& routing, int root);

/// Per chunk of a tree, the time it occupies each resource it crosses, in ps: directed
/// links ('l', from, to), access links up and down ('u'/'d', site, site) and FPGAs ('f',
/// site, site). An in-tree (broadcast false) uses no link downwards and only its root's
/// access link down. Unordered: its users take maxima and look resources up (a reduction
/// in-tree per site puts n^2 entries through it).
struct TreeResourceHash {
  std::size_t operator()(const std::tuple<char, int, int>& r) const {
    const auto [kind, a, b] = r;
    return std::hash<std::uint64_t>()((std::uint64_t{static_cast<unsigned char>(kind)} << 56) ^
                                      (std::uint64_t{static_cast<std::uint32_t>(a)} << 28) ^
                                      static_cast<std::uint32_t>(b));
  }
};
using TreeWork = std::unordered_map<std::tuple<char, int, int>, double, TreeResourceHash>;

/// Adds `chunks` chunks of `tree` to `work`, and to `one_chunk` the largest single chunk's
/// time on each resource.
void add_tree_work(const Platform& platform, const Routing& routing, const ReductionTree& tree,
                   const std::vector<int>& members, std::uint64_t chunk_bytes, double chunks,
                   TreeWork& work, TreeWork& one_chunk);

/// One chunk's reduce-then-broadcast latency on the tree: the longest cluster-to-root path
/// up (partial sums through every FPGA on the way) plus the longest root-to-cluster path
/// down, with `chunk_bytes` chunks, nothing queued (closed form, docs/reduction-trees.md).
std::uint64_t tree_round_trip_ps(const Platform& platform, const Routing& routing,
                                 const ReductionTree& tree, const std::vector<int>& members,
                                 std::uint64_t chunk_bytes);

/// One chunk alone on the tree (nothing queued), members sending at `offset_ps` (per site,
/// empty: all 0): per site, when its FPGA's sum leaves the pipeline (`sum_done_ps`; 0 off
/// the tree) and when the result reaches its cluster (`result_ps`; 0 for non-members).
/// Each FPGA serves its inputs in arrival order, one service time each, then its latency.
/// Its first and last inputs (`first_input_ps`, `last_input_ps`) came from `first_from`
/// and `last_from`: the site itself (its cluster's contribution) or a child (-1 off the
/// tree).
struct TreeChunkTimes {
  std::vector<std::uint64_t> first_input_ps, last_input_ps, sum_done_ps, result_ps;
  std::vector<int> first_from, last_from;
};
TreeChunkTimes tree_chunk_times(const Platform& platform, const Routing& routing,
                                const ReductionTree& tree, const std::vector<int>& members,
                                const std::vector<std::uint64_t>& offset_ps,
                                std::uint64_t chunk_bytes);

/// The root whose shortest-path tree has the smallest reduce-then-broadcast latency for a
/// chunk of `chunk_bytes` (the smallest site index on ties).
int least_latency_root(const Platform& platform, const Routing& routing, std::uint64_t chunk_bytes);

/// Arrival-aligned offsets on a tree (docs/reduction-trees.md): per site, ps after the agreed
/// start at which a member sends its first chunk of the tree (0 for non-members), so the
/// first chunk of every input of every FPGA's sum (its own cluster's contribution and each
/// child's partial sum) arrives at the same instant; the smallest offset is 0. Inputs of
/// `chunk_bytes`; `first_input_ps[s]` (if given) receives that instant at site s.
std::vector<std::uint64_t> aligned_tree_offsets(
    const Platform& platform, const Routing& routing, const ReductionTree& tree,
    const std::vector<int>& members, std::uint64_t chunk_bytes,
    std::vector<std::uint64_t>* first_input_ps = nullptr);

/// What is wrong with a forest holding in-trees (broadcast false) for these members (""
/// if nothing, or no in-tree): in-trees beside broadcast trees, or not one in-tree rooted
/// at each member.
std::string in_trees_error(const Platform& platform, const std::vector<ReductionTree>& forest,
                           const std::vector<int>& members);

/// The control plane's decisions for a reduction-forest schedule: the members (the
/// schedule's one group), each tree's chunk range and per-site send offsets (the tree's
/// own, or aligned unless the alignment is `none`, else 0; with an immediate start they
/// count from each member's own start), and the
/// aligned start's delay after the last ready message (unicast ready messages: the
/// longest cluster-to-cluster latency, plus |g| - 2 serializations per link of its path
/// for the others' ready messages queued before it).
struct ForestPlan {
  std::vector<int> members;
  std::vector<ChunkRange> ranges;                     ///< [tree]
  std::vector<std::vector<std::uint64_t>> offset_ps;  ///< [tree][site]
  std::uint64_t start_delay_ps = 0;
};

/// Plans `schedule`'s forest with `options` as one chunk per transaction.
/// Errors: std::invalid_argument naming the tree and what tree_error finds.
ForestPlan plan_forest(const Platform& platform, const Routing& routing, const Schedule& schedule,
                       const RunOptions& options);

/// Per tree of `forest` as `plan` splits the chunks (of `chunk_bytes`, one per transaction),
/// the steady spacing of its chunks at every FPGA it crosses, in ps: its pacing interval, or
/// longer where a resource it crosses (a link, an access link, an FPGA) needs more time per
/// chunk of this tree for every tree's chunks it carries; 0 for a tree without chunks.
std::vector<double> tree_chunk_spacing_ps(const Platform& platform, const Routing& routing,
                                          const std::vector<ReductionTree>& forest,
                                          const ForestPlan& plan, std::uint64_t chunk_bytes);

/// Per site, its FPGA buffer's access rate while the forest runs, bytes/s: over the trees,
/// 2 x the site's inputs in the tree (its children's partial sums and, for a member, its
/// cluster's chunk; each written and read once) x the tree's chunk rate (chunk_bytes over
/// its spacing, tree_chunk_spacing_ps).
std::vector<double> tree_access_bytes_per_s(const Platform& platform, const Routing& routing,
                                            const std::vector<ReductionTree>& forest,
                                            const ForestPlan& plan, std::uint64_t chunk_bytes);

}  // namespace aggnet
