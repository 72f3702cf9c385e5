// The SQLite results store of a sweep: one row per point with its axis values, every
// metric of `aggnet run --json`'s summary (one column per key, added as keys appear),
// status, error text, wall time, aggnet version and spec hash. Each point is written in
// its own transaction, so a crash or Ctrl-C loses no finished point.
#pragma once

#include <cstddef>
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

/// Outcome of one point's `aggnet run`.
struct PointResult {
  /// "ok", "bad_input" (exit 2), "failed" (other non-zero exit or unusable output),
  /// "crashed" (killed by a signal) or "timeout".
  std::string status = "ok";
  std::string error;           ///< empty when ok; else what went wrong (one line)
  int exit_code = 0;           ///< exit status, or -signal number when killed
  double elapsed_s = 0;        ///< wall time of the point, measured by the runner
  std::string aggnet_version;  ///< from the run's JSON, else the sweep's own version
  std::vector<std::pair<std::string, double>> metrics;  ///< the JSON summary
};

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

/// An open results database.
class ResultStore {
 public:
  /// Opens or creates the database file. Errors: StoreError.
  explicit ResultStore(const std::string& path);
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
  void exec(const std::string& sql);
  std::vector<std::pair<std::string, std::string>> columns();  // name, declared type
  void ensure_column(const std::string& name, const std::string& type);
  void refresh_columns();
  void insert_axes(const std::vector<StoredAxis>& axes);
  void put_meta(const std::string& key, const std::string& value);

  sqlite3* db_ = nullptr;
  std::string path_;
  std::set<std::string> column_set_;
};

}  // namespace aggnet::sweeps
