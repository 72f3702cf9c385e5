// Host-based collectives in the schedule model: point-to-point, parameter server,
// reduce-scatter, all-gather, the ring step rules and the unicast all-to-all, from YAML and
// from built-in names.
#include <gtest/gtest.h>

#include <string>

#include "common/config_error.h"
#include "common/schedule_names.h"
#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "model/routing.h"
#include "traffic/families.h"

namespace aggnet {
namespace {

Platform nine_city() { return load_platform(AGGNET_SOURCE_DIR "/platforms/nine_city.yaml"); }

int site(const Platform& p, const std::string& code) {
  for (std::size_t i = 0; i < p.sites.size(); ++i)
    if (p.sites[i].code == code) return static_cast<int>(i);
  return -1;
}

std::string error_of(const std::string& yaml) {
  try {
    parse_schedule(yaml, nine_city(), "c.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string name_error_of(const std::string& name) {
  try {
    make_schedule(name, nine_city());
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Collectives, PointToPointNameGivesOrderedPairsAndMessages) {
  const Platform p = nine_city();
  const Schedule s = make_schedule("p2p:lon-nyc,ams-chix3", p);
  EXPECT_EQ(s.collective, Collective::kPointToPoint);
  EXPECT_EQ(s.messages, 3);
  ASSERT_EQ(s.rounds.size(), 1u);
  ASSERT_EQ(s.rounds[0].groups.size(), 2u);
  EXPECT_EQ(s.rounds[0].groups[0].sites, (std::vector<int>{site(p, "lon"), site(p, "nyc")}));
  EXPECT_EQ(s.rounds[0].groups[1].sites, (std::vector<int>{site(p, "ams"), site(p, "chi")}));
  EXPECT_EQ(s.name, "p2p:lon-nyc,ams-chix3");
}

TEST(Collectives, ParameterServerPutsTheServerFirst) {
  const Platform p = nine_city();
  const Schedule s = make_schedule("parameter-server:tyo", p);
  EXPECT_EQ(s.collective, Collective::kParameterServer);
  const auto& g = s.rounds.at(0).groups.at(0).sites;
  ASSERT_EQ(g.size(), 9u);
  EXPECT_EQ(g[0], site(p, "tyo"));
  EXPECT_EQ(std::count(g.begin(), g.end(), site(p, "tyo")), 1);
}

TEST(Collectives, UnicastAllToAllIsOneGroupOfEverySite) {
  const Platform p = nine_city();
  const Schedule s = make_schedule("unicast-all-to-all", p);
  EXPECT_EQ(s.collective, Collective::kUnicastAllToAll);
  EXPECT_EQ(s.name, "unicast-all-to-all");
  ASSERT_EQ(s.rounds.size(), 1u);
  ASSERT_EQ(s.rounds[0].groups.size(), 1u);
  EXPECT_EQ(s.rounds[0].groups[0].sites, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  // A subset from YAML, in the file's order.
  const Schedule sub = parse_schedule(
      "collective: unicast-all-to-all\nrounds:\n  - [[tyo, lon, nyc]]\n", p, "u.yaml");
  EXPECT_EQ(sub.collective, Collective::kUnicastAllToAll);
  EXPECT_EQ(sub.rounds[0].groups[0].sites,
            (std::vector<int>{site(p, "tyo"), site(p, "lon"), site(p, "nyc")}));
}

TEST(Collectives, RingFamilyNamesCarryCollectiveAndRule) {
  const Platform p = nine_city();
  const auto ring = make_schedule("ring", p);
  EXPECT_EQ(ring.collective, Collective::kRing);
  EXPECT_EQ(ring.ring_step, RingStepRule::kReceive);
  const auto rs = make_schedule("reduce-scatter:barrier", p);
  EXPECT_EQ(rs.collective, Collective::kReduceScatter);
  EXPECT_EQ(rs.ring_step, RingStepRule::kBarrier);
  EXPECT_EQ(rs.name, "reduce-scatter:barrier");
  const auto ag = make_schedule("all-gather:sendrecv", p);
  EXPECT_EQ(ag.collective, Collective::kAllGather);
  EXPECT_EQ(ag.ring_step, RingStepRule::kSendRecv);
  // Same ring order as the plain ring: the collectives differ only in their steps.
  EXPECT_EQ(rs.rounds[0].groups[0].sites, ring.rounds[0].groups[0].sites);
}

TEST(Collectives, YamlRoundTripKeepsCollectiveRuleAndMessages) {
  const Platform p = nine_city();
  for (const std::string name : {"ring:sendrecv", "all-gather:barrier", "p2p:lon-nycx4",
                                 "parameter-server:lon", "reduce-scatter", "unicast-all-to-all"}) {
    const Schedule s = make_schedule(name, p);
    const Schedule back = parse_schedule(schedule_to_yaml(s, p), p, "round_trip.yaml");
    EXPECT_EQ(back.collective, s.collective) << name;
    EXPECT_EQ(back.ring_step, s.ring_step) << name;
    EXPECT_EQ(back.messages, s.messages) << name;
    EXPECT_EQ(back.rounds[0].groups[0].sites, s.rounds[0].groups[0].sites) << name;
  }
}

TEST(Collectives, YamlErrorsNameKeyAndLine) {
  EXPECT_NE(error_of("collective: ring\nring_step: sendrcv\nrounds:\n  - [[lon, nyc, ams]]\n")
                .find("did you mean 'sendrecv'"),
            std::string::npos);
  EXPECT_NE(error_of("collective: group-average\nring_step: barrier\nrounds:\n  - [[lon, nyc]]\n")
                .find("ring_step only with collective ring"),
            std::string::npos);
  EXPECT_NE(error_of("collective: point-to-point\nrounds:\n  - [[lon, nyc, ams]]\n")
                .find("groups of exactly 2 sites"),
            std::string::npos);
  EXPECT_NE(error_of("collective: ring\nmessages: 2\nrounds:\n  - [[lon, nyc, ams]]\n")
                .find("messages only with collective point-to-point"),
            std::string::npos);
  EXPECT_NE(error_of("collective: point-to-point\nmessages: 0\nrounds:\n  - [[lon, nyc]]\n")
                .find("c.yaml:2"),
            std::string::npos);
  EXPECT_NE(error_of("collective: parameter-server\nrounds:\n  - [[lon, nyc]]\n  - [[lon, ams]]\n")
                .find("exactly one round with one group"),
            std::string::npos);
  EXPECT_NE(error_of("collective: unicast-all-to-all\nrounds:\n  - [[lon, nyc], [ams, chi]]\n")
                .find("unicast-all-to-all schedule of exactly one round with one group"),
            std::string::npos);
  EXPECT_NE(error_of("collective: unicast-all-to-al\nrounds:\n  - [[lon, nyc]]\n")
                .find("did you mean 'unicast-all-to-all'"),
            std::string::npos);
  EXPECT_NE(error_of("collective: parameter-sever\nrounds:\n  - [[lon, nyc]]\n")
                .find("did you mean 'parameter-server'"),
            std::string::npos);
}

TEST(Collectives, NameErrorsSuggestSitesAndRules) {
  EXPECT_NE(name_error_of("p2p:lon-nyk").find("did you mean 'nyc'"), std::string::npos);
  EXPECT_NE(name_error_of("ring:barier").find("did you mean 'barrier'"), std::string::npos);
  EXPECT_NE(name_error_of("parameter-server:tok").find("site codes of platform"),
            std::string::npos);
  EXPECT_NE(name_error_of("p2p:lon-lon").find("two different sites"), std::string::npos);
  EXPECT_NE(name_error_of("unicast-all-to-al").find("did you mean 'unicast-all-to-all'"),
            std::string::npos);
  EXPECT_NE(name_error_of("p2p:lon-nyc,lon-ams").find("each site at most once per round"),
            std::string::npos);
}

}  // namespace
}  // namespace aggnet

namespace aggnet {
namespace {

// Every row of the one schedule-name table (common/schedule_names.h), its parameters filled
// in, names a schedule the loader makes: the table and make_schedule agree.
TEST(Collectives, EveryBuiltInScheduleNameMakesASchedule) {
  const Platform p = nine_city();
  const std::vector<std::pair<std::string, std::string>> fill = {
      {"[", ""},       {"]", ""},           {"SRC-DST", "lon-nyc"}, {"SEED", "7"},
      {"SITE", "tyo"}, {"RULE", "barrier"}, {"xK", "x2"},           {"K", "3"}};
  for (const auto& row : schedule_names()) {
    std::string name(row.spelling);
    for (const auto& [from, to] : fill)
      for (std::size_t at = name.find(from); at != std::string::npos; at = name.find(from))
        name.replace(at, from.size(), to);
    EXPECT_TRUE(is_schedule_name(name)) << name;
    EXPECT_NO_THROW(make_schedule(name, p)) << name;
  }
}

}  // namespace
}  // namespace aggnet
