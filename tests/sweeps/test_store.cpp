// SQLite results store: rows, dynamic metric columns, resume ids, CSV, merge.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sweeps/spec.h"
#include "sweeps/store.h"

namespace fs = std::filesystem;

namespace aggnet::sweeps {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("aggnet_store_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    spec_ = parse_spec(R"(
axes:
  - {option: schedule, values: [all-to-all, triads]}
  - {option: buffer, values: [1MiB, 1GiB]}
)",
                       "s.yaml");
    points_ = expand_points(spec_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static PointResult ok(double step) {
    PointResult r;
    r.aggnet_version = "test";
    r.metrics = {{"step_time_s_mean", step}, {"slowdown_vs_colocated", step / 0.5}};
    return r;
  }
  std::string db(const std::string& name) { return (dir_ / name).string(); }

  fs::path dir_;
  SweepSpec spec_;
  std::vector<Point> points_;
};

TEST_F(StoreTest, RecordsOneRowPerPointWithAxisAndMetricColumns) {
  ResultStore store(db("a.db"));
  store.init(spec_);
  store.record(spec_, points_[0], ok(2.0));
  PointResult late = ok(3.0);
  late.metrics.emplace_back("new_metric_bytes", 42);  // a key that appears later
  store.record(spec_, points_[1], late);
  PointResult bad;
  bad.status = "bad_input";
  bad.error = "exit status 2: --set: x: expected a rate";
  bad.exit_code = 2;
  store.record(spec_, points_[2], bad);
  store.record(spec_, points_[0], ok(2.5));  // rerun replaces, no duplicate row

  Table t = store.read_all();
  ASSERT_EQ(t.rows.size(), 3u);
  for (const char* c : {"point_id", "status", "error", "elapsed_s", "aggnet_version", "spec_hash",
                        "schedule", "buffer", "buffer_value", "step_time_s_mean",
                        "slowdown_vs_colocated", "new_metric_bytes"}) {
    EXPECT_GE(t.column(c), 0) << c;
  }
  EXPECT_LT(t.column("schedule_value"), 0);
  EXPECT_EQ(t.rows[0][t.column("step_time_s_mean")].number, 2.5);
  EXPECT_EQ(t.rows[1][t.column("new_metric_bytes")].number, 42);
  EXPECT_TRUE(t.rows[0][t.column("new_metric_bytes")].null);
  EXPECT_EQ(t.rows[2][t.column("status")].text, "bad_input");
  EXPECT_EQ(t.rows[1][t.column("buffer_value")].number, 1073741824.0);
  EXPECT_EQ(t.rows[0][t.column("spec_hash")].text, spec_.hash);
  EXPECT_EQ(store.finished_ids(), (std::set<std::string>{points_[0].id, points_[1].id}));
  EXPECT_EQ(store.meta("metric"), "step_time_s_mean");
}

TEST_F(StoreTest, RowsSurviveReopening) {
  {
    ResultStore store(db("a.db"));
    store.init(spec_);
    store.record(spec_, points_[3], ok(1.0));
  }
  ResultStore again(db("a.db"));
  again.init(spec_);
  EXPECT_EQ(again.row_count(), 1u);
  EXPECT_EQ(again.finished_ids().count(points_[3].id), 1u);
}

TEST_F(StoreTest, RefusesAnotherSweepsAxes) {
  ResultStore store(db("a.db"));
  store.init(spec_);
  store.record(spec_, points_[0], ok(1.0));
  auto other = parse_spec("axes: [{option: chunk, values: [1MiB]}]", "o.yaml");
  EXPECT_THROW(store.init(other), StoreError);
}

TEST_F(StoreTest, CsvHasHeaderAndQuotesText) {
  ResultStore store(db("a.db"));
  store.init(spec_);
  PointResult bad;
  bad.status = "failed";
  bad.error = "exit status 1: boom, \"quoted\"";
  store.record(spec_, points_[0], bad);
  store.record(spec_, points_[1], ok(0.25));
  store.export_csv(db("a.csv"));
  std::ifstream in(db("a.csv"));
  std::string header, row0, row1;
  std::getline(in, header);
  std::getline(in, row0);
  std::getline(in, row1);
  EXPECT_EQ(header.rfind("point_id,point_index,status,error", 0), 0u) << header;
  EXPECT_NE(header.find("step_time_s_mean"), std::string::npos);
  EXPECT_NE(row0.find("\"exit status 1: boom, \"\"quoted\"\"\""), std::string::npos) << row0;
  EXPECT_NE(row1.find(",0.25,"), std::string::npos) << row1;
}

TEST_F(StoreTest, MergeUnitesShardsAndPrefersOkRows) {
  {
    ResultStore a(db("a.db"));
    a.init(spec_);
    a.record(spec_, points_[0], ok(1.0));
    PointResult bad;
    bad.status = "timeout";
    bad.error = "timeout after 1s";
    a.record(spec_, points_[1], bad);
    ResultStore b(db("b.db"));
    b.init(spec_);
    PointResult extra = ok(2.0);
    extra.metrics.emplace_back("only_in_b", 7);
    b.record(spec_, points_[1], extra);  // ok row replaces a's timeout
    b.record(spec_, points_[2], ok(3.0));
    PointResult bad0;
    bad0.status = "failed";
    b.record(spec_, points_[0], bad0);  // failed row does not replace a's ok row
  }
  ResultStore out(db("merged.db"));
  EXPECT_EQ(out.merge_from(db("a.db")), 2u);
  EXPECT_EQ(out.merge_from(db("b.db")), 2u);
  Table t = out.read_all();
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0][t.column("status")].text, "ok");
  EXPECT_EQ(t.rows[0][t.column("step_time_s_mean")].number, 1.0);
  EXPECT_EQ(t.rows[1][t.column("status")].text, "ok");
  EXPECT_EQ(t.rows[1][t.column("only_in_b")].number, 7);
  EXPECT_EQ(out.axes().size(), 2u);
  EXPECT_EQ(out.meta("spec_hash"), spec_.hash);
  // Merging the same shard again changes nothing.
  EXPECT_EQ(out.merge_from(db("b.db")), 0u);
  EXPECT_EQ(out.row_count(), 3u);
}

TEST_F(StoreTest, MergeRefusesAnotherSweep) {
  {
    ResultStore a(db("a.db"));
    a.init(spec_);
    a.record(spec_, points_[0], ok(1.0));
    auto other = parse_spec("axes: [{option: chunk, values: [1MiB]}]", "o.yaml");
    ResultStore b(db("b.db"));
    b.init(other);
    b.record(other, expand_points(other)[0], ok(1.0));
  }
  ResultStore out(db("merged.db"));
  out.merge_from(db("a.db"));
  EXPECT_THROW(out.merge_from(db("b.db")), StoreError);
  EXPECT_EQ(out.row_count(), 1u);
}

}  // namespace
}  // namespace aggnet::sweeps
