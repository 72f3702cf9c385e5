// SQLite results store: rows, dynamic metric columns, resume ids, CSV, merge.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
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
  for (const char* c : {"point_id", "status", "error", "wall_time_s", "aggnet_version", "spec_hash",
                        "schedule", "buffer", "buffer_bytes", "step_time_s_mean",
                        "slowdown_vs_colocated", "new_metric_bytes"}) {
    EXPECT_GE(t.column(c), 0) << c;
  }
  EXPECT_LT(t.column("schedule_value"), 0);
  EXPECT_EQ(t.rows[0][t.column("step_time_s_mean")].number, 2.5);
  EXPECT_EQ(t.rows[1][t.column("new_metric_bytes")].number, 42);
  EXPECT_TRUE(t.rows[0][t.column("new_metric_bytes")].null);
  EXPECT_EQ(t.rows[2][t.column("status")].text, "bad_input");
  EXPECT_EQ(t.rows[1][t.column("buffer_bytes")].number, 1073741824.0);
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

/// typeof() of every column of the first row of `table` and its declared type, read back
/// with SQLite itself (what pandas' read_sql sees).
std::map<std::string, std::pair<std::string, std::string>> column_types(const std::string& path,
                                                                        const std::string& table) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::map<std::string, std::pair<std::string, std::string>> out;
  std::vector<std::string> names;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, ("PRAGMA table_info(" + table + ")").c_str(), -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) {
    const std::string name = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
    names.push_back(name);
    out[name].first = reinterpret_cast<const char*>(sqlite3_column_text(st, 2));
  }
  sqlite3_finalize(st);
  for (const auto& n : names) {
    const std::string sql = "SELECT typeof(\"" + n + "\") FROM " + table + " LIMIT 1";
    sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr);
    if (sqlite3_step(st) == SQLITE_ROW) {
      out[n].second = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

FieldValue text(const std::string& s) { return {true, s, 0}; }
FieldValue num(double d) { return {false, "", d}; }

TEST(CountKeys, CountsAreWholeQuantitiesWithoutATimeRateOrRatioUnit) {
  for (const char* k : {"events", "steps", "rounds_to_eps", "chunks", "payload_bytes",
                        "buffer_high_water_bytes_max", "slot_stalls_total", "retransmissions"}) {
    EXPECT_TRUE(is_count_key(k)) << k;
  }
  for (const char* k : {"busy_time_s", "delay_ms", "utilization", "gpu_idle_fraction",
                        "allreduce_bandwidth_gbps", "slowdown_vs_colocated", "step_time_s_mean",
                        "slot_hold_time_mean_ns", "link_utilization_max"}) {
    EXPECT_FALSE(is_count_key(k)) << k;
  }
}

TEST_F(StoreTest, SchemaReadsIntoTypedColumns) {
  auto spec = parse_spec(R"(
base: {platform: platforms/nine_city.yaml, gradient: 256MiB, chunk: 1MiB, flow-control: credit,
       steps: 3, set: {defaults.link.bandwidth: 10Gbps}}
axes:
  - {option: schedule, values: [triads]}
  - {option: buffer, values: [64MiB]}
)",
                         "t.yaml");
  const Point p = expand_points(spec).at(0);
  PointResult r = ok(1.5);
  r.wall_time_s = 0.25;
  r.metrics.emplace_back("events", 644);
  r.metrics.emplace_back("wall_time_s", 9.0);  // the run's own: not a second wall-time column
  r.sites = {{{"site", text("nyc")}, {"contributions", num(16)}, {"idle_fraction", num(0.125)}},
             {{"site", text("lon")}, {"contributions", num(8)}, {"idle_fraction", num(0.5)}}};
  r.links = {{{"from", text("nyc")},
              {"to", text("lon")},
              {"payload_bytes", num(786432)},
              {"busy_time_s", num(6.5e-5)}}};
  {
    ResultStore store(db("t.db"));
    store.init(spec);
    store.record(spec, p, r);
  }
  const auto points = column_types(db("t.db"), "points");
  using TP = std::pair<std::string, std::string>;
  // The base options as columns, numbers with their unit in the name.
  EXPECT_EQ(points.at("platform"), TP("TEXT", "text"));
  EXPECT_EQ(points.at("gradient"), TP("TEXT", "text"));
  EXPECT_EQ(points.at("gradient_bytes"), TP("INTEGER", "integer"));
  EXPECT_EQ(points.at("chunk_bytes"), TP("INTEGER", "integer"));
  EXPECT_EQ(points.at("flow_control"), TP("TEXT", "text"));
  EXPECT_EQ(points.at("steps"), TP("INTEGER", "integer"));
  EXPECT_EQ(points.at("set_defaults_link_bandwidth"), TP("TEXT", "text"));
  EXPECT_EQ(points.at("set_defaults_link_bandwidth_bps"), TP("REAL", "real"));
  EXPECT_EQ(points.at("buffer_bytes"), TP("INTEGER", "integer"));
  EXPECT_EQ(points.at("schedule"), TP("TEXT", "text"));
  EXPECT_EQ(points.count("schedule_value"), 0u);
  // Counts INTEGER, measures REAL, one wall-time column.
  EXPECT_EQ(points.at("events"), TP("INTEGER", "integer"));
  EXPECT_EQ(points.at("step_time_s_mean"), TP("REAL", "real"));
  EXPECT_EQ(points.at("wall_time_s"), TP("REAL", "real"));
  EXPECT_EQ(points.count("metric_wall_time_s"), 0u);
  EXPECT_EQ(points.count("elapsed_s"), 0u);
  const auto sites = column_types(db("t.db"), "sites");
  EXPECT_EQ(sites.at("site"), TP("TEXT", "text"));
  EXPECT_EQ(sites.at("contributions"), TP("INTEGER", "integer"));
  EXPECT_EQ(sites.at("idle_fraction"), TP("REAL", "real"));
  const auto links = column_types(db("t.db"), "links");
  EXPECT_EQ(links.at("from_site"), TP("TEXT", "text"));
  EXPECT_EQ(links.at("payload_bytes"), TP("INTEGER", "integer"));
  EXPECT_EQ(links.at("busy_time_s"), TP("REAL", "real"));

  ResultStore store(db("t.db"));
  Table t = store.read_all();
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][t.column("gradient_bytes")].number, 268435456.0);
  EXPECT_EQ(t.rows[0][t.column("set_defaults_link_bandwidth_bps")].number, 1e10);
  EXPECT_EQ(t.rows[0][t.column("wall_time_s")].number, 0.25);
  Table s = store.read_table("sites");
  ASSERT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(s.rows[1][s.column("site")].text, "lon");
  EXPECT_EQ(s.rows[1][s.column("point_id")].text, p.id);
  // A rerun of the point replaces its site and link rows.
  r.sites.pop_back();
  store.record(spec, p, r);
  EXPECT_EQ(store.read_table("sites").rows.size(), 1u);
  EXPECT_EQ(store.read_table("links").rows.size(), 1u);
}

