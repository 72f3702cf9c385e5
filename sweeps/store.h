// The SQLite results store of a sweep: table `points` has one row per point with its
// axis values, its run options (one column each, numbers with the unit in the column
// name), every metric of `aggnet run --json`'s summary (one column per key, added as keys
// appear; counts INTEGER, measures REAL), status, error text, wall time, aggnet version
// and spec hash; tables `sites` and `links` hold the run's per-site and per-link results
// (one row per point and site / link), and views `site_results` / `link_results` join
// them to the point's axes and options. Each point is written in its own transaction, so
// a crash or Ctrl-C loses no finished point.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sweeps/spec.h"

struct sqlite3;

namespace aggnet::sweeps {

/// A database problem (cannot open, disk full, foreign schema). what() is one line.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One value of a per-site or per-link field (text or number).
struct FieldValue {
  bool is_text = false;
  std::string text;
  double number = 0;
};

/// One site or link of a run: field name -> value, in the JSON's order.
using Record = std::vector<std::pair<std::string, FieldValue>>;

/// Outcome of one point's `aggnet run`.
struct PointResult {
  /// "ok", "bad_input" (exit 2), "failed" (other non-zero exit or unusable output),
  /// "crashed" (killed by a signal) or "timeout".
  std::string status = "ok";
  std::string error;           ///< empty when ok; else what went wrong (one line)
  int exit_code = 0;           ///< exit status, or -signal number when killed
  double wall_time_s = 0;      ///< wall time of the point, measured by the runner
  std::string aggnet_version;  ///< from the run's JSON, else the sweep's own version
  std::vector<std::pair<std::string, double>> metrics;  ///< the JSON summary
  std::vector<Record> sites;                            ///< the JSON's `sites` (flat fields)
  std::vector<Record> links;  ///< the JSON's `links` (`from`/`to` as from_site/to_site)
};

/// Whether a result field or summary key counts something (stored INTEGER): its name
/// carries no unit of time, rate or ratio ("events", "chunks", "payload_bytes" are;
/// "busy_time_s", "utilization", "idle_fraction", "delay_ms" are not).
bool is_count_key(const std::string& key);

/// Merges results databases into `out_path` all or nothing: the merge goes to a temporary
/// copy next to it that replaces `out_path` only when every input merged; on an error
/// `out_path` is left as it was and no temporary file remains. Returns the rows taken
/// from the inputs; `rows` (when given) receives the merged row count.
/// Errors: StoreError (an unreadable, foreign or mismatched database; `out_path` a
/// symbolic link, even a dangling one, or not a regular file).
std::size_t merge_databases(const std::string& out_path, const std::vector<std::string>& inputs,
                            std::size_t* rows = nullptr);

/// One cell of a row read back (NULL, a number or text).
struct Cell {
  bool null = true;
  bool is_number = false;
  double number = 0;
  std::string text;  ///< text form for text cells (and for numbers, their shortest form)
};

/// All rows of the points table, ordered by point_index then point_id.
struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
  /// Index of a column, or -1.
  int column(const std::string& name) const;
};

/// One axis as recorded in the database's `axes` table.
struct StoredAxis {
  std::string name, option, kind;
};

/// What a results database on disk holds, as far as deciding whose it is.
struct StoredSweep {
  std::vector<StoredAxis> axes;             ///< empty for a database no sweep has used
  std::map<std::string, std::string> meta;  ///< the `meta` table (spec_name, spec_hash, ...)
  std::size_t rows = 0;                     ///< rows of the points table
};

/// Reads a results database's axes, meta and row count without writing to it (a hot
/// journal is rolled back). An empty file holds no sweep. Errors: StoreError (not an
/// SQLite database, or not an aggnet results database).
StoredSweep read_sweep(const std::string& path);

/// What makes `stored` another sweep's than `spec`'s: "" when it is this sweep's (same spec
/// name and axes; the values may have changed) or holds none yet, else e.g. "spec 'a', not
/// 'b'; axes schedule, buffer, not schedule".
std::string sweep_mismatch(const StoredSweep& stored, const SweepSpec& spec);

/// An open results database.
class ResultStore {
 public:
  /// Opens or creates the database file (`name`, when given, is the path used in
  /// messages). Errors: StoreError (also when the file is not an SQLite database).
  explicit ResultStore(const std::string& path, const std::string& name = "");
  ~ResultStore();
  ResultStore(const ResultStore&) = delete;
  ResultStore& operator=(const ResultStore&) = delete;

  /// Creates the tables for `spec` if missing and records the spec's metadata.
  /// Errors: StoreError when the database already holds a sweep with other axes.
  void init(const SweepSpec& spec);

  /// Number of rows in the points table (0 for a fresh database).
  std::size_t row_count();
  /// Ids of points whose status is "ok" (skipped by --resume).
  std::set<std::string> finished_ids();
  /// Writes (inserts or replaces) the row of one point in one transaction, adding a
  /// column for every summary key not seen before. Errors: StoreError.
  void record(const SweepSpec& spec, const Point& point, const PointResult& result);

  /// A value from the `meta` table ("spec_hash", "metric", "spec_name", ...), or "".
  std::string meta(const std::string& key);
  /// The axes recorded for this sweep, in spec order.
  std::vector<StoredAxis> axes();
  /// Every row of the points table.
  Table read_all();
  /// Every row of `table` ("points", "sites", "links"), ordered by rowid.
  Table read_table(const std::string& table);
  /// Writes every row as CSV (header line, RFC 4180 quoting). Errors: StoreError.
  void export_csv(const std::string& csv_path);

  /// Merges another results database into this one (one transaction): columns are
  /// united; a point present in both keeps an "ok" row over a failed one, else the row
  /// already here. Returns the number of rows taken from `other`. Errors: StoreError
  /// (also when the two sweeps have different axes).
  std::size_t merge_from(const std::string& other_path);

  /// Column name used for a summary key (the key itself, or "metric_<key>" when it would
  /// collide with a fixed or axis column or is not a plain identifier).
  std::string metric_column(const std::string& key);

 private:
  void open_schema();
  void exec(const std::string& sql);
  // name, declared type
  std::vector<std::pair<std::string, std::string>> columns(const std::string& table = "points");
  void ensure_column(const std::string& name, const std::string& type,
                     const std::string& table = "points");
  void refresh_columns();
  void insert_axes(const std::vector<StoredAxis>& axes);
  void put_meta(const std::string& key, const std::string& value);
  void write_records(const std::string& table, const std::string& point_id,
                     const std::vector<Record>& records);
  void refresh_views();
  std::size_t merge_records(sqlite3* other, const std::string& table,
                            const std::set<std::string>& ids);

  sqlite3* db_ = nullptr;
  std::string path_;
  std::map<std::string, std::map<std::string, std::string>> tables_;  // table -> col -> type
};

}  // namespace aggnet::sweeps
