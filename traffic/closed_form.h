// Closed forms of the host-based collectives (docs/validation.md): what aggnet's store-and-
// forward-per-chunk links, a flow-level model (SimGrid CM02 without TCP window, or an
// ideal fluid link) and per-packet forwarding (ns-3) predict for one schedule step on an
// idle network. The analytic time model (time_model.h) times host collectives with the
// store-and-forward ones; validation/ compares all three with SimGrid and ns-3. Plain C++.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/platform.h"
#include "model/routing.h"
#include "model/run_options.h"
#include "model/schedule.h"

namespace aggnet {

/// The directed links a chunk from site s to site d crosses, in order: s's access link
/// up, the WAN links of the shortest-delay path, d's access link down.
std::vector<WanLinkParams> route_links(const Platform& platform, const Routing& routing, int s,
                                       int d);

/// Switch latency a chunk from s to d pays (every WAN hop's sending switch and d's).
std::uint64_t route_switch_latency_ps(const Platform& platform, const Routing& routing, int s,
                                      int d);

/// Header-inflated bytes of `bytes` of payload sent in chunks of `chunk_bytes` (each chunk
/// split into MTU-sized packets, each with its header). Precondition: mtu > header.
std::uint64_t message_wire_bytes(const WanLinkParams& link, std::uint64_t bytes,
                                 std::uint64_t chunk_bytes);

/// Delivery time of `messages` messages of `bytes` each, sent together from s to d and
/// interleaved chunk by chunk, on an idle path, store-and-forward per chunk (aggnet):
///   sum over links k of (ser_k(c) + prop_k) + (M N - 1) max_k ser_k(c) + switch latency,
/// N = bytes / c chunks. Precondition: bytes is a multiple of chunk_bytes.
std::uint64_t store_and_forward_ps(const Platform& platform, const Routing& routing, int s, int d,
                                   std::uint64_t bytes, std::uint64_t chunk_bytes,
                                   int messages = 1);

/// The same delivery under a flow-level model (latency then a fluid flow at the
/// bottleneck rate, the messages sharing it equally):
///   sum over links of prop_k + switch latency + M x wire bytes / min_k bandwidth_k.
double flow_level_s(const Platform& platform, const Routing& routing, int s, int d,
                    std::uint64_t bytes, std::uint64_t chunk_bytes, int messages = 1);

/// The same delivery store-and-forward per packet (ns-3): packets of MTU wire bytes
/// carrying MTU - header bytes each (each chunk's last one shorter), paced at the access
/// rate; with b the first slowest link, P the first packet and Q the last:
///   sum_{k<b} (ser_k(P) + prop_k) + M x wire bytes / B_b + prop_b + sum_{k>b} (ser_k(Q) + prop_k).
double packet_level_s(const Platform& platform, const Routing& routing, int s, int d,
                      std::uint64_t bytes, std::uint64_t chunk_bytes, int messages = 1);

/// A ring collective's time from its edge latencies L[i] (ring position i to i + 1), all
/// sites starting together at 0, for ring steps [begin, end):
///   A_i(r) = S_{i-1}(r) + L_{i-1}   (arrival at i of the step-r segment)
///   receive:  S_i(r+1) = A_i(r)
///   sendrecv: S_i(r+1) = max(A_i(r), A_{i+1}(r))
///   barrier:  S_i(r+1) = max_j A_j(r)
/// and the time = the last site's completion (its last arrival; with sendrecv and barrier
/// also its rule's wait after the last step). The receive rule reduces to
/// max_i of the sum of the (end - begin) edges ending at i.
double ring_time(const std::vector<double>& edge_latency, int begin, int end, RingStepRule rule);

/// One unicast message of a contended exchange: `bytes` from site s to site d.
struct Flow {
  int s = 0, d = 0;
  std::uint64_t bytes = 0;
};

/// Store-and-forward per chunk, every flow handed to its sender's access link at 0: each
/// sender emits its flows' chunks round-robin in `flows` order (chunk 0 of each, then
/// chunk 1...), and every link is a FIFO server, so chunk j's departure from a link is
/// Lindley's recurrence d_j = max(a_j, d_{j-1}) + ser(c), a_j its arrival (upstream
/// departure + propagation + switch latency), chunks served in arrival order (ties in
/// `flows` order). Returns the last chunk's arrival at its receiver, in ps.
/// Precondition: every flow's bytes a multiple of chunk_bytes.
std::uint64_t fifo_recurrence_ps(const Platform& platform, const Routing& routing,
                                 const std::vector<Flow>& flows, std::uint64_t chunk_bytes);

/// The same flows in a flow-level model with SimGrid CM02's sharing: flow f starts after
/// its route latency lat_f, then the active flows share every link by weighted max-min
/// (progressive filling) with weight 1 / lat_f, each carrying its wire bytes. Returns the
/// last flow's completion, in s.
double weighted_max_min_s(const Platform& platform, const Routing& routing,
                          const std::vector<Flow>& flows, std::uint64_t chunk_bytes);

/// The unicast all-to-all's flows in its senders' emission order: member i sends to
/// members i+1, i+2, ... (mod n) of `members`, G each.
std::vector<Flow> unicast_all_to_all_flows(const std::vector<int>& members,
                                           std::uint64_t gradient_bytes);

/// Closed forms of one step of `schedule` (G = gradient_bytes per site, chunk size c).
struct ClosedForm {
  bool applicable = false;  ///< false: the scenario has no closed form here (`why`)
  std::string why;
  double store_and_forward_s = 0;  ///< what aggnet must report (round time)
  double flow_level_s = 0;         ///< what a flow-level simulator must report
  double packet_level_s = 0;       ///< what a packet-level simulator must report (0: none)
  double transmit_complete_s = 0;  ///< point-to-point: the sender's last chunk on the wire
  /// How far aggnet may lie from store_and_forward_s: 0 where the form is exact; with
  /// contention, which flow's chunk leaves a shared link last is known only to within
  /// one chunk per flow (flows x ser(c) per phase).
  double tolerance_s = 0;
  std::string formula;  ///< one line naming the closed form used
};

/// A reduction forest's round (Collective::kReductionTree), in seconds from the step's
/// send start: the aligned start's delay (with `options.aligned_start`), then per tree the
/// first chunk alone up and down the tree at the control plane's offsets
/// (tree_chunk_times: exact for one chunk), the latest of them, plus the pipeline: the
/// busiest resource's work beyond one chunk (each directed tree link carries every chunk of
/// its trees once, up or down; each member's access links every chunk; each FPGA one
/// service per input) or the slowest tree's pacing, (n_t - 1) x its interval, whichever
/// is longer (docs/reduction-trees.md). Exact for one tree with one bottleneck.
/// Errors: std::invalid_argument for a forest plan_forest refuses.
double reduction_tree_time(const Platform& platform, const Routing& routing,
                           const Schedule& schedule, const RunOptions& options);

/// Point-to-point (one pair: exact; several pairs: a contended phase), the ring family
/// (every rule, exact when the ring's edges use disjoint links) and the parameter server
/// (two contended phases, the scatter starting when the gather ends); the unicast
/// all-to-all (one phase of n(n-1) flows: fifo_recurrence_ps and weighted_max_min_s,
/// exact for their models).
/// Not applicable (`why`) when G is not a multiple of c (of n x c for the ring family).
ClosedForm closed_form(const Platform& platform, const Schedule& schedule,
                       std::uint64_t gradient_bytes, std::uint64_t chunk_bytes);

}  // namespace aggnet
