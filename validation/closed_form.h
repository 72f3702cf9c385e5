// Closed forms of the validation scenarios (docs/validation.md): what aggnet's store-and-
// forward-per-chunk links and a flow-level model (SimGrid CM02 without TCP window, or an
// ideal fluid link) predict for one schedule step on an idle network. Plain C++.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/platform.h"
#include "model/routing.h"
#include "model/schedule.h"

namespace aggnet::validation {

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

/// Point-to-point (one pair: exact; several pairs: a contended phase), the ring family
/// (every rule, exact when the ring's edges use disjoint links) and the parameter server
/// (two contended phases, the scatter starting when the gather ends).
/// Preconditions: G is a multiple of n x c for the ring family, of c otherwise.
ClosedForm closed_form(const Platform& platform, const Schedule& schedule,
                       std::uint64_t gradient_bytes, std::uint64_t chunk_bytes);

}  // namespace aggnet::validation
