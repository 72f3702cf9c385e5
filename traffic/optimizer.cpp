#include "traffic/optimizer.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <tuple>

#include "common/config_error.h"
#include "model/routing.h"
#include "traffic/families.h"
#include "traffic/forest_planner.h"

namespace aggnet {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr long kSteppedRounds = 100000;  // beyond: the time to eps is an upper bound

double cyclic_time(const ScheduleEstimate& t, long rounds) {
  if (rounds < 0 || t.rounds.empty()) return kInf;
  const long p = static_cast<long>(t.rounds.size());
  double period = 0;
  for (const auto& r : t.rounds) period += r.time_s;
  double total = static_cast<double>(rounds / p) * period;
  for (long i = 0; i < rounds % p; ++i) total += t.rounds[i].time_s;
  return total;
}

/// Number of partitions of n sites into n / k groups of k: n! / ((k!)^(n/k) (n/k)!).
double partition_count(int n, int k) {
  return std::exp(std::lgamma(n + 1.0) - (n / k) * std::lgamma(k + 1.0) - std::lgamma(n / k + 1.0));
}

std::string key_of(const Schedule& s) {
  std::string k = s.collective == Collective::kRing ? "R" : "G";
  for (const auto& r : s.rounds) {
    std::vector<std::vector<int>> gs;
    for (const auto& g : r.groups) {
      auto v = g.sites;
      if (s.collective != Collective::kRing) std::sort(v.begin(), v.end());
      gs.push_back(v);
    }
    if (s.collective != Collective::kRing) std::sort(gs.begin(), gs.end());
    k += "|";
    for (const auto& g : gs) {
      k += "(";
      for (int x : g) k += std::to_string(x) + ",";
      k += ")";
    }
  }
  return k;
}
}  // namespace

std::string round_shape(const Round& round, int num_sites) {
  std::map<std::size_t, int, std::greater<>> sizes;
  int used = 0;
  for (const auto& g : round.groups) {
    ++sizes[g.sites.size()];
    used += static_cast<int>(g.sites.size());
  }
  std::string s;
  for (const auto& [size, count] : sizes) {
    if (!s.empty()) s += "+";
    s += count > 1 ? std::to_string(count) + "x" + std::to_string(size) : std::to_string(size);
  }
  if (used < num_sites) s += "+" + std::to_string(num_sites - used) + " out";
  return s;
}

