// The physical bound on hand-computed platforms. Every WAN link runs at 8 Gb/s with a
// 2048-byte MTU and a 48-byte header: 976,562,500 payload bytes/s, so the gradient below
// (976,562,500 B) takes exactly 1 s on one link. Access links are fast (800 Gb/s, 10 ms of
// gradient) unless a test says otherwise; switches add no latency.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/physical_bound.h"

namespace aggnet {
namespace {

constexpr std::uint64_t kOneSecondOfLink = 976'562'500;
constexpr std::uint64_t kMs = 1'000'000'000;

Platform make_platform(int sites, const std::vector<std::tuple<int, int, std::uint64_t>>& links,
                       std::uint64_t access_delay_ps = 0) {
  Platform p;
  for (int i = 0; i < sites; ++i) {
    Site s;
    s.code = std::string(1, static_cast<char>('a' + i));
    s.cluster.access_bandwidth_bps = 800'000'000'000;
    s.cluster.access_delay_ps = access_delay_ps;
    p.sites.push_back(s);
  }
  for (const auto& [a, b, delay_ps] : links) {
    LinkSpec l;
    l.a = a;
    l.b = b;
    l.params.delay_ps = delay_ps;
    l.params.bandwidth_bps = 8'000'000'000;
    l.params.mtu_bytes = 2048;
    l.params.header_bytes = 48;
    p.links.push_back(l);
  }
  return p;
}

// Two sites: the link's 1 s of gradient plus its 10 ms delay.
TEST(PhysicalBound, TwoSitesIsOneLinkOfGradientPlusItsDelay) {
  const auto b = physical_bound(make_platform(2, {{0, 1, 10 * kMs}}), kOneSecondOfLink);
  EXPECT_NEAR(b.bound_s, 1.010, 1e-12);
  EXPECT_EQ(b.binding.kind, BoundTerm::Kind::kCut);
  EXPECT_NEAR(b.path.time_s, 0.010, 1e-15);
}

// Access delays of 1 ms: the first byte leaves a's cluster 1 ms late, the last one reaches
// b's cluster 1 ms after the link: 1.012 s. The access cut alone: 10 ms of gradient on the
// access link, then 1 + 10 + 1 ms to the other cluster: 22 ms.
TEST(PhysicalBound, AccessDelaysAddToTheCut) {
  const auto b = physical_bound(make_platform(2, {{0, 1, 10 * kMs}}, 1 * kMs), kOneSecondOfLink);
  EXPECT_NEAR(b.bound_s, 1.012, 1e-12);
  EXPECT_NEAR(b.path.time_s, 0.012, 1e-15);
}

// A slow access link is the cut: at 1 Gb/s (default MTU 2048 B, header 80 B) the gradient
// takes 8.13 s on b's access link, then 10 ms on the WAN link to a.
TEST(PhysicalBound, ASlowAccessLinkIsTheCut) {
  auto p = make_platform(2, {{0, 1, 10 * kMs}});
  p.sites[1].cluster.access_bandwidth_bps = 1'000'000'000;  // default MTU 2048, header 80
  const double access_payload = 1e9 / 8 * (2048.0 - 80) / 2048;
  const auto b = physical_bound(p, kOneSecondOfLink);
  EXPECT_NEAR(b.bound_s, kOneSecondOfLink / access_payload + 0.010, 1e-9);
  ASSERT_EQ(b.binding.edges.size(), 1u);
  EXPECT_TRUE(b.binding.edges[0] == "b access up" || b.binding.edges[0] == "b access down");
}

// A line a -(10 ms)- b -(20 ms)- c: c needs a's gradient, which crosses a -> b no sooner
// than from 0 and reaches c 30 ms after it crosses: 1.030 s (the cut {a} for a's gradient
// at c, or {a b} for a's at c: one link each). Nearest-pair starts would give 1.020 s
// ({a b} -> {c} over the 20 ms link). The path a -> c is 30 ms.
TEST(PhysicalBound, ThreeSitesOnALine) {
  const auto b =
      physical_bound(make_platform(3, {{0, 1, 10 * kMs}, {1, 2, 20 * kMs}}), kOneSecondOfLink);
  EXPECT_NEAR(b.bound_s, 1.030, 1e-12);
  EXPECT_NEAR(b.path.time_s, 0.030, 1e-15);
  EXPECT_EQ(b.binding.edges.size(), 1u);
  const bool a_to_c = (b.binding.source == 0 && b.binding.destination == 2) ||
                      (b.binding.source == 2 && b.binding.destination == 0);
  EXPECT_TRUE(a_to_c) << b.binding.source << " " << b.binding.destination;
}

// A square a-b 10, b-c 20, c-d 30, d-a 40 ms. The cut {d} for d's gradient at b: both of
// d's links reach b 50 ms after a byte crosses (30 + 20, 40 + 10), so T = 1 s / 2 + 50 ms
// = 0.550 s; every cut of one site or of two neighbours has a pair with two links of 50 ms
// (their farthest pair), no cut does better. {a c} (four links) gives at most 0.315 s. The
// longest shortest path is b -> d: 50 ms.
TEST(PhysicalBound, FourSitesOnASquare) {
  const auto p =
      make_platform(4, {{0, 1, 10 * kMs}, {1, 2, 20 * kMs}, {2, 3, 30 * kMs}, {3, 0, 40 * kMs}});
  const auto b = physical_bound(p, kOneSecondOfLink);
  EXPECT_NEAR(b.bound_s, 0.550, 1e-12);
  EXPECT_NEAR(b.path.time_s, 0.050, 1e-15);
  EXPECT_EQ(b.binding.edges.size(), 2u) << b.binding.describe(p);
}

// Water-filling: a link that starts late joins only if the others have not finished.
TEST(PhysicalBound, CutTimeFillsTheEarliestEdgesFirst) {
  EXPECT_DOUBLE_EQ(cut_time_s({{1.0, 0.0}}, 2.0), 2.0);
  EXPECT_DOUBLE_EQ(cut_time_s({{1.0, 0.0}, {1.0, 5.0}}, 2.0), 2.0);  // done before 5
  EXPECT_DOUBLE_EQ(cut_time_s({{1.0, 0.0}, {1.0, 1.0}}, 3.0), 2.0);  // 2 + 1
  EXPECT_DOUBLE_EQ(cut_time_s({{1.0, 1.0}, {1.0, 0.0}}, 3.0), 2.0);  // order given
}

// The three methods agree where each is exact for these platforms (the binding cut keeps
// each site with its switch), and all-cuts is never below the others.
TEST(PhysicalBound, MethodsAgreeOnSitePlatforms) {
  const auto p = make_platform(5, {{0, 1, 10 * kMs},
                                   {1, 2, 20 * kMs},
                                   {2, 3, 30 * kMs},
                                   {3, 4, 5 * kMs},
                                   {4, 0, 7 * kMs},
                                   {1, 3, 50 * kMs}});
  for (std::uint64_t g : {kOneSecondOfLink, kOneSecondOfLink / 1000}) {
    const double all = physical_bound(p, g, BoundMethod::kAllCuts).bound_s;
    const double site = physical_bound(p, g, BoundMethod::kSiteCuts).bound_s;
    const double flow = physical_bound(p, g, BoundMethod::kMaxFlowCuts).bound_s;
    EXPECT_GE(all, site);
    EXPECT_GE(all, flow);
    EXPECT_NEAR(all, site, 1e-12) << g;
  }
}

// The max-flow cut of a platform with one weak link finds it.
TEST(PhysicalBound, MaxFlowFindsTheBottleneck) {
  // Two triangles joined by one 10 ms link.
  const auto p = make_platform(6, {{0, 1, kMs},
                                   {1, 2, kMs},
                                   {2, 0, kMs},
                                   {3, 4, kMs},
                                   {4, 5, kMs},
                                   {5, 3, kMs},
                                   {2, 3, 10 * kMs}});
  // Site 0's gradient at site 4: 1 ms to the bridge, 10 ms over it, 1 ms beyond.
  const auto b = physical_bound(p, kOneSecondOfLink, BoundMethod::kMaxFlowCuts);
  EXPECT_NEAR(b.bound_s, 1.012, 1e-12);
  EXPECT_EQ(b.binding.edges.size(), 1u);
  EXPECT_NEAR(physical_bound(p, kOneSecondOfLink).bound_s, b.bound_s, 1e-12);
}

// Equal links: a line of three packs one tree (2 links / 2 parts less one), a triangle
// 1.5 (3 / 2, the singletons), a square 4/3, two triangles joined by one link 1 (the
// bridge alone separates two parts).
TEST(PhysicalBound, ForestRateIsTheNashWilliamsPartitionMinimum) {
  const double r = kOneSecondOfLink;  // payload bytes/s of one link
  EXPECT_NEAR(forest_rate_bytes_per_s(make_platform(3, {{0, 1, kMs}, {1, 2, kMs}})), r, 1e-3);
  EXPECT_NEAR(forest_rate_bytes_per_s(make_platform(3, {{0, 1, kMs}, {1, 2, kMs}, {2, 0, kMs}})),
              1.5 * r, 1e-3);
  EXPECT_NEAR(forest_rate_bytes_per_s(
                  make_platform(4, {{0, 1, kMs}, {1, 2, kMs}, {2, 3, kMs}, {3, 0, kMs}})),
              4.0 / 3 * r, 1e-3);
  std::vector<int> parts;
  const auto bridged = make_platform(
      6,
      {{0, 1, kMs}, {1, 2, kMs}, {2, 0, kMs}, {3, 4, kMs}, {4, 5, kMs}, {5, 3, kMs}, {2, 3, kMs}});
  EXPECT_NEAR(forest_rate_bytes_per_s(bridged, &parts), r, 1e-3);
  EXPECT_EQ(parts, (std::vector<int>{0, 0, 0, 1, 1, 1}));
}

// Summing only at the receiving edge, a line a -(10 ms)- b -(20 ms)- c: the cut {a b}
// carries a's and b's gradients apart over b -> c, from 20 ms (b's own, at b's switch at
// once): 2 s + 20 ms. {b c} -> a: 2 s + 10 ms; {a c} -> b: 2 G over two links starting at 10
// and 20 ms, (2 + 0.03) / 2 = 1.015 s; one-site cuts at most 1.030 s. Twice the gradient
// of the physical bound's 1.030 s.
TEST(EdgeSummationBound, ThreeSitesOnALineCarryTwoGradientsOverTheBusierLink) {
  const auto p = make_platform(3, {{0, 1, 10 * kMs}, {1, 2, 20 * kMs}});
  const auto b = edge_summation_bound(p, kOneSecondOfLink);
  EXPECT_NEAR(b.bound_s, 2.020, 1e-12);
  EXPECT_EQ(b.binding.sites, (std::vector<int>{0, 1}));
  EXPECT_EQ(b.binding.destination, 2);
  EXPECT_EQ(b.binding.edges, (std::vector<std::string>{"b->c"}));
  EXPECT_NEAR(b.path.time_s, 0.030, 1e-15);
}

// The square of FourSitesOnASquare: {a b c} -> d carries 3 G over c -> d (from 30 ms) and
// a -> d (from 40 ms): (3 + 0.03 + 0.04) / 2 = 1.535 s. The other three-site cuts: 1.525,
// 1.515 and 1.525 s; two-site cuts 2 G over two links, at most 1.045 s.
TEST(EdgeSummationBound, FourSitesOnASquare) {
  const auto p =
      make_platform(4, {{0, 1, 10 * kMs}, {1, 2, 20 * kMs}, {2, 3, 30 * kMs}, {3, 0, 40 * kMs}});
  const auto b = edge_summation_bound(p, kOneSecondOfLink);
  EXPECT_NEAR(b.bound_s, 1.535, 1e-12);
  EXPECT_EQ(b.binding.sites, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(b.binding.destination, 3);
  EXPECT_GE(b.bound_s, physical_bound(p, kOneSecondOfLink).bound_s);
}

// A slow access link binds every plan, these too: b's gradient takes 8.13 s up its 1 Gb/s
// access link (ASlowAccessLinkIsTheCut), where the WAN's cuts take 1.010 s.
TEST(EdgeSummationBound, IsNeverBelowThePhysicalBound) {
  auto p = make_platform(2, {{0, 1, 10 * kMs}});
  p.sites[1].cluster.access_bandwidth_bps = 1'000'000'000;
  const double access_payload = 1e9 / 8 * (2048.0 - 80) / 2048;
  const auto b = edge_summation_bound(p, kOneSecondOfLink);
  EXPECT_NEAR(b.bound_s, kOneSecondOfLink / access_payload + 0.010, 1e-9);
  ASSERT_EQ(b.binding.edges.size(), 1u);
  EXPECT_TRUE(b.binding.edges[0] == "b access up" || b.binding.edges[0] == "b access down");
  EXPECT_EQ(b.bound_s, physical_bound(p, kOneSecondOfLink).bound_s);
}

TEST(EdgeSummationBound, RefusesOneSiteAndNoGradient) {
  EXPECT_THROW(edge_summation_bound(make_platform(1, {}), 1), std::invalid_argument);
  EXPECT_THROW(edge_summation_bound(make_platform(2, {{0, 1, kMs}}), 0), std::invalid_argument);
}

TEST(PhysicalBound, RefusesOneSiteAndNoGradient) {
  EXPECT_THROW(physical_bound(make_platform(1, {}), 1), std::invalid_argument);
  EXPECT_THROW(physical_bound(make_platform(2, {{0, 1, kMs}}), 0), std::invalid_argument);
}

}  // namespace
}  // namespace aggnet
