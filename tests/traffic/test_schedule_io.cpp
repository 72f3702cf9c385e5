// Schedule files: round trip, validation errors with file and line, built-in names.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <tuple>
#include <vector>

#include "common/config_error.h"
#include "config/schedule_io.h"
#include "model/routing.h"
#include "traffic/families.h"

namespace aggnet {
namespace {

Platform nine_sites() {
  Platform p;
  p.name = "test9";
  p.file = "test9.yaml";
  const char* codes[9][2] = {{"nyc", "north_america"}, {"lon", "europe"}, {"tyo", "asia"},
                             {"chi", "north_america"}, {"ams", "europe"}, {"sin", "asia"},
                             {"lax", "north_america"}, {"fra", "europe"}, {"bom", "asia"}};
  for (auto& c : codes) {
    Site s;
    s.code = c[0];
    s.name = c[0];
    s.continent = c[1];
    p.sites.push_back(s);
  }
  return p;
}

int error_line(const std::string& text) {
  try {
    parse_schedule(text, nine_sites(), "bad.yaml");
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "bad.yaml");
    return e.line();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return -1;
}

TEST(ScheduleIo, ParsesSiteCodes) {
  const auto s = parse_schedule(
      "name: two\nrounds:\n  - [[nyc, chi, lax], [lon, ams, fra]]\n  - [[nyc, lon]]\n",
      nine_sites(), "two.yaml");
  EXPECT_EQ(s.name, "two");
  EXPECT_EQ(s.collective, Collective::kGroupAverage);
  ASSERT_EQ(s.period(), 2u);
  EXPECT_EQ(s.rounds[0].groups[0].sites, (std::vector<int>{0, 3, 6}));
  EXPECT_EQ(s.rounds[1].groups[0].sites, (std::vector<int>{0, 1}));
}

TEST(ScheduleIo, RoundTripOfEveryFamily) {
  const Platform p = nine_sites();
  std::vector<Schedule> all = {all_to_all_schedule(p),  triads_schedule(p),
                               rotating_schedule(p, 2), rotating_schedule(p, 4),
                               pairs_schedule(p),       random_schedule(p, 3, 11)};
  Schedule ring;
  ring.name = "ring";
  ring.collective = Collective::kRing;
  ring.rounds = {Round{{Group{{0, 3, 6, 1, 4, 7, 2, 5, 8}}}}};
  all.push_back(ring);
  for (const auto& s : all) {
    const auto back = parse_schedule(schedule_to_yaml(s, p), p, "rt.yaml");
    EXPECT_EQ(back.name, s.name);
    EXPECT_EQ(back.collective, s.collective);
    ASSERT_EQ(back.period(), s.period());
    for (std::size_t r = 0; r < s.period(); ++r) {
      ASSERT_EQ(back.rounds[r].groups.size(), s.rounds[r].groups.size());
      for (std::size_t g = 0; g < s.rounds[r].groups.size(); ++g)
        EXPECT_EQ(back.rounds[r].groups[g].sites, s.rounds[r].groups[g].sites);
    }
  }
}

TEST(ScheduleIo, FileRoundTripAndMakeScheduleFromFile) {
  const Platform p = nine_sites();
  const auto path = std::filesystem::temp_directory_path() / "aggnet_test_triads.yaml";
  save_schedule(triads_schedule(p), p, path.string());
  const auto s = make_schedule(path.string(), p);
  EXPECT_EQ(s.name, "triads");
  EXPECT_EQ(s.period(), 4u);
  std::filesystem::remove(path);
}

TEST(ScheduleIo, SiteTwiceInARoundNamesTheLine) {
  EXPECT_EQ(error_line("rounds:\n  - [[nyc, chi]]\n  - [[nyc, lon],\n     [ams, lon]]\n"), 4);
}

TEST(ScheduleIo, UnknownSiteNamesTheLine) {
  EXPECT_EQ(error_line("name: x\nrounds:\n  - [[nyc, chi]]\n  - [[nyc, par]]\n"), 4);
  try {
    parse_schedule("rounds:\n  - [[nyc, par]]\n", nine_sites(), "bad.yaml");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("par"), std::string::npos) << e.what();
  }
}

TEST(ScheduleIo, EmptyRoundNamesTheLine) {
  EXPECT_EQ(error_line("rounds:\n  - [[nyc, chi]]\n  - []\n"), 3);
}

TEST(ScheduleIo, OtherBadSchedules) {
  EXPECT_EQ(error_line("rounds: []\n"), 1);                 // empty schedule
  EXPECT_EQ(error_line("name: x\n"), 1);                    // no rounds
  EXPECT_EQ(error_line("rounds:\n  - [[nyc]]\n"), 2);       // group of one
  EXPECT_EQ(error_line("roundz:\n  - [[nyc, chi]]\n"), 1);  // unknown key
  EXPECT_EQ(error_line("collective: tree\nrounds:\n  - [[nyc, chi]]\n"), 1);
  EXPECT_EQ(error_line("collective: ring\nrounds:\n  - [[nyc, chi]]\n  - [[nyc, chi]]\n"), 3);
  EXPECT_EQ(error_line("rounds:\n  - [[nyc, chi]\n"), 3);  // malformed YAML
}

TEST(ScheduleIo, UnknownNameIsAConfigError) {
  EXPECT_THROW(make_schedule("no-such-schedule", nine_sites()), ConfigError);
  EXPECT_THROW(make_schedule("rotating-1", nine_sites()), ConfigError);
}

TEST(ScheduleIo, TriadsClassZeroIsSameContinent) {
  const Platform p = nine_sites();
  const auto s = make_schedule("triads", p);
  for (const auto& g : s.rounds[0].groups) {
    for (int site : g.sites) EXPECT_EQ(p.sites[site].continent, p.sites[g.sites[0]].continent);
  }
  for (const auto& g : s.rounds[1].groups) {  // class 1: one site per continent
    EXPECT_NE(p.sites[g.sites[0]].continent, p.sites[g.sites[1]].continent);
    EXPECT_NE(p.sites[g.sites[1]].continent, p.sites[g.sites[2]].continent);
    EXPECT_NE(p.sites[g.sites[0]].continent, p.sites[g.sites[2]].continent);
  }
}

TEST(ScheduleIo, GroupsMayCarryExplicitSendOffsets) {
  const std::string text =
      "rounds:\n  - [{members: [nyc, lon, tyo], send_offsets: {lon: 2.5ms, tyo: 40ms}},"
      " [chi, ams]]\n";
  const auto s = parse_schedule(text, nine_sites(), "off.yaml");
  const Group& g = s.rounds[0].groups[0];
  EXPECT_EQ(g.sites, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(g.send_offset_ps, (std::vector<std::uint64_t>{0, 2'500'000'000, 40'000'000'000}));
  EXPECT_TRUE(s.rounds[0].groups[1].send_offset_ps.empty());
  // Written back and read again: the same offsets.
  const auto again = parse_schedule(schedule_to_yaml(s, nine_sites()), nine_sites(), "b.yaml");
  EXPECT_EQ(again.rounds[0].groups[0].send_offset_ps, g.send_offset_ps);
  EXPECT_EQ(again.rounds[0].groups[1].sites, s.rounds[0].groups[1].sites);
}

TEST(ScheduleIo, BadSendOffsetsNameTheirLine) {
  EXPECT_EQ(error_line("rounds:\n  - [{members: [nyc, lon],\n      send_offsets: {chi: 1ms}}]\n"),
            3);  // chi is not a member
  EXPECT_EQ(error_line("rounds:\n  - [{members: [nyc, lon], send_offsets: {lon: 3}}]\n"), 2);
  EXPECT_EQ(error_line("rounds:\n  - [{members: [nyc, lon], offsets: {lon: 3ms}}]\n"), 2);
  EXPECT_EQ(error_line("rounds:\n  - [{send_offsets: {lon: 1ms}}]\n"), 2);  // no members
  EXPECT_EQ(error_line("rounds:\n  - [{members: [nyc, lon], send_offsets: {[lon]: 1ms}}]\n"), 2);
  EXPECT_EQ(
      error_line("rounds:\n  - [{members: [nyc, lon], send_offsets: {lon: 1ms, lon: 5ms}}]\n"),
      2);  // duplicate key
  EXPECT_EQ(error_line("rounds:\n  - [{members: [nyc, lon], send_offsets: {}}]\n"), 2);
  EXPECT_EQ(error_line("rounds:\n  - [{members: [nyc, lon], send_offsets: {lon: 18446744s}}]\n"),
            2);  // more than a day
  EXPECT_EQ(error_line("rounds:\n  - [[nyc, lon]]\nrounds:\n  - [[nyc, chi]]\n"), 3);
  EXPECT_EQ(error_line("collective: ring\nrounds:\n  - [{members: [nyc, lon, tyo],"
                       " send_offsets: {lon: 1ms}}]\n"),
            3);
}

}  // namespace
}  // namespace aggnet