namespace {
bool lossless(const ScheduleEstimate& t) {
  for (const auto& r : t.rounds)
    for (const auto& g : r.groups)
      if (!g.loss_sd.empty()) return false;
  return true;
}

// The staggered-start times to eps of a scored candidate (rounds_to_eps within
// kSteppedRounds), exact or (`bound`) their lower bounds.
void time_to_eps(Candidate& c, const Platform& platform, const RunOptions& run, bool bound) {
  const double compute_s = rounds_compute_s(c.rounds_to_eps, platform, run.faults);
  c.time_bound = bound;
  c.time_to_eps_s =
      bound ? makespan_lower_bound_s(platform, c.schedule, c.timing, run, c.rounds_to_eps)
            : simulate_steps(platform, c.schedule, c.timing, run, c.rounds_to_eps, true).makespan_s;
  c.comm_time_to_eps_s = time_to_eps_without_compute_s(c.time_to_eps_s, compute_s);
  if (!bound) release_pair_terms(c.timing);
}

constexpr long kRoundsUnknown = -2;

// `rounds`: the schedule's rounds_to_eps where already known.
Candidate score(const Platform& platform, const Routing& routing, const Schedule& schedule,
                const std::string& family, const OptimizerOptions& options, bool may_defer,
                long rounds = kRoundsUnknown) {
  const int n = static_cast<int>(platform.sites.size());
  Candidate c;
  c.schedule = schedule;
  c.family = family;
  // c.mixing: not ranked on; complete_candidate gives the shown rows theirs (an eigensolve).
  c.rounds_to_eps = rounds != kRoundsUnknown ? rounds : rounds_to_eps(schedule, n, options.run.eps);
  // A one-way transfer, a reduce-scatter or an all-gather leaves no site the average.
  if (!has_mixing_matrix(schedule.collective)) c.rounds_to_eps = -1;
  // Beyond rounds_to_eps rounds of a longer period only the shown rows' mean round time
  // needs the rest (the sum of the first rounds_to_eps rounds is the same either way).
  const std::size_t period = schedule.rounds.size();
  const bool partial = c.rounds_to_eps >= 0 && c.rounds_to_eps <= kSteppedRounds &&
                       static_cast<std::size_t>(c.rounds_to_eps) < period;
  c.timing = estimate_schedule(platform, routing, schedule, options.run,
                               partial ? static_cast<std::size_t>(c.rounds_to_eps) : period);
  c.period_timed = !partial;
  c.isolated_time_to_eps_s = cyclic_time(c.timing, c.rounds_to_eps);
  if (c.rounds_to_eps < 0) {
    c.time_to_eps_s = c.comm_time_to_eps_s = kInf;
    release_pair_terms(c.timing);
    return c;
  }
  const double compute_s = rounds_compute_s(c.rounds_to_eps, platform, options.run.faults);
  if (c.rounds_to_eps > kSteppedRounds) {  // too long to step through; upper bound
    c.comm_time_to_eps_s = c.isolated_time_to_eps_s;
    c.time_to_eps_s = c.isolated_time_to_eps_s + compute_s;
    release_pair_terms(c.timing);
    return c;
  }
  const bool defer = may_defer && options.exact_rows != SIZE_MAX &&
                     schedule.collective == Collective::kGroupAverage &&
                     static_cast<double>(c.rounds_to_eps) * n > options.deferred_site_steps &&
                     lossless(c.timing);
  time_to_eps(c, platform, options.run, defer);
  return c;
}
}  // namespace

Candidate score_schedule(const Platform& platform, const Routing& routing, const Schedule& schedule,
                         const std::string& family, const OptimizerOptions& options) {
  return score(platform, routing, schedule, family, options, false);
}

void complete_candidate(Candidate& c, const Platform& platform, const Routing& routing,
                        const OptimizerOptions& options) {
  c.mixing.reset();
  if (has_mixing_matrix(c.schedule.collective))
    c.mixing = analyze_mixing(c.schedule, static_cast<int>(platform.sites.size()), false);
  if (c.period_timed) return;
  RunOptions run = options.run;
  if (c.unaligned_estimate) run.general_offsets = false;
  c.timing = estimate_schedule(platform, routing, c.schedule, run);
  release_pair_terms(c.timing);
  c.period_timed = true;
}

void rank_candidates(std::vector<Candidate>& cs) {
  std::stable_sort(cs.begin(), cs.end(), [](const Candidate& a, const Candidate& b) {
    if (a.comm_time_to_eps_s != b.comm_time_to_eps_s)
      return a.comm_time_to_eps_s < b.comm_time_to_eps_s;
    if (a.rounds_to_eps != b.rounds_to_eps) return a.rounds_to_eps < b.rounds_to_eps;
    return a.schedule.name < b.schedule.name;
  });
}

std::vector<int> group_size_ladder(int n, const OptimizerOptions& options) {
  std::set<int> ks;
  const bool every = n <= options.every_group_size_sites;
  for (int k = 2; k < n && (every || k <= 8); ++k) ks.insert(k);
  if (!every) {
    for (int k = 2; k < n; ++k)
      if (n % k == 0) ks.insert(k);
    for (int k = 8; k < n; k = std::max(k + 1, static_cast<int>(std::ceil(1.25 * k)))) ks.insert(k);
  }
  return {ks.begin(), ks.end()};
}

