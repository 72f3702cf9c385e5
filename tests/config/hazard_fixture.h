// The fixture of the hazard tests: `aggnet run` as a user runs it, in a directory of its
// own, with what a refused input must look like (exit 2, one line, no timeout).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/subprocess.h"

namespace aggnet {

const std::string kPlatform = std::string(AGGNET_SOURCE_DIR) + "/platforms/nine_city.yaml";

class Hazards : public ::testing::Test {
 public:
  static std::string read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("aggnet-hazards-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  /// `aggnet run` on a small nine-city case plus `args`; `env` entries like "A=b".
  ProcessResult run(std::vector<std::string> args, std::vector<std::string> env = {}) {
    std::vector<std::string> argv = {"run", "-q", "--gradient", "4MiB", "--steps", "1"};
    if (std::find(args.begin(), args.end(), "--platform") == args.end()) {
      argv.push_back("--platform");
      argv.push_back(kPlatform);
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return aggnet(argv, env);
  }
  /// `aggnet ARGV...` (nothing added), through `env` with `env` entries like "A=b".
  static ProcessResult aggnet(const std::vector<std::string>& argv,
                              const std::vector<std::string>& env = {}) {
    Command c;
    c.argv = {"env"};
    for (auto& e : env) c.argv.push_back(e);
    c.argv.push_back(AGGNET_EXE);
    c.argv.insert(c.argv.end(), argv.begin(), argv.end());
    c.out = Redirect::capture();
    c.err = Redirect::capture();
    c.timeout = Millis(60'000);
    Subprocess p(c);
    return p.wait();
  }
  /// Exit 2 with one line on stderr containing every `needles`, and not a timeout.
  void expect_refused(const ProcessResult& r, const std::vector<std::string>& needles) {
    EXPECT_FALSE(r.timed_out);
    EXPECT_TRUE(r.exited);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << r.err;
  }
  std::filesystem::path dir_;
};

}  // namespace aggnet
