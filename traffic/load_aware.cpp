// Load-aware routing: a local search on the link metrics (traffic/load_aware.h).
#include "traffic/load_aware.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "model/platform.h"
#include "model/routing.h"
#include "traffic/time_model.h"

namespace aggnet {
namespace {

constexpr int kBusiest = 3;         // links whose metric is raised per iteration
constexpr int kMaxIterations = 24;  // bounds the search (each: ~2 x links evaluations)

using Loads = std::vector<std::array<int, 2>>;

// Adds the streams of one round to `loads` (per link and direction).
void add_round(const Platform& platform, const Routing& routing, const Round& round, bool multicast,
               Loads& loads) {
  auto add = [&](int u, int v) {
    const int link = routing.link_index(u, v);
    ++loads[static_cast<std::size_t>(link)][platform.links[link].a == u ? 0 : 1];
  };
  for (const Group& g : round.groups) {
    for (int s : g.sites) {
      std::vector<int> receivers;
      for (int d : g.sites)
        if (d != s) receivers.push_back(d);
      if (multicast) {
        for (const auto& [u, v] : routing.multicast_tree(s, receivers)) add(u, v);
      } else {
        for (int d : receivers) routing.for_each_hop_reversed(s, d, add);
      }
    }
  }
}

int most(const Loads& loads) {
  int m = 0;
  for (const auto& l : loads) m = std::max({m, l[0], l[1]});
  return m;
}

double squared_load(const Loads& loads) {
  double sum = 0;
  for (const auto& l : loads) sum += double(l[0]) * l[0] + double(l[1]) * l[1];
  return sum;
}

// A candidate's score: (analytic mean round time, squared period load), lower is better.
struct Score {
  double time_s = 0;
  double squared = 0;
  bool operator<(const Score& o) const {
    return std::tie(time_s, squared) < std::tie(o.time_s, o.squared);
  }
};

class Search {
 public:
  Search(const Platform& platform, const Schedule& schedule, const RunOptions& options)
      : platform_(platform), schedule_(schedule), options_(options) {}

  Score score(const std::vector<std::uint64_t>& metric) {
    ++evaluations;
    const Routing routing(platform_, metric);
    return {estimate_schedule(platform_, routing, schedule_, options_).mean_round_s,
            squared_load(link_stream_loads(platform_, routing, schedule_, options_.multicast))};
  }

  // The links by their busiest round's load in either direction, most loaded first.
  std::vector<int> by_round_load(const std::vector<std::uint64_t>& metric) const {
    const Routing routing(platform_, metric);
    std::vector<int> load(platform_.links.size(), 0);
    for (const Round& round : schedule_.rounds) {
      Loads loads(platform_.links.size(), {0, 0});
      add_round(platform_, routing, round, options_.multicast, loads);
      for (std::size_t i = 0; i < loads.size(); ++i)
        load[i] = std::max({load[i], loads[i][0], loads[i][1]});
    }
    std::vector<int> order(load.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return load[x] > load[y]; });
    return order;
  }

  // One step: the best neighbour of `metric`, if it beats `current`.
  bool step(std::vector<std::uint64_t>& metric, Score& current) {
    const std::vector<int> order = by_round_load(metric);
    std::vector<std::uint64_t> best_metric;
    Score best = current;
    auto consider = [&](std::vector<std::uint64_t> candidate) {
      const Score s = score(candidate);
      if (s < best) {
        best = s;
        best_metric = std::move(candidate);
      }
    };
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto link = static_cast<std::size_t>(order[k]);
      const bool busy = k < static_cast<std::size_t>(kBusiest);
      for (std::uint64_t factor : {2u, 4u}) {
        std::vector<std::uint64_t> candidate = metric;
        candidate[link] = busy ? candidate[link] * factor : candidate[link] / factor;
        if (candidate[link] != metric[link]) consider(std::move(candidate));
        if (!busy) break;  // halving only
      }
    }
    if (best_metric.empty()) return false;
    metric = std::move(best_metric);
    current = best;
    return true;
  }

  int evaluations = 0;

 private:
  const Platform& platform_;
  const Schedule& schedule_;
  RunOptions options_;
};

}  // namespace

Loads link_stream_loads(const Platform& platform, const Routing& routing, const Schedule& schedule,
                        bool multicast) {
  Loads loads(platform.links.size(), {0, 0});
  for (const Round& round : schedule.rounds) add_round(platform, routing, round, multicast, loads);
  return loads;
}

int busiest_round_load(const Platform& platform, const Routing& routing, const Schedule& schedule,
                       bool multicast) {
  int m = 0;
  for (const Round& round : schedule.rounds) {
    Loads loads(platform.links.size(), {0, 0});
    add_round(platform, routing, round, multicast, loads);
    m = std::max(m, most(loads));
  }
  return m;
}

LoadAwarePlan plan_load_aware_routing(const Platform& platform, const Schedule& schedule,
                                      const RunOptions& options) {
  if (schedule.collective != Collective::kGroupAverage)
    throw std::invalid_argument("load-aware routing: expected a group-average schedule");
  LoadAwarePlan plan;
  for (const LinkSpec& l : platform.links) plan.link_metric.push_back(l.params.delay_ps);
  Search search(platform, schedule, options);
  Score current = search.score(plan.link_metric);
  for (int i = 0; i < kMaxIterations && search.step(plan.link_metric, current); ++i) {
  }
  plan.evaluations = search.evaluations;
  const Routing before(platform);
  const Routing after(platform, plan.link_metric);
  plan.time_before_s = estimate_schedule(platform, before, schedule, options).mean_round_s;
  plan.time_after_s = current.time_s;
  const bool mc = options.multicast;
  plan.busiest_round_load_before = busiest_round_load(platform, before, schedule, mc);
  plan.busiest_round_load_after = busiest_round_load(platform, after, schedule, mc);
  plan.busiest_period_load_before = most(link_stream_loads(platform, before, schedule, mc));
  plan.busiest_period_load_after = most(link_stream_loads(platform, after, schedule, mc));
  return plan;
}

}  // namespace aggnet