namespace {
// The built-in families, in the order they are scored (the first of equal rounds is kept).
std::vector<std::pair<Schedule, std::string>> builtin_families(const Platform& platform,
                                                               const Routing& routing,
                                                               const OptimizerOptions& options) {
  const int n = static_cast<int>(platform.sites.size());
  std::vector<std::pair<Schedule, std::string>> out;
  auto add = [&out](Schedule s, const char* family) { out.emplace_back(std::move(s), family); };
  add(all_to_all_schedule(platform), "all-to-all");
  if (n == 9) add(triads_schedule(platform), "triads");
  if (n >= 3) add(ring_schedule(platform, routing), "ring");
  add(pairs_schedule(platform), "pairs");
  const std::vector<int> sizes = group_size_ladder(n, options);
  std::vector<Schedule> rotating;
  for (int k : sizes) rotating.push_back(rotating_schedule(platform, k));
  for (const Schedule& s : rotating) add(s, "rotating-k");
  for (std::size_t i = 0; i < sizes.size(); ++i)  // = sequential_schedule, the cover once
    add(sequential_of(rotating[i], sizes[i]), "sequential-k");
  for (int k : {2, 3, 4}) {
    if (k >= n) continue;
    for (int seed = 1; seed <= options.random_seeds; ++seed)
      add(random_schedule(platform, k, seed), "random-k");
  }
  if (sites_by_continent(platform).size() >= 2) {
    add(hierarchical_schedule(platform, routing), "hierarchical");
  }
  return out;
}

// The partitions of n sites into groups of k that search pairs: all of them where they
// are few (9 sites in triples: 280; `exhaustive`), else a random sample (heuristic) for
// k <= 4, else none.
std::vector<Round> partitions_to_pair(int n, int k, const OptimizerOptions& options,
                                      bool& exhaustive) {
  exhaustive = n % k == 0 && n / k >= 2 && partition_count(n, k) <= 400;
  if (exhaustive) return all_partitions(n, k);
  std::vector<Round> parts;
  if (k > 4 || options.sample_partitions <= 0) return parts;
  std::set<std::string> keys;
  for (const auto& r : random_rounds(n, k, 1000 + k, options.sample_partitions)) {
    Schedule one;
    one.rounds = {r};
    if (keys.insert(key_of(one)).second) parts.push_back(r);
  }
  return parts;
}

struct PartitionPair {
  double score;      // estimated time to eps: periods x the two rounds' times
  std::size_t a, b;  // the cheaper round first: the exact average is reached after the second
};

double periods_to_eps(double rho, double eps) {
  return rho < 1e-12 ? 1.0 : std::max(1.0, std::ceil(std::log(eps) / std::log(rho)));
}

bool before(const PartitionPair& x, const PartitionPair& y) {
  return std::tie(x.score, x.a, x.b) < std::tie(y.score, y.a, y.b);
}

// Each sampled partition's round time: exact (estimate_round) once asked for, and a lower
// bound from its members alone before (UnplannedBound after one round; the exact time
// where that bound does not hold).
class PartitionTimes {
 public:
  PartitionTimes(const Platform& platform, const Routing& routing, const std::vector<Round>& parts,
                 const RunOptions& run)
      : platform_(platform),
        routing_(routing),
        parts_(parts),
        run_(run),
        exact_(parts.size(), -1.0) {
    for (std::size_t i = 0; i < parts.size(); ++i) {
      Schedule one;
      one.rounds = {parts[i]};
      UnplannedBound bound(platform, routing, one, run, 0);
      low_.push_back(bound.valid() ? bound.comm_time_s(1) : exact(i));
    }
  }
  double low(std::size_t i) const { return low_[i]; }
  double exact(std::size_t i) {
    if (exact_[i] < 0)
      exact_[i] =
          estimate_round(platform_, routing_, parts_[i], Collective::kGroupAverage, run_).time_s;
    return exact_[i];
  }