TEST_F(StoreTest, ViewsJoinSitesAndLinksToTheirPointsAxes) {
  ResultStore store(db("v.db"));
  store.init(spec_);
  PointResult r = ok(1.0);
  r.sites = {{{"site", text("nyc")}, {"buffer_bytes", num(1048576)}}};
  store.record(spec_, points_[1], r);
  sqlite3* db3 = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db("v.db").c_str(), &db3, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db3,
                               "SELECT schedule, buffer, point_buffer_bytes, site, buffer_bytes "
                               "FROM site_results",
                               -1, &st, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db3);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "all-to-all");
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)), "1GiB");
  EXPECT_EQ(sqlite3_column_int64(st, 2), 1073741824);  // the axis, renamed: sites has one too
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 3)), "nyc");
  EXPECT_EQ(sqlite3_column_int64(st, 4), 1048576);
  EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(db3);
}

TEST_F(StoreTest, GarbageFileIsRefusedAndLeftAlone) {
  // Under LeakSanitizer (the sanitizer CI preset) this also checks that the failed
  // constructor closes its SQLite handle.
  const std::string garbage = "this is not a database\n" + std::string(2000, 'x');
  { std::ofstream(db("g.db")) << garbage; }
  try {
    ResultStore store(db("g.db"));
    FAIL() << "opened a garbage file";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("not an SQLite database"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(db("g.db")), std::string::npos) << e.what();
  }
  std::ifstream in(db("g.db"));
  std::stringstream got;
  got << in.rdbuf();
  EXPECT_EQ(got.str(), garbage);
}

