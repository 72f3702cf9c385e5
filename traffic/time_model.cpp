#include "traffic/time_model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>

#include "common/units.h"
#include "model/control_plane.h"
#include "model/faults.h"
#include "model/network_math.h"
#include "model/routing.h"
#include "traffic/closed_form.h"

namespace aggnet {

namespace {

constexpr double kPs = 1e-12;
constexpr double kInf = std::numeric_limits<double>::infinity();
// The recurrence's sums of up to 1e9 terms round by less than 1e9 x 2^-53 relative.
constexpr double kBoundRounding = 1e-6;

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

// Loss rate of every platform link as the fault injector sets it (`--loss` on every WAN
// link, a link's own rate where higher); empty when nothing is lost at random.
std::vector<double> link_loss_rates(const Platform& p, const FaultPlan& faults) {
  std::vector<double> rate(p.links.size(), faults.wan_loss_rate);
  for (const auto& l : faults.link_loss) {
    double& r = rate[static_cast<std::size_t>(find_link(p, l.link))];
    r = std::max(r, l.rate);
  }
  if (std::all_of(rate.begin(), rate.end(), [](double r) { return r <= 0; })) return {};
  return rate;
}

// Loss recovery's inputs for one group: each pair's path loss (a multicast tree reaches d
// along the shortest path, as a unicast retransmission does) and the retransmission timer
// the builder gives its members. Outages are not modelled.
void loss_inputs(const Platform& p, const Routing& r, const GroupPlan& gp, const RunOptions& params,
                 GroupEstimate& g) {
  const auto rates = link_loss_rates(p, params.faults);
  if (rates.empty()) return;
  const auto& m = g.members;
  g.loss_sd.assign(m.size(), std::vector<double>(m.size(), 0.0));
  for (std::size_t i = 0; i < m.size(); ++i)
    for (std::size_t j = 0; j < m.size(); ++j) {
      if (i == j) continue;
      std::vector<double> path;
      for (const Hop& h : path_hops(r, m[i], m[j]))
        path.push_back(rates[static_cast<std::size_t>(r.link_index(h.first, h.second))]);
      g.loss_sd[i][j] = path_loss(path);
    }
  const std::uint64_t timeout_ps = params.faults.retransmit_timeout_ps
                                       ? params.faults.retransmit_timeout_ps
                                       : retransmit_timeout_ps(p, r, gp, per_transaction(params));
  g.backoff = {static_cast<double>(timeout_ps) * kPs, params.faults.retransmit_backoff_max};
}

// Under loss, every contribution member j receives (sender i's chunk c leaves at
// send_start(i) + offset + c x interval) and, lossless, j's own last send.
std::vector<LossyArrival> lossy_arrivals(const GroupEstimate& g, std::size_t j, double n_chunks,
                                         const std::function<double(std::size_t)>& send_start) {
  std::vector<LossyArrival> out;
  const double last_send = (n_chunks - 1) * g.interval_s;
  for (std::size_t i = 0; i < g.members.size(); ++i) {
    if (i == j) continue;
    out.push_back({send_start(j) + g.offset_sd_s[j][i] + last_send, 0.0});
    const double first = send_start(i) + g.offset_sd_s[i][j] + g.latency_sd_s[i][j];
    for (double c = 0; c < n_chunks; ++c)
      out.push_back({first + c * g.interval_s, g.loss_sd[i][j]});
  }
  return out;
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
  auto send0_of = [&](std::size_t i) {
    double send0 = g.start_delay_s;
    if (g.credit_grant) {
      for (std::size_t j = 0; j < m.size(); ++j) send0 = std::max(send0, g.delay_sd_s[j][i]);
    }
    return send0;
  };
  if (!g.loss_sd.empty()) {  // the expected last arrival over every receiver's contributions
    std::vector<LossyArrival> all;
    for (std::size_t j = 0; j < m.size(); ++j) {
      const auto a = lossy_arrivals(g, j, n_chunks, send0_of);
      all.insert(all.end(), a.begin(), a.end());
    }
    g.time_s = expected_last_arrival_s(all, g.backoff);
    return;
  }
  for (std::size_t i = 0; i < m.size(); ++i) {
    const double send0 = send0_of(i);
    for (std::size_t j = 0; j < m.size(); ++j) {
      if (i != j) {
        g.time_s = std::max(g.time_s, send0 + g.offset_sd_s[i][j] + (n_chunks - 1) * g.interval_s +
                                          g.latency_sd_s[i][j]);
      }
    }
  }
}

RoundEstimate estimate_group_round(ArrivalLatencyCache& latencies, const Round& round,
                                   const RunOptions& params) {
  const Platform& p = latencies.platform();
  const Routing& r = latencies.routing();
  // The control plane's decisions (trees, link shares, slots, pacing rate), exactly as
  // the simulation's builder installs them.
  const RoundPlan plan = plan_round(latencies, round, params, false);
  RoundEstimate est;
  for (std::size_t gi = 0; gi < round.groups.size(); ++gi) {
    const GroupPlan& gp = plan.groups[gi];
    GroupEstimate g;
    g.members = round.groups[gi].sites;
    const auto window = take_plan(p, gp, params.chunk_bytes, g);
    loss_inputs(p, r, gp, params, g);
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

namespace {
// estimate_round on `latencies`' platform and routing, the arrival latencies kept there for
// the next rounds (a schedule's rounds meet the same senders again and again).
RoundEstimate estimate_round_on(ArrivalLatencyCache& latencies, const Round& round,
                                Collective collective, const RunOptions& params) {
  const Platform& platform = latencies.platform();
  const int n = static_cast<int>(platform.sites.size());
  for (const auto& g : round.groups)
    for (int s : g.sites)
      if (s < 0 || s >= n) throw std::invalid_argument("estimate_round: site index out of range");
  if (params.chunk_bytes == 0) throw std::invalid_argument("estimate_round: chunk_bytes is 0");
  return collective == Collective::kRing
             ? estimate_ring_round(platform, latencies.routing(), round, params)
             : estimate_group_round(latencies, round, params);
}
}  // namespace

RoundEstimate estimate_round(const Platform& platform, const Routing& routing, const Round& round,
                             Collective collective, const RunOptions& params) {
  ArrivalLatencyCache latencies(platform, routing);
  return estimate_round_on(latencies, round, collective, params);
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
                                   const Schedule& schedule, const RunOptions& params,
                                   std::size_t max_rounds) {
  ScheduleEstimate est;
  const bool plain_ring =
      schedule.collective == Collective::kRing && schedule.ring_step == RingStepRule::kReceive;
  if (schedule.collective == Collective::kReductionTree) {
    GroupEstimate g;
    g.members = schedule.rounds.at(0).groups.at(0).sites;
    g.limit = "in-network reduction";  // the closed form of its trees, no one link rate
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
  ArrivalLatencyCache latencies(platform, routing);
  for (std::size_t r = 0; r < schedule.rounds.size() && r < max_rounds; ++r) {
    const Round& round = schedule.rounds[r];
    est.rounds.push_back(estimate_round_on(latencies, round, schedule.collective, params));
    est.mean_round_s += est.rounds.back().time_s;
  }
  if (!est.rounds.empty()) est.mean_round_s /= static_cast<double>(est.rounds.size());
  return est;
}

void release_pair_terms(ScheduleEstimate& estimate) {
  for (auto& round : estimate.rounds)
    for (auto& g : round.groups) {
      std::vector<std::vector<double>>().swap(g.offset_sd_s);
      std::vector<std::vector<double>>().swap(g.latency_sd_s);
      std::vector<std::vector<double>>().swap(g.delay_sd_s);
    }
}

namespace {

// Under loss, when the last of sender i's contributions reaches member j in one draw: the
// lost ones (each chunk lost with loss_sd, again with each copy) arrive D(copies) late.
double sampled_last_arrival(const GroupEstimate& g, std::size_t i, std::size_t j, double send0,
                            double n_chunks, std::mt19937_64& rng) {
  const double first = send0 + g.offset_sd_s[i][j] + g.latency_sd_s[i][j];
  double last = first + (n_chunks - 1) * g.interval_s;
  const double q = g.loss_sd[i][j];
  if (q <= 0) return last;
  std::geometric_distribution<long> delivered_before_loss(q);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (double c = static_cast<double>(delivered_before_loss(rng)); c < n_chunks;
       c += 1 + static_cast<double>(delivered_before_loss(rng))) {
    int copies = 1;
    while (copies < 64 && u(rng) < q) ++copies;
    last = std::max(last, first + c * g.interval_s + retransmission_delay_s(copies, g.backoff));
  }
  return last;
}

// Aligned start under loss, one draw: when member j has heard every other member's ready
// message. A lost one (i -> j) is asked for again: j repeats its own to the members not
// heard from every T after its ready, and i answers a repeat with its own; an attempt
// succeeds when both cross (the repeat sent once i is ready, as i answers only then).
double sampled_ready_heard(const GroupEstimate& g, const std::vector<double>& start, std::size_t j,
                           std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const auto& m = g.members;
  const double t = g.backoff.timeout_s;
  double heard = 0;
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (i == j) continue;
    double at = start[m[i]] + g.delay_sd_s[i][j];
    if (u(rng) < g.loss_sd[i][j]) {
      double repeat = start[m[j]] + t;
      while (repeat + g.delay_sd_s[j][i] < start[m[i]]) repeat += t;
      for (int n = 0; n < 64 && (u(rng) < g.loss_sd[j][i] || u(rng) < g.loss_sd[i][j]); ++n)
        repeat += t;
      at = repeat + g.delay_sd_s[j][i] + g.delay_sd_s[i][j];
    }
    heard = std::max(heard, at);
  }
  return heard;
}

// One draw of one group-average round from the members' start times: each member's
// completion into `next`; returns the round time (last completion - first start).
double sampled_group_round(const GroupEstimate& g, const std::vector<double>& start,
                           double n_chunks, std::mt19937_64& rng, std::vector<double>& next) {
  double first = kInf, latest = 0, last = 0;
  for (int s : g.members) {
    first = std::min(first, start[s]);
    latest = std::max(latest, start[s]);
  }
  std::vector<double> aligned(g.members.size(), latest + g.start_delay_s);
  if (g.start_delay_s > 0)
    for (std::size_t j = 0; j < g.members.size(); ++j)
      aligned[j] = std::max(aligned[j], sampled_ready_heard(g, start, j, rng));
  auto send_start = [&](std::size_t i) {
    if (g.start_delay_s > 0) return aligned[i];
    double t = start[g.members[i]];
    if (g.credit_grant)
      for (std::size_t j = 0; j < g.members.size(); ++j)
        if (j != i) t = std::max(t, start[g.members[j]] + g.delay_sd_s[j][i]);
    return t;
  };
  const double last_send = (n_chunks - 1) * g.interval_s;
  for (std::size_t j = 0; j < g.members.size(); ++j) {
    double done = 0;
    for (std::size_t i = 0; i < g.members.size(); ++i) {
      if (i == j) continue;
      done = std::max({done, send_start(j) + g.offset_sd_s[j][i] + last_send,
                       sampled_last_arrival(g, i, j, send_start(i), n_chunks, rng)});
    }
    next[g.members[j]] = done;
    last = std::max(last, done);
  }
  return last - first;
}

// The staggered steps of a group-average schedule under loss, averaged over kLossDraws
// draws of the losses (a fixed seed: the estimate is deterministic). A member that one
// step's retransmissions made late starts its next group late, and the mean of that
// maximum over members is not the maximum of their means: hence draws, not means.
StepTimeline simulate_lossy_steps(const Platform& platform, const ScheduleEstimate& est, long steps,
                                  bool with_compute, double n_chunks) {
  constexpr int kLossDraws = 256;
  const int n = static_cast<int>(platform.sites.size());
  std::mt19937_64 rng(1);
  std::vector<std::vector<double>> ready(kLossDraws, std::vector<double>(n, 0.0));
  StepTimeline tl;
  for (long k = 0; k < steps && !est.rounds.empty(); ++k) {
    const RoundEstimate& re = est.rounds[k % est.rounds.size()];
    double worst_sum = 0;
    for (auto& at : ready) {
      std::vector<double> start(n);
      for (int s = 0; s < n; ++s)
        start[s] = at[s] + (with_compute ? platform.sites[s].cluster.compute_time_ps * kPs : 0.0);
      std::vector<double> next = start;
      std::vector<bool> in_group(n, false);
      double worst = 0;
      for (const auto& g : re.groups) {
        if (g.members.size() < 2) continue;
        for (int s : g.members) in_group[s] = true;
        worst = std::max(worst, sampled_group_round(g, start, n_chunks, rng, next));
      }
      const double round_end = *std::max_element(next.begin(), next.end());
      if (!with_compute)
        for (int s = 0; s < n; ++s)
          if (!in_group[s]) next[s] = std::max(next[s], round_end);
      at = next;
      worst_sum += worst;
    }
    tl.round_time_s.push_back(worst_sum / kLossDraws);
  }
  tl.site_done_s.assign(n, 0.0);
  for (const auto& at : ready) {
    for (int s = 0; s < n; ++s) tl.site_done_s[s] += at[s] / kLossDraws;
    tl.makespan_s += *std::max_element(at.begin(), at.end()) / kLossDraws;
  }
  return tl;
}

bool lossy(const ScheduleEstimate& est) {
  for (const auto& r : est.rounds)
    for (const auto& g : r.groups)
      if (!g.loss_sd.empty()) return true;
  return false;
}

// One group of a round started at `start` (per site): when each member is done, into
// `next`, and the group's span from its first start to its last member's end. `send`:
// scratch, each member's send start.
double group_span(const GroupEstimate& g, const std::vector<double>& start, Collective collective,
                  double n_chunks, std::vector<double>& next, std::vector<double>& send) {
  const auto& m = g.members;
  double first = kInf, last = 0, latest = 0;
  for (int s : m) {
    first = std::min(first, start[s]);
    latest = std::max(latest, start[s]);
  }
  if (collective != Collective::kGroupAverage) {
    // Staggered host-collective starts: approximated by the latest start + the isolated time.
    last = latest + g.time_s;
    for (int s : m) next[s] = last;
    return last - first;
  }
  // Aligned start: every member starts sending at the agreed instant.
  const bool aligned = g.start_delay_s > 0;
  send.resize(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (aligned) {
      send[i] = latest + g.start_delay_s;
      continue;
    }
    double t = start[m[i]];
    if (g.credit_grant) {  // the receivers' window grants cross the network
      for (std::size_t j = 0; j < m.size(); ++j)
        if (j != i) t = std::max(t, start[m[j]] + g.delay_sd_s[j][i]);
    }
    send[i] = t;
  }
  const double last_send = (n_chunks - 1) * g.interval_s;
  for (std::size_t j = 0; j < m.size(); ++j) {
    // A member is done when it has sent its own chunks and received every reduced one.
    double done = 0;
    for (std::size_t i = 0; i < m.size(); ++i) {
      if (i == j) continue;
      done = std::max({done, send[j] + g.offset_sd_s[j][i] + last_send,
                       send[i] + g.offset_sd_s[i][j] + last_send + g.latency_sd_s[i][j]});
    }
    next[m[j]] = done;
    last = std::max(last, done);
  }
  return last - first;
}

}  // namespace

StepTimeline simulate_steps(const Platform& platform, const Schedule& schedule,
                            const ScheduleEstimate& est, const RunOptions& params, long steps,
                            bool with_compute) {
  if (schedule.collective == Collective::kGroupAverage && lossy(est))
    return simulate_lossy_steps(
        platform, est, steps, with_compute,
        static_cast<double>(num_chunks(params.gradient_bytes, params.chunk_bytes)));
  const int n = static_cast<int>(platform.sites.size());
  StepTimeline tl;
  std::vector<double> ready(n, 0.0);  // when each site's previous round result is complete
  const double n_chunks =
      static_cast<double>(num_chunks(params.gradient_bytes, params.chunk_bytes));
  std::vector<double> compute_s(n, 0.0), start(n), next(n), send;
  if (with_compute)
    for (int s = 0; s < n; ++s) compute_s[s] = platform.sites[s].cluster.compute_time_ps * kPs;
  std::vector<char> in_group(n);
  if (steps > 0 && !est.rounds.empty()) tl.round_time_s.reserve(static_cast<std::size_t>(steps));
  for (long k = 0; k < steps && !est.rounds.empty(); ++k) {
    const RoundEstimate& re = est.rounds[k % est.rounds.size()];
    for (int s = 0; s < n; ++s) start[s] = ready[s] + compute_s[s];
    next = start;  // sites outside every group: done after compute
    double worst = 0;
    if (!with_compute) std::fill(in_group.begin(), in_group.end(), 0);
    for (const auto& g : re.groups) {
      if (g.members.size() < 2) continue;
      if (!with_compute)
        for (int s : g.members) in_group[s] = 1;
      worst = std::max(worst, group_span(g, start, schedule.collective, n_chunks, next, send));
    }
    // Without compute a site that sits the round out has nothing to do: it waits for the
    // round (the "others wait" reading), else it would run through rounds for free.
    if (!with_compute) {
      double round_end = 0;
      for (const double t : next) round_end = std::max(round_end, t);
      for (int s = 0; s < n; ++s)
        if (!in_group[s]) next[s] = std::max(next[s], round_end);
    }
    ready.swap(next);
    tl.round_time_s.push_back(worst);
  }
  tl.site_done_s = ready;
  for (double t : ready) tl.makespan_s = std::max(tl.makespan_s, t);
  return tl;
}

namespace {
// Each member's least time from its own start to its result in one round, added to `sum`:
// it sends no earlier than it starts (with an aligned start: the agreed start, the start
// delay after the last member is ready), then sends N chunks and receives every reduced
// one (group_span); a host collective takes its isolated time after the latest start.
void add_round_parts(const RoundEstimate& round, Collective collective, double last_send_chunks,
                     std::vector<double>& sum) {
  for (const auto& g : round.groups) {
    if (g.members.size() < 2) continue;
    const bool aligned = g.start_delay_s > 0;
    const double last_send = last_send_chunks * g.interval_s;
    for (std::size_t j = 0; j < g.members.size(); ++j) {
      double own = 0;
      for (std::size_t i = 0; i < g.members.size() && collective == Collective::kGroupAverage;
           ++i) {
        if (i == j) continue;
        own = std::max(own, g.offset_sd_s[j][i] + last_send);
        if (aligned) own = std::max(own, g.offset_sd_s[i][j] + last_send + g.latency_sd_s[i][j]);
      }
      if (collective != Collective::kGroupAverage) own = g.time_s;
      sum[g.members[j]] +=
          own + (aligned && collective == Collective::kGroupAverage ? g.start_delay_s : 0.0);
    }
  }
}
}  // namespace

double makespan_lower_bound_s(const Platform& platform, const Schedule& schedule,
                              const ScheduleEstimate& est, const RunOptions& params, long steps) {
  const int n = static_cast<int>(platform.sites.size());
  if (steps <= 0 || est.rounds.empty()) return 0;
  const double last_send =
      static_cast<double>(num_chunks(params.gradient_bytes, params.chunk_bytes)) - 1;
  const long p = static_cast<long>(est.rounds.size()), full = steps / p, extra = steps % p;
  std::vector<double> period(n, 0.0), rest(n, 0.0);  // over one period, its first `extra` rounds
  for (long k = 0; k < (full > 0 ? p : extra); ++k) {
    if (full > 0) add_round_parts(est.rounds[k], schedule.collective, last_send, period);
    if (k < extra) add_round_parts(est.rounds[k], schedule.collective, last_send, rest);
  }
  double bound = 0;
  for (int s = 0; s < n; ++s) {
    const double compute_s = platform.sites[s].cluster.compute_time_ps * kPs;
    bound = std::max(bound, static_cast<double>(full) * period[s] + rest[s] +
                                static_cast<double>(steps) * compute_s);
  }
  return bound * (1 - kBoundRounding);
}

// link_share_rates, round after round on one platform.
class LinkShares {
 public:
  LinkShares(const Platform& p, const Routing& r, const RunOptions& params)
      : routing_(r),
        multicast_(params.multicast),
        payload_(2 * p.links.size()),
        streams_(payload_.size(), 0),
        stamp_(payload_.size(), 0) {
    for (std::size_t l = 0; l < p.links.size(); ++l)
      payload_[2 * l] = payload_[2 * l + 1] = payload_rate(p.links[l].params, params.chunk_bytes);
  }

  std::vector<double> of_round(const Round& round) {
    touched_.clear();
    hops_.clear();
    std::vector<std::size_t> group_end;  // per group: the end of its hops in hops_
    for (const auto& g : round.groups) {
      for_each_stream_hop(g, [&](std::size_t h) {
        if (streams_[h]++ == 0) touched_.push_back(h);
        hops_.push_back(h);
      });
      group_end.push_back(hops_.size());
    }
    std::vector<double> rate(round.groups.size(), kInf);
    for (std::size_t i = 0, k = 0; i < round.groups.size(); ++i)
      for (; k < group_end[i]; ++k)
        rate[i] = std::min(rate[i], payload_[hops_[k]] / streams_[hops_[k]]);
    for (std::size_t h : touched_) streams_[h] = 0;
    return rate;
  }

 private:
  // f(directed link) for each hop of each member's stream. A multicast tree's paths share
  // their hops towards the source: a walk back from a receiver stops at the first hop
  // this tree has crossed already.
  template <class F>
  void for_each_stream_hop(const Group& g, F f) {
    if (g.sites.size() < 2) return;
    for (int s : g.sites) {
      ++tree_;
      for (int d : g.sites)
        routing_.walk_back(s, d, [&](int link, int u, int v) {
          const std::size_t h = 2 * static_cast<std::size_t>(link) + (u < v ? 0 : 1);
          if (multicast_ && stamp_[h] == tree_) return false;
          stamp_[h] = tree_;
          f(h);
          return true;
        });
    }
  }

  const Routing& routing_;
  bool multicast_;
  std::vector<double> payload_;       // per directed link
  std::vector<int> streams_;          // per directed link, this round's
  std::vector<std::uint64_t> stamp_;  // per directed link: the last tree that crossed it
  std::uint64_t tree_ = 0;
  std::vector<std::size_t> touched_;
  std::vector<std::size_t> hops_;  // this round's stream hops, group by group
};

std::vector<double> link_share_rates(const Platform& platform, const Routing& routing,
                                     const Round& round, const RunOptions& params) {
  return LinkShares(platform, routing, params).of_round(round);
}

namespace {
// An upper bound on the sending rate plan_round gives `members` (control_plane.cpp's
// access, pipeline and link limits, `link_rate` the last; the buffer's depends on the
// skews and is left out).
double line_rate_bound(const Platform& p, const std::vector<int>& members, double link_rate,
                       const RunOptions& params) {
  const double f = static_cast<double>(members.size() - 1);
  double rate = link_rate;
  for (int d : members) {
    const double access = payload_rate(access_link(p.sites[d]), params.chunk_bytes);
    rate = std::min(rate, params.multicast && params.aggregation ? access : access / f);
    if (params.aggregation)
      rate = std::min(rate, static_cast<double>(p.sites[d].fpga.throughput_bytes_per_s()) / f);
  }
  return rate;
}

// A member's least own part of its group's round (add_round_parts) without the plan.
double least_own_part_s(const Platform& p, const Routing& r, const std::vector<int>& members,
                        double link_rate, const RunOptions& params) {
  const double last_chunks =
      static_cast<double>(num_chunks(params.gradient_bytes, params.chunk_bytes)) - 1;
  const double line = line_rate_bound(p, members, link_rate, params);
  const double chunk = static_cast<double>(params.chunk_bytes);
  if (params.flow_control != FlowControl::kPacing) return last_chunks * chunk / line;
  double rate = 0;
  std::uint64_t interval_ps = 0;
  pace(params, kInf, line, kInf, kInf, rate, interval_ps);
  std::uint64_t start_delay_ps = 0;
  if (params.aligned_start)
    for (int s : members)
      for (int d : members) start_delay_ps = std::max(start_delay_ps, r.delay_ps(s, d));
  return static_cast<double>(start_delay_ps) * kPs +
         last_chunks * static_cast<double>(interval_ps) * kPs;
}

bool uniform_compute(const Platform& p, const FaultPlan& faults) {
  for (int s = 0; s < static_cast<int>(p.sites.size()); ++s)
    if (p.sites[s].cluster.compute_time_ps != p.sites[0].cluster.compute_time_ps ||
        slowed_compute_ps(faults, p, s) != p.sites[0].cluster.compute_time_ps)
      return false;
  return true;
}
}  // namespace

UnplannedBound::UnplannedBound(const Platform& platform, const Routing& routing,
                               const Schedule& schedule, const RunOptions& params,
                               long stepped_rounds)
    : platform_(platform), routing_(routing), schedule_(schedule), params_(params) {
  valid_ = schedule.collective == Collective::kGroupAverage && !schedule.rounds.empty() &&
           !platform.sites.empty() && uniform_compute(platform, params.faults) &&
           link_loss_rates(platform, params.faults).empty();
  if (!valid_) return;
  // The recurrence's sums with compute, rounded (kBoundRounding), taken back off.
  slack_s_ = kBoundRounding * static_cast<double>(stepped_rounds) *
             static_cast<double>(platform.sites[0].cluster.compute_time_ps) * kPs;
  shares_ = std::make_unique<LinkShares>(platform, routing, params);
}

UnplannedBound::~UnplannedBound() = default;

void UnplannedBound::bound_rounds(long count) {
  for (auto k = static_cast<long>(first_.size()); k < count; ++k) {
    const Round& round = schedule_.rounds[static_cast<std::size_t>(k)];
    first_.push_back(own_s_.size());
    const std::vector<double> link_rate = shares_->of_round(round);
    for (std::size_t g = 0; g < round.groups.size(); ++g) {
      const auto& members = round.groups[g].sites;
      own_s_.push_back(members.size() < 2
                           ? 0.0
                           : least_own_part_s(platform_, routing_, members, link_rate[g], params_));
    }
  }
}

double UnplannedBound::least_parts_s(long rounds) {
  const long p = static_cast<long>(schedule_.rounds.size());
  bound_rounds(std::min(rounds, p));
  std::vector<double> sum(platform_.sites.size(), 0.0);
  if (rounds >= p) {
    if (period_s_.empty()) {
      period_s_.assign(sum.size(), 0.0);
      for (long k = 0; k < p; ++k) {
        const auto& groups = schedule_.rounds[k].groups;
        for (std::size_t g = 0; g < groups.size(); ++g)
          for (int s : groups[g].sites) period_s_[s] += own_s_[first_[k] + g];
      }
    }
    for (std::size_t s = 0; s < sum.size(); ++s)
      sum[s] = static_cast<double>(rounds / p) * period_s_[s];
  }
  for (long k = 0; k < rounds % p; ++k) {
    const auto& groups = schedule_.rounds[k].groups;
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (int s : groups[g].sites) sum[s] += own_s_[first_[k] + g];
  }
  return *std::max_element(sum.begin(), sum.end());
}

double UnplannedBound::as_comm_s(double parts_s) const {
  return std::max(0.0, parts_s * (1 - kBoundRounding) - slack_s_);
}

double UnplannedBound::comm_time_s(long rounds) {
  if (!valid_ || rounds <= 0) return 0;
  return as_comm_s(least_parts_s(rounds));
}

long UnplannedBound::rounds_beyond(double time_s) {
  if (!valid_ || !std::isfinite(time_s)) return -1;
  // Within the first period, round by round; beyond, whole periods, then bisection.
  const long p = static_cast<long>(schedule_.rounds.size());
  std::vector<double> sum(platform_.sites.size(), 0.0);
  double most = 0;
  for (long k = 0; k < p; ++k) {
    bound_rounds(k + 1);
    const auto& groups = schedule_.rounds[k].groups;
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (int s : groups[g].sites) most = std::max(most, sum[s] += own_s_[first_[k] + g]);
    if (as_comm_s(most) > time_s) return k + 1;
  }
  long lo = p, hi = 2 * p;  // comm_time_s(lo) <= time_s < comm_time_s(hi) once found
  while (comm_time_s(hi) <= time_s) {
    if (hi > (1L << 50)) return -1;
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    const long mid = lo + (hi - lo) / 2;
    (comm_time_s(mid) > time_s ? hi : lo) = mid;
  }
  return hi;
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