 private:
  const Platform& platform_;
  const Routing& routing_;
  const std::vector<Round>& parts_;
  const RunOptions& run_;
  std::vector<double> low_, exact_;
};

// best_pairs over sampled partitions (the exhaustive ones keep its plain search), the same
// pairs by (score, a, b) with far fewer eigensolves and round plans: every pair's score
// bounded below through lower bounds on its rho (periods_to_eps rises with rho) and on its
// rounds' times, then exact rho and times in the order of those bounds until the next
// bound exceeds the `most`-th best exact score.
std::vector<PartitionPair> best_sampled_pairs(const std::vector<Round>& parts, PartitionTimes& t,
                                              int n, double eps, std::size_t most) {
  std::vector<PartitionPair> bounds;  // score: a lower bound
  for (std::size_t a = 0; a < parts.size(); ++a)
    for (std::size_t b = a + 1; b < parts.size(); ++b) {
      const double low = pair_consensus_error_lower_bound(parts[a], parts[b], n);
      if (low >= 1 - 1e-9) continue;  // so is rho
      bounds.push_back({periods_to_eps(low, eps) * (t.low(a) + t.low(b)), a, b});
    }
  std::sort(bounds.begin(), bounds.end(), before);
  std::vector<PartitionPair> best;  // a max-heap of the `most` best exact, by before
  for (const PartitionPair& p : bounds) {
    if (best.size() >= most && (most == 0 || p.score > best.front().score)) break;
    const double rho = pair_consensus_error(parts[p.a], parts[p.b], n);
    if (rho >= 1 - 1e-9) continue;
    best.push_back({periods_to_eps(rho, eps) * (t.exact(p.a) + t.exact(p.b)), p.a, p.b});
    std::push_heap(best.begin(), best.end(), before);
    if (best.size() > most) {
      std::pop_heap(best.begin(), best.end(), before);
      best.pop_back();
    }
  }
  std::sort(best.begin(), best.end(), before);
  for (PartitionPair& p : best)  // the cheaper round first, as best_pairs
    if (t.exact(p.b) < t.exact(p.a)) std::swap(p.a, p.b);
  return best;
}

// The `most` best-scoring pairs of `parts`, best first.
std::vector<PartitionPair> best_pairs(const Platform& platform, const Routing& routing,
                                      const std::vector<Round>& parts, bool exhaustive,
                                      const OptimizerOptions& options, std::size_t most) {
  const int n = static_cast<int>(platform.sites.size());
  if (!exhaustive) {
    PartitionTimes times(platform, routing, parts, options.run);
    return best_sampled_pairs(parts, times, n, options.run.eps, most);
  }
  std::vector<double> t(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    t[i] =
        estimate_round(platform, routing, parts[i], Collective::kGroupAverage, options.run).time_s;
  }
  std::vector<PartitionPair> pairs;
  for (std::size_t a = 0; a < parts.size(); ++a) {
    for (std::size_t b = a + 1; b < parts.size(); ++b) {
      const double rho = pair_consensus_error(parts[a], parts[b], n);
      if (rho >= 1 - 1e-9) continue;
      const double periods =
          rho < 1e-12 ? 1.0 : std::max(1.0, std::ceil(std::log(options.run.eps) / std::log(rho)));
      pairs.push_back({periods * (t[a] + t[b]), t[a] <= t[b] ? a : b, t[a] <= t[b] ? b : a});
    }
  }
  const std::size_t keep = std::min<std::size_t>(pairs.size(), most);
  std::partial_sort(
      pairs.begin(), pairs.begin() + keep, pairs.end(),
      [](const PartitionPair& x, const PartitionPair& y) { return x.score < y.score; });
  pairs.resize(keep);
  return pairs;
}

// A candidate to score: `may_defer` as score's.
struct Pending {
  Schedule schedule;
  std::string family;
  bool may_defer = true;
};

// The exact_rows-th least exact group-average time to eps so far (+inf before that many).
class RowThreshold {
 public:
  explicit RowThreshold(std::size_t rows) : rows_(std::max<std::size_t>(rows, 1)) {}
  void add(const Candidate& c) {
    if (c.schedule.collective != Collective::kGroupAverage || c.time_bound ||
        !std::isfinite(c.comm_time_to_eps_s))
      return;
    least_.push(c.comm_time_to_eps_s);
    if (least_.size() > rows_) least_.pop();
  }
  double time_s() const { return least_.size() < rows_ ? kInf : least_.top(); }

