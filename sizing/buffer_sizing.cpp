#include "sizing/buffer_sizing.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/csv.h"
#include "common/strings.h"
#include "common/temp_dir.h"
#include "common/units.h"
#include "model/control_plane.h"
#include "model/memory_tiers.h"
#include "sweeps/runner.h"

namespace aggnet {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::uint64_t kHugeBuffer = 1ull << 50;  // "no buffer limit" for the control plane

double ps_to_s(double ps) { return ps * 1e-12; }

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// The jitter of every link on the path s -> d: standard deviations (ps).
std::vector<double> path_jitter_ps(const Platform& platform, const Routing& routing, int s, int d) {
  const auto path = routing.path(s, d);
  std::vector<double> out;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    const auto& link = platform.links[routing.link_index(path[i], path[i + 1])].params;
    if (link.jitter_ps > 0) out.push_back(static_cast<double>(link.jitter_ps));
  }
  return out;
}

}  // namespace

double jitter_skew_quantile_ps(const std::vector<std::vector<double>>& sender_link_jitter_ps,
                               double level) {
  constexpr int kSamples = 200'000;
  std::mt19937_64 rng(kJitterQuantileSeed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> skews(kSamples);
  for (double& skew : skews) {
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const auto& links : sender_link_jitter_ps) {
      double extra = 0;  // the sender's path: each link adds |N(0, jitter)|
      for (double sigma : links) extra += sigma * std::abs(normal(rng));
      lo = std::min(lo, extra), hi = std::max(hi, extra);
    }
    skew = sender_link_jitter_ps.empty() ? 0 : hi - lo;
  }
  const auto k =
      static_cast<std::size_t>(std::min<double>(kSamples - 1, std::ceil(level * kSamples) - 1));
  std::nth_element(skews.begin(), skews.begin() + static_cast<std::ptrdiff_t>(k), skews.end());
  return skews[k];
}

