// Issue 35: the analytic round time under loss against the simulation's mean over seeds.
// Nine cities, triads, 64 MiB, 1 % loss on every WAN link: almost every group loses a
// contribution, and rounds last about one to three retransmission timeouts (0.2-0.56 s)
// longer than without loss (0.28 s analytic, lossless). The loss-aware staggered-step
// model (traffic/time_model.h) has to come within 5 % of the simulated mean round time
// over seeds 1-16 (16 runs of ~1.5 s, two at a time). One seed's mean round time has a
// standard deviation of about 0.32 s (measured over seeds 9-32), so 16 seeds' mean has a
// standard error of about 0.08 s (5 %): measured, 1.648 s against 1.726 s (16 seeds) and
// 1.586 s (32 seeds).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "model/routing.h"
#include "traffic/time_model.h"

namespace aggnet {
namespace {

namespace fs = std::filesystem;

constexpr int kSeeds = 16;  // even: run in pairs
constexpr int kSteps = 4;   // the run's default for triads: one schedule period

std::string run_command(int seed, const fs::path& out) {
  return std::string(AGGNET_EXE) + " run -q --platform " + AGGNET_SOURCE_DIR +
         "/platforms/nine_city.yaml --schedule triads --gradient 64MiB --loss 0.01 --steps " +
         std::to_string(kSteps) + " --no-colocated --seed " + std::to_string(seed) + " --json " +
         out.string();
}

// The simulated round times of every step of seeds 1..kSeeds, two runs at a time.
std::vector<double> simulated_round_times(const fs::path& dir) {
  std::vector<double> times;
  for (int seed = 1; seed <= kSeeds; seed += 2) {
    const fs::path a = dir / (std::to_string(seed) + ".json"),
                   b = dir / (std::to_string(seed + 1) + ".json");
    const std::string cmd =
        "(" + run_command(seed, a) + " & " + run_command(seed + 1, b) + " & wait)";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    for (const auto& out : {a, b}) {
      std::ifstream in(out);
      const auto report = nlohmann::json::parse(in);
      for (const auto& step : report.at("steps"))
        times.push_back(step.at("round_time_s").get<double>());
    }
  }
  return times;
}

TEST(LossAnalytic, RoundTimeUnderOnePercentLossIsWithinFivePercentOfTheSimulatedMean) {
  const Platform p = load_platform(std::string(AGGNET_SOURCE_DIR) + "/platforms/nine_city.yaml");
  const Routing r(p);
  const Schedule s = make_schedule("triads", p);
  RunOptions o;
  o.gradient_bytes = 64ull << 20;
  const double lossless = [&] {
    double sum = 0;
    for (double t : estimate_step_round_times(p, r, s, o, kSteps)) sum += t;
    return sum / kSteps;
  }();
  o.faults.wan_loss_rate = 0.01;
  double analytic = 0;
  for (double t : estimate_step_round_times(p, r, s, o, kSteps)) analytic += t;
  analytic /= kSteps;

  const fs::path dir = fs::temp_directory_path() / "aggnet-loss-analytic";
  fs::remove_all(dir);
  fs::create_directories(dir);
  double simulated = 0;
  for (double t : simulated_round_times(dir)) simulated += t;
  simulated /= kSeeds * kSteps;
  fs::remove_all(dir);
  std::cout << "analytic " << analytic << " s (lossless " << lossless << " s), simulated mean "
            << simulated << " s over " << kSeeds << " seeds\n";
  EXPECT_LT(lossless, 0.5 * simulated);  // the loss is what the model has to account for
  EXPECT_NEAR(analytic / simulated, 1.0, 0.05);
}

}  // namespace
}  // namespace aggnet