 private:
  std::size_t rows_;
  std::priority_queue<double> least_;  // the rows_ least, greatest on top
};

// A group-average candidate bounded by its UnplannedBound after `rounds` rounds (its
// rounds to eps, or fewer), nothing planned (Candidate::timed).
Candidate unplanned(const Pending& s, long rounds, double comm_time_s, const Platform& platform,
                    const RunOptions& run) {
  Candidate c;
  c.schedule = s.schedule;
  c.family = s.family;
  c.rounds_to_eps = rounds;
  c.time_bound = true;
  c.timed = false;
  c.period_timed = false;
  c.comm_time_to_eps_s = c.isolated_time_to_eps_s = comm_time_s;
  c.time_to_eps_s = comm_time_s + rounds_compute_s(rounds, platform, run.faults);
  return c;
}

// A candidate scored on its group members alone (or its rounds to eps and that), or fully.
Candidate score_or_bound(const Pending& s, const Platform& platform, const Routing& routing,
                         const OptimizerOptions& options, double threshold_s) {
  const int n = static_cast<int>(platform.sites.size());
  const double eps = options.run.eps;
  UnplannedBound bound(platform, routing, s.schedule, options.run, kSteppedRounds);
  if (!bound.valid()) return score(platform, routing, s.schedule, s.family, options, s.may_defer);
  const long beyond = bound.rounds_beyond(threshold_s);
  // Round by round only (powers of the period product cost more than rounds_to_eps).
  const long period = static_cast<long>(s.schedule.rounds.size());
  if (beyond > 0 && beyond <= std::max(4 * period, 64L) &&
      exceeds_rounds_to_eps(s.schedule, n, eps, beyond))
    return unplanned(s, beyond + 1, bound.comm_time_s(beyond + 1), platform, options.run);
  const long rounds = rounds_to_eps(s.schedule, n, eps);
  const double low_s = rounds >= 0 ? bound.comm_time_s(rounds) : 0.0;
  if (low_s > threshold_s) return unplanned(s, rounds, low_s, platform, options.run);
  return score(platform, routing, s.schedule, s.family, options, s.may_defer, rounds);
}

// Group members over one period.
std::size_t period_members(const Schedule& s) {
  std::size_t members = 0;
  for (const auto& r : s.rounds)
    for (const auto& g : r.groups) members += g.sites.size();
  return members;
}

// Every pending candidate scored, in their order. With exact rows (exact_rows set), a
// group-average one whose UnplannedBound exceeds the exact_rows-th best exact time so far
// keeps that bound, nothing planned: it ranks below the rows that must be exact, and
// settle_leading_rows scores it should it rise among them. Candidates go cheapest period
// first, so the threshold falls before the long periods come.
std::vector<Candidate> score_all(const std::vector<Pending>& pending, const Platform& platform,
                                 const Routing& routing, const OptimizerOptions& options) {
  std::vector<Candidate> out(pending.size());
  std::vector<std::size_t> order(pending.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return period_members(pending[a].schedule) < period_members(pending[b].schedule);
  });
  RowThreshold threshold(options.exact_rows);
  for (const std::size_t i : order) {
    const Pending& s = pending[i];
    out[i] = options.exact_rows == SIZE_MAX
                 ? score(platform, routing, s.schedule, s.family, options, s.may_defer)
                 : score_or_bound(s, platform, routing, options, threshold.time_s());
    threshold.add(out[i]);
  }
  return out;
}

// The exact times of every bounded candidate among the leading options.exact_rows rows and
// the leading exact_rows group-average rows, re-ranked until those rows are all exact
// (a bound only rises when made exact, so the rows above every bound stay where they are).
// `score_unplanned` scores a candidate score_all left bounded (Candidate::timed).
void settle_leading_rows(std::vector<Candidate>& cs, const Platform& platform,
                         const OptimizerOptions& options,
                         const std::function<void(Candidate&)>& score_unplanned) {
  for (bool changed = true; changed;) {
    changed = false;
    std::size_t rows = 0, group_rows = 0;
    for (Candidate& c : cs) {
      if (rows >= options.exact_rows && group_rows >= options.exact_rows) break;
      ++rows;
      if (c.schedule.collective == Collective::kGroupAverage) ++group_rows;
      if (!c.time_bound) continue;
      if (c.timed) {
        time_to_eps(c, platform, options.run, false);
      } else {
        score_unplanned(c);
      }
      changed = true;
    }
    if (changed) rank_candidates(cs);
  }
}

