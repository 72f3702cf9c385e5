// The analytic model (`aggnet schedule`, traffic/time_model.h) times the host collectives
// by their store-and-forward closed forms; here against `aggnet run` on nine_city at 10
// and 100 Gb/s. Tolerance: 1e-9 relative where the form is exact (ring rules, one pair,
// the unicast all-to-all's FIFO recurrence), else the form's own stated uncertainty (one
// chunk per flow of each contended phase: parameter server, shared trunk).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "model/routing.h"
#include "traffic/closed_form.h"
#include "traffic/time_model.h"

namespace aggnet {
namespace {

namespace fs = std::filesystem;
const std::string kPlatform = AGGNET_SOURCE_DIR "/platforms/nine_city.yaml";
constexpr std::uint64_t kGradient = 90ull << 20, kChunk = 1ull << 20;

int run(const std::string& args, const fs::path& err) {
  const std::string cmd = std::string(AGGNET_EXE) + " " + args + " > /dev/null 2> " + err.string();
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

fs::path scratch(const std::string& tag) {
  return fs::temp_directory_path() /
         ("aggnet-analytic-host-" + std::to_string(getpid()) + "-" + tag);
}

// The simulated round time of one step, compute 0, every site starting together.
double simulated_s(const std::string& schedule, const std::string& bandwidth) {
  const fs::path json = scratch("run.json"), err = scratch("run.err");
  EXPECT_EQ(run("run --platform " + kPlatform + " --schedule " + schedule +
                    " --gradient 90MiB --chunk 1MiB --steps 1 --no-colocated -q"
                    " --set defaults.cluster.compute_time=0s --set defaults.link.bandwidth=" +
                    bandwidth + " --json " + json.string(),
                err),
            0)
      << schedule;
  std::ifstream in(json);
  const auto report = nlohmann::json::parse(in);
  fs::remove(json);
  fs::remove(err);
  return report.at("steps").at(0).at("round_time_s").get<double>();
}

class AnalyticHostCollective : public testing::TestWithParam<const char*> {};

TEST_P(AnalyticHostCollective, RoundTimeEqualsTheSimulation) {
  for (const std::string bandwidth : {"10Gbps", "100Gbps"}) {
    const Platform p = load_platform(kPlatform, {{"defaults.link.bandwidth", bandwidth}});
    const Schedule s = make_schedule(GetParam(), p);
    RunOptions run;
    run.gradient_bytes = kGradient;
    run.chunk_bytes = kChunk;
    const auto est = estimate_schedule(p, Routing(p), s, run);
    const ClosedForm f = closed_form(p, s, kGradient, kChunk);
    ASSERT_TRUE(f.applicable) << f.why;
    const double sim = simulated_s(GetParam(), bandwidth);
    EXPECT_NEAR(est.mean_round_s, sim, f.tolerance_s + 1e-9 * sim)
        << GetParam() << " " << bandwidth;
    // One round; a step of one site group starting together takes the same in the
    // staggered-start recurrence.
    EXPECT_NEAR(estimate_step_round_times(p, Routing(p), s, run, 1).at(0), est.mean_round_s, 1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(NineCity, AnalyticHostCollective,
                         testing::Values("ring:sendrecv", "ring:barrier", "reduce-scatter",
                                         "all-gather:barrier", "p2p:lon-nyc", "p2p:lon-nycx4",
                                         "p2p:lon-nyc,ams-chi", "parameter-server:lon",
                                         "unicast-all-to-all"));

// Where the closed form does not apply, `aggnet schedule` says why in one line, exit 2.
TEST(AnalyticHostCollective, NoClosedFormIsAOneLineError) {
  const fs::path err = scratch("schedule.err");
  EXPECT_EQ(run("schedule --platform " + kPlatform +
                    " --schedules unicast-all-to-all --gradient 1000000B --chunk 1MiB",
                err),
            2);
  std::ifstream in(err);
  std::string line, extra;
  std::getline(in, line);
  EXPECT_FALSE(std::getline(in, extra)) << extra;
  EXPECT_NE(line.find("no closed form for unicast-all-to-all: G is not a multiple of the chunk"),
            std::string::npos)
      << line;
  fs::remove(err);
}

}  // namespace
}  // namespace aggnet