TEST_F(StoreTest, MergeIsAllOrNothing) {
  {
    ResultStore a(db("a.db"));
    a.init(spec_);
    PointResult r = ok(1.0);
    r.sites = {{{"site", text("nyc")}, {"contributions", num(4)}}};
    a.record(spec_, points_[0], r);
  }
  std::ofstream(db("junk.db")) << "garbage, not SQLite" << std::string(1000, 'z');
  // Into a new file: an input that fails leaves no output and no temporary file.
  EXPECT_THROW(merge_databases(db("new.db"), {db("a.db"), db("junk.db")}), StoreError);
  EXPECT_FALSE(fs::exists(db("new.db")));
  // Into a garbage file: refused, the file is left as it was.
  EXPECT_THROW(merge_databases(db("junk.db"), {db("a.db")}), StoreError);
  EXPECT_EQ(fs::file_size(db("junk.db")), 1019u);
  // Into an existing database: a failing input leaves its rows untouched.
  std::size_t rows = 0;
  EXPECT_EQ(merge_databases(db("out.db"), {db("a.db")}, &rows), 1u);
  EXPECT_EQ(rows, 1u);
  {
    ResultStore b(db("b.db"));
    b.init(spec_);
    b.record(spec_, points_[3], ok(2.0));
  }
  EXPECT_THROW(merge_databases(db("out.db"), {db("b.db"), db("junk.db")}), StoreError);
  {
    ResultStore out(db("out.db"));
    EXPECT_EQ(out.row_count(), 1u);
    EXPECT_EQ(out.read_table("sites").rows.size(), 1u);  // site rows merged with their point
  }
  EXPECT_EQ(merge_databases(db("out.db"), {db("b.db")}, &rows), 1u);
  EXPECT_EQ(rows, 2u);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir_)) left.push_back(e.path().filename().string());
  for (const auto& f : left) EXPECT_EQ(f.find(".tmp"), std::string::npos) << f;
  // Not a regular file: refused.
  EXPECT_THROW(merge_databases(dir_.string(), {db("a.db")}), StoreError);
}

// The merged file replaces OUT.db: a link there, even a dangling one, would be replaced or
// written through, so it is refused and left as it was.
TEST_F(StoreTest, MergeRefusesALinkAsItsOutput) {
  {
    ResultStore a(db("a.db"));
    a.init(spec_);
    a.record(spec_, points_[0], ok(1.0));
  }
  fs::create_symlink(db("nowhere.db"), db("dangling.db"));
  EXPECT_THROW(merge_databases(db("dangling.db"), {db("a.db")}), StoreError);
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(db("dangling.db"))));
  EXPECT_FALSE(fs::exists(db("nowhere.db")));
  fs::create_symlink(db("a.db"), db("link.db"));
  EXPECT_THROW(merge_databases(db("link.db"), {db("a.db")}), StoreError);
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(db("link.db"))));
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream got;
  got << in.rdbuf();
  return got.str();
}

// --resume decides from read_sweep and sweep_mismatch whether DIR/results.db is this
// spec's sweep, without writing to it.
TEST_F(StoreTest, TellsAnotherSpecsSweepWithoutWriting) {
  {
    ResultStore a(db("a.db"));
    a.init(spec_);
    a.record(spec_, points_[0], ok(1.0));
  }
  const std::string before = bytes_of(db("a.db"));
  const StoredSweep stored = read_sweep(db("a.db"));
  EXPECT_EQ(stored.rows, 1u);
  EXPECT_EQ(stored.meta.at("spec_name"), "s");
  EXPECT_EQ(sweep_mismatch(stored, spec_), "");
  // The same spec with other values is this sweep's (points are matched by their options).
  const auto edited = parse_spec(
      "axes: [{option: schedule, values: [ring]}, {option: buffer, values: [2MiB]}]", "s.yaml");
  EXPECT_EQ(sweep_mismatch(stored, edited), "");
  const auto renamed = parse_spec(
      "axes: [{option: schedule, values: [ring]}, {option: buffer, values: [2MiB]}]", "t.yaml");
  EXPECT_EQ(sweep_mismatch(stored, renamed), "spec 's', not 't'");
  const auto other =
      parse_spec("axes: [{option: set:defaults.link.bandwidth, values: [10Gbps]}]", "o.yaml");
  EXPECT_EQ(sweep_mismatch(stored, other),
            "spec 's', not 'o'; axes schedule, buffer, not link_bandwidth "
            "(set:defaults.link.bandwidth)");
  EXPECT_EQ(bytes_of(db("a.db")), before);
  // An empty file holds no sweep yet; garbage is no results database.
  { std::ofstream(db("empty.db")); }
  EXPECT_EQ(sweep_mismatch(read_sweep(db("empty.db")), other), "");
  { std::ofstream(db("junk.db")) << "garbage, not SQLite" << std::string(1000, 'z'); }
  EXPECT_THROW(read_sweep(db("junk.db")), StoreError);
  EXPECT_EQ(fs::file_size(db("junk.db")), 1019u);
}

}  // namespace
}  // namespace aggnet::sweeps