namespace aggnet {
namespace {

// Hub h joined to a, b, c (2, 4, 6 ms), a chord a-b of 20 ms routed through h.
Platform tree_sites() {
  Platform p;
  p.name = "star";
  p.file = "star.yaml";
  for (const char* code : {"a", "b", "c", "h"}) {
    Site s;
    s.code = s.name = code;
    p.sites.push_back(s);
  }
  const std::uint64_t ms = 1'000'000'000;
  for (auto [a, b, delay] : std::vector<std::tuple<int, int, std::uint64_t>>{
           {0, 3, 2 * ms}, {1, 3, 4 * ms}, {2, 3, 6 * ms}, {0, 1, 20 * ms}}) {
    LinkSpec l;
    l.a = a;
    l.b = b;
    l.params.delay_ps = delay;
    p.links.push_back(l);
  }
  return p;
}

std::string tree_error_text(const std::string& text) {
  try {
    parse_schedule(text, tree_sites(), "forest.yaml");
  } catch (const ConfigError& e) {
    return std::to_string(e.line()) + ": " + e.what();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

TEST(ScheduleIoForest, ParsesAndRoundTripsAForest) {
  const std::string text =
      "collective: reduction-tree\n"
      "trees:\n"
      "  - root: h\n"
      "    parents: {a: h, b: h, c: h}\n"
      "    share: 0.75\n"
      "    pacing: 10us\n"
      "  - root: a\n"
      "    parents: {h: a, b: h, c: h}\n"
      "    share: 0.25\n"
      "    send_offsets: {c: 3ms}\n";
  const Platform p = tree_sites();
  const Schedule s = parse_schedule(text, p, "forest.yaml");
  EXPECT_EQ(s.collective, Collective::kReductionTree);
  ASSERT_EQ(s.forest.size(), 2u);
  EXPECT_EQ(s.rounds.at(0).groups.at(0).sites, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(s.forest[0].root, 3);
  EXPECT_EQ(s.forest[0].parent, (std::vector<int>{3, 3, 3, -1}));
  EXPECT_EQ(s.forest[0].share, 0.75);
  EXPECT_EQ(s.forest[0].pacing_interval_ps, 10'000'000u);
  EXPECT_TRUE(s.forest[0].send_offset_ps.empty());
  EXPECT_EQ(s.forest[1].parent, (std::vector<int>{-1, 3, 3, 0}));
  EXPECT_EQ(s.forest[1].send_offset_ps, (std::vector<std::uint64_t>{0, 0, 3'000'000'000, 0}));
  const Schedule back = parse_schedule(schedule_to_yaml(s, p), p, "back.yaml");
  EXPECT_EQ(back.collective, s.collective);
  EXPECT_EQ(back.rounds.at(0).groups.at(0).sites, s.rounds.at(0).groups.at(0).sites);
  ASSERT_EQ(back.forest.size(), 2u);
  for (std::size_t t = 0; t < 2; ++t) {
    EXPECT_EQ(back.forest[t].root, s.forest[t].root);
    EXPECT_EQ(back.forest[t].parent, s.forest[t].parent);
    EXPECT_EQ(back.forest[t].share, s.forest[t].share);
    EXPECT_EQ(back.forest[t].pacing_interval_ps, s.forest[t].pacing_interval_ps);
    EXPECT_EQ(back.forest[t].send_offset_ps, s.forest[t].send_offset_ps);
  }
  EXPECT_EQ(schedule_to_yaml(back, p), schedule_to_yaml(s, p));
}

TEST(ScheduleIoForest, BadForestsNameFileLineAndKey) {
  const std::string head = "collective: reduction-tree\ntrees:\n";
  // A cycle: a and b each other's parent.
  const std::string cycle =
      tree_error_text(head + "  - root: h\n    parents: {a: b, b: a, c: h}\n    share: 1\n");
  EXPECT_NE(cycle.find("trees[0]"), std::string::npos) << cycle;
  EXPECT_NE(cycle.find("cycle"), std::string::npos) << cycle;
  EXPECT_EQ(cycle.substr(0, 2), "3:") << cycle;
  // c's parent a: no direct link.
  const std::string no_link =
      tree_error_text(head + "  - root: h\n    parents: {a: h, b: h, c: a}\n    share: 1\n");
  EXPECT_NE(no_link.find("c-a has none"), std::string::npos) << no_link;
  // b's parent a: a link, but routed through h.
  const std::string routed =
      tree_error_text(head + "  - root: h\n    parents: {a: h, b: a, c: h}\n    share: 1\n");
  EXPECT_NE(routed.find("routed through another site"), std::string::npos) << routed;
  // Shares summing to 0.9.
  const std::string shares =
      tree_error_text(head + "  - root: h\n    parents: {a: h, b: h, c: h}\n    share: 0.5\n" +
                      "  - root: h\n    parents: {a: h, b: h, c: h}\n    share: 0.4\n");
  EXPECT_NE(shares.find("shares summing to 1"), std::string::npos) << shares;
  EXPECT_EQ(shares.substr(0, 2), "3:") << shares;
  // An unknown site, with a did-you-mean; an unknown key, with one.
  const std::string unknown =
      tree_error_text(head + "  - root: hh\n    parents: {a: h, b: h, c: h}\n    share: 1\n");
  EXPECT_NE(unknown.find("did you mean 'h'"), std::string::npos) << unknown;
  EXPECT_EQ(unknown.substr(0, 2), "3:") << unknown;
  const std::string key =
      tree_error_text(head + "  - root: h\n    parent: {a: h, b: h, c: h}\n    share: 1\n");
  EXPECT_NE(key.find("did you mean 'parents'"), std::string::npos) << key;
  EXPECT_EQ(key.substr(0, 2), "4:") << key;
  // Trees without the collective, and the collective without trees.
  EXPECT_NE(tree_error_text("trees:\n  - root: h\n    parents: {a: h, b: h, c: h}\n    share: 1\n")
                .find("trees only with collective reduction-tree"),
            std::string::npos);
  EXPECT_NE(tree_error_text("collective: reduction-tree\nrounds:\n  - [[a, b]]\n")
                .find("at least one tree"),
            std::string::npos);
}

// Per-receiver in-trees: one per site, rooted there, the sum kept (broadcast false), all
// paced alike; written with `broadcast: false` and read back identically.
TEST(ScheduleIoForest, InTreesRoundTrip) {
  const Platform p = tree_sites();
  const Schedule s = make_schedule("reduction-in-trees", p);
  ASSERT_EQ(s.forest.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(s.forest[r].root, r);
    EXPECT_FALSE(s.forest[r].broadcast);
    EXPECT_EQ(s.forest[r].pacing_interval_ps, s.forest[0].pacing_interval_ps);
  }
  EXPECT_EQ(s.forest[0].parent, (std::vector<int>{-1, 3, 3, 0}));  // towards a, via h
  const std::string yaml = schedule_to_yaml(s, p);
  EXPECT_NE(yaml.find("broadcast: false"), std::string::npos) << yaml;
  const Schedule back = parse_schedule(yaml, p, "back.yaml");
  ASSERT_EQ(back.forest.size(), 4u);
  for (int r = 0; r < 4; ++r) EXPECT_FALSE(back.forest[r].broadcast);
  EXPECT_EQ(schedule_to_yaml(back, p), yaml);
  const std::string bad = tree_error_text(
      "collective: reduction-tree\ntrees:\n  - root: h\n    parents: {a: h, b: h, c: h}\n"
      "    share: 1\n    broadcast: no\n");
  EXPECT_NE(bad.find("true or false"), std::string::npos) << bad;
  EXPECT_EQ(bad.substr(0, 2), "6:") << bad;
  const std::string one = tree_error_text(
      "collective: reduction-tree\ntrees:\n  - root: h\n    parents: {a: h, b: h, c: h}\n"
      "    share: 1\n    broadcast: false\n");
  EXPECT_NE(one.find("one in-tree rooted at each member (a,b,c,h)"), std::string::npos) << one;
}

TEST(ScheduleIoForest, BuiltInNames) {
  const Platform p = tree_sites();
  const Schedule rooted = make_schedule("reduction-tree:a", p);
  EXPECT_EQ(rooted.name, "reduction-tree:a");
  EXPECT_EQ(rooted.collective, Collective::kReductionTree);
  ASSERT_EQ(rooted.forest.size(), 1u);
  EXPECT_EQ(rooted.forest[0].parent, (std::vector<int>{-1, 3, 3, 0}));
  EXPECT_EQ(rooted.forest[0].share, 1.0);
  // The hub: its farthest leaf 6 ms away (a leaf root is 2 + 6 ms or more from another).
  const Schedule best = make_schedule("reduction-tree", p);
  EXPECT_EQ(best.name, "reduction-tree");
  EXPECT_EQ(best.forest.at(0).root, 3);
  try {
    make_schedule("reduction-tree:hx", p);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'h'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace aggnet
