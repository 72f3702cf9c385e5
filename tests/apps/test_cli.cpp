// `aggnet run` as a user meets it: bad input gives one line naming file, line and key,
// exit status 2 and no output file; good input writes the JSON and VCD.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

struct Result {
  int status;
  std::string err;
};

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("aggnet_cli_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const auto path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  Result run(const std::string& args) {
    const auto err = (dir_ / "stderr.txt").string();
    const std::string cmd = std::string(AGGNET_BINARY) + " run " + args + " > /dev/null 2> " + err;
    const int raw = std::system(cmd.c_str());
    std::ifstream in(err);
    std::stringstream ss;
    ss << in.rdbuf();
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, ss.str()};
  }
  // Runs with a JSON and a VCD output and checks the bad-input contract.
  void expect_rejected(const std::string& args, const std::string& where, const std::string& key) {
    const auto json = (dir_ / "out.json").string();
    const auto vcd = (dir_ / "out.vcd").string();
    const auto r = run(args + " --json " + json + " --vcd " + vcd + " --gradient 1MiB -q");
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find(where), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(key), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(json));
    EXPECT_FALSE(fs::exists(vcd));
    for (const auto& entry : fs::directory_iterator(dir_))
      EXPECT_EQ(entry.path().string().find("out."), std::string::npos) << entry.path();
  }

  fs::path dir_;
};

// Line numbers below are 1-based lines of this text.
const char* kTiny =
    "name: tiny\n"                         // 1
    "defaults:\n"                          // 2
    "  link: {bandwidth: 100Gbps}\n"       // 3
    "sites:\n"                             // 4
    "  - {code: aaa}\n"                    // 5
    "  - {code: bbb}\n"                    // 6
    "  - {code: ccc}\n"                    // 7
    "links:\n"                             // 8
    "  - {a: aaa, b: bbb, delay: 5ms}\n"   // 9
    "  - {a: bbb, b: ccc, delay: 7ms}\n";  // 10

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST_F(Cli, GoodRunWritesJsonAndVcd) {
  const auto platform = write("tiny.yaml", kTiny);
  const auto json = (dir_ / "out.json").string();
  const auto vcd = (dir_ / "out.vcd").string();
  const auto r = run("--platform " + platform + " --schedule all-to-all --gradient 4MiB --json " +
                     json + " --vcd " + vcd);
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json report = nlohmann::json::parse(std::ifstream(json));
  EXPECT_EQ(report["steps"].size(), 1u);
  EXPECT_GT(report["summary"]["round_time_s_mean"].get<double>(), 0.012);  // > a-c delay
  EXPECT_GT(report["summary"]["slowdown_vs_colocated"].get<double>(), 1.0);
  EXPECT_TRUE(fs::exists(vcd));
  // vcd2fst (Debian gtkwave) rejects malformed VCD.
  const auto fst = (dir_ / "out.fst").string();
  EXPECT_EQ(std::system(("vcd2fst " + vcd + " " + fst + " > /dev/null 2>&1").c_str()), 0);
  std::ifstream in(vcd);
  std::stringstream ss;
  ss << in.rdbuf();
  for (const char* signal : {"buffer_occupancy_bytes", "bytes_in_flight", "state", "round_index"})
    EXPECT_NE(ss.str().find(signal), std::string::npos) << signal;
}

TEST_F(Cli, MalformedYaml) {
  const auto p = write("bad.yaml", replaced(kTiny, "  - {code: bbb}\n", "  - {code: bbb\n"));
  expect_rejected("--platform " + p, "bad.yaml:", "");
}

TEST_F(Cli, UnknownKey) {
  const auto p = write("bad.yaml", replaced(kTiny, "{bandwidth: 100Gbps}", "{bandwith: 100Gbps}"));
  expect_rejected("--platform " + p, "bad.yaml:3", "bandwith");
}

TEST_F(Cli, UnknownCityInLink) {
  const auto p = write("bad.yaml", replaced(kTiny, "{a: bbb, b: ccc,", "{a: bbb, b: zzz,"));
  expect_rejected("--platform " + p, "bad.yaml:10", "zzz");
}

TEST_F(Cli, UnknownSchedule) {
  const auto p = write("tiny.yaml", kTiny);
  expect_rejected("--platform " + p + " --schedule no-such-schedule", "schedule",
                  "no-such-schedule");
}

TEST_F(Cli, NegativeBandwidth) {
  const auto p = write("bad.yaml", replaced(kTiny, "{bandwidth: 100Gbps}", "{bandwidth: -5Gbps}"));
  expect_rejected("--platform " + p, "bad.yaml:3", "bandwidth");
}

TEST_F(Cli, ZeroBandwidthOnALink) {
  const auto p = write("bad.yaml", replaced(kTiny, "delay: 7ms}", "delay: 7ms, bandwidth: 0Gbps}"));
  expect_rejected("--platform " + p, "bad.yaml:10", "bandwidth");
}

TEST_F(Cli, BufferSmallerThanOneChunk) {
  const auto p = write("tiny.yaml", kTiny);
  expect_rejected("--platform " + p + " --schedule all-to-all --buffer 64KiB --chunk 1MiB",
                  "--buffer", "chunk");
}

TEST_F(Cli, BufferSmallerThanOneChunkInTheFile) {
  const auto p = write(
      "bad.yaml", replaced(kTiny, "  - {code: ccc}\n", "  - {code: ccc, fpga: {buffer: 1KiB}}\n"));
  expect_rejected("--platform " + p + " --schedule all-to-all", "bad.yaml:7",
                  "sites.ccc.fpga.buffer");
}

TEST_F(Cli, DisconnectedGraph) {
  const auto p = write("bad.yaml", replaced(kTiny, "  - {a: bbb, b: ccc, delay: 7ms}\n", ""));
  expect_rejected("--platform " + p, "bad.yaml", "ccc");
}

TEST_F(Cli, BadUnitOnTheCommandLine) {
  const auto p = write("tiny.yaml", kTiny);
  expect_rejected("--platform " + p + " --chunk 1parsec", "--chunk", "1parsec");
}

// A misspelt --platform names the closest file of its directory; a name close to none
// gets no suggestion.
TEST_F(Cli, MisspeltPlatformFile) {
  const auto p = write("tiny.yaml", kTiny);
  const std::string typo = (dir_ / "tyni.yaml").string();
  expect_rejected("--platform " + typo, "tyni.yaml", "tiny.yaml");
  EXPECT_EQ(run("--platform " + typo).err,
            typo + ": cannot read file: No such file or directory (did you mean '" + p + "'?)\n");
  const std::string far = (dir_ / "zzzzzzzz.yaml").string();
  EXPECT_EQ(run("--platform " + far).err, far + ": cannot read file: No such file or directory\n");
}

TEST_F(Cli, UnknownSetPath) {
  const auto p = write("tiny.yaml", kTiny);
  expect_rejected("--platform " + p + " --set defaults.link.bandwdth=1Gbps", "--set", "bandwdth");
}

}  // namespace