namespace {

// Longest chunk path of a group: sender access link, switches and WAN hops (each
// serializing the chunk), the receiver's pipeline and its access link, in ps.
double longest_chunk_path_ps(const Platform& platform, const Routing& routing,
                             const std::vector<int>& members, std::uint64_t chunk) {
  double longest = 0;
  const double fan_in = static_cast<double>(members.size() - 1);
  for (int s : members) {
    const auto up = access_link(platform.sites[s]);
    for (int d : members) {
      if (d == s) continue;
      double t = static_cast<double>(chunk_serialization_ps(up, chunk) + up.delay_ps);
      const auto path = routing.path(s, d);
      for (std::size_t i = 0; i < path.size(); ++i) {
        t += static_cast<double>(platform.sites[path[i]].sw.latency_ps);
        if (i + 1 == path.size()) break;
        const auto& link = platform.links[routing.link_index(path[i], path[i + 1])].params;
        t += static_cast<double>(chunk_serialization_ps(link, chunk) + link.delay_ps);
      }
      const auto& fpga = platform.sites[d].fpga;
      t += fan_in * static_cast<double>(chunk) /
               static_cast<double>(fpga.throughput_bytes_per_s()) * 1e12 +
           static_cast<double>(fpga.latency_ps());
      const auto down = access_link(platform.sites[d]);
      t += static_cast<double>(chunk_serialization_ps(down, chunk) + down.delay_ps);
      longest = std::max(longest, t);
    }
  }
  return longest;
}

// What every group's bound reads: the platform, its routes and the run's options.
struct BoundContext {
  const Platform& platform;
  const Routing& routing;
  const RunOptions& options;
  bool credit = false;
  double margin = 0;  // pacing margin (none with credit)
  double chunk = 0;   // bytes
  double chunks = 0;  // per gradient
  /// Jitter: a run stalls when any receiver's skew, in any epoch of any of its streams,
  /// passes the bound; each (receiver, stream, epoch) is a fresh draw, so a run holds with
  /// kJitterCoverage when each holds with 1 - (1 - kJitterCoverage) / draws (union bound).
  /// Receivers per period times periods; epochs per stream come from its length.
  double jitter_draws = 0;
  double jitter_level(double stream_ps) const {
    const double epochs = std::floor(stream_ps / static_cast<double>(kJitterEpochPs)) + 2;
    return 1 - (1 - kJitterCoverage) / (epochs * jitter_draws);
  }
};

// Receivers per period times the periods the run's steps span (BoundContext::jitter_draws).
double jitter_draws(const Schedule& schedule, const RunOptions& options) {
  double receivers = 0;
  for (const auto& round : schedule.rounds)
    for (const auto& g : round.groups) receivers += g.sites.size() > 1 ? g.sites.size() : 0;
  const double periods =
      std::ceil(static_cast<double>(std::max(options.steps, 1)) /
                static_cast<double>(std::max<std::size_t>(schedule.period(), 1)));
  return receivers * periods;
}

// A group's senders' rate (bytes/s) and the lower rate at which its modelled round time is
// round_s / target.
struct GroupRates {
  double sent = 0, required = 0;
};

GroupRates group_rates(const BoundContext& c, const GroupPlan& group, double target) {
  GroupRates rates;
  rates.sent = unconstrained_stream_bytes_per_s(group, c.margin);
  std::uint64_t offset_max = 0;  // arrival-aligned sends: the longest send offset
  for (const auto& [sender, offsets] : group.send_offset_ps)
    for (const auto& [receiver, offset] : offsets) offset_max = std::max(offset_max, offset);
  const double path_s =
      ps_to_s(longest_chunk_path_ps(c.platform, c.routing, group.members, c.options.chunk_bytes) +
              offset_max);
  const double round_s = (c.chunks - 1) * c.chunk / rates.sent + path_s;
  rates.required = c.chunks > 1 ? (c.chunks - 1) * c.chunk / (round_s / target - path_s) : 0.0;
  rates.required = std::min(rates.required, rates.sent);
  return rates;
}

// How long receiver d holds a slot, and the senders whose arrivals set it.
struct ReceiverHold {
  int early = -1, late = -1;
  std::uint64_t skew_ps = 0;
  double hold_ps = 0;
};

// Arrivals at d with the plan's send offsets: the skew is the residual one.
ReceiverHold receiver_hold(const BoundContext& c, const GroupPlan& group, int d, double sent_rate) {
  ReceiverHold h;
  std::uint64_t lo = std::numeric_limits<std::uint64_t>::max(), hi = 0;
  std::uint64_t back = 0;      // longest delay d -> s (credit return)
  std::uint64_t farthest = 0;  // longest delay s -> d
  for (int s : group.members) {
    if (s == d) continue;
    const auto arrival = group.send_offset_ps.at(s).at(d) +
                         arrival_latency_ps(c.platform, c.routing, s, d, c.options.chunk_bytes);
    if (arrival < lo) lo = arrival, h.early = s;
    if (arrival > hi || h.late < 0) hi = std::max(hi, arrival), h.late = s;
    back = std::max(back, c.routing.delay_ps(d, s));
    farthest = std::max(farthest, c.routing.delay_ps(s, d));
  }
  h.skew_ps = group.skew_ps.at(d);
  const double fan_in = static_cast<double>(group.members.size() - 1);
  const auto& fpga = c.platform.sites[d].fpga;
  const double pipeline_ps =
      static_cast<double>(fpga.latency_ps()) +
      fan_in * c.chunk / static_cast<double>(fpga.throughput_bytes_per_s()) * 1e12;
  if (c.credit) {
    h.hold_ps = static_cast<double>(farthest + back) + pipeline_ps +
                2.0 * static_cast<double>(c.platform.sites[d].cluster.access_delay_ps);
    return h;
  }
  h.hold_ps = static_cast<double>(h.skew_ps) + pipeline_ps;
  if (c.options.jitter) {
    std::vector<std::vector<double>> senders;
    for (int s : group.members)
      if (s != d) senders.push_back(path_jitter_ps(c.platform, c.routing, s, d));
    const double stream_ps = (c.chunks - 1) * c.chunk / sent_rate * 1e12;
    h.hold_ps += jitter_skew_quantile_ps(senders, c.jitter_level(stream_ps));
  }
  return h;
}

// The buffer (bytes) that holds what arrives at `sent` bytes/s for `hold_ps`. Pacing uses
// slots - 1 (one slot of slack); credit uses every slot as a window.
std::uint64_t buffer_for(const BoundContext& c, double sent, double hold_ps) {
  const double buffer_rate = sent / (1.0 - c.margin);
  const double s = std::ceil(buffer_rate * ps_to_s(hold_ps) / c.chunk - 1e-9);
  // Credit: a window of every chunk of the gradient never blocks a sender.
  const auto slots =
      static_cast<std::uint64_t>(std::max(1.0, c.credit ? std::min(s, c.chunks) : s + 1.0));
  return slots * c.options.chunk_bytes;
}

// Keeps the group of round r that needs the most buffer at each of its members.
void bound_group(const BoundContext& c, const GroupPlan& group, int r, double target,
                 std::vector<SiteAnalytic>& out) {
  const GroupRates rates = group_rates(c, group, target);
  for (int d : group.members) {
    const ReceiverHold h = receiver_hold(c, group, d, rates.sent);
    // With jitter the control plane paces as if the skew were the planned one, so below
    // the full rate's slots for the jittered hold the senders outrun the buffer and stall:
    // the bound keeps the full rate.
    const bool stall_free = c.options.jitter && !c.credit;
    const std::uint64_t bytes = buffer_for(c, stall_free ? rates.sent : rates.required, h.hold_ps);
    auto& a = out[d];
    a.access_bytes_per_s = std::max(
        a.access_bytes_per_s,
        aggregation_access_bytes_per_s(static_cast<int>(group.members.size()), rates.sent));
    if (a.in_a_group && bytes <= a.analytic_bytes) continue;
    a.in_a_group = true;
    a.round = r;
    a.group = group.members;
    a.skew_ps = h.skew_ps;
    a.early_sender = h.early;
    a.late_sender = h.late;
    a.hold_ps = static_cast<std::uint64_t>(std::llround(h.hold_ps));
    a.unconstrained_rate_bytes_per_s = rates.sent;
    a.required_rate_bytes_per_s = rates.required;
    a.analytic_bytes = bytes;
    a.full_rate_bytes = buffer_for(c, rates.sent, h.hold_ps);
  }
}

}  // namespace

std::vector<SiteAnalytic> analytic_buffer_bounds(const Platform& platform, const Schedule& schedule,
                                                 const RunOptions& options, double target) {
  if (schedule.collective == Collective::kReductionTree)
    return analytic_tree_bounds(platform, schedule, options);
  const int n = static_cast<int>(platform.sites.size());
  std::vector<SiteAnalytic> out(n);
  for (int i = 0; i < n; ++i) out[i].site = i;
  Platform unconstrained = platform;
  for (auto& site : unconstrained.sites) site.fpga.buffer_bytes = kHugeBuffer;
  // `auto` would skip the offsets where the buffer never binds, as with this huge one;
  // the bound is the one for the small buffer it is looking for, where they pay off.
  RunOptions planned = options;
  if (planned.alignment == SendAlignment::kAuto) planned.alignment = SendAlignment::kArrival;
  const Routing routing(platform, options.link_metric);
  const bool credit = options.flow_control == FlowControl::kCredit;
  const BoundContext c{platform,
                       routing,
                       options,
                       credit,
                       credit ? 0.0 : options.pacing_margin,
                       static_cast<double>(options.chunk_bytes),
                       static_cast<double>(ceil_div(options.gradient_bytes, options.chunk_bytes)),
                       jitter_draws(schedule, options)};
  for (std::size_t r = 0; r < schedule.rounds.size(); ++r) {
    const RoundPlan plan = plan_round(unconstrained, routing, schedule.rounds[r], planned);
    for (const auto& group : plan.groups)
      if (group.members.size() >= 2) bound_group(c, group, static_cast<int>(r), target, out);
  }
  // A round's group holds each chunk of the gradient once: no rate needs more slots.
  const std::uint64_t every_chunk =
      ceil_div(options.gradient_bytes, options.chunk_bytes) * options.chunk_bytes;
  for (auto& a : out) {
    if (!a.in_a_group) a.analytic_bytes = a.full_rate_bytes = options.chunk_bytes;
    a.analytic_bytes = std::min(a.analytic_bytes, every_chunk);
    a.full_rate_bytes = std::min(a.full_rate_bytes, every_chunk);
  }
  return out;
}