// Every candidate scored with `options`.
std::vector<Candidate> search(const Platform& platform, const Routing& routing,
                              const OptimizerOptions& options) {
  const int n = static_cast<int>(platform.sites.size());
  std::vector<Pending> pending;
  std::set<std::string> seen;
  auto add = [&](const Schedule& s, const std::string& family) {
    if (seen.insert(key_of(s)).second) pending.push_back({s, family, true});
  };
  for (const auto& [schedule, family] : builtin_families(platform, routing, options))
    add(schedule, family);
  // In-network reduction (one group of every site, as all-to-all: not deduplicated).
  const std::uint64_t chunk = transaction_bytes(options.run);
  for (const Schedule& s : {reduction_tree_schedule(platform, routing, -1, chunk),
                            reduction_forest_schedule(platform, options.run.gradient_bytes, chunk),
                            reduction_in_trees_schedule(platform, chunk)})
    pending.push_back({s, s.name, false});
  // Pairs of partitions into groups of k.
  for (int k = 2; k < n; ++k) {
    bool exhaustive = false;
    const std::vector<Round> parts = partitions_to_pair(n, k, options, exhaustive);
    if (parts.empty()) continue;
    const std::string family = exhaustive ? "partition-pair" : "sampled-pair";
    const auto pairs = best_pairs(platform, routing, parts, exhaustive, options,
                                  exhaustive ? options.refine : options.refine / 4);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      Schedule s;
      s.name = family + "-k" + std::to_string(k) + "-" + std::to_string(i + 1);
      s.rounds = {parts[pairs[i].a], parts[pairs[i].b]};
      add(s, family);
    }
  }
  std::vector<Candidate> out = score_all(pending, platform, routing, options);
  rank_candidates(out);
  settle_leading_rows(out, platform, options, [&](Candidate& c) {
    c = score(platform, routing, c.schedule, c.family, options, false);
  });
  return out;
}

// The control plane solves the general alignment problem for a multicast group of 4 or
// more with an aligned start and offsets (model/control_plane.cpp, plan_alignment).
bool solves_general_offsets(const RunOptions& run) {
  const bool credit_auto =
      run.flow_control == FlowControl::kCredit && run.alignment == SendAlignment::kAuto;
  return run.multicast && run.aligned_start && run.alignment != SendAlignment::kNone &&
         !credit_auto;
}
}  // namespace

bool screened_search(int num_sites, const OptimizerOptions& options) {
  return solves_general_offsets(options.run) && num_sites > options.exhaustive_alignment_sites;
}

std::vector<Candidate> optimize_schedules(const Platform& platform, const Routing& routing,
                                          const OptimizerOptions& options) {
  if (!screened_search(static_cast<int>(platform.sites.size()), options))
    return search(platform, routing, options);
  OptimizerOptions screening = options;
  screening.run.general_offsets = false;
  std::vector<Candidate> out = search(platform, routing, screening);  // ranked
  const auto best = std::find_if(out.begin(), out.end(), [](const Candidate& c) {
    return c.schedule.collective == Collective::kGroupAverage;
  });
  if (best == out.end() || !std::isfinite(best->comm_time_to_eps_s)) return out;
  const double window = options.alignment_window * best->comm_time_to_eps_s;
  auto align = [&](Candidate& c) {
    if (c.comm_time_to_eps_s <= window) {
      c = score_schedule(platform, routing, c.schedule, c.family, options);
    } else {
      c.unaligned_estimate = std::isfinite(c.comm_time_to_eps_s);  // a bound: beyond too
    }
  };
  for (auto& c : out) {
    // No offsets; an unplanned bound holds with them too, and is settled below if needed.
    if (c.schedule.collective != Collective::kGroupAverage || !c.timed) continue;
    align(c);
  }
  rank_candidates(out);
  settle_leading_rows(out, platform, options, [&](Candidate& c) {
    c = score(platform, routing, c.schedule, c.family, screening, false);
    align(c);
  });
  return out;
}

}  // namespace aggnet
