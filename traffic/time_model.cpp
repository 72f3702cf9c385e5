#include "traffic/time_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include "common/units.h"
#include "model/control_plane.h"
#include "model/routing.h"
#include "traffic/closed_form.h"

namespace aggnet {

namespace {

constexpr double kPs = 1e-12;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// Access link (cluster <-> edge) of a site: its cluster's rate and delay, with the
/// reference MTU and header (WanLinkParams defaults), as the builder instantiates it.
WanLinkParams access_of(const Site& site) {
  WanLinkParams p;
  p.bandwidth_bps = site.cluster.access_bandwidth_bps;
  p.delay_ps = site.cluster.access_delay_ps;
  return p;
}

/// Serialization of one chunk on a link, seconds (header-inflated, rounded up to a ps).
double ser_s(std::uint64_t chunk, const WanLinkParams& l) {
  return static_cast<double>(
             serialization_ps(wire_bytes(chunk, l.mtu_bytes, l.header_bytes), l.bandwidth_bps)) *
         kPs;
}

const WanLinkParams& hop_link(const Platform& p, const Routing& r, const Hop& h) {
  const int li = r.link_index(h.first, h.second);
  if (li < 0) throw std::invalid_argument("time model: hop between non-adjacent sites");
  return p.links[li].params;
}

double pipe_s(std::uint64_t chunk, const FpgaParams& f) {
  return static_cast<double>(chunk) / static_cast<double>(f.throughput_bytes_per_s());
}

/// One chunk's latency to d's cluster from its arrival latency at d's aggregator (the
/// control plane's, `arrival_ps`): the FPGA pipeline (unless bypassed), access down.
double chunk_latency_s(const Platform& p, int d, std::uint64_t arrival_ps, std::uint64_t chunk,
                       bool through_pipeline) {
  const WanLinkParams down = access_of(p.sites[d]);
  double t = static_cast<double>(arrival_ps) * kPs;
  if (through_pipeline) {
    const auto& f = p.sites[d].fpga;
    t += pipe_s(chunk, f) + static_cast<double>(f.latency_ps()) * kPs;
  }
  return t + ser_s(chunk, down) + static_cast<double>(down.delay_ps) * kPs;
}

std::vector<Hop> path_hops(const Routing& r, int s, int d) {
  std::vector<Hop> hops;
  const auto path = r.path(s, d);
  for (std::size_t i = 0; i + 1 < path.size(); ++i) hops.emplace_back(path[i], path[i + 1]);
  return hops;
}

// The control plane's decisions for one group, in seconds: its rates, skews, send
// offsets and one chunk's latency s -> d. Returns the credit windows (slots per receiver).
std::map<int, double> take_plan(const Platform& p, const GroupPlan& gp, std::uint64_t chunk,
                                GroupEstimate& g) {
  const auto& m = g.members;
  g.buffer_rate = gp.buffer_rate;
  g.link_rate = gp.link_rate;
  g.pipeline_rate = gp.pipeline_rate;
  g.access_rate = gp.access_rate;
  std::map<int, double> window;
  for (int d : m) {
    g.skew_max_s = std::max(g.skew_max_s, static_cast<double>(gp.skew_ps.at(d)) * kPs);
    g.unaligned_skew_max_s =
        std::max(g.unaligned_skew_max_s, static_cast<double>(gp.unaligned_skew_ps.at(d)) * kPs);
    window[d] = static_cast<double>(gp.slots.at(d));
  }
  g.alignment = gp.alignment;
  g.offset_sd_s.assign(m.size(), std::vector<double>(m.size(), 0.0));
  for (std::size_t i = 0; i < m.size(); ++i) {
    g.waiting_s.push_back(static_cast<double>(gp.waiting_ps.at(m[i])) * kPs);
    for (std::size_t j = 0; j < m.size(); ++j)
      if (i != j)
        g.offset_sd_s[i][j] = static_cast<double>(gp.send_offset_ps.at(m[i]).at(m[j])) * kPs;
  }
  g.latency_sd_s.assign(m.size(), std::vector<double>(m.size(), 0.0));
  for (std::size_t i = 0; i < m.size(); ++i) {
    for (std::size_t j = 0; j < m.size(); ++j) {
      if (i == j) continue;
      g.latency_sd_s[i][j] = chunk_latency_s(p, m[j], gp.arrival_ps[i][j], chunk, true);
      g.latency_s = std::max(g.latency_s, g.latency_sd_s[i][j]);
    }
  }
  return window;
}

// Pacing: the plan's rate and interval; the limit is the lowest of the four rates.
void pacing_rate(const GroupPlan& gp, GroupEstimate& g) {
  struct Named {
    double v;
    const char* name;
  };
  const Named lims[] = {{g.buffer_rate, "buffer"},
                        {g.link_rate, "link"},
                        {g.pipeline_rate, "pipeline"},
                        {g.access_rate, "access"}};
  const Named* best = &lims[0];
  for (const auto& l : lims)
    if (l.v < best->v) best = &l;
  g.limit = best->name;
  g.rate = gp.pacing_rate;
  g.interval_s = static_cast<double>(gp.pacing_interval_ps) * kPs;
}

// Credit: the window cycle of sender s for receiver d bounds the rate.
void credit_rate(const Platform& p, const Routing& r, const RunOptions& params,
                 const std::map<int, double>& window, GroupEstimate& g) {
  const auto& m = g.members;
  const std::uint64_t chunk = params.chunk_bytes;
  const double c = static_cast<double>(chunk);
  const double n_chunks = static_cast<double>(num_chunks(params.gradient_bytes, chunk));
  const double line = std::min({g.link_rate, g.pipeline_rate, g.access_rate});
  g.credit_rate = kInf;
  double window_min = kInf, cycle_max = 0;
  for (std::size_t i = 0; i < m.size(); ++i) {
    for (std::size_t j = 0; j < m.size(); ++j) {
      if (i == j) continue;
      double last = 0;
      for (std::size_t k = 0; k < m.size(); ++k)
        if (k != j) last = std::max(last, g.latency_sd_s[k][j]);
      const WanLinkParams down = access_of(p.sites[m[j]]);
      // The slot frees at the FPGA (before access down); the credit crosses the WAN.
      const double cycle = last - ser_s(chunk, down) - static_cast<double>(down.delay_ps) * kPs +
                           static_cast<double>(r.delay_ps(m[j], m[i])) * kPs +
                           ser_s(params.credit_bytes, down) * 2;
      g.credit_rate = std::min(g.credit_rate, window.at(m[j]) * c / cycle);
      window_min = std::min(window_min, window.at(m[j]));
      cycle_max = std::max(cycle_max, cycle);
    }
  }
  g.rate = std::min(line, g.credit_rate);
  g.limit = g.credit_rate < line ? "credit"
                                 : (line == g.link_rate       ? "link"
                                    : line == g.pipeline_rate ? "pipeline"
                                                              : "access");
  // A window goes out as a burst at the line rate, then the sender waits for the
  // credits of its first chunk: the last chunk leaves after floor((N-1)/W) cycles and
  // (N-1) mod W line-rate intervals (or (N-1) line intervals if the line binds).
  const double w = std::max(1.0, std::floor(window_min));
  const double last_send =
      std::max((n_chunks - 1) * c / line,
               std::floor((n_chunks - 1) / w) * cycle_max + std::fmod(n_chunks - 1, w) * c / line);
  g.interval_s = n_chunks > 1 ? last_send / (n_chunks - 1) : c / g.rate;
}

// The group's round time: its last chunk's arrival at the last receiver, from the start.
void group_time(const Routing& r, const RunOptions& params, GroupEstimate& g) {
  const auto& m = g.members;
  const double n_chunks =
      static_cast<double>(num_chunks(params.gradient_bytes, params.chunk_bytes));
  // Aligned start: members start together start_delay after the last one is ready, the
  // largest one-way delay between two members (so every ready message has arrived).
  if (params.flow_control == FlowControl::kPacing && params.aligned_start) {
    std::uint64_t hi = 0;
    for (int s : m)
      for (int d : m) hi = std::max(hi, r.delay_ps(s, d));
    g.start_delay_s = static_cast<double>(hi) * kPs;
  }
  // One-way delays between members; credit mode waits for every receiver's grant.
  g.delay_sd_s.assign(m.size(), std::vector<double>(m.size(), 0.0));
  for (std::size_t i = 0; i < m.size(); ++i)
    for (std::size_t j = 0; j < m.size(); ++j)
      g.delay_sd_s[i][j] = static_cast<double>(r.delay_ps(m[i], m[j])) * kPs;
  g.credit_grant = params.flow_control == FlowControl::kCredit;
  g.time_s = 0;
  for (std::size_t i = 0; i < m.size(); ++i) {
    double send0 = g.start_delay_s;
    if (g.credit_grant) {
      for (std::size_t j = 0; j < m.size(); ++j) send0 = std::max(send0, g.delay_sd_s[j][i]);
    }
    for (std::size_t j = 0; j < m.size(); ++j) {
      if (i != j) {
        g.time_s = std::max(g.time_s, send0 + g.offset_sd_s[i][j] + (n_chunks - 1) * g.interval_s +
                                          g.latency_sd_s[i][j]);
      }
    }
  }
}

RoundEstimate estimate_group_round(const Platform& p, const Routing& r, const Round& round,
                                   const RunOptions& params) {
  // The control plane's decisions (trees, link shares, slots, pacing rate), exactly as
  // the simulation's builder installs them.
  const RoundPlan plan = plan_round(p, r, round, params);
  RoundEstimate est;
  for (std::size_t gi = 0; gi < round.groups.size(); ++gi) {
    const GroupPlan& gp = plan.groups[gi];
    GroupEstimate g;
    g.members = round.groups[gi].sites;
    const auto window = take_plan(p, gp, params.chunk_bytes, g);
    if (params.flow_control == FlowControl::kPacing)
      pacing_rate(gp, g);
    else
      credit_rate(p, r, params, window, g);
    group_time(r, params, g);
    if (g.time_s > est.time_s) {
      est.time_s = g.time_s;
      est.limiting_group = static_cast<int>(gi);
    }
    est.groups.push_back(std::move(g));
  }
  return est;
}

RoundEstimate estimate_ring_round(const Platform& p, const Routing& r, const Round& round,
                                  const RunOptions& params) {
  RoundEstimate est;
  if (round.groups.empty()) return est;
  const auto& order = round.groups[0].sites;
  const int n = static_cast<int>(order.size());
  GroupEstimate g;
  g.members = order;
  g.limit = "ring";
  if (n < 2) {
    est.groups.push_back(g);
    return est;
  }
  const std::uint64_t chunk = params.chunk_bytes;
  // Ring flows i -> succ(i) per directed hop.
  std::map<Hop, int> flows;
  for (int i = 0; i < n; ++i)
    for (const auto& h : path_hops(r, order[i], order[(i + 1) % n])) ++flows[h];
  // Segment sizes: whole floats, the first (elems % n) segments one float larger.
  const std::uint64_t elems = params.gradient_bytes / 4;
  auto seg_bytes = [&](int seg) { return (elems / n + (seg < static_cast<int>(elems % n))) * 4; };
  auto transfer_s = [&](int i, std::uint64_t bytes) {
    const int s = order[i], d = order[(i + 1) % n];
    if (bytes == 0) return 0.0;
    const std::uint64_t k = num_chunks(bytes, chunk);
    const std::uint64_t c = std::min(chunk, bytes);
    double bottleneck = std::max(ser_s(c, access_of(p.sites[s])), ser_s(c, access_of(p.sites[d])));
    for (const auto& h : path_hops(r, s, d)) {
      bottleneck = std::max(bottleneck, ser_s(c, hop_link(p, r, h)) * flows[h]);
    }
    return chunk_latency_s(p, d, arrival_latency_ps(p, r, s, d, c), c, false) +
           static_cast<double>(k - 1) * bottleneck;
  };
  // recv[i] = time site order[i] has received the current step's segment.
  std::vector<double> start(n, 0.0), recv(n, 0.0);
  auto mod = [n](int a) { return ((a % n) + n) % n; };
  for (int step = 0; step < 2 * (n - 1); ++step) {
    const bool rs = step < n - 1;
    for (int i = 0; i < n; ++i) {
      const int send_seg = rs ? mod(i - step) : mod(i + 1 - (step - (n - 1)));
      recv[(i + 1) % n] = start[i] + transfer_s(i, seg_bytes(send_seg));
    }
    start = recv;
  }
  for (double t : recv) est.time_s = std::max(est.time_s, t);
  g.time_s = est.time_s;
  g.latency_s = transfer_s(0, std::min(chunk, seg_bytes(0)));
  est.groups.push_back(g);
  est.limiting_group = 0;
  return est;
}

}  // namespace

RoundEstimate estimate_round(const Platform& platform, const Routing& routing, const Round& round,
                             Collective collective, const RunOptions& params) {
  const int n = static_cast<int>(platform.sites.size());
  for (const auto& g : round.groups)
    for (int s : g.sites)
      if (s < 0 || s >= n) throw std::invalid_argument("estimate_round: site index out of range");
  if (params.chunk_bytes == 0) throw std::invalid_argument("estimate_round: chunk_bytes is 0");
  return collective == Collective::kRing ? estimate_ring_round(platform, routing, round, params)
                                         : estimate_group_round(platform, routing, round, params);
}

namespace {
// A host collective timed by its store-and-forward closed form (traffic/closed_form.h): one
// round, one estimate whose group holds every member. Errors: std::invalid_argument with
// the reason when the collective has no closed form here.
RoundEstimate closed_form_round(const Platform& platform, const Schedule& schedule,
                                const RunOptions& params) {
  const ClosedForm f = closed_form(platform, schedule, params.gradient_bytes, params.chunk_bytes);
  if (!f.applicable)
    throw std::invalid_argument("no closed form for " + schedule.name + ": " + f.why);
  GroupEstimate g;
  for (const auto& group : schedule.rounds.at(0).groups)
    g.members.insert(g.members.end(), group.sites.begin(), group.sites.end());
  g.limit = "closed form";
  g.time_s = f.store_and_forward_s;
  RoundEstimate est;
  est.time_s = g.time_s;
  est.groups.push_back(std::move(g));
  est.limiting_group = 0;
  return est;
}
}  // namespace

ScheduleEstimate estimate_schedule(const Platform& platform, const Routing& routing,
                                   const Schedule& schedule, const RunOptions& params) {
  ScheduleEstimate est;
  const bool plain_ring =
      schedule.collective == Collective::kRing && schedule.ring_step == RingStepRule::kReceive;
  if (schedule.collective == Collective::kReductionTree) {
    GroupEstimate g;
    g.members = schedule.rounds.at(0).groups.at(0).sites;
    g.limit = "reduction forest";
    g.time_s = reduction_tree_time(platform, routing, schedule, params);
    RoundEstimate round;
    round.time_s = g.time_s;
    round.groups.push_back(std::move(g));
    round.limiting_group = 0;
    est.rounds.push_back(std::move(round));
    est.mean_round_s = est.rounds.back().time_s;
    return est;
  }
  if (schedule.collective != Collective::kGroupAverage && !plain_ring) {
    est.rounds.push_back(closed_form_round(platform, schedule, params));
    est.mean_round_s = est.rounds.back().time_s;
    return est;
  }
  for (const auto& round : schedule.rounds) {
    est.rounds.push_back(estimate_round(platform, routing, round, schedule.collective, params));
    est.mean_round_s += est.rounds.back().time_s;
  }
  if (!est.rounds.empty()) est.mean_round_s /= static_cast<double>(est.rounds.size());
  return est;
}

namespace {
// One group of a round started at `start` (per site): when each member is done, into
// `next`, and the group's span from its first start to its last member's end.
double group_span(const GroupEstimate& g, const std::vector<double>& start, Collective collective,
                  double n_chunks, std::vector<double>& next) {
  double first = kInf, last = 0, latest = 0;
  for (int s : g.members) {
    first = std::min(first, start[s]);
    latest = std::max(latest, start[s]);
  }
  // Aligned start: every member starts sending at the agreed instant.
  const bool aligned = g.start_delay_s > 0;
  auto send_start = [&](std::size_t i) {
    if (aligned) return latest + g.start_delay_s;
    double t = start[g.members[i]];
    if (g.credit_grant) {  // the receivers' window grants cross the network
      for (std::size_t j = 0; j < g.members.size(); ++j)
        if (j != i) t = std::max(t, start[g.members[j]] + g.delay_sd_s[j][i]);
    }
    return t;
  };
  if (collective != Collective::kGroupAverage) {
    // Staggered host-collective starts: approximated by the latest start + the isolated time.
    last = latest + g.time_s;
    for (int s : g.members) next[s] = last;
    return last - first;
  }
  for (std::size_t j = 0; j < g.members.size(); ++j) {
    // A member is done when it has sent its own chunks and received every reduced one.
    double done = 0;
    for (std::size_t i = 0; i < g.members.size(); ++i) {
      if (i == j) continue;
      const double last_send = (n_chunks - 1) * g.interval_s;
      done = std::max({done, send_start(j) + g.offset_sd_s[j][i] + last_send,
                       send_start(i) + g.offset_sd_s[i][j] + last_send + g.latency_sd_s[i][j]});
    }
    next[g.members[j]] = done;
    last = std::max(last, done);
  }
  return last - first;
}
}  // namespace

StepTimeline simulate_steps(const Platform& platform, const Schedule& schedule,
                            const ScheduleEstimate& est, const RunOptions& params, long steps,
                            bool with_compute) {
  const int n = static_cast<int>(platform.sites.size());
  StepTimeline tl;
  std::vector<double> ready(n, 0.0);  // when each site's previous round result is complete
  const double n_chunks =
      static_cast<double>(num_chunks(params.gradient_bytes, params.chunk_bytes));
  for (long k = 0; k < steps && !est.rounds.empty(); ++k) {
    const RoundEstimate& re = est.rounds[k % est.rounds.size()];
    std::vector<double> start(n);
    for (int s = 0; s < n; ++s) {
      start[s] = ready[s] + (with_compute ? platform.sites[s].cluster.compute_time_ps * kPs : 0.0);
    }
    double worst = 0;
    std::vector<double> next = start;  // sites outside every group: done after compute
    std::vector<bool> in_group(n, false);
    for (const auto& g : re.groups) {
      if (g.members.size() < 2) continue;
      for (int s : g.members) in_group[s] = true;
      worst = std::max(worst, group_span(g, start, schedule.collective, n_chunks, next));
    }
    // Without compute a site that sits the round out has nothing to do: it waits for the
    // round (the "others wait" reading), else it would run through rounds for free.
    double round_end = 0;
    for (const double t : next) round_end = std::max(round_end, t);
    if (!with_compute)
      for (int s = 0; s < n; ++s)
        if (!in_group[s]) next[s] = std::max(next[s], round_end);
    ready = next;
    tl.round_time_s.push_back(worst);
  }
  tl.site_done_s = ready;
  for (double t : ready) tl.makespan_s = std::max(tl.makespan_s, t);
  return tl;
}

std::vector<double> estimate_step_round_times(const Platform& platform, const Routing& routing,
                                              const Schedule& schedule, const RunOptions& params,
                                              int steps) {
  const auto est = estimate_schedule(platform, routing, schedule, params);
  return simulate_steps(platform, schedule, est, params, steps, true).round_time_s;
}

double rounds_compute_s(long rounds, const Platform& platform, const FaultPlan& faults) {
  std::uint64_t slowest_ps = 0;
  for (int s = 0; s < static_cast<int>(platform.sites.size()); ++s)
    slowest_ps = std::max(slowest_ps, slowed_compute_ps(faults, platform, s));
  return static_cast<double>(rounds) * static_cast<double>(slowest_ps) * kPs;
}

double time_to_eps_without_compute_s(double time_to_eps_s, double rounds_compute_s) {
  return std::max(0.0, time_to_eps_s - rounds_compute_s);
}

}  // namespace aggnet
