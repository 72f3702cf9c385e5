// Loading the shipped platforms, --set overrides and routing, against values computed
// by hand from /work/shared/data (links_wan.csv: delay = RTT / 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>

#include "config/platform_loader.h"
#include "model/routing.h"
#include "tests/config/temp_files.h"

namespace aggnet {
namespace {

const std::string kNineCity = std::string(AGGNET_SOURCE_DIR) + "/platforms/nine_city.yaml";
const std::string kFullMesh =
    std::string(AGGNET_SOURCE_DIR) + "/platforms/nine_city_full_mesh.yaml";

constexpr std::uint64_t kMs = 1'000'000'000ull;  // ps per ms
constexpr std::uint64_t kUs = 1'000'000ull;

const LinkSpec& find_link(const Platform& p, const std::string& a, const std::string& b) {
  const int ia = p.site_index(a), ib = p.site_index(b);
  for (const auto& l : p.links) {
    if ((l.a == ia && l.b == ib) || (l.a == ib && l.b == ia)) return l;
  }
  throw std::runtime_error("no link " + a + "-" + b);
}

std::vector<std::string> codes(const Platform& p, const std::vector<int>& idx) {
  std::vector<std::string> out;
  for (int i : idx) out.push_back(p.sites[i].code);
  return out;
}

TEST(NineCity, SitesAndLinks) {
  const Platform p = load_platform(kNineCity);
  EXPECT_EQ(p.name, "nine_city");
  EXPECT_EQ(p.file, kNineCity);
  ASSERT_EQ(p.sites.size(), 9u);
  EXPECT_EQ(p.links.size(), 12u);
  const std::vector<std::string> expected = {"nyc", "chi", "lax", "lon", "ams",
                                             "fra", "tyo", "sin", "bom"};
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(p.sites[i].code, expected[i]);
  const Site& lon = p.sites[p.site_index("lon")];
  EXPECT_EQ(lon.name, "London");
  EXPECT_EQ(lon.continent, "europe");
  EXPECT_DOUBLE_EQ(lon.lat_deg, 51.514);
  EXPECT_DOUBLE_EQ(p.sites[p.site_index("nyc")].lng_deg, -74.07203);
  EXPECT_EQ(p.site_index("xyz"), -1);
}

TEST(NineCity, LinkDelaysAreHalfTheRtt) {
  const Platform p = load_platform(kNineCity);
  // nyc-lon RTT 66.93 ms -> 33.465 ms exactly; jitter 1.17 ms -> 0.585 ms.
  const LinkSpec& nl = find_link(p, "lon", "nyc");
  EXPECT_EQ(nl.params.delay_ps, 33'465'000'000ull);
  EXPECT_EQ(nl.params.jitter_ps, 585'000'000ull);
  EXPECT_NE(nl.source.find("DoubleZero"), std::string::npos);
  // ams-lon RTT 5.76 -> 2.88 ms; bom-lon RTT 150.5 -> 75.25 ms (Azure, no jitter).
  EXPECT_EQ(find_link(p, "ams", "lon").params.delay_ps, 2'880'000'000ull);
  EXPECT_EQ(find_link(p, "bom", "lon").params.delay_ps, 75'250'000'000ull);
  EXPECT_EQ(find_link(p, "bom", "lon").params.jitter_ps, 0ull);
  EXPECT_NE(find_link(p, "bom", "lon").source.find("Azure"), std::string::npos);
  for (const auto& l : p.links) {
    EXPECT_EQ(l.params.bandwidth_bps, 100'000'000'000ull);
    EXPECT_EQ(l.params.mtu_bytes, 2048ull);
    EXPECT_EQ(l.params.header_bytes, 80ull);
  }
}

TEST(NineCity, DefaultsMatchTheModuleStructs) {
  const Platform p = load_platform(kNineCity);
  const FpgaParams f;
  const ClusterParams c;
  for (const Site& s : p.sites) {
    EXPECT_EQ(s.fpga.buffer_bytes, 64ull << 20);
    EXPECT_EQ(s.fpga.buffer_bytes, f.buffer_bytes);
    EXPECT_EQ(s.fpga.datapath_width_bits, f.datapath_width_bits);
    EXPECT_EQ(s.fpga.clock_hz, f.clock_hz);
    EXPECT_EQ(s.fpga.latency_cycles, f.latency_cycles);
    EXPECT_EQ(s.cluster.compute_time_ps, c.compute_time_ps);
    EXPECT_EQ(s.cluster.access_bandwidth_bps, c.access_bandwidth_bps);
    EXPECT_EQ(s.cluster.access_delay_ps, c.access_delay_ps);
    EXPECT_EQ(s.sw.latency_ps, 0ull);
  }
  EXPECT_EQ(p.colocated.link.delay_ps, 2 * kUs);
  EXPECT_EQ(p.colocated.link.bandwidth_bps, 400'000'000'000ull);
}

TEST(NineCity, ShortestDelayRouting) {
  const Platform p = load_platform(kNineCity);
  const Routing r(p);
  ASSERT_EQ(r.num_sites(), 9);
  auto id = [&](const char* c) { return p.site_index(c); };
  // lon->tyo: lon-sin-tyo 76.27 + 33.6 = 109.87 ms beats lon-nyc-lax-tyo
  // 33.465 + 34.855 + 49.355 = 117.675 and lon-bom-sin-tyo 75.25 + 29.25 + 33.6 = 138.1.
  EXPECT_EQ(r.delay_ps(id("lon"), id("tyo")), 109'870'000'000ull);
  EXPECT_EQ(codes(p, r.path(id("lon"), id("tyo"))),
            (std::vector<std::string>{"lon", "sin", "tyo"}));
  EXPECT_EQ(r.next_hop(id("lon"), id("tyo")), id("sin"));
  // nyc->fra: nyc-lon-fra 33.465 + 5.545 = 39.01 ms (via ams: 43.345).
  EXPECT_EQ(r.delay_ps(id("nyc"), id("fra")), 39'010'000'000ull);
  EXPECT_EQ(codes(p, r.path(id("nyc"), id("fra"))),
            (std::vector<std::string>{"nyc", "lon", "fra"}));
  // chi->bom: chi-nyc-lon-bom 12.5 + 33.465 + 75.25 = 121.215 ms
  // (chi-lax-tyo-sin-bom 27 + 49.355 + 33.6 + 29.25 = 139.205).
  EXPECT_EQ(r.delay_ps(id("chi"), id("bom")), 121'215'000'000ull);
  EXPECT_EQ(codes(p, r.path(id("chi"), id("bom"))),
            (std::vector<std::string>{"chi", "nyc", "lon", "bom"}));
  // lax->bom: lax-tyo-sin-bom 49.355 + 33.6 + 29.25 = 112.205 ms (via nyc-lon: 143.57).
  EXPECT_EQ(r.delay_ps(id("lax"), id("bom")), 112'205'000'000ull);
  // ams->fra: direct 7 ms beats ams-lon-fra 2.88 + 5.545 = 8.425 ms.
  EXPECT_EQ(r.delay_ps(id("ams"), id("fra")), 7 * kMs);
  EXPECT_EQ(r.path(id("ams"), id("fra")).size(), 2u);
  EXPECT_EQ(r.delay_ps(id("lon"), id("lon")), 0ull);
  EXPECT_EQ(r.path(id("lon"), id("lon")), std::vector<int>{id("lon")});
  EXPECT_EQ(r.next_hop(id("lon"), id("lon")), id("lon"));
  for (int s = 0; s < 9; ++s) {
    for (int d = 0; d < 9; ++d) EXPECT_EQ(r.delay_ps(s, d), r.delay_ps(d, s));
  }
}

TEST(NineCity, LinkIndex) {
  const Platform p = load_platform(kNineCity);
  const Routing r(p);
  const int lon = p.site_index("lon"), nyc = p.site_index("nyc"), tyo = p.site_index("tyo");
  EXPECT_EQ(r.link_index(nyc, lon), 0);  // first link in the file
  EXPECT_EQ(r.link_index(lon, nyc), 0);
  EXPECT_EQ(r.link_index(lon, tyo), -1);
}

// One receiver's tree is its routed path, hop by hop from the source (Routing::path); a
// tree to it and to the source itself (no hop) is the same.
TEST(NineCity, OneReceiversTreeIsItsPathFromTheSource) {
  const Platform p = load_platform(kNineCity);
  const Routing r(p);
  int multi_hop = 0;
  for (int s = 0; s < 9; ++s) {
    for (int d = 0; d < 9; ++d) {
      if (d == s) continue;
      const std::vector<int> path = r.path(s, d);
      std::vector<std::pair<int, int>> expected;
      for (std::size_t i = 0; i + 1 < path.size(); ++i) expected.emplace_back(path[i], path[i + 1]);
      EXPECT_EQ(r.multicast_tree(s, {d}), expected) << s << " -> " << d;
      EXPECT_EQ(r.multicast_tree(s, {s, d}), expected) << s << " -> " << d;
      multi_hop += expected.size() >= 2;
    }
  }
  EXPECT_GE(multi_hop, 10);  // paths of two or more hops, whose order matters
}

// walk_back goes along the routed path from its end, each hop with its link, and stops
// where the callback says.
TEST(NineCity, WalkBackIsThePathReversed) {
  const Platform p = load_platform(kNineCity);
  const Routing r(p);
  for (int s = 0; s < 9; ++s)
    for (int d = 0; d < 9; ++d) {
      const std::vector<int> path = r.path(s, d);
      std::vector<std::tuple<int, int, int>> expected, walked, first;
      for (std::size_t i = path.size() - 1; i >= 1; --i)
        expected.emplace_back(r.link_index(path[i - 1], path[i]), path[i - 1], path[i]);
      r.walk_back(s, d, [&](int link, int u, int v) {
        walked.emplace_back(link, u, v);
        return true;
      });
      EXPECT_EQ(walked, expected) << s << " -> " << d;
      r.walk_back(s, d, [&](int link, int u, int v) {
        first.emplace_back(link, u, v);
        return false;
      });
      EXPECT_EQ(first.size(), std::min<std::size_t>(expected.size(), 1)) << s << " -> " << d;
    }
}

TEST(NineCity, MulticastTreeSharesHops) {
  const Platform p = load_platform(kNineCity);
  const Routing r(p);
  auto id = [&](const char* c) { return p.site_index(c); };
  // lon -> {tyo, sin, bom}: lon-sin-tyo and lon-sin share lon->sin; bom is direct
  // (75.25 ms; via sin 76.27 + 29.25 = 105.52). Three hops, not four; parents first,
  // ordered by the child's delay: bom 75.25, sin 76.27, tyo 109.87.
  const auto tree = r.multicast_tree(id("lon"), {id("tyo"), id("sin"), id("bom")});
  const std::vector<std::pair<int, int>> expected = {
      {id("lon"), id("bom")}, {id("lon"), id("sin")}, {id("sin"), id("tyo")}};
  EXPECT_EQ(tree, expected);
  // nyc -> {ams, fra, lon}: all behind the nyc->lon trunk, which appears once.
  const auto t2 = r.multicast_tree(id("nyc"), {id("ams"), id("fra"), id("lon")});
  const std::vector<std::pair<int, int>> e2 = {
      {id("nyc"), id("lon")}, {id("lon"), id("ams")}, {id("lon"), id("fra")}};
  EXPECT_EQ(t2, e2);
  // The source itself and repeated receivers add nothing.
  EXPECT_EQ(r.multicast_tree(id("nyc"), {id("nyc"), id("lon"), id("lon")}).size(), 1u);
  // A tree to everyone has n - 1 hops, each site entered exactly once.
  std::vector<int> all;
  for (int i = 0; i < 9; ++i) all.push_back(i);
  const auto full = r.multicast_tree(id("lon"), all);
  EXPECT_EQ(full.size(), 8u);
  // The same hops with each one's link, as link_index finds it.
  std::vector<int> links;
  EXPECT_EQ(r.multicast_tree(id("lon"), all, &links), full);
  ASSERT_EQ(links.size(), full.size());
  for (std::size_t h = 0; h < full.size(); ++h)
    EXPECT_EQ(links[h], r.link_index(full[h].first, full[h].second));
  std::set<int> children;
  for (const auto& [u, v] : full) {
    EXPECT_TRUE(children.insert(v).second);
    EXPECT_GE(r.link_index(u, v), 0);
  }
}

TEST(NineCityFullMesh, AllPairsAndShortestDelayStillWins) {
  const Platform p = load_platform(kFullMesh);
  EXPECT_EQ(p.sites.size(), 9u);
  EXPECT_EQ(p.links.size(), 36u);
  const Routing r(p);
  auto id = [&](const char* c) { return p.site_index(c); };
  // Direct lon-tyo is 236/2 = 118 ms, but lon-sin-tyo is 76.27 + 33.6 = 109.87 ms.
  EXPECT_EQ(find_link(p, "lon", "tyo").params.delay_ps, 118 * kMs);
  EXPECT_EQ(r.delay_ps(id("lon"), id("tyo")), 109'870'000'000ull);
  // Direct nyc-ams 45 ms vs nyc-lon-ams 33.465 + 2.88 = 36.345 ms.
  EXPECT_EQ(r.delay_ps(id("nyc"), id("ams")), 36'345'000'000ull);
  // nyc-lax direct is the D link (69.71 / 2), with its jitter (1.29 / 2).
  EXPECT_EQ(find_link(p, "nyc", "lax").params.delay_ps, 34'855'000'000ull);
  EXPECT_EQ(find_link(p, "nyc", "lax").params.jitter_ps, 645'000'000ull);
}

TEST(Colocated, OneFabricSwitchAndAPortPerSite) {
  const Platform p = load_platform(kNineCity);
  const Platform c = p.colocated_variant();
  ASSERT_EQ(c.sites.size(), 10u);  // the nine clusters, then the fabric's switch
  EXPECT_EQ(c.links.size(), 9u);   // not the full mesh's 9 * 8 / 2
  for (std::size_t i = 0; i < 9; ++i) {
    EXPECT_EQ(c.sites[i].code, p.sites[i].code);
    EXPECT_FALSE(c.sites[i].switch_only);
  }
  EXPECT_TRUE(c.sites[9].switch_only);
  EXPECT_EQ(c.sites[9].code, "fabric");
  EXPECT_EQ(c.sites[9].sw.latency_ps, 0u);
  for (std::size_t i = 0; i < 9; ++i) {
    EXPECT_EQ(c.links[i].a, static_cast<int>(i));
    EXPECT_EQ(c.links[i].b, 9);
    EXPECT_EQ(c.links[i].params.delay_ps, 1 * kUs);                    // half of 2 us
    EXPECT_EQ(c.links[i].params.bandwidth_bps, 3'200'000'000'000ull);  // 8 x 400 Gb/s
  }
  const Routing r(c);
  EXPECT_EQ(r.delay_ps(p.site_index("lon"), p.site_index("tyo")), 2 * kUs);
  EXPECT_EQ(r.path(0, 8), (std::vector<int>{0, 9, 8}));
}

TEST(Colocated, SwitchOnlySitesAreNotCopied) {
  Platform p = load_platform(kNineCity);
  p.sites[8].switch_only = true;
  p.colocated.link.delay_ps = 3;  // an odd ps: 1 ps each way
  const Platform c = p.colocated_variant();
  ASSERT_EQ(c.sites.size(), 9u);
  EXPECT_EQ(c.links.size(), 8u);
  EXPECT_EQ(c.links[0].params.delay_ps, 1u);
  EXPECT_EQ(c.links[0].params.bandwidth_bps, 7 * 400'000'000'000ull);
}

TEST(Overrides, DottedPathsChangeTheTree) {
  const Platform p = load_platform(kNineCity, {{"defaults.link.bandwidth", "10Gbps"},
                                               {"sites.lon.fpga.buffer", "1GiB"},
                                               {"links.lon-nyc.delay", "40ms"},
                                               {"colocated.link.delay", "5us"},
                                               {"sites.tyo.cluster.compute_time", "2.5s"}});
  for (const auto& l : p.links) EXPECT_EQ(l.params.bandwidth_bps, 10'000'000'000ull);
  EXPECT_EQ(p.sites[p.site_index("lon")].fpga.buffer_bytes, 1ull << 30);
  EXPECT_EQ(p.sites[p.site_index("nyc")].fpga.buffer_bytes, 64ull << 20);
  EXPECT_EQ(find_link(p, "nyc", "lon").params.delay_ps, 40 * kMs);
  EXPECT_EQ(find_link(p, "nyc", "lon").params.jitter_ps, 585'000'000ull);  // untouched
  EXPECT_EQ(p.colocated.link.delay_ps, 5 * kUs);
  EXPECT_EQ(p.sites[p.site_index("tyo")].cluster.compute_time_ps, 2'500'000'000'000ull);
  EXPECT_EQ(p.sites[p.site_index("lon")].cluster.compute_time_ps, 1'000'000'000'000ull);
}

using test::write_temp;

TEST(Platform, EveryKeyReachesItsMember) {
  // Non-default values for every parameter key, at site and link level, so a key that
  // is listed in a ParamInfo table but not bound to its member fails here.
  const std::string path = write_temp("aggnet_every_key.yaml",
                                      "name: every\n"
                                      "sites:\n"
                                      "  - code: aaa\n"
                                      "    fpga: {datapath_width: 256bit, clock: 1GHz, "
                                      "latency_cycles: 7, buffer: 3MiB}\n"
                                      "    cluster: {compute_time: 250ms, access_bandwidth: "
                                      "800Gbps, access_delay: 5us}\n"
                                      "    switch: {latency: 300ns}\n"
                                      "  - {code: bbb}\n"
                                      "links:\n"
                                      "  - {a: aaa, b: bbb, delay: 1.5ms, bandwidth: 25Gbps, "
                                      "mtu: 9000B, header: 60B, jitter: 10us}\n");
  const Platform p = load_platform(path);
  const Site& a = p.sites[0];
  EXPECT_EQ(a.fpga.datapath_width_bits, 256ull);
  EXPECT_EQ(a.fpga.clock_hz, 1'000'000'000ull);
  EXPECT_EQ(a.fpga.latency_cycles, 7ull);
  EXPECT_EQ(a.fpga.buffer_bytes, 3ull << 20);
  EXPECT_EQ(a.cluster.compute_time_ps, 250 * kMs);
  EXPECT_EQ(a.cluster.access_bandwidth_bps, 800'000'000'000ull);
  EXPECT_EQ(a.cluster.access_delay_ps, 5 * kUs);
  EXPECT_EQ(a.sw.latency_ps, 300'000ull);
  EXPECT_EQ(p.sites[1].name, "bbb");  // name defaults to the code
  EXPECT_EQ(p.sites[1].fpga.buffer_bytes, 64ull << 20);
  const WanLinkParams& l = p.links[0].params;
  EXPECT_EQ(l.delay_ps, 1'500'000'000ull);
  EXPECT_EQ(l.bandwidth_bps, 25'000'000'000ull);
  EXPECT_EQ(l.mtu_bytes, 9000ull);
  EXPECT_EQ(l.header_bytes, 60ull);
  EXPECT_EQ(l.jitter_ps, 10 * kUs);
  EXPECT_EQ(p.name, "every");
}

TEST(Platform, OverridesAddKeysToSectionsTheFileAlreadyHas) {
  // The file has defaults.link and aaa's fpga map, without the keys set below: the
  // overrides add keys to existing maps (a yaml-cpp handle pitfall once crashed here).
  const std::string path = write_temp("aggnet_add_keys.yaml",
                                      "defaults: {link: {bandwidth: 10Gbps}}\n"
                                      "sites:\n"
                                      "  - {code: aaa, fpga: {clock: 400MHz}}\n"
                                      "  - {code: bbb}\n"
                                      "links:\n"
                                      "  - {a: aaa, b: bbb, delay: 5ms}\n");
  const Platform p = load_platform(path, {{"defaults.link.mtu", "4096B"},
                                          {"sites.aaa.fpga.buffer", "8MiB"},
                                          {"sites.bbb.fpga.buffer", "16MiB"}});
  EXPECT_EQ(p.links[0].params.mtu_bytes, 4096u);
  EXPECT_EQ(p.links[0].params.bandwidth_bps, 10'000'000'000u);
  EXPECT_EQ(p.sites[0].fpga.buffer_bytes, 8u << 20);
  EXPECT_EQ(p.sites[0].fpga.clock_hz, 400'000'000u);
  EXPECT_EQ(p.sites[1].fpga.buffer_bytes, 16u << 20);
}

TEST(Routing, TiesAreBrokenByHopsThenLowestIndex) {
  // Square a-b-d / a-c-d with equal delays, listed c first: the path a->d goes via b
  // (lower index) whatever the link order. A direct 2 ms link e-d ties with e-b-d
  // (1 + 1 ms): fewer hops wins.
  const std::string path = write_temp("aggnet_ties.yaml",
                                      "sites: [{code: a}, {code: b}, {code: c}, {code: d}, "
                                      "{code: e}]\n"
                                      "links:\n"
                                      "  - {a: a, b: c, delay: 1ms}\n"
                                      "  - {a: c, b: d, delay: 1ms}\n"
                                      "  - {a: d, b: b, delay: 1ms}\n"
                                      "  - {a: b, b: a, delay: 1ms}\n"
                                      "  - {a: e, b: d, delay: 2ms}\n"
                                      "  - {a: e, b: b, delay: 1ms}\n");
  const Platform p = load_platform(path);
  const Routing r(p);
  EXPECT_EQ(r.path(0, 3), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(r.path(3, 0), (std::vector<int>{3, 1, 0}));
  EXPECT_EQ(r.delay_ps(0, 3), 2 * kMs);
  EXPECT_EQ(r.path(4, 3), (std::vector<int>{4, 3}));
}

}  // namespace
}  // namespace aggnet
