// Crossover analysis: schedules are ranked by time to eps-consensus, not a per-step cost.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "sweeps/analysis.h"
#include "sweeps/spec.h"
#include "sweeps/store.h"

namespace fs = std::filesystem;

namespace aggnet::sweeps {
namespace {

// A schedule's per-step time and its rounds to eps (-1: never); time to eps = rounds x
// step time when `simulated` (the run got that far), else absent.
struct Outcome {
  double step_s;
  long rounds;
  bool simulated = true;
};

class AnalysisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("aggnet_analysis_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    spec_ = parse_spec(R"(
metric: step_time_s_mean
axes:
  - {option: schedule, values: [triads, hierarchical]}
  - {option: buffer, values: [1MiB, 1GiB]}
)",
                       "s.yaml");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Records both buffer sizes of each schedule with the same numbers.
  std::string analyze(const Outcome& triads, const Outcome& hierarchical,
                      const std::string& metric) {
    ResultStore store((dir_ / "r.db").string());
    store.init(spec_);
    const auto points = expand_points(spec_);  // triads x 2 buffers, then hierarchical
    for (std::size_t i = 0; i < points.size(); ++i)
      store.record(spec_, points[i], result(i < 2 ? triads : hierarchical));
    return analyze_crossover(store, metric).text;
  }

  // Records the points (triads x 2 buffers, then hierarchical) with `results` in order.
  std::string analyze(const std::vector<PointResult>& results, const std::string& metric) {
    ResultStore store((dir_ / "r.db").string());
    store.init(spec_);
    const auto points = expand_points(spec_);
    for (std::size_t i = 0; i < points.size(); ++i) store.record(spec_, points[i], results.at(i));
    return analyze_crossover(store, metric).text;
  }

  static PointResult failed() {
    PointResult r;
    r.status = "failed";
    r.error = "exit status 1";
    r.exit_code = 1;
    return r;
  }

  static PointResult result(const Outcome& run) {
    PointResult r;
    r.metrics = {{"step_time_s_mean", run.step_s},
                 {"rounds_to_eps", static_cast<double>(run.rounds)},
                 {"buffer_high_water_bytes_max", run.step_s * 1e6}};
    if (run.simulated && run.rounds > 0)
      r.metrics.emplace_back("comm_time_to_eps_s", static_cast<double>(run.rounds) * run.step_s);
    return r;
  }

  fs::path dir_;
  SweepSpec spec_;
};

// hierarchical has the cheaper step (1.2 s vs 1.5 s) but needs 70 rounds to triads' 2:
// 84 s vs 3 s to consensus.
TEST_F(AnalysisTest, RanksByTimeToEpsNotByThePerStepMetric) {
  const std::string text = analyze({1.5, 2}, {1.2, 70}, "step_time_s_mean");
  EXPECT_NE(text.find("Best schedule by comm_time_to_eps_s"), std::string::npos) << text;
  EXPECT_NE(text.find("not the spec's metric step_time_s_mean"), std::string::npos) << text;
  EXPECT_NE(text.find("triads is best at every buffer size"), std::string::npos) << text;
  EXPECT_NE(text.find("84"), std::string::npos) << text;
}

TEST_F(AnalysisTest, NeverConvergingScheduleRanksLast) {
  const std::string text = analyze({1.5, 2}, {1.2, -1}, "slowdown_vs_colocated");
  EXPECT_NE(text.find("Best schedule by comm_time_to_eps_s"), std::string::npos) << text;
  EXPECT_NE(text.find("never"), std::string::npos) << text;
  EXPECT_NE(text.find("triads is best at every buffer size"), std::string::npos) << text;
  EXPECT_EQ(text.find("failed"), std::string::npos) << text;
}

// Runs with fewer steps than rounds to eps have no time to eps: the spec's metric, said so.
TEST_F(AnalysisTest, FallsBackToTheSpecMetricWhenTimeToEpsIsMissing) {
  const std::string text = analyze({1.5, 2}, {1.2, 70, false}, "step_time_s_mean");
  EXPECT_NE(text.find("Best schedule by step_time_s_mean"), std::string::npos) << text;
  EXPECT_NE(text.find("ranked by the spec's metric step_time_s_mean"), std::string::npos) << text;
  EXPECT_NE(text.find("hierarchical is best at every buffer size"), std::string::npos) << text;
}

// A metric that is no per-step time (here the buffer high-water) is the spec's choice.
TEST_F(AnalysisTest, KeepsAMetricThatIsNoPerStepTime) {
  const std::string text = analyze({1.5, 2}, {1.2, 70}, "buffer_high_water_bytes_max");
  EXPECT_NE(text.find("Best schedule by buffer_high_water_bytes_max"), std::string::npos) << text;
  EXPECT_EQ(text.find("ranked by"), std::string::npos) << text;
  EXPECT_NE(text.find("hierarchical is best at every buffer size"), std::string::npos) << text;
}

// No point has the metric: the verdict names it, says how many points finished without
// it and why a run leaves it out.
TEST_F(AnalysisTest, NamesAMetricNoPointProducedAndWhy) {
  const std::string text = analyze({1.5, 2, false}, {1.2, 70, false}, "time_to_eps_s");
  EXPECT_NE(text.find("no point produced the metric 'time_to_eps_s': 4 of 4 points finished, "
                      "none with a value for it (a run reports it only when it simulated the "
                      "rounds it needs to reach eps"),
            std::string::npos)
      << text;
}

// The metric's column exists (a failed point reported it) but every finished point's value
// is null: the same verdict, not "no point finished successfully".
TEST_F(AnalysisTest, NamesAMetricNullAtEveryFinishedPoint) {
  PointResult partial = failed();
  partial.metrics = {{"memory_cost_usd", 12.0}};
  const PointResult fine = result({1.5, 2});
  const std::string text = analyze({fine, fine, fine, partial}, "memory_cost_usd");
  EXPECT_NE(text.find("no point produced the metric 'memory_cost_usd': 3 of 4 points finished, "
                      "none with a value for it (it is null when some site's buffer fits no "
                      "memory tier"),
            std::string::npos)
      << text;
}

TEST_F(AnalysisTest, SaysEveryPointFailed) {
  const std::string text = analyze({failed(), failed(), failed(), failed()}, "time_to_eps_s");
  EXPECT_EQ(text,
            "No crossover analysis: no point produced the metric 'time_to_eps_s': all 4 points "
            "failed (see the failed points).\n");
}

}  // namespace
}  // namespace aggnet::sweeps
