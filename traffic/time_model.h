// Analytic round-time model: a fast estimate of how long a schedule round takes on a
// platform, from the same rules the SystemC model implements (docs/simulation-semantics.md).
// Plain C++, no SystemC. Approximations are stated where they are made.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/params/cluster.h"  // FlowControl
#include "model/run_options.h"
#include "model/schedule.h"
#include "traffic/loss_model.h"

namespace aggnet {

struct Platform;
class Routing;

/// Estimate for one group of a round. Rates are payload bytes/s per sender stream.
struct GroupEstimate {
  std::vector<int> members;
  double skew_max_s = 0;            ///< max over receivers of the arrival skew with the offsets (s)
  double unaligned_skew_max_s = 0;  ///< the same if every member started together (s)
  std::string alignment;            ///< the control plane's alignment method
  /// offset_sd_s[i][j]: when members[i] starts the stream members[j] receives, after
  /// the agreed start (s); waiting_s[i]: its idle time before its first chunk.
  std::vector<std::vector<double>> offset_sd_s;
  std::vector<double> waiting_s;
  double buffer_rate = 0, link_rate = 0, pipeline_rate = 0, access_rate = 0;
  double credit_rate = 0;  ///< credit mode: window / cycle (0 in pacing mode)
  double rate = 0;         ///< effective sending rate of each member (bytes/s)
  std::string limit;       ///< which limit binds: buffer, link, pipeline, access, credit
  double latency_s = 0;    ///< max over (sender, receiver) of one chunk's end-to-end latency
  /// Aligned start (pacing): members start sending this long after the last one is
  /// ready: the largest shortest-path one-way delay between two members (s); else 0.
  double start_delay_s = 0;
  /// First member ready -> last reduced chunk delivered, all members ready at 0 (s):
  /// start_delay_s + (N - 1) x interval_s + latency_s.
  double time_s = 0;
  /// latency_sd_s[i][j]: one chunk from members[i] to members[j] (0 on the diagonal).
  std::vector<std::vector<double>> latency_sd_s;
  double interval_s = 0;  ///< time between a sender's chunks (s)
  /// delay_sd_s[i][j]: shortest-path one-way delay members[i] -> members[j] (s).
  std::vector<std::vector<double>> delay_sd_s;
  /// Credit mode: a sender starts when every receiver's window grant has arrived.
  bool credit_grant = false;
  /// Loss recovery (a loss rate on some WAN link): loss_sd[i][j], the probability that a
  /// copy members[i] -> members[j] is lost on its path; empty without loss.
  std::vector<std::vector<double>> loss_sd;
  Backoff backoff;  ///< the members' retransmission timer (with loss)
};

/// Estimate for one round: the max over its groups.
struct RoundEstimate {
  double time_s = 0;
  std::vector<GroupEstimate> groups;
  int limiting_group = -1;  ///< index of the slowest group
};

/// Round time of `round` when every member starts sending at the same instant.
///
/// Group average (multicast + in-line aggregation), per group g with fan-in f = |g| - 1:
///  - skew_d = max - min over the other members s of delay(s -> d); hold_d = skew_d +
///    pipeline latency + f x chunk / pipeline throughput; slots_d = buffer / chunk;
///  - limits (payload bytes/s per sender): buffer = min_d (max(slots_d, 2) - 1) x chunk / hold_d;
///    link = payload rate of each directed hop / number of trees (or unicast copies) of
///    the whole round crossing it; pipeline = throughput_d / f; access = access link
///    payload rate (up: / f without multicast; down: / f without aggregation);
///  - pacing: rate = (1 - margin) x min(limits), interval = ceil(chunk / rate) ps, as the
///    control plane paces (docs/simulation-semantics.md; the control plane also paces at
///    the link/pipeline/access share so no queue builds);
///  - credit: window_d = slots_d credits; a credit returns when the slot frees, so a
///    window cycle is max_s' latency(s' -> d) + delay(d -> s) + credit serialization;
///    receivers grant their window when they enter the round (one delay d -> s before s
///    may send); rate = min(line limits, min_d window_d x chunk / cycle_sd); windows go out as
///    bursts, so the last chunk leaves after floor((N-1)/W) cycles + ((N-1) mod W) line
///    intervals (approximation: the max-plus coupling of 3+ members through shared
///    credits and credits queued behind data are not modelled; measured within 1% of the
///    simulation on nine_city, 64 MiB, for all-to-all, triads, pairs, rotating-2);
///  - one chunk's latency s -> d: access up serialization + access delay, per WAN hop
///    (store-and-forward) switch latency + serialization + propagation, the receiver's
///    switch latency, pipeline (chunk / throughput + latency), access down serialization
///    + delay; wire bytes include headers (MTU/header of each link);
///  - arrival-aligned sends: s starts the stream d receives at offset(s -> d) after the
///    agreed start (control plane, platforms/send_alignment.h); the skew above is then the
///    residual skew those offsets leave;
///  - time = start delay + max over (s, d) of offset(s -> d) + (N - 1) x interval +
///    latency(s -> d),
///    N = ceil(G / chunk); start delay (aligned start with pacing) = the largest one-way
///    delay between two members, the wait for every member's ready message.
///    Approximation: queueing of simultaneous chunks of different trees on a shared hop
///    (at most a few serializations) and the shorter last chunk are ignored.
/// Ring (host-based, unicast, FPGA bypassed): 2(n-1) step-synchronous steps of G/n bytes
/// in chunks; site i sends step k when it has received step k-1; one segment's transfer =
/// one chunk's latency + (chunks - 1) x the bottleneck serialization (a hop's is
/// multiplied by the number of ring flows crossing it).
/// Errors: std::invalid_argument for a site index out of range.
RoundEstimate estimate_round(const Platform& platform, const Routing& routing, const Round& round,
                             Collective collective, const RunOptions& params);

/// All rounds of a schedule, and their mean (the period-average round time, s). Host
/// collectives other than the plain ring (its step rules, reduce-scatter, all-gather,
/// point-to-point, parameter server, unicast all-to-all) take their store-and-forward
/// closed form (traffic/closed_form.h). Errors: std::invalid_argument naming why when such
/// a collective has none (e.g. G not a multiple of the chunk, ring edges sharing a link).
struct ScheduleEstimate {
  std::vector<RoundEstimate> rounds;
  double mean_round_s = 0;
};
/// `max_rounds`: the group-average and ring rounds beyond it are left out (the mean is then
/// over those timed).
ScheduleEstimate estimate_schedule(const Platform& platform, const Routing& routing,
                                   const Schedule& schedule, const RunOptions& params,
                                   std::size_t max_rounds = SIZE_MAX);

/// Frees every group's per-pair terms (offset_sd_s, latency_sd_s, delay_sd_s), which only
/// simulate_steps and makespan_lower_bound_s read: n x n doubles each for a group of n,
/// gigabytes over a thousand-site search if every candidate kept them. loss_sd stays (its
/// emptiness says the run is lossless).
void release_pair_terms(ScheduleEstimate& estimate);

/// Round time of each of `steps` steps as the simulation reports it (slowest group: last
/// delivery - first member ready), without a global barrier: each site starts step k+1's
/// compute when its own round-k result is complete, so members of a group become ready at
/// different instants. With an aligned start (pacing) every member sends from T = latest
/// ready + start delay; otherwise (credit, or aligned_start false) each sends from its own
/// ready time. Sender s's last chunk reaches d at its send start + (N - 1) x interval +
/// latency(s -> d); d is done when that holds for every other member s and it has emitted
/// its own N chunks. Approximation: with an immediate start, the extra slot hold of an
/// early member is ignored. Shape: `steps` values in seconds.
std::vector<double> estimate_step_round_times(const Platform& platform, const Routing& routing,
                                              const Schedule& schedule, const RunOptions& params,
                                              int steps);

/// Per-step timeline of the staggered-start model (see estimate_step_round_times).
struct StepTimeline {
  std::vector<double> round_time_s;  ///< per step: last delivery - first send (s)
  std::vector<double> site_done_s;   ///< per site: when its last step's result is complete
  double makespan_s = 0;             ///< max of site_done_s: all sites done (s)
};

/// Runs the staggered-start recurrence for `steps` steps on a precomputed estimate of the
/// schedule (estimate_schedule). With `with_compute` false the compute phases are left
/// out, so makespan_s is the communication time until every site holds its result of
/// the last step (the wall-clock time to consensus when compute is uniform); a site that
/// sits a round out then waits for that round's groups to finish.
StepTimeline simulate_steps(const Platform& platform, const Schedule& schedule,
                            const ScheduleEstimate& estimate, const RunOptions& params, long steps,
                            bool with_compute);

/// A lower bound on simulate_steps(..., steps, true).makespan_s (lossless), in O(members
/// of one period + n): every site's result of a step comes no earlier than its compute and
/// its own least part of its group's round after its previous result (it sends no earlier
/// than it starts, then sends its N chunks and receives every other member's), summed over
/// the steps, less a relative 1e-6 for the recurrence's rounding. What it leaves out: the
/// wait for the group's latest member.
double makespan_lower_bound_s(const Platform& platform, const Schedule& schedule,
                              const ScheduleEstimate& estimate, const RunOptions& params,
                              long steps);

class LinkShares;

/// Each group's link share limit in `round` (bytes/s per stream; +inf for a group of one),
/// as plan_round's link_rate, from the routed paths alone: every member's stream (its
/// multicast tree, or one unicast copy per receiver) on each directed link it crosses, a
/// link's payload rate split among the streams crossing it. No tree is built.
std::vector<double> link_share_rates(const Platform& platform, const Routing& routing,
                                     const Round& round, const RunOptions& params);

/// Lower bounds on a lossless group-average schedule's time to eps without compute
/// (comm_time_to_eps_s, however the optimizer gets it: the staggered-start recurrence, its
/// lower bound, or the isolated sum beyond its stepped rounds) after a number of rounds,
/// no round planned: a member's own part of a round (makespan_lower_bound_s) is at least
/// the start delay (aligned start) plus N - 1 send intervals, and its group's sending rate at
/// most its access, pipeline and link limits as the control plane computes them (the link
/// shares from the routed paths of every stream of the round; the buffer's limit, which
/// depends on the arrival skews, is left out). Rounds are bounded as far as asked, in
/// O(hops of their multicast trees). For uniform compute only (else not `valid`): every
/// site's the same, none slowed by a fault. Keeps references to its arguments.
class UnplannedBound {
 public:
  /// `stepped_rounds`: the most rounds whose time is taken from the recurrence (its
  /// rounding is allowed for up to there; beyond, the time is the isolated sum).
  UnplannedBound(const Platform& platform, const Routing& routing, const Schedule& schedule,
                 const RunOptions& params, long stepped_rounds);
  ~UnplannedBound();
  UnplannedBound(const UnplannedBound&) = delete;
  UnplannedBound& operator=(const UnplannedBound&) = delete;
  bool valid() const { return valid_; }
  /// At most comm_time_to_eps_s if `rounds` is the schedule's rounds to eps or fewer (s).
  double comm_time_s(long rounds);
  /// The fewest rounds whose bound exceeds `time_s`, or -1 if none does.
  long rounds_beyond(double time_s);

