// Buffer sizing for the in-line FPGA aggregators (`aggnet size-buffers`): the analytic
// bound (rate x arrival skew per receiver) and a parallel bisection of simulations, one
// `aggnet run --json` child process per simulation. Plain C++ (no SystemC): the search
// drives the sweep runner's pool of `aggnet run` children (sweeps::RunPool: N at a time,
// a timeout each, none outliving the sizing), each child with its own SystemC kernel.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/routing.h"
#include "model/run_options.h"
#include "model/schedule.h"

namespace aggnet {

/// The analytic buffer requirement of one site (receiver d), taken over the schedule's
/// rounds; the round whose requirement is largest is the binding one.
///
/// Pacing (docs/simulation-semantics.md): the group's senders are paced at
/// R = (1 - margin) x min(buffer rate, link, pipeline, access rates) with buffer rate
/// (slots_d - 1) x chunk / hold_d, hold_d = skew_d + pipeline latency +
/// (|g| - 1) x chunk / pipeline throughput. The round time of a
/// group is modelled as T(R) = (N - 1) x chunk / R + D, N chunks, D the longest
/// chunk path (access links, WAN hops with serialization, pipeline). The target
/// T(R_unconstrained) / T(R) >= target gives the required rate and
/// slots_d = ceil(R_required / (1 - margin) x hold_d / chunk) + 1.
///
/// Jitter on (pacing, drop): hold_d also covers the jitter's arrival skew at d, its
/// quantile (jitter_skew_quantile_ps) at the level that keeps every receiver, stream and
/// jitter epoch of a run (`steps`, at least one period) inside it in kJitterCoverage of
/// seeds; and the rate is the unconstrained one: the control plane paces by the planned
/// skew, so a smaller buffer does not slow the senders, it stalls their contributions.
///
/// Credit: the window must cover the credit loop instead of the skew:
/// hold_d = max_s delay(s->d) + max_s delay(d->s) + 2 x access delay + pipeline latency +
/// (|g| - 1) x chunk / throughput, and slots_d = min(ceil(R_required x hold_d / chunk), N).
struct SiteAnalytic {
  int site = -1;
  bool in_a_group = false;    ///< false: the site never aggregates (1 slot suffices)
  int round = -1;             ///< binding round (index in the schedule period)
  std::vector<int> group;     ///< binding group's members
  std::uint64_t skew_ps = 0;  ///< arrival skew at this receiver in that round
  int early_sender = -1;      ///< sender whose chunks arrive first (shortest delay)
  int late_sender = -1;       ///< sender whose chunks arrive last (sets the skew)
  std::uint64_t hold_ps = 0;  ///< slot hold time (or credit loop) used for the bound
  double unconstrained_rate_bytes_per_s = 0;  ///< group rate without a buffer limit
  double required_rate_bytes_per_s = 0;       ///< rate that meets the target
  /// Buffer access rate the memory must sustain: the largest over the site's groups of
  /// every round (not only the binding one), at their unconstrained rates
  /// (model/memory_tiers.h, peak_access_bytes_per_s).
  double access_bytes_per_s = 0;
  std::uint64_t analytic_bytes = 0;   ///< slots for the required rate x chunk
  std::uint64_t full_rate_bytes = 0;  ///< slots for the unconstrained rate x chunk
};

/// The quantile at `level` of the jitter's arrival skew at one receiver: sender i's
/// contributions cross links whose extra one-way delays are |N(0, sigma)| each
/// (sender_link_jitter_ps[i] lists the sigmas, ps; modules/network/wan_link.h), and the
/// skew is the largest less the smallest of the senders' sums. Sampled (200,000 draws
/// of a generator with a fixed seed, so the bound is deterministic), in ps.
double jitter_skew_quantile_ps(const std::vector<std::vector<double>>& sender_link_jitter_ps,
                               double level);
/// The seed of that sampling, and the share of seeded runs the jitter bound is for.
inline constexpr std::uint64_t kJitterQuantileSeed = 20261204;
inline constexpr double kJitterCoverage = 0.95;

/// Analytic bounds of every site (indexed like Platform::sites).
/// Preconditions: a group schedule (not kRing), 0 < target <= 1, chunk_bytes > 0.
std::vector<SiteAnalytic> analytic_buffer_bounds(const Platform& platform, const Schedule& schedule,
                                                 const RunOptions& options, double target);

/// The analytic bounds of a reduction-tree schedule (docs/buffer-sizing.md, "Reduction
/// trees"), indexed like Platform::sites. Site u holds, for each tree t it sums, its first
/// chunk's slot for hold_(u,t) (from its first input to its sum leaving the pipeline, with
/// the control plane's offsets; aligned: the services and the latency only) while the
/// tree's chunks arrive every spacing_t (its pacing interval, or longer where a resource
/// it crosses carries more work per chunk of it), so by Little's law, as for a group's
/// rate x hold, slots_u = 1 + ceil(sum_t hold_(u,t) / spacing_t). The trees pace whatever the
/// buffer, so required = unconstrained rate; the binding tree (`round`) is the one whose hold at u
/// is longest. Preconditions: a reduction-tree schedule plan_forest accepts.
std::vector<SiteAnalytic> analytic_tree_bounds(const Platform& platform, const Schedule& schedule,
                                               const RunOptions& options);

/// What to size and how to run the simulations.
struct SizingRequest {
  Platform platform;
  Schedule schedule;
  RunOptions options;
  double target = 0.95;        ///< fraction of the unconstrained round time (speed) to keep
  bool heterogeneous = false;  ///< also search one size per site
  int workers = 1;             ///< simulations run in parallel
  /// Per simulation: past it the child gets SIGTERM (SIGKILL 2 s later) and the sizing
  /// fails naming it; 0: none. The default is the sweeps' (`timeout: 10m`).
  std::uint64_t timeout_ms = 10 * 60 * 1000;
  std::string aggnet_exe;  ///< the `aggnet` executable (children run `aggnet run`)
  /// Arguments every child `aggnet run` gets (platform, schedule, gradient, chunk, flow
  /// control, --set overrides, ...); the sizing adds --buffer (one size everywhere) or
  /// --set sites.X.fpga.buffer per site, --json,
  /// -q and --no-colocated.
  std::vector<std::string> run_args;
  bool progress = false;  ///< print one line per batch of simulations to stderr
};

/// One simulated site at a given buffer configuration.
struct SiteSizing {
  SiteAnalytic analytic;
  std::uint64_t uniform_high_water_bytes = 0;  ///< high-water when every site has the uniform size
  std::uint64_t heterogeneous_alone_bytes =
      0;  ///< smallest size for this site alone (others unconstrained)
  std::uint64_t heterogeneous_bytes =
      0;  ///< the heterogeneous answer: alone x scale, meets the target together
  std::uint64_t heterogeneous_high_water_bytes =
      0;  ///< high-water in the combined heterogeneous run
};

/// The answer of `aggnet size-buffers`.
struct SizingResult {
  std::uint64_t unconstrained_buffer_bytes = 0;  ///< the non-binding size used as reference
  double unconstrained_round_time_s_mean = 0;
  std::uint64_t uniform_analytic_bytes = 0;  ///< max over sites of the analytic bound
  int uniform_analytic_site = -1;            ///< the site whose skew sets it
  std::uint64_t uniform_bytes = 0;           ///< smallest uniform size meeting the target
  /// With jitter (pacing, drop): the smallest size with no slot stall at the run's seed;
  /// uniform_bytes is the larger of it and the analytic bound (0 without jitter).
  std::uint64_t uniform_seed_bytes = 0;
  double uniform_round_time_s_mean = 0;
  double uniform_speed_fraction = 0;  ///< worst group: unconstrained time / time at that size
  double below_speed_fraction = 0;    ///< the same one slot smaller (misses the target)
  bool heterogeneous = false;
  bool heterogeneous_meets_target = false;  ///< the combined per-site sizes, simulated together
  int heterogeneous_scale_percent = 100;    ///< heterogeneous_bytes = alone x this / 100
  double heterogeneous_speed_fraction = 0;
  std::uint64_t heterogeneous_total_bytes = 0;
  int simulations = 0;
  std::vector<SiteSizing> sites;
};

/// Runs the analytic bound and the bisections. Errors: std::runtime_error naming the
/// child command, why it failed (exit status, signal or timeout) and its output when a
/// simulation fails.
SizingResult size_buffers(const SizingRequest& request);

/// The result as the JSON document of `--json` (keys carry units).
nlohmann::json sizing_json(const SizingRequest& request, const SizingResult& result);
/// The per-site table as CSV (`--csv`, common/csv.h), one row per site with a header row.
std::string sizing_csv(const SizingRequest& request, const SizingResult& result);
/// The human-readable table.
std::string sizing_table(const SizingRequest& request, const SizingResult& result);

}  // namespace aggnet
