// Waveforms an architect can trust (issue 10), end to end through `aggnet run --vcd`: the
// VCD's last values are the run's end state, a windowed trace opens with the values an
// unwindowed trace has at `from`, the header names version and options, the generated
// GTKWave view matches the trace, and statistics and waveforms name modules alike.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path scratch() {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir = fs::temp_directory_path() / (std::string("aggnet-waveforms-") +
                                                    info->test_suite_name() + "-" + info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

int run(const std::string& args) {
  const std::string cmd = std::string(AGGNET_EXE) + " " + args + " > /dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A VCD read independently of the writer: full names (scopes joined by '.'), each
// variable's value changes (time, value) with the $dumpvars block at the time stamp before
// it (0 if none), the comments and every time stamp.
struct Vcd {
  std::map<std::string, std::string> id_of;  // full name -> identifier code
  std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>> changes;  // by id
  std::vector<std::string> comments;
  std::vector<std::uint64_t> stamps;
  std::uint64_t dumpvars_time = 0;

  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& of(const std::string& name) const {
    return changes.at(id_of.at(name));
  }
  std::uint64_t last(const std::string& name) const { return of(name).back().second; }
  std::uint64_t at(const std::string& name, std::uint64_t t) const {  // value at time t
    std::uint64_t v = 0;
    for (const auto& [when, x] : of(name))
      if (when <= t) v = x;
    return v;
  }
};

Vcd parse_vcd(const fs::path& path) {
  Vcd v;
  std::ifstream in(path);
  std::string tok;
  std::vector<std::string> scope;
  std::uint64_t now = 0;
  while (in >> tok) {
    if (tok == "$scope") {
      std::string kind, name;
      in >> kind >> name >> tok;
      scope.push_back(name);
    } else if (tok == "$upscope") {
      in >> tok;
      scope.pop_back();
    } else if (tok == "$var") {
      std::string kind, width, id, name;
      in >> kind >> width >> id >> name;
      while (in >> tok && tok != "$end") {
      }
      std::string full;
      for (const auto& s : scope) full += s + ".";
      v.id_of[full + name] = id;
    } else if (tok == "$comment") {
      std::string text;
      while (in >> tok && tok != "$end") text += tok + " ";
      v.comments.push_back(text);
    } else if (tok == "$dumpvars") {
      v.dumpvars_time = now;
    } else if (tok[0] == '#') {
      now = std::stoull(tok.substr(1));
      v.stamps.push_back(now);
    } else if (tok[0] == 'b') {
      std::string id;
      in >> id;
      v.changes[id].emplace_back(now, std::stoull(tok.substr(1), nullptr, 2));
    } else if (tok[0] == '$' && tok != "$end") {
      while (in >> tok && tok != "$end") {
      }
    }
  }
  return v;
}

std::uint64_t ps_of(double seconds) {
  return static_cast<std::uint64_t>(std::llround(seconds * 1e12));
}

bool is_bytes(const std::string& name) {
  return name.find("_bytes") != std::string::npos ||
         name.find("bytes_in_flight") != std::string::npos;
}

const std::string kRound = "run --schedule all-to-all --gradient 64MiB -q";

// SystemC writes a timestep when time advances past it, so before the fix the run's last
// instant was missing: the last site to finish stayed `communicating` (2) with bytes in
// flight. Every VCD value at the end must be the end state the JSON reports.
TEST(VcdAndView, LastValuesAreTheEndStateOfTheJson) {
  const fs::path dir = scratch();
  ASSERT_EQ(run(kRound + " --steps 2 --json " + (dir / "r.json").string() + " --vcd " +
                (dir / "r.vcd").string()),
            0);
  const json report = json::parse(read_text(dir / "r.json"));
  const Vcd v = parse_vcd(dir / "r.vcd");
  const std::uint64_t end_ps = ps_of(report["summary"]["total_time_s"].get<double>());
  ASSERT_FALSE(v.stamps.empty());
  EXPECT_EQ(v.stamps.back(), end_ps);
  std::uint64_t last_change = 0;
  for (const auto& site : report["sites"]) {
    const std::string prefix = "SystemC.wan." + site["site"].get<std::string>() + ".";
    EXPECT_EQ(v.last(prefix + "cluster.state"), 0u) << prefix;  // idle: finished
    EXPECT_EQ(v.last(prefix + "cluster.step_index"), site["steps"].get<std::uint64_t>() - 1);
    EXPECT_EQ(v.last(prefix + "fpga.slots_in_use"), 0u) << prefix;
    last_change = std::max(last_change, v.of(prefix + "cluster.state").back().first);
  }
  EXPECT_EQ(last_change, end_ps);  // the last site's finish is the run's last instant
  int byte_signals = 0;
  for (const auto& [name, id] : v.id_of) {
    if (!is_bytes(name)) continue;
    ++byte_signals;
    EXPECT_EQ(v.last(name), 0u) << name << " still holds bytes at the end";
  }
  EXPECT_EQ(byte_signals, 9 * 3 + 2 * 12);  // per site buffer + 2 access links; 12 WAN links
}

// --trace-from opens the window with the values at `from` (a marker process makes a
// timestep there), stamped at `from`, equal to an unwindowed trace's values at `from`.
TEST(VcdAndView, WindowOpensWithTheValuesAtFrom) {
  const fs::path dir = scratch();
  ASSERT_EQ(run(kRound + " --steps 1 --no-colocated --vcd " + (dir / "full.vcd").string()), 0);
  ASSERT_EQ(run(kRound + " --steps 1 --no-colocated --vcd " + (dir / "win.vcd").string() +
                " --trace-from 1.1s --trace-to 1.2s"),
            0);
  const Vcd full = parse_vcd(dir / "full.vcd"), win = parse_vcd(dir / "win.vcd");
  constexpr std::uint64_t kFrom = 1'100'000'000'000, kTo = 1'200'000'000'000;
  EXPECT_EQ(win.dumpvars_time, kFrom);
  ASSERT_FALSE(win.stamps.empty());
  EXPECT_EQ(win.stamps.front(), kFrom);
  EXPECT_EQ(win.stamps.back(), kTo);
  ASSERT_EQ(win.id_of.size(), full.id_of.size());
  int in_flight = 0;
  for (const auto& [name, id] : full.id_of) {
    const auto& first = win.of(name).front();
    EXPECT_EQ(first.first, kFrom) << name;
    EXPECT_EQ(first.second, full.at(name, kFrom)) << name;
    // Inside the window every change is the unwindowed trace's.
    for (const auto& [t, x] : win.of(name)) {
      if (t == kFrom) continue;
      EXPECT_EQ(x, full.at(name, t)) << name << " at " << t;
    }
    if (name.find("link_to_") != std::string::npos && first.second > 0) ++in_flight;
  }
  EXPECT_GT(in_flight, 0);  // the window opens mid-round: links hold bytes at `from`
  // No event at `from` itself: the values come from the marker's timestep.
  for (const auto& [name, id] : full.id_of) {
    for (const auto& [t, x] : full.of(name)) EXPECT_NE(t, kFrom) << name;
  }
}

TEST(VcdAndView, HeaderNamesVersionAndOptions) {
  const fs::path dir = scratch();
  ASSERT_EQ(run(kRound + " --steps 1 --no-colocated --chunk 512KiB --vcd " +
                (dir / "r.vcd").string() + " --trace sites=lon --trace-to 2s"),
            0);
  const Vcd v = parse_vcd(dir / "r.vcd");
  ASSERT_FALSE(v.comments.empty());
  const std::string& header = v.comments.front();
  EXPECT_NE(header.find(std::string("aggnet ") + AGGNET_VERSION + " run"), std::string::npos);
  EXPECT_NE(header.find("\"chunk\":\"512KiB\""), std::string::npos) << header;
  EXPECT_NE(header.find("\"gradient\":\"64MiB\""), std::string::npos) << header;
  EXPECT_NE(header.find("sites=lon"), std::string::npos) << header;
  EXPECT_NE(header.find("to 2000000000000 ps"), std::string::npos) << header;
}

// The view shows exactly the traced signals, grouped per traced site (no empty headers),
// links by alias, zoomed to the window; --gtkw puts it elsewhere.
TEST(VcdAndView, GeneratedViewFollowsTheTrace) {
  const fs::path dir = scratch();
  ASSERT_EQ(run(kRound + " --steps 1 --no-colocated --vcd " + (dir / "r.vcd").string() +
                " --trace 'sites=lon signals=links,buffer' --trace-from 0.5s"),
            0);
  const std::string view = read_text(dir / "r.gtkw");
  const Vcd v = parse_vcd(dir / "r.vcd");
  std::set<std::string> in_view, in_vcd;
  std::smatch m;
  const std::regex row(R"(\+\{([^}]*)\} (\S+)\[63:0\])");
  std::map<std::string, std::string> alias;
  for (auto it = std::sregex_iterator(view.begin(), view.end(), row); it != std::sregex_iterator();
       ++it) {
    in_view.insert((*it)[2]);
    alias[(*it)[2]] = (*it)[1];
  }
  for (const auto& [name, id] : v.id_of) in_vcd.insert(name);
  EXPECT_EQ(in_view, in_vcd);
  EXPECT_EQ(alias.at("SystemC.wan.lon.link_to_nyc.bytes_in_flight").rfind("lon->nyc (max ", 0), 0u);
  EXPECT_EQ(alias.at("SystemC.wan.ams.link_to_lon.bytes_in_flight").rfind("ams->lon (max ", 0), 0u);
  // One group, lon's: links into lon from untraced sites show there.
  const std::regex group(R"(@800200\n-(\S+))");
  std::vector<std::string> groups;
  for (auto it = std::sregex_iterator(view.begin(), view.end(), group);
       it != std::sregex_iterator(); ++it)
    groups.push_back((*it)[1]);
  EXPECT_EQ(groups, std::vector<std::string>{"lon"});
  ASSERT_TRUE(std::regex_search(view, m, std::regex(R"(\[timestart\] (\d+))")));
  EXPECT_EQ(m[1], "500000000000");
  ASSERT_TRUE(std::regex_search(view, m, std::regex(R"re(\[dumpfile\] "([^"]+)")re")));
  EXPECT_EQ(fs::path(m[1].str()), fs::absolute(dir / "r.vcd"));

  ASSERT_EQ(run(kRound + " --steps 1 --no-colocated --vcd " + (dir / "b.vcd").string() +
                " --gtkw " + (dir / "view.gtkw").string()),
            0);
  EXPECT_TRUE(fs::exists(dir / "view.gtkw"));
  EXPECT_FALSE(fs::exists(dir / "b.gtkw"));
  EXPECT_EQ(run(kRound + " --gtkw " + (dir / "alone.gtkw").string()), 2);  // needs --vcd
  EXPECT_FALSE(fs::exists(dir / "alone.gtkw"));
}

// Statistics and waveforms name module instances alike: <system>.<site>.<module>.
TEST(VcdAndView, StatisticsAndWaveformsShareInstanceNames) {
  const fs::path dir = scratch();
  ASSERT_EQ(run(kRound + " --steps 1 --no-colocated --vcd " + (dir / "r.vcd").string() +
                " --stats " + (dir / "s.json").string()),
            0);
  const Vcd v = parse_vcd(dir / "r.vcd");
  std::set<std::string> scopes;
  for (const auto& [name, id] : v.id_of)
    scopes.insert(name.substr(std::string("SystemC.").size(), name.rfind('.') - 8));
  std::set<std::string> instances;
  for (const auto& row : json::parse(read_text(dir / "s.json")))
    instances.insert(row["instance"].get<std::string>());
  for (const auto& s : scopes) EXPECT_EQ(instances.count(s), 1u) << s;
  EXPECT_EQ(instances.count("wan.lon.fpga"), 1u);
  EXPECT_EQ(instances.count("wan.lon.link_to_nyc"), 1u);
}

}  // namespace