 private:
  void bound_rounds(long count);           // own parts of the first `count` rounds (<= period)
  double least_parts_s(long rounds);       // max over sites of its summed own parts
  double as_comm_s(double parts_s) const;  // with the rounding taken off
  const Platform& platform_;
  const Routing& routing_;
  const Schedule& schedule_;
  RunOptions params_;
  bool valid_ = false;
  double slack_s_ = 0;  // the recurrence's rounding, at its most (s)
  std::unique_ptr<LinkShares> shares_;
  std::vector<std::size_t> first_;  // per bounded round: its first group in own_s_
  std::vector<double> own_s_;       // per group of those rounds: a member's least part
  std::vector<double> period_s_;    // per site: its parts summed over one period
};

/// The decision metric, defined once (docs/run-json.md, "Time metrics"): the time to
/// eps-consensus runs from a common start (t = 0, every site begins its first step) until
/// every site holds the eps-consensus result. With compute it is what a run measures (or
/// simulate_steps' makespan estimates); without compute it is that less the compute phases
/// the slowest site must run first, rounds_compute_s. Both are plan-fixed shifts of one
/// another, so more buffer or link rate moves them alike.
/// rounds x the slowest site's compute time per step (`--fault slow:` included), in s.
double rounds_compute_s(long rounds, const Platform& platform, const FaultPlan& faults);
/// time_to_eps_s less rounds_compute_s (never below 0).
double time_to_eps_without_compute_s(double time_to_eps_s, double rounds_compute_s);

}  // namespace aggnet
