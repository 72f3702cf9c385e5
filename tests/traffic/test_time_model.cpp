// Analytic time model: closed forms from docs/simulation-semantics.md and the model brief.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "common/units.h"
#include "model/routing.h"
#include "traffic/families.h"
#include "traffic/optimizer.h"
#include "traffic/time_model.h"

namespace aggnet {
namespace {

constexpr double kPs = 1e-12;

Site site(const std::string& code, const std::string& continent = "europe") {
  Site s;
  s.code = s.name = code;
  s.continent = continent;
  return s;
}

LinkSpec link(int a, int b, std::uint64_t delay_ps, std::uint64_t bps = 100'000'000'000) {
  LinkSpec l;
  l.a = a;
  l.b = b;
  l.params.delay_ps = delay_ps;
  l.params.bandwidth_bps = bps;
  return l;
}

double ser(std::uint64_t bytes, std::uint64_t bps) {
  return static_cast<double>(serialization_ps(wire_bytes(bytes, 2048, 80), bps)) * kPs;
}

// One chunk between two sites: access up + WAN hop + pipeline + access down, exactly.
TEST(TimeModel, OneChunkOverOneLinkIsExact) {
  Platform p;
  p.sites = {site("a"), site("b")};
  p.links = {link(0, 1, 10'000'000'000)};  // 10 ms
  const Routing r(p);
  RunOptions rp;
  rp.gradient_bytes = rp.chunk_bytes = 1 << 20;
  const auto est = estimate_round(p, r, Round{{Group{{0, 1}}}}, Collective::kGroupAverage, rp);
  const FpgaParams f;
  const double expected = ser(1 << 20, 400'000'000'000) + 2e-6 + ser(1 << 20, 100'000'000'000) +
                          10e-3 + (1 << 20) / static_cast<double>(f.throughput_bytes_per_s()) +
                          static_cast<double>(f.latency_ps()) * kPs +
                          ser(1 << 20, 400'000'000'000) + 2e-6;
  EXPECT_NEAR(est.groups[0].start_delay_s, 10e-3, 1e-15);  // aligned start: wait one delay
  EXPECT_NEAR(est.time_s, 10e-3 + expected, 1e-11);
  rp.aligned_start = false;
  const auto imm = estimate_round(p, r, Round{{Group{{0, 1}}}}, Collective::kGroupAverage, rp);
  EXPECT_NEAR(imm.time_s, expected, 1e-11);
}

// Paced group rate with buffer B and skew s is (1 - margin) (slots - 1) chunk / hold,
// i.e. within a few percent of B / s when that is below the line rate.
TEST(TimeModel, PacedRateFollowsBufferOverSkew) {
  Platform p;
  p.sites = {site("a"), site("b"), site("c")};
  p.links = {link(0, 1, 5'000'000'000), link(0, 2, 45'000'000'000), link(1, 2, 45'000'000'000)};
  const Routing r(p);
  RunOptions rp;
  rp.buffer_bytes = 64ull << 20;
  rp.alignment = SendAlignment::kNone;  // every member sends at the agreed start
  const auto est = estimate_round(p, r, Round{{Group{{0, 1, 2}}}}, Collective::kGroupAverage, rp);
  const auto& g = est.groups.at(0);
  EXPECT_EQ(g.limit, "buffer");
  const double b_over_s = (64ull << 20) / 40e-3;  // skew at c is 0, at a and b 40 ms
  EXPECT_NEAR(g.rate / b_over_s, 1.0, 0.04);
  EXPECT_LT(g.rate, b_over_s);
  // Time = (N - 1) x interval + max latency.
  EXPECT_NEAR(est.time_s, 45e-3 + 1023 * g.interval_s + g.latency_s, 1e-12);
}

// The same triad with arrival-aligned sends: arms x_a = (5 + 45 - 45) / 2 = 2.5 ms,
// x_b = 2.5 ms, x_c = 42.5 ms, so a and b wait 40 ms, c none; no skew is left, the
// buffer no longer binds, and the round ends 40 ms + the tail after the agreed start.
TEST(TimeModel, AlignedTriadWaitsTheArmDifferencesAndIsNotBufferBound) {
  Platform p;
  p.sites = {site("a"), site("b"), site("c")};
  p.links = {link(0, 1, 5'000'000'000), link(0, 2, 45'000'000'000), link(1, 2, 45'000'000'000)};
  const Routing r(p);
  RunOptions rp;
  rp.buffer_bytes = 64ull << 20;
  rp.alignment = SendAlignment::kArrival;
  const auto est = estimate_round(p, r, Round{{Group{{0, 1, 2}}}}, Collective::kGroupAverage, rp);
  const auto& g = est.groups.at(0);
  EXPECT_EQ(g.alignment, "closed-form");
  EXPECT_EQ(g.skew_max_s, 0.0);
  EXPECT_NEAR(g.unaligned_skew_max_s, 40e-3, 1e-9);
  EXPECT_NEAR(g.waiting_s.at(0), 40e-3, 1e-15);
  EXPECT_NEAR(g.waiting_s.at(1), 40e-3, 1e-15);
  EXPECT_EQ(g.waiting_s.at(2), 0.0);
  EXPECT_NE(g.limit, "buffer");
  // a's stream to c starts at 40 ms and is the last to land: 40 + 45 ms path.
  EXPECT_NEAR(est.time_s, 45e-3 + 40e-3 + 1023 * g.interval_s + g.latency_sd_s[0][2], 1e-12);
}

// With a buffer of at least line rate x skew, the group runs at its link share.
TEST(TimeModel, LargeBufferRunsAtLinkRate) {
  Platform p;
  p.sites = {site("a"), site("b"), site("c")};
  p.links = {link(0, 1, 5'000'000'000), link(0, 2, 45'000'000'000), link(1, 2, 45'000'000'000)};
  const Routing r(p);
  RunOptions rp;
  rp.buffer_bytes = 4ull << 30;
  const auto est = estimate_round(p, r, Round{{Group{{0, 1, 2}}}}, Collective::kGroupAverage, rp);
  const auto& g = est.groups.at(0);
  EXPECT_EQ(g.limit, "link");
  const double payload = (1 << 20) / ser(1 << 20, 100'000'000'000);
  EXPECT_NEAR(g.link_rate, payload, 1e-6 * payload);  // each directed hop: one tree
  EXPECT_NEAR(g.rate, 0.98 * payload, 1e-6 * payload);
}

// A multicast to k receivers behind one trunk: the trunk carries each chunk once, so the
// trunk's share is per tree; without multicast it is per unicast copy.
TEST(TimeModel, MulticastTreeCrossesTrunkOnce) {
  Platform p;
  p.sites = {site("a"), site("h"), site("x"), site("y")};
  p.links = {link(0, 1, 1'000'000'000), link(1, 2, 1'000'000'000), link(1, 3, 1'000'000'000)};
  const Routing r(p);
  RunOptions rp;
  rp.buffer_bytes = 4ull << 30;
  const Round round{{Group{{0, 2, 3}}}};
  const double payload = (1 << 20) / ser(1 << 20, 100'000'000'000);
  // Trunk a -> h carries only a's tree; h -> x carries a's and y's trees.
  auto mc = estimate_round(p, r, round, Collective::kGroupAverage, rp);
  EXPECT_NEAR(mc.groups[0].link_rate, payload / 2, 1e-6 * payload);
  rp.multicast = false;
  // Without multicast h -> x carries a's and y's unicast copies (2), a -> h carries a's 2.
  auto uc = estimate_round(p, r, round, Collective::kGroupAverage, rp);
  EXPECT_NEAR(uc.groups[0].link_rate, payload / 2, 1e-6 * payload);
  rp.multicast = true;
  const Round two{{Group{{0, 2}}, Group{{1, 3}}}};
  // Two groups: a -> h -> x (a's tree) and h -> y (h's tree) share nothing.
  auto tg = estimate_round(p, r, two, Collective::kGroupAverage, rp);
  EXPECT_NEAR(tg.groups[0].link_rate, payload, 1e-6 * payload);
}

// Ring all-reduce on a uniform ring of directly connected sites, one chunk per segment:
// 2(n-1) x (access up + propagation + serialization of G/n + access down).
TEST(TimeModel, RingOnUniformRingMatchesClosedForm) {
  Platform p;
  p.sites = {site("a"), site("b"), site("c")};
  p.links = {link(0, 1, 10'000'000'000), link(1, 2, 10'000'000'000), link(2, 0, 10'000'000'000)};
  const Routing r(p);
  RunOptions rp;
  rp.gradient_bytes = 3 * (1 << 20);
  rp.chunk_bytes = 1 << 20;
  const auto est = estimate_round(p, r, Round{{Group{{0, 1, 2}}}}, Collective::kRing, rp);
  const double step = ser(1 << 20, 400'000'000'000) + 2e-6 + ser(1 << 20, 100'000'000'000) + 10e-3 +
                      ser(1 << 20, 400'000'000'000) + 2e-6;
  EXPECT_NEAR(est.time_s, 4 * step, 1e-11);
}

TEST(TimeModel, CreditModeIsSlowerThanLineRateWithSmallWindows) {
  Platform p;
  p.sites = {site("a"), site("b")};
  p.links = {link(0, 1, 40'000'000'000)};
  const Routing r(p);
  RunOptions rp;
  rp.buffer_bytes = 16ull << 20;
  rp.flow_control = FlowControl::kCredit;
  const auto est = estimate_round(p, r, Round{{Group{{0, 1}}}}, Collective::kGroupAverage, rp);
  EXPECT_EQ(est.groups[0].limit, "credit");
  // Window 16 chunks per round trip of about 80 ms.
  EXPECT_NEAR(est.groups[0].rate, 16.0 * (1 << 20) / 80e-3, 0.02 * 16.0 * (1 << 20) / 80e-3);
}

TEST(TimeModel, StaggeredStepsEqualIsolatedForOneRoundSchedules) {
  Platform p;
  p.sites = {site("a"), site("b"), site("c")};
  p.links = {link(0, 1, 5'000'000'000), link(1, 2, 7'000'000'000)};
  const Routing r(p);
  Schedule s;
  s.rounds = all_to_all_rounds(3);
  RunOptions rp;
  const auto iso = estimate_schedule(p, r, s, rp);
  const auto steps = estimate_step_round_times(p, r, s, rp, 3);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_NEAR(steps[0], iso.mean_round_s, 1e-12);
}

// Communication only (compute left out): a site that sits a round out waits for it, so
// two one-pair rounds on disjoint sites take the sum of the two round times, not the max.
TEST(TimeModel, SitOutSitesWaitForTheRoundWithoutCompute) {
  Platform p;
  p.sites = {site("a"), site("b"), site("c"), site("d")};
  p.links = {link(0, 1, 5'000'000'000), link(1, 2, 5'000'000'000), link(2, 3, 5'000'000'000)};
  const Routing r(p);
  Schedule s;
  s.rounds = {Round{{Group{{0, 1}}}}, Round{{Group{{2, 3}}}}};
  RunOptions rp;
  rp.gradient_bytes = 4 << 20;
  const auto est = estimate_schedule(p, r, s, rp);
  const auto tl = simulate_steps(p, s, est, rp, 2, false);
  EXPECT_NEAR(tl.makespan_s, est.rounds[0].time_s + est.rounds[1].time_s, 1e-12);
}

// makespan_lower_bound_s: each site's compute and own part of its rounds, summed. Exact
// (less its 1e-6 margin) when no member ever waits for a later one: two one-pair rounds on
// disjoint sites, each pair's members with the same history; below the recurrence when
// partners' histories differ (rotating-2 on a path, whose members wait for each other).
TEST(TimeModel, MakespanLowerBoundIsTheRecurrenceWithoutWaits) {
  Platform p;
  p.sites = {site("a"), site("b"), site("c"), site("d")};
  for (auto& s : p.sites) s.cluster.compute_time_ps = 1'000'000'000'000;
  p.links = {link(0, 1, 5'000'000'000), link(1, 2, 9'000'000'000), link(2, 3, 2'000'000'000)};
  const Routing r(p);
  RunOptions rp;
  rp.gradient_bytes = 4 << 20;
  Schedule disjoint;
  disjoint.rounds = {Round{{Group{{0, 1}}}}, Round{{Group{{2, 3}}}}};
  for (long steps : {1L, 2L, 5L}) {
    const auto est = estimate_schedule(p, r, disjoint, rp);
    const double exact = simulate_steps(p, disjoint, est, rp, steps, true).makespan_s;
    const double bound = makespan_lower_bound_s(p, disjoint, est, rp, steps);
    EXPECT_LE(bound, exact);
    EXPECT_NEAR(bound, exact, 2e-6 * exact) << steps;
  }
  Schedule pairs;
  pairs.rounds = rotating_rounds(4, 2);
  const auto est = estimate_schedule(p, r, pairs, rp);
  for (long steps : {1L, 4L, 30L})
    EXPECT_LE(makespan_lower_bound_s(p, pairs, est, rp, steps),
              simulate_steps(p, pairs, est, rp, steps, true).makespan_s)
        << steps;
}

// Deferred recurrences (every long group-average one, here from 0 site-steps on) leave the
// leading rows and the leading group-average rows as the all-exact search ranks them, with
// the same times; every bound left below them is at most its candidate's exact time.
std::string name_of(const Candidate& c) { return c.family + "/" + c.schedule.name; }

// Whether some group of the candidate's timing keeps its per-pair terms (a deferred
// recurrence steps them later; an exact time released them: gigabytes at 1,000 sites).
bool keeps_pair_terms(const Candidate& c) {
  for (const auto& round : c.timing.rounds)
    for (const auto& g : round.groups)
      if (!g.offset_sd_s.empty() || !g.latency_sd_s.empty() || !g.delay_sd_s.empty()) return true;
  return false;
}

TEST(ExactRows, DeferredRecurrencesKeepTheLeadingRows) {
  Platform p;  // 8 sites on a ring of unequal delays, two continents
  for (int i = 0; i < 8; ++i) p.sites.push_back(site("s" + std::to_string(i), i < 4 ? "eu" : "na"));
  for (int i = 0; i < 8; ++i)
    p.links.push_back(link(i, (i + 1) % 8, (1 + i % 3) * 4'000'000'000ull));
  const Routing r(p);
  OptimizerOptions exact;
  exact.run.gradient_bytes = 16 << 20;
  OptimizerOptions lazy = exact;
  lazy.exact_rows = 3;
  lazy.deferred_site_steps = 0;
  const auto all = optimize_schedules(p, r, exact), few = optimize_schedules(p, r, lazy);
  ASSERT_EQ(all.size(), few.size());
  std::map<std::string, double> exact_time;
  for (const auto& c : all) exact_time[name_of(c)] = c.comm_time_to_eps_s;
  std::size_t rows = 0, group_rows = 0, bounds = 0;
  for (std::size_t i = 0; i < few.size(); ++i) {
    const bool group = few[i].schedule.collective == Collective::kGroupAverage;
    if (rows < 3 || group_rows < 3) {
      EXPECT_EQ(name_of(few[i]), name_of(all[i])) << i;
      EXPECT_FALSE(few[i].time_bound) << i;
      EXPECT_EQ(few[i].comm_time_to_eps_s, all[i].comm_time_to_eps_s) << i;
    }
    ++rows;
    group_rows += group;
    EXPECT_FALSE(keeps_pair_terms(all[i])) << name_of(all[i]);
    if (few[i].timed) {
      EXPECT_EQ(keeps_pair_terms(few[i]), few[i].time_bound) << name_of(few[i]);
    }
    if (!few[i].time_bound) continue;
    ++bounds;
    EXPECT_LE(few[i].comm_time_to_eps_s, exact_time.at(name_of(few[i]))) << name_of(few[i]);
  }
  EXPECT_GT(bounds, 10u);
  EXPECT_FALSE(all.front().time_bound);
}

TEST(Optimizer, PicksTheExactPairOfCheapClassesOnAGrid) {
  // 3 continents of 3 sites: tight clusters 1 ms apart, continents 50 ms apart (a ring).
  Platform p;
  const char* cont[3] = {"na", "eu", "as"};
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 3; ++i)
      p.sites.push_back(site(std::string(cont[c]) + char('0' + i), cont[c]));
  for (int c = 0; c < 3; ++c) {
    p.links.push_back(link(3 * c, 3 * c + 1, 1'000'000'000));
    p.links.push_back(link(3 * c + 1, 3 * c + 2, 1'000'000'000));
    p.links.push_back(link(3 * c, 3 * ((c + 1) % 3), 50'000'000'000));
  }
  const Routing r(p);
  OptimizerOptions opt;
  opt.run.buffer_bytes = 64ull << 20;
  const auto cs = optimize_schedules(p, r, opt);
  ASSERT_FALSE(cs.empty());
  for (std::size_t i = 1; i < cs.size(); ++i)
    EXPECT_LE(cs[i - 1].comm_time_to_eps_s, cs[i].comm_time_to_eps_s);
  // Among the candidates that reach the exact average in 2 rounds, the best ranked pairs a
  // "same continent" class with a crossing one. (Without compute the sequential family's
  // 6 one-group rounds may lead the whole ranking: sites that sit a round out run ahead;
  // with compute each of its rounds costs a compute phase, and all-to-all's one round wins.)
  const Candidate* best = nullptr;
  for (const auto& c : cs)
    if (c.schedule.collective == Collective::kGroupAverage && c.rounds_to_eps == 2) {
      best = &c;
      break;
    }
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->rounds_to_eps, 2);
  bool has_local = false;
  for (const auto& round : best->schedule.rounds) {
    bool local = true;
    for (const auto& g : round.groups)
      for (int s : g.sites) local &= p.sites[s].continent == p.sites[g.sites[0]].continent;
    has_local |= local;
  }
  EXPECT_TRUE(has_local);
}

}  // namespace
}  // namespace aggnet

namespace aggnet {
namespace {

// Aligned start: a group's members all send from (latest ready + start delay), so a step's
// round time is the spread of the members' ready times plus the isolated round time.
TEST(TimeModel, AlignedStartAddsTheReadySpread) {
  Platform p;
  p.sites = {site("a"), site("b"), site("c"), site("d")};
  p.links = {link(0, 1, 1'000'000'000), link(1, 2, 30'000'000'000), link(2, 3, 5'000'000'000)};
  const Routing r(p);
  Schedule s;
  // Round 0: {a b} (1 ms apart) finishes before {c d} (5 ms apart); round 1: {a b c}.
  s.rounds = {Round{{Group{{0, 1}}, Group{{2, 3}}}}, Round{{Group{{0, 1, 2}}}}};
  RunOptions rp;
  const auto est = estimate_schedule(p, r, s, rp);
  const auto steps = estimate_step_round_times(p, r, s, rp, 2);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_NEAR(steps[0], est.rounds[0].time_s, 1e-12);
  // Step 1: d sits out; a, b, c are ready when their round-0 group is done (+ compute).
  const double spread = est.rounds[0].groups[1].time_s - est.rounds[0].groups[0].time_s;
  EXPECT_GT(spread, 3e-3);
  EXPECT_NEAR(steps[1], spread + est.rounds[1].time_s, 1e-9);
  EXPECT_NEAR(est.rounds[1].groups[0].start_delay_s, 31e-3, 1e-15);
}

}  // namespace
}  // namespace aggnet
