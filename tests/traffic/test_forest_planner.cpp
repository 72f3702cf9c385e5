// The reduction-forest schedule on the nine-city platform: its packing against the
// Nash-Williams/Tutte partition value (a second method, model/physical_bound.h), and its
// trees, shares and pacing checked link by link.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/config_error.h"
#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "model/network_math.h"
#include "model/physical_bound.h"
#include "model/routing.h"
#include "traffic/forest_planner.h"

namespace aggnet {
namespace {

// 512 whole packets of 2048 B less the 80 B header: the chunk's payload rate is the
// link's packet payload rate, as in the partition formula.
constexpr std::uint64_t kWholePackets = 512 * (2048 - 80);

Platform nine_city_at(std::uint64_t bandwidth_bps) {
  Platform p = load_platform(AGGNET_SOURCE_DIR "/platforms/nine_city.yaml");
  for (LinkSpec& l : p.links) l.params.bandwidth_bps = bandwidth_bps;
  return p;
}

TEST(ForestPlanner, NineCityPackingIsThePartitionValue) {
  const Platform p = nine_city_at(10'000'000'000);
  double packed = 0;
  for (const PackedTree& t : pack_spanning_trees(tree_network(p, Routing(p), kWholePackets)))
    packed += t.rate_bytes_per_s;
  EXPECT_NEAR(packed, forest_rate_bytes_per_s(p), 1e-6 * packed);
}

// Each tree edge carries the tree's rate both ways: per link, the trees through it must fit
// its payload rate; every tree spans the nine sites from its root; shares add up to 1.
TEST(ForestPlanner, ForestRespectsEveryLinkAndSpansEverySite) {
  const Platform p = nine_city_at(10'000'000'000);
  const std::uint64_t chunk = 1 << 20;
  const Schedule s = make_schedule("reduction-forest", p, PlanInputs{4ull << 30, chunk});
  ASSERT_EQ(s.collective, Collective::kReductionTree);
  ASSERT_GE(s.forest.size(), 2u);
  const Routing routing(p);
  std::map<int, double> load;  // link index -> chunk bytes/s of the trees through it
  double shares = 0;
  for (const ReductionTree& t : s.forest) {
    shares += t.share;
    int edges = 0;
    for (int v = 0; v < 9; ++v) {
      if (v == t.root) {
        EXPECT_EQ(t.parent[v], -1);
        continue;
      }
      int hops = 0;  // the root is reached from every site
      for (int u = v; u != t.root && hops <= 9; u = t.parent[u]) ++hops;
      EXPECT_LE(hops, 8) << "site " << v << " never reaches the root";
      const int link = routing.link_index(v, t.parent[v]);
      ASSERT_GE(link, 0);
      load[link] += static_cast<double>(chunk) * 1e12 / static_cast<double>(t.pacing_interval_ps);
      ++edges;
    }
    EXPECT_EQ(edges, 8);
  }
  EXPECT_NEAR(shares, 1.0, 1e-12);
  for (const auto& [link, bytes_per_s] : load)
    EXPECT_LE(bytes_per_s, payload_rate(p.links[link].params, chunk) * (1 + 1e-9)) << link;
}

TEST(ForestPlanner, MisspeltNameSuggestsTheForest) {
  try {
    make_schedule("reduction-forst", nine_city_at(10'000'000'000));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'reduction-forest'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace aggnet