namespace {

// What one child simulation measured.
struct Outcome {
  std::vector<std::vector<double>> group_round_time_s;  // [step][group]
  std::vector<double> high_water_bytes;                 // [site]
  double round_time_s_mean = 0;
  double slot_stalls = 0;  // all sites
};

// Worst group over all steps: unconstrained round time / round time (1 = as fast).
double speed_fraction(const Outcome& reference, const Outcome& o) {
  double worst = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < o.group_round_time_s.size(); ++k) {
    for (std::size_t g = 0; g < o.group_round_time_s[k].size(); ++g) {
      const double t = o.group_round_time_s[k][g];
      const double ref = reference.group_round_time_s.at(k).at(g);
      if (t > 0) worst = std::min(worst, ref / t);
    }
  }
  return std::isinf(worst) ? 1.0 : worst;
}

bool meets(double fraction, double target) { return fraction >= target * (1 - 1e-9); }

// With jitter (pacing, drop) a run at another buffer size draws other jitter (a link draws
// when its traffic crosses an epoch's end), so its speed against the reference measures
// the draws as much as the buffer; a size passes when no contribution waited for a slot,
// the buffer's own effect (at that size nothing else slows a group). Reduction trees pace
// at their plan's interval whatever the buffer, so a smaller one only makes their inputs
// wait upstream of the FPGA in memory it does not have: they pass with no stall too.
bool stall_criterion(const SizingRequest& request) {
  if (request.schedule.collective == Collective::kReductionTree) return true;
  return request.options.jitter && request.options.flow_control != FlowControl::kCredit;
}

bool passes(const SizingRequest& request, double fraction, const Outcome& o) {
  return stall_criterion(request) ? o.slot_stalls == 0 : meets(fraction, request.target);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The search's simulations: `aggnet run` children on the sweep runner's pool
// (sweeps::RunPool: at most `workers` at a time, each with the request's timeout, killed
// with this process). Child k writes k.json and k.log in a private temporary directory.
class Simulations {
 public:
  explicit Simulations(const SizingRequest& request)
      : request_(request),
        pool_(request.aggnet_exe, static_cast<std::size_t>(std::max(1, request.workers)),
              request.timeout_ms) {}

  int launched() const { return static_cast<int>(submitted_); }

  /// Simulates each per-site buffer configuration (bytes per site). Errors:
  /// std::runtime_error with the command, why it failed and its output when a child fails
  /// (raised after every running child has ended; the queued ones never start).
  std::vector<Outcome> run(const std::vector<std::vector<std::uint64_t>>& configs) {
    const std::size_t first = submitted_;
    for (const auto& buffers : configs) {
      pool_.submit({args(submitted_, buffers), log_path(submitted_)});
      ++submitted_;
    }
    std::vector<Outcome> outcomes(configs.size());
    std::string failure;
    while (!pool_.idle()) {
      for (const auto& done : pool_.wait_any(Millis(100))) {
        const std::size_t i = done.id - first;
        if (done.end.status == "ok") {
          if (failure.empty()) outcomes[i] = parse(json_path(done.id));
        } else if (failure.empty()) {
          failure = describe_failure(done.id, configs[i], done.end);
          pool_.drop_queued();
        }
      }
    }
    if (!failure.empty()) throw std::runtime_error(failure);
    return outcomes;
  }

 private:
  std::string json_path(std::size_t f) const {
    return (dir_.path() / fmt::format("{}.json", f)).string();
  }
  std::string log_path(std::size_t f) const {
    return (dir_.path() / fmt::format("{}.log", f)).string();
  }

  /// The arguments after `aggnet run`.
  std::vector<std::string> args(std::size_t f, const std::vector<std::uint64_t>& buffers) const {
    std::vector<std::string> a = request_.run_args;
    // One size everywhere: `--buffer`; else one `--set sites.X.fpga.buffer` per site.
    const bool uniform = std::all_of(buffers.begin(), buffers.end(),
                                     [&](std::uint64_t b) { return b == buffers.front(); });
    if (uniform && !buffers.empty()) {
      a.push_back(fmt::format("--buffer={}B", buffers.front()));
    } else {
      for (std::size_t s = 0; s < buffers.size(); ++s)
        a.push_back(fmt::format("--set=sites.{}.fpga.buffer={}B", request_.platform.sites[s].code,
                                buffers[s]));
    }
    a.insert(a.end(), {"--json", json_path(f), "-q", "--no-colocated"});
    return a;
  }

  std::string describe_failure(std::size_t f, const std::vector<std::uint64_t>& buffers,
                               const sweeps::RunEnd& end) const {
    std::string command = request_.aggnet_exe + " run";
    for (const auto& s : args(f, buffers)) command += " " + s;
    return fmt::format("simulation failed ({}): {}\n{}", end.reason, command,
                       read_text(log_path(f)));
  }

  static Outcome parse(const std::string& path) {
    std::ifstream in(path);
    const json report = json::parse(in);
    Outcome o;
    for (const auto& step : report.at("steps")) {
      std::vector<double> groups;
      for (const auto& g : step.at("groups")) groups.push_back(g.at("round_time_s").get<double>());
      o.group_round_time_s.push_back(std::move(groups));
    }
    for (const auto& site : report.at("sites"))
      o.high_water_bytes.push_back(site.at("high_water_bytes").get<double>());
    o.round_time_s_mean = report.at("summary").at("round_time_s_mean").get<double>();
    o.slot_stalls = report.at("summary").at("slot_stalls_total").get<double>();
    return o;
  }

  const SizingRequest& request_;
  TempDir dir_{"aggnet-size-buffers"};  // destroyed after pool_: no child outlives it
  sweeps::RunPool pool_;                // ids = submission order = file numbers
  std::size_t submitted_ = 0;
};

// One bisection over a slot count: `lo` slots miss the target (0: none tried), `hi`
// slots meet it. site < 0: every site gets the size (uniform); else only that site.
struct Search {
  int site = -1;
  std::uint64_t lo = 0, hi = 0, guess = 1;
  Outcome hi_outcome;
  double hi_fraction = 1, lo_fraction = 0;
  int batches = 0;  ///< batches of simulations this search took part in
  bool done() const { return hi <= lo + 1; }
};

// Candidate slot counts for one search in one batch of `points` simulations.
std::vector<std::uint64_t> candidates(const Search& s, int points) {
  std::set<std::uint64_t> c;
  auto add = [&](double v) {
    const auto x = static_cast<std::uint64_t>(std::llround(v));
    if (x > s.lo && x < s.hi) c.insert(x);
  };
  if (s.batches == 0) {
    // First batch: the analytic guess and points around it (+-10 %, +-20 %, ...).
    add(static_cast<double>(s.guess));
    for (int j = 1; static_cast<int>(c.size()) < points && j < 2 * points + 2; ++j) {
      const double f = 0.1 * ((j + 1) / 2) * (j % 2 ? -1 : 1);
      add(static_cast<double>(s.guess) * (1 + f));
    }
  } else if (s.batches == 1 && (s.hi == s.guess || s.lo == s.guess)) {
    // Second batch: the guess is usually within a few slots; gallop away from it
    // (1, 2, 4, ... slots) before bisecting.
    for (std::uint64_t step = 1; static_cast<int>(c.size()) < points && step < s.hi; step *= 2)
      add(s.hi == s.guess ? static_cast<double>(s.hi - step) : static_cast<double>(s.lo + step));
  }
  // k-section of (lo, hi).
  const double span = static_cast<double>(s.hi - s.lo);
  for (int j = 1; static_cast<int>(c.size()) < points && j <= points; ++j)
    add(static_cast<double>(s.lo) + span * j / (points + 1));
  if (c.empty()) add(static_cast<double>(s.lo + (s.hi - s.lo) / 2));
  return {c.begin(), c.end()};
}

// Batches a bisection over (lo, hi] still needs with `points` simulations a batch (each
// batch splits the interval into points + 1 parts).
int batches_left(std::uint64_t lo, std::uint64_t hi, int points) {
  int batches = 0;
  for (double span = static_cast<double>(hi - lo); span > 1; span /= points + 1) ++batches;
  return batches;
}

// One progress line to stderr: simulations done of the estimated total, elapsed time and
// the time left at the mean pace so far.
class Progress {
 public:
  explicit Progress(bool on) : on_(on), start_(std::chrono::steady_clock::now()) {}
  void report(const std::string& phase, int done, int left, const std::string& state) const {
    if (!on_) return;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double eta = done > 0 ? elapsed / done * left : 0;
    std::cerr << fmt::format(
        "size-buffers: {}: {} of about {} simulations, {:.1f} s elapsed, about {:.1f} s left; "
        "{}\n",
        phase, done, done + left, elapsed, eta, state);
  }

 private:
  bool on_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

namespace {

// The analytic bounds into `result`, and the unconstrained size: four times the largest
// full-rate bound, where the buffer rate is well above every other limit (in slots).
std::uint64_t set_analytic(const SizingRequest& request, SizingResult& result) {
  const std::uint64_t chunk = request.options.chunk_bytes;
  const int n = static_cast<int>(request.platform.sites.size());
  const auto analytic =
      analytic_buffer_bounds(request.platform, request.schedule, request.options, request.target);
  result.sites.resize(n);
  std::uint64_t full_max = chunk;
  for (int i = 0; i < n; ++i) {
    result.sites[i].analytic = analytic[i];
    full_max = std::max(full_max, analytic[i].full_rate_bytes);
    if (analytic[i].analytic_bytes > result.uniform_analytic_bytes) {
      result.uniform_analytic_bytes = analytic[i].analytic_bytes;
      result.uniform_analytic_site = i;
    }
  }
  const std::uint64_t unc_slots = 4 * ceil_div(full_max, chunk) + 2;
  result.unconstrained_buffer_bytes = unc_slots * chunk;
  return unc_slots;
}

// The run with the unconstrained size. Judged by stalls, it must have none to bound the
// search from above: the size doubles until it has (reduction trees' later chunks queue
// behind other trees' on shared links, so their first-chunk bound can fall short).
Outcome unconstrained_reference(const SizingRequest& request, Simulations& runner,
                                std::uint64_t& unc_slots, SizingResult& result) {
  const std::size_t n = request.platform.sites.size();
  const std::uint64_t all_chunks =
      ceil_div(request.options.gradient_bytes, request.options.chunk_bytes);
  for (;;) {
    result.unconstrained_buffer_bytes = unc_slots * request.options.chunk_bytes;
    Outcome o = runner.run({std::vector<std::uint64_t>(n, result.unconstrained_buffer_bytes)})[0];
    if (!stall_criterion(request) || request.options.jitter || o.slot_stalls == 0 ||
        unc_slots > n * all_chunks)
      return o;
    unc_slots *= 2;
  }
}

// The uniform search first, then (heterogeneous) one per site, the others unconstrained.
std::vector<Search> initial_searches(const SizingRequest& request, const SizingResult& result,
                                     std::uint64_t unc_slots, const Outcome& reference) {
  const std::uint64_t chunk = request.options.chunk_bytes;
  std::vector<Search> searches;
  Search uniform;
  uniform.hi = unc_slots;
  uniform.hi_outcome = reference;
  uniform.guess = ceil_div(result.uniform_analytic_bytes, chunk);
  searches.push_back(uniform);
  if (!request.heterogeneous) return searches;
  for (std::size_t i = 0; i < result.sites.size(); ++i) {
    Search s = uniform;
    s.site = static_cast<int>(i);
    s.guess = ceil_div(result.sites[i].analytic.analytic_bytes, chunk);
    if (!result.sites[i].analytic.in_a_group) s.hi = 1;  // never aggregates: one slot
    searches.push_back(s);
  }
  return searches;
}

// Runs every search to its end, batch by batch, `request.workers` simulations at a time.
void run_searches(const SizingRequest& request, std::vector<Search>& searches, Simulations& runner,
                  const Progress& progress, const Outcome& reference, std::uint64_t unc_bytes) {
  const std::uint64_t chunk = request.options.chunk_bytes;
  const int n = static_cast<int>(request.platform.sites.size());
  auto config = [&](const Search& s, std::uint64_t slots) {
    std::vector<std::uint64_t> b(n, s.site < 0 ? slots * chunk : unc_bytes);
    if (s.site >= 0) b[s.site] = slots * chunk;
    return b;
  };
  for (int batch = 1;; ++batch) {
    std::vector<std::size_t> active;
    for (std::size_t i = 0; i < searches.size(); ++i)
      if (!searches[i].done()) active.push_back(i);
    if (active.empty()) break;
    const int points = std::max(1, request.workers / static_cast<int>(active.size()));
    std::vector<std::vector<std::uint64_t>> configs;
    std::vector<std::pair<std::size_t, std::uint64_t>> owner;  // search, slots
    for (std::size_t i : active) {
      for (auto slots : candidates(searches[i], points)) {
        configs.push_back(config(searches[i], slots));
        owner.emplace_back(i, slots);
      }
      ++searches[i].batches;
    }
    const auto outcomes = runner.run(configs);
    for (std::size_t k = 0; k < outcomes.size(); ++k) {
      auto& s = searches[owner[k].first];
      const auto slots = owner[k].second;
      const double f = speed_fraction(reference, outcomes[k]);
      if (passes(request, f, outcomes[k])) {
        if (slots < s.hi) s.hi = slots, s.hi_outcome = outcomes[k], s.hi_fraction = f;
      } else if (slots > s.lo) {
        s.lo = slots, s.lo_fraction = f;
      }
    }
    // Non-monotone corner: a miss above a hit. Trust the smallest hit.
    for (auto& s : searches)
      if (s.lo >= s.hi) s.lo = s.hi - 1;
    int left = 0, still_active = 0;
    for (const auto& s : searches) still_active += s.done() ? 0 : 1;
    const int next_points = std::max(1, request.workers / std::max(1, still_active));
    for (const auto& s : searches) left += batches_left(s.lo, s.hi, next_points) * next_points;
    if (request.heterogeneous) left += 2 * std::max(1, request.workers);  // the scaling
    progress.report(fmt::format("batch {}", batch), runner.launched(), left,
                    fmt::format("uniform size in ({}, {}] slots", searches[0].lo, searches[0].hi));
  }
}

// The percentages of one batch of the scaling: the sizes as found and a few modest
// scale-ups first, then a k-section of (lo, hi).
std::vector<std::uint64_t> scale_candidates(bool first, std::uint64_t lo, std::uint64_t hi,
                                            int workers) {
  std::vector<std::uint64_t> percents;
  const int points = std::max(1, workers);
  if (first) {
    for (std::uint64_t x : {100, 103, 106, 110, 115, 125, 150, 200})
      if (x < hi && static_cast<int>(percents.size()) < points) percents.push_back(x);
    return percents;
  }
  for (int j = 1; j <= points; ++j) {
    const std::uint64_t x = lo + (hi - lo) * j / (points + 1);
    if (x > lo && x < hi && (percents.empty() || x != percents.back())) percents.push_back(x);
  }
  if (percents.empty()) percents.push_back(lo + 1);
  return percents;
}

// Each site's size alone (others unconstrained) can miss the target in combination
// (rounds of different groups delay each other's next steps). Scale all of them by the
// smallest whole percentage that meets the target together (k-section), each capped at
// the uniform size: at the percentage where every site reaches its cap the sizes are the
// uniform answer, which meets the target, so the total never exceeds the uniform one.
void scale_heterogeneous(const SizingRequest& request, const std::vector<Search>& searches,
                         Simulations& runner, const Progress& progress, const Outcome& reference,
                         SizingResult& result) {
  const std::uint64_t chunk = request.options.chunk_bytes;
  const int n = static_cast<int>(request.platform.sites.size());
  const Search& u = searches[0];
  result.heterogeneous = true;
  std::vector<std::uint64_t> alone(n);
  for (int i = 0; i < n; ++i) {
    alone[i] = searches[i + 1].hi;
    result.sites[i].heterogeneous_alone_bytes = alone[i] * chunk;
  }
  auto scaled = [&](std::uint64_t percent) {
    std::vector<std::uint64_t> b(n);
    for (int i = 0; i < n; ++i) b[i] = std::min(u.hi, ceil_div(alone[i] * percent, 100)) * chunk;
    return b;
  };
  std::uint64_t lo = 99, hi = 100;
  for (int i = 0; i < n; ++i) hi = std::max(hi, ceil_div(u.hi * 100, alone[i]));
  Outcome best = u.hi_outcome;  // at `hi` every site has the uniform size
  double best_fraction = u.hi_fraction;
  for (bool first = true; hi > lo + 1; first = false) {
    const auto percents = scale_candidates(first, lo, hi, request.workers);
    std::vector<std::vector<std::uint64_t>> configs;
    for (auto x : percents) configs.push_back(scaled(x));
    const auto outcomes = runner.run(configs);
    for (std::size_t k = 0; k < outcomes.size(); ++k) {
      const double f = speed_fraction(reference, outcomes[k]);
      if (!passes(request, f, outcomes[k])) {
        lo = std::max(lo, percents[k]);
      } else if (percents[k] < hi) {
        hi = percents[k], best = outcomes[k], best_fraction = f;
      }
    }
    if (lo >= hi) lo = hi - 1;
    const int points = std::max(1, request.workers);
    progress.report("per-site scaling", runner.launched(), batches_left(lo, hi, points) * points,
                    fmt::format("scale in ({}, {}] %", lo, hi));
  }
  result.heterogeneous_scale_percent = static_cast<int>(hi);
  const auto sizes = scaled(hi);
  result.heterogeneous_speed_fraction = best_fraction;
  result.heterogeneous_meets_target = passes(request, best_fraction, best);
  for (int i = 0; i < n; ++i) {
    result.sites[i].heterogeneous_bytes = sizes[i];
    result.heterogeneous_total_bytes += sizes[i];
    result.sites[i].heterogeneous_high_water_bytes =
        static_cast<std::uint64_t>(best.high_water_bytes.at(i));
  }
}

}  // namespace

SizingResult size_buffers(const SizingRequest& request) {
  const int n = static_cast<int>(request.platform.sites.size());
  const std::uint64_t chunk = request.options.chunk_bytes;
  SizingResult result;
  std::uint64_t unc_slots = set_analytic(request, result);
  Simulations runner(request);
  const Progress progress(request.progress);
  const Outcome reference = unconstrained_reference(request, runner, unc_slots, result);
  result.unconstrained_round_time_s_mean = reference.round_time_s_mean;
  std::vector<Search> searches = initial_searches(request, result, unc_slots, reference);
  run_searches(request, searches, runner, progress, reference, result.unconstrained_buffer_bytes);
  const Search& u = searches[0];
  result.uniform_bytes = u.hi * chunk;
  // With jitter the search saw one seed's draws; the analytic bound covers
  // kJitterCoverage of seeds.
  if (stall_criterion(request) && request.options.jitter) {
    result.uniform_seed_bytes = result.uniform_bytes;
    result.uniform_bytes = std::max(result.uniform_bytes, result.uniform_analytic_bytes);
  }
  result.uniform_round_time_s_mean = u.hi_outcome.round_time_s_mean;
  result.uniform_speed_fraction = u.hi_fraction;
  result.below_speed_fraction = u.lo > 0 ? u.lo_fraction : 0.0;
  for (int i = 0; i < n; ++i) {
    result.sites[i].uniform_high_water_bytes =
        static_cast<std::uint64_t>(u.hi_outcome.high_water_bytes.at(i));
  }
  if (request.heterogeneous)
    scale_heterogeneous(request, searches, runner, progress, reference, result);
  result.simulations = runner.launched();
  return result;
}

namespace {

std::string members_of(const Platform& p, const std::vector<int>& group) {
  std::string s;
  for (int m : group) s += (s.empty() ? "" : " ") + p.sites[m].code;
  return s;
}

// Whole ps as milliseconds without float noise: 14500000000 -> "14.5".
std::string exact_ms(std::uint64_t ps) {
  std::string text = fmt::format("{}.{:09}", ps / 1000000000, ps % 1000000000);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text;
}

std::string code_or_dash(const Platform& p, int site) {
  return site < 0 ? "-" : p.sites[site].code;
}

// The memory tier `bytes` of buffer needs at this site: its groups' streams at their
// unconstrained rates (model/memory_tiers.h).
TierChoice tier_of(const Platform& p, const SiteAnalytic& a, std::uint64_t bytes) {
  return choose_memory_tier(p.memory_tiers, bytes, a.access_bytes_per_s);
}

// "uniform: 9 x HBM, 12.00 USD, 3.10 W": the tiers of one sizing summed over the sites.
std::string tier_summary(const Platform& p, const std::vector<TierChoice>& choices) {
  std::map<std::string, int> count;
  double cost = 0, power = 0;
  for (const auto& c : choices) {
    ++count[tier_name(p.memory_tiers, c)];
    cost += c.cost_usd;
    power += c.power_w;
  }
  std::string names;
  for (const auto& [name, n] : count)
    names += fmt::format("{}{} x {}", names.empty() ? "" : ", ", n, name);
  if (total_of(choices).tier < 0)
    return names + "; memory cost and access power unknown (no tier holds the buffer)";
  return fmt::format("{}; memory {:.2f} USD, access power {:.2f} W", names, cost, power);
}

// The run JSON's memory keys (sim/report.cpp) for a tier choice, one site's or a total_of:
// `prefix` + "memory_tier", ... ("heterogeneous_" for a site's per-site size).
void put_tier(json& o, const std::string& prefix, const Platform& p, const TierChoice& c) {
  o[prefix + "memory_tier"] = tier_name(p.memory_tiers, c);
  o[prefix + "memory_cost_usd"] = c.tier < 0 ? json(nullptr) : json(c.cost_usd);  // no price
  o[prefix + "memory_power_w"] = c.tier < 0 ? json(nullptr) : json(c.power_w);
}

// The uniform answer. With jitter it is the larger of the analytic bound and the size the
// search found stall-free at the run's seed, and the speed and round time are that size's.
std::string uniform_lines(const SizingRequest& request, const SizingResult& r, std::size_t sites) {
  const std::string measured = fmt::format(
      "speed {:.2f}% (one slot less: {:.2f}%), mean round time {}", 100 * r.uniform_speed_fraction,
      100 * r.below_speed_fraction, format_time_ps(r.uniform_round_time_s_mean * 1e12));
  if (r.uniform_seed_bytes == 0)
    return fmt::format("  uniform, simulated        {} per site, total {}; {}",
                       format_bytes(r.uniform_bytes), format_bytes(r.uniform_bytes * sites),
                       measured);
  return fmt::format(
      "  uniform, answer           {} per site, total {}: the larger of the analytic bound "
      "({:.0f} % of seeds) and the size stall-free at seed {}\n"
      "  with jitter, seed {:<7} no slot stall from {} per site; there {} (against the "
      "reference's own jitter draws)",
      format_bytes(r.uniform_bytes), format_bytes(r.uniform_bytes * sites), 100 * kJitterCoverage,
      request.options.seed, request.options.seed, format_bytes(r.uniform_seed_bytes), measured);
}

// One site's entry of sizing_json, its tiers at the uniform and the per-site size.
json site_json(const Platform& p, const SizingResult& r, const SiteSizing& s,
               const TierChoice& uniform, const TierChoice& per_site) {
  const auto& a = s.analytic;
  json o{{"site", p.sites[a.site].code},
         {"in_a_group", a.in_a_group},
         {"round", a.round},
         {"group", json::array()},
         {"skew_ms", static_cast<double>(a.skew_ps) * 1e-9},
         {"skew_early_sender", code_or_dash(p, a.early_sender)},
         {"skew_late_sender", code_or_dash(p, a.late_sender)},
         {"hold_ms", static_cast<double>(a.hold_ps) * 1e-9},
         {"unconstrained_rate_gbps", a.unconstrained_rate_bytes_per_s * 8e-9},
         {"required_rate_gbps", a.required_rate_bytes_per_s * 8e-9},
         {"analytic_bytes", a.analytic_bytes},
         {"full_rate_bytes", a.full_rate_bytes},
         {"simulated_bytes", r.uniform_bytes},
         {"high_water_bytes", s.uniform_high_water_bytes},
         {"memory_access_gbps", a.access_bytes_per_s * 8 / 1e9}};
  put_tier(o, "", p, uniform);
  for (int m : a.group) o["group"].push_back(p.sites[m].code);
  if (r.heterogeneous) {
    o["heterogeneous_bytes"] = s.heterogeneous_bytes;
    o["heterogeneous_alone_bytes"] = s.heterogeneous_alone_bytes;
    o["heterogeneous_high_water_bytes"] = s.heterogeneous_high_water_bytes;
    put_tier(o, "heterogeneous_", p, per_site);
  }
  return o;
}

}  // namespace

std::vector<std::string> run_args_shown(const std::vector<std::string>& run_args) {
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < run_args.size(); ++i) {
    if (run_args[i] == "--platform") {
      ++i;
      continue;
    }
    shown.push_back(run_args[i]);
  }
  return shown;
}

const char* flow_control_word(FlowControl flow_control) {
  switch (flow_control) {
    case FlowControl::kCredit:
      return "credit";
    case FlowControl::kDrop:
      return "drop";
    case FlowControl::kPacing:
      break;
  }
  return "pacing";
}

json sizing_json(const SizingRequest& request, const SizingResult& r) {
  const auto& p = request.platform;
  json sites = json::array();
  std::vector<TierChoice> uniform_tiers, heterogeneous_tiers;
  for (const auto& s : r.sites) {
    uniform_tiers.push_back(tier_of(p, s.analytic, r.uniform_bytes));
    heterogeneous_tiers.push_back(tier_of(p, s.analytic, s.heterogeneous_bytes));
    const json o = site_json(p, r, s, uniform_tiers.back(), heterogeneous_tiers.back());
    sites.push_back(o);
  }
  json out{{"platform", p.name},
           {"platform_file", p.file},
           {"schedule", request.schedule.name},
           {"gradient_bytes", request.options.gradient_bytes},
           {"chunk_bytes", request.options.chunk_bytes},
           {"flow_control", flow_control_word(request.options.flow_control)},
           {"run_options", run_args_shown(request.run_args)},
           {"target", request.target},
           {"simulations", r.simulations},
           {"unconstrained",
            {{"buffer_bytes", r.unconstrained_buffer_bytes},
             {"round_time_s_mean", r.unconstrained_round_time_s_mean}}},
           {"uniform",
            {{"analytic_bytes", r.uniform_analytic_bytes},
             {"analytic_set_by", code_or_dash(p, r.uniform_analytic_site)},
             {"simulated_bytes", r.uniform_bytes},
             {"speed_fraction", r.uniform_speed_fraction},
             {"one_slot_less_speed_fraction", r.below_speed_fraction},
             {"round_time_s_mean", r.uniform_round_time_s_mean},
             {"total_memory_bytes", r.uniform_bytes * p.sites.size()}}},
           {"sites", sites}};
  if (r.uniform_seed_bytes > 0) out["uniform"]["stall_free_at_seed_bytes"] = r.uniform_seed_bytes;
  put_tier(out["uniform"], "", p, total_of(uniform_tiers));
  if (r.heterogeneous) {
    out["heterogeneous"] = {{"total_memory_bytes", r.heterogeneous_total_bytes},
                            {"scale_percent", r.heterogeneous_scale_percent},
                            {"speed_fraction", r.heterogeneous_speed_fraction},
                            {"meets_target", r.heterogeneous_meets_target}};
    put_tier(out["heterogeneous"], "", p, total_of(heterogeneous_tiers));
  }
  return out;
}

std::string sizing_csv(const SizingRequest& request, const SizingResult& r) {
  const auto& p = request.platform;
  CsvWriter csv;
  csv.row({"site",
           "round",
           "group",
           "skew_ms",
           "skew_early_sender",
           "skew_late_sender",
           "hold_ms",
           "unconstrained_rate_gbps",
           "required_rate_gbps",
           "analytic_bytes",
           "full_rate_bytes",
           "simulated_bytes",
           "high_water_bytes",
           "heterogeneous_alone_bytes",
           "heterogeneous_bytes",
           "heterogeneous_high_water_bytes",
           "uniform_tier",
           "uniform_tier_cost_usd",
           "uniform_tier_power_w",
           "heterogeneous_tier"});
  // Empty cells without --heterogeneous.
  auto heterogeneous = [&](std::uint64_t bytes) {
    r.heterogeneous ? csv.field(bytes) : csv.field("");
  };
  for (const auto& s : r.sites) {
    const auto& a = s.analytic;
    csv.field(p.sites[a.site].code).field(a.round).field(members_of(p, a.group));
    csv.field(exact_ms(a.skew_ps));
    csv.field(code_or_dash(p, a.early_sender)).field(code_or_dash(p, a.late_sender));
    csv.field(exact_ms(a.hold_ps));
    csv.field(a.unconstrained_rate_bytes_per_s * 8e-9).field(a.required_rate_bytes_per_s * 8e-9);
    csv.field(a.analytic_bytes).field(a.full_rate_bytes).field(r.uniform_bytes);
    csv.field(s.uniform_high_water_bytes);
    heterogeneous(s.heterogeneous_alone_bytes);
    heterogeneous(s.heterogeneous_bytes);
    heterogeneous(s.heterogeneous_high_water_bytes);
    const TierChoice tier = tier_of(p, a, r.uniform_bytes);
    csv.field(tier_name(p.memory_tiers, tier)).field(tier.cost_usd).field(tier.power_w);
    r.heterogeneous ? csv.field(tier_name(p.memory_tiers, tier_of(p, a, s.heterogeneous_bytes)))
                    : csv.field("");
    csv.end_row();
  }
  return csv.str();
}

namespace {

constexpr const char* kSizingRow =
    "  {:<5} {:>5} {:<{}} {:>10} {:<9} {:>14} {:>11} {:>11}  {:<9}{}";

// One site's row of the table (`gw`: the group column's width).
std::string sizing_row(const Platform& p, const SizingResult& r, const SiteSizing& s,
                       std::size_t gw, const TierChoice& uniform, const TierChoice& per_site) {
  const auto& a = s.analytic;
  const std::string senders =
      a.in_a_group ? code_or_dash(p, a.early_sender) + ">" + code_or_dash(p, a.late_sender) : "-";
  return fmt::format(
      kSizingRow, p.sites[a.site].code, a.in_a_group ? std::to_string(a.round) : "-",
      members_of(p, a.group), gw, format_time_ps(static_cast<double>(a.skew_ps)), senders,
      format_rate(a.unconstrained_rate_bytes_per_s * 8), format_bytes(a.analytic_bytes),
      format_bytes(s.uniform_high_water_bytes), tier_name(p.memory_tiers, uniform),
      r.heterogeneous ? fmt::format("  {:>11}  {:>11}  {}", format_bytes(s.heterogeneous_bytes),
                                    format_bytes(s.heterogeneous_high_water_bytes),
                                    tier_name(p.memory_tiers, per_site))
                      : "");
}

// The notes below the per-site rows.
std::string sizing_legend(bool trees, bool het) {
  std::string text =
      trees ? "  (tree: the tree whose slot the site holds longest; skew: its inputs' arrival "
              "skew, earliest>latest (the site itself or a child);\n   unconstr. rate: the "
              "site's trees' chunk rates; analytic: the slots they hold at once;\n"
            : "  (skew: arrival skew at the site in its binding round, earliest>latest sender;\n"
              "   unconstr. rate: the group's rate without a buffer limit; analytic: the bound "
              "for\n   the target; ";
  text += std::string(trees ? "   " : "") +
          "uniform HW: buffer high-water simulated at the uniform size;\n   tier: the memory "
          "that holds that size at the group's access rate, docs/memory-tiers.md";
  return text +
         (het ? ";\n   per-site: the heterogeneous size; per-site HW: its high-water)" : ")");
}

}  // namespace

std::string sizing_table(const SizingRequest& request, const SizingResult& r) {
  const auto& p = request.platform;
  std::string out;
  auto line = [&out](const std::string& s) { out += s + "\n"; };
  const bool trees = request.schedule.collective == Collective::kReductionTree;
  line(fmt::format(
      "Buffer sizing ({} platform, schedule {}, gradient {}, chunk {}, {}, {})", p.name,
      request.schedule.name, format_bytes(request.options.gradient_bytes),
      format_bytes(request.options.chunk_bytes), flow_control_word(request.options.flow_control),
      trees ? std::string("no slot stall: the trees pace whatever the buffer")
            : fmt::format("target {:.0f}% of the unconstrained speed", 100 * request.target)));
  const bool het = r.heterogeneous;
  std::size_t gw = 21;
  for (const auto& s : r.sites) gw = std::max(gw, members_of(p, s.analytic.group).size());
  line(fmt::format(
      kSizingRow, "site", trees ? "tree" : "round",
      trees ? "members (binding tree)" : "group (binding round)", gw, "skew", "senders",
      "unconstr. rate", "analytic", "uniform HW", "tier",
      het ? fmt::format("  {:>11}  {:>11}  {}", "per-site", "per-site HW", "per-site tier") : ""));
  std::vector<TierChoice> uniform_tiers, heterogeneous_tiers;
  for (const auto& s : r.sites) {
    uniform_tiers.push_back(tier_of(p, s.analytic, r.uniform_bytes));
    heterogeneous_tiers.push_back(tier_of(p, s.analytic, s.heterogeneous_bytes));
    line(sizing_row(p, r, s, gw, uniform_tiers.back(), heterogeneous_tiers.back()));
  }
  line(sizing_legend(trees, het));
  line("");
  line(fmt::format("  unconstrained reference   {} per site, mean round time {}",
                   format_bytes(r.unconstrained_buffer_bytes),
                   format_time_ps(r.unconstrained_round_time_s_mean * 1e12)));
  line(fmt::format("  uniform, analytic         {} per site (set by {}'s skew)",
                   format_bytes(r.uniform_analytic_bytes),
                   code_or_dash(p, r.uniform_analytic_site)));
  line(uniform_lines(request, r, p.sites.size()));
  if (het) {
    line(fmt::format(
        "  heterogeneous, simulated  total {} (each site's size alone x {}%, at most the "
        "uniform size); "
        "speed {:.2f}% ({})",
        format_bytes(r.heterogeneous_total_bytes), r.heterogeneous_scale_percent,
        100 * r.heterogeneous_speed_fraction,
        r.heterogeneous_meets_target ? "meets the target" : "MISSES the target"));
  }
  line(fmt::format("  memory tiers, uniform     {}", tier_summary(p, uniform_tiers)));
  if (het)
    line(fmt::format("  memory tiers, per-site    {}", tier_summary(p, heterogeneous_tiers)));
  // What every simulation ran with besides its buffer (the answer depends on it); the
  // platform is named in the title (its path differs from machine to machine).
  line(fmt::format("  simulations               {}, each aggnet run {} --buffer ...", r.simulations,
                   join(run_args_shown(request.run_args), " ")));
  return out;
}

}  // namespace aggnet
