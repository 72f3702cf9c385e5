// SQLite results store (C API).
#include "sweeps/store.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <map>
#include <regex>

#include "common/csv.h"

namespace aggnet::sweeps {
namespace {

/// Fixed columns of the points table, in order, with their SQL types.
const std::vector<std::pair<std::string, std::string>> kFixedColumns = {
    {"point_id", "TEXT PRIMARY KEY"},
    {"point_index", "INTEGER"},
    {"status", "TEXT"},
    {"error", "TEXT"},
    {"exit_code", "INTEGER"},
    {"elapsed_s", "REAL"},
    {"aggnet_version", "TEXT"},
    {"spec_hash", "TEXT"},
    {"finished_at", "TEXT"},
    {"options", "TEXT"},
};

std::string quote_id(const std::string& name) {
  std::string q = "\"";
  for (char c : name) {
    q += c;
    if (c == '"') q += '"';
  }
  return q + "\"";
}

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// RAII prepared statement.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
      throw StoreError(fmt::format("sqlite: {} (in: {})", sqlite3_errmsg(db), sql));
    }
  }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  void bind(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.c_str(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, double d) { sqlite3_bind_double(stmt_, i, d); }
  void bind(int i, long long v) { sqlite3_bind_int64(stmt_, i, v); }
  void bind_null(int i) { sqlite3_bind_null(stmt_, i); }
  void bind_value(int i, sqlite3_value* v) { sqlite3_bind_value(stmt_, i, v); }

  /// Steps once: true when a row is available.
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw StoreError(fmt::format("sqlite: {}", sqlite3_errmsg(db_)));
  }
  std::string text(int i) {
    const unsigned char* t = sqlite3_column_text(stmt_, i);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  sqlite3_stmt* get() { return stmt_; }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

Cell read_cell(sqlite3_stmt* st, int i) {
  Cell c;
  switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL:
      break;
    case SQLITE_INTEGER:
      c.null = false;
      c.is_number = true;
      c.number = static_cast<double>(sqlite3_column_int64(st, i));
      c.text = std::to_string(sqlite3_column_int64(st, i));
      break;
    case SQLITE_FLOAT:
      c.null = false;
      c.is_number = true;
      c.number = sqlite3_column_double(st, i);
      c.text = fmt::format("{}", c.number);
      break;
    default: {
      c.null = false;
      const unsigned char* t = sqlite3_column_text(st, i);
      c.text = t ? reinterpret_cast<const char*>(t) : "";
      break;
    }
  }
  return c;
}

/// A transaction that rolls back unless committed.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) { run("BEGIN IMMEDIATE"); }
  ~Transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void commit() {
    run("COMMIT");
    done_ = true;
  }

 private:
  void run(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      throw StoreError("sqlite: " + msg);
    }
  }
  sqlite3* db_;
  bool done_ = false;
};

}  // namespace

int Table::column(const std::string& name) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

ResultStore::ResultStore(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(fmt::format("{}: cannot open results database: {}", path, msg));
  }
  sqlite3_busy_timeout(db_, 30000);
  // Rollback journal + full sync: a committed point survives SIGKILL and power loss,
  // and the database stays a single self-contained file (easy to copy and merge).
  exec("PRAGMA journal_mode=DELETE");
  exec("PRAGMA synchronous=FULL");
  exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)");
  exec(
      "CREATE TABLE IF NOT EXISTS axes (position INTEGER PRIMARY KEY, name TEXT, option TEXT, "
      "kind TEXT)");
  std::string create = "CREATE TABLE IF NOT EXISTS points (";
  for (std::size_t i = 0; i < kFixedColumns.size(); ++i) {
    create += (i ? ", " : "") + quote_id(kFixedColumns[i].first) + " " + kFixedColumns[i].second;
  }
  exec(create + ")");
  refresh_columns();
}

ResultStore::~ResultStore() { sqlite3_close(db_); }

void ResultStore::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw StoreError(fmt::format("{}: sqlite: {}", path_, msg));
  }
}

std::vector<std::pair<std::string, std::string>> ResultStore::columns() {
  std::vector<std::pair<std::string, std::string>> cols;
  Stmt st(db_, "PRAGMA table_info(points)");
  while (st.step()) cols.emplace_back(st.text(1), st.text(2));
  return cols;
}

void ResultStore::refresh_columns() {
  column_set_.clear();
  for (const auto& [name, type] : columns()) column_set_.insert(name);
}

void ResultStore::ensure_column(const std::string& name, const std::string& type) {
  if (column_set_.count(name)) return;
  exec("ALTER TABLE points ADD COLUMN " + quote_id(name) + " " + type);
  column_set_.insert(name);
}

std::string ResultStore::meta(const std::string& key) {
  Stmt st(db_, "SELECT value FROM meta WHERE key = ?");
  st.bind(1, key);
  return st.step() ? st.text(0) : "";
}

namespace {
// Two sweeps are the same design space when their axes agree in name and option, in order.
bool same_axes(const std::vector<StoredAxis>& a, const std::vector<StoredAxis>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].option != b[i].option) return false;
  return true;
}
}  // namespace

void ResultStore::insert_axes(const std::vector<StoredAxis>& axes) {
  for (std::size_t i = 0; i < axes.size(); ++i) {
    Stmt st(db_, "INSERT INTO axes (position, name, option, kind) VALUES (?, ?, ?, ?)");
    st.bind(1, static_cast<long long>(i));
    st.bind(2, axes[i].name);
    st.bind(3, axes[i].option);
    st.bind(4, axes[i].kind);
    st.step();
  }
}

void ResultStore::put_meta(const std::string& key, const std::string& value) {
  Stmt st(db_, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
  st.bind(1, key);
  st.bind(2, value);
  st.step();
}

std::vector<StoredAxis> ResultStore::axes() {
  std::vector<StoredAxis> out;
  Stmt st(db_, "SELECT name, option, kind FROM axes ORDER BY position");
  while (st.step()) out.push_back({st.text(0), st.text(1), st.text(2)});
  return out;
}

void ResultStore::init(const SweepSpec& spec) {
  std::vector<StoredAxis> mine;
  for (const auto& a : spec.axes) mine.push_back({a.name, a.option, kind_name(a.kind)});
  Transaction tx(db_);
  auto stored = axes();
  if (!stored.empty() || row_count() > 0) {
    if (!same_axes(stored, mine)) {
      throw StoreError(fmt::format(
          "{}: the database holds a sweep with other axes; use a new --out directory", path_));
    }
  } else {
    insert_axes(mine);
  }
  for (const auto& a : spec.axes) {
    ensure_column(a.name, "TEXT");
    if (a.kind != ValueKind::kText) ensure_column(a.name + "_value", "REAL");
  }
  if (meta("created_at").empty()) put_meta("created_at", now_utc());
  put_meta("spec_hash", spec.hash);
  put_meta("spec_name", spec.name);
  put_meta("spec_file", spec.file);
  put_meta("metric", spec.metric);
  put_meta("mode", spec.mode == SweepMode::kGrid ? "grid" : "zip");
  tx.commit();
}

std::size_t ResultStore::row_count() {
  Stmt st(db_, "SELECT COUNT(*) FROM points");
  st.step();
  return static_cast<std::size_t>(sqlite3_column_int64(st.get(), 0));
}

std::set<std::string> ResultStore::finished_ids() {
  std::set<std::string> ids;
  Stmt st(db_, "SELECT point_id FROM points WHERE status = 'ok'");
  while (st.step()) ids.insert(st.text(0));
  return ids;
}

std::string ResultStore::metric_column(const std::string& key) {
  static const std::regex ident("[A-Za-z_][A-Za-z0-9_]*");
  bool clash = !std::regex_match(key, ident);
  for (const auto& [name, type] : kFixedColumns) clash = clash || name == key;
  for (const auto& a : axes()) clash = clash || key == a.name || key == a.name + "_value";
  if (!clash) return key;
  std::string s = "metric_";
  for (char c : key) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

void ResultStore::record(const SweepSpec& spec, const Point& point, const PointResult& r) {
  Transaction tx(db_);
  std::vector<std::string> cols = {"point_id",    "point_index", "status",         "error",
                                   "exit_code",   "elapsed_s",   "aggnet_version", "spec_hash",
                                   "finished_at", "options"};
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    cols.push_back(spec.axes[a].name);
    if (spec.axes[a].kind != ValueKind::kText) cols.push_back(spec.axes[a].name + "_value");
  }
  std::vector<std::string> metric_cols;
  for (const auto& [key, value] : r.metrics) {
    metric_cols.push_back(metric_column(key));
    ensure_column(metric_cols.back(), "REAL");
    cols.push_back(metric_cols.back());
  }
  std::string sql = "INSERT OR REPLACE INTO points (";
  for (std::size_t i = 0; i < cols.size(); ++i) sql += (i ? ", " : "") + quote_id(cols[i]);
  sql += ") VALUES (";
  for (std::size_t i = 0; i < cols.size(); ++i) sql += i ? ", ?" : "?";
  sql += ")";
  Stmt st(db_, sql);
  int i = 1;
  st.bind(i++, point.id);
  st.bind(i++, static_cast<long long>(point.index));
  st.bind(i++, r.status);
  if (r.error.empty()) {
    st.bind_null(i++);
  } else {
    st.bind(i++, r.error);
  }
  st.bind(i++, static_cast<long long>(r.exit_code));
  st.bind(i++, r.elapsed_s);
  st.bind(i++, r.aggnet_version);
  st.bind(i++, spec.hash);
  st.bind(i++, now_utc());
  st.bind(i++, point.options_json());
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    st.bind(i++, point.labels[a]);
    if (spec.axes[a].kind != ValueKind::kText) {
      if (point.numbers[a]) {
        st.bind(i++, *point.numbers[a]);
      } else {
        st.bind_null(i++);
      }
    }
  }
  for (const auto& [key, value] : r.metrics) st.bind(i++, value);
  st.step();
  tx.commit();
}

Table ResultStore::read_all() {
  Table t;
  for (const auto& [name, type] : columns()) t.columns.push_back(name);
  Stmt st(db_, "SELECT * FROM points ORDER BY point_index, point_id");
  while (st.step()) {
    std::vector<Cell> row;
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      row.push_back(read_cell(st.get(), static_cast<int>(i)));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

void ResultStore::export_csv(const std::string& csv_path) {
  const Table t = read_all();
  CsvWriter csv;
  csv.row(t.columns);
  for (const auto& row : t.rows) {
    for (const auto& c : row) csv.field(c.null ? std::string() : c.text);  // numbers as read
    csv.end_row();
  }
  const std::string tmp = csv_path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw StoreError(csv_path + ": cannot write CSV file");
    out << csv.str();
    if (!out) throw StoreError(csv_path + ": cannot write CSV file");
  }
  if (std::rename(tmp.c_str(), csv_path.c_str()) != 0) {
    throw StoreError(csv_path + ": cannot write CSV file");
  }
}

std::size_t ResultStore::merge_from(const std::string& other_path) {
  sqlite3* other = nullptr;
  if (sqlite3_open_v2(other_path.c_str(), &other, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::string msg = other ? sqlite3_errmsg(other) : "out of memory";
    sqlite3_close(other);
    throw StoreError(fmt::format("{}: cannot open results database: {}", other_path, msg));
  }
  struct Closer {
    sqlite3* db;
    ~Closer() { sqlite3_close(db); }
  } closer{other};

  std::vector<StoredAxis> their_axes;
  std::map<std::string, std::string> their_meta;
  std::vector<std::pair<std::string, std::string>> their_cols;
  try {
    Stmt a(other, "SELECT name, option, kind FROM axes ORDER BY position");
    while (a.step()) their_axes.push_back({a.text(0), a.text(1), a.text(2)});
    Stmt m(other, "SELECT key, value FROM meta");
    while (m.step()) their_meta[m.text(0)] = m.text(1);
    Stmt c(other, "PRAGMA table_info(points)");
    while (c.step()) their_cols.emplace_back(c.text(1), c.text(2));
  } catch (const StoreError& e) {
    throw StoreError(fmt::format("{}: not an aggnet sweep database ({})", other_path, e.what()));
  }
  if (their_cols.empty()) throw StoreError(other_path + ": not an aggnet sweep database");

  Transaction tx(db_);
  auto mine = axes();
  if (mine.empty() && row_count() == 0) {
    insert_axes(their_axes);
    for (const auto& [k, v] : their_meta) put_meta(k, v);
  } else {
    if (!same_axes(mine, their_axes)) {
      throw StoreError(fmt::format("{}: holds a sweep with other axes than {}", other_path, path_));
    }
  }
  for (const auto& [name, type] : their_cols) {
    if (name != "point_id") ensure_column(name, type.empty() ? "REAL" : type);
  }

  std::string sql = "INSERT OR REPLACE INTO points (";
  for (std::size_t i = 0; i < their_cols.size(); ++i) {
    sql += (i ? ", " : "") + quote_id(their_cols[i].first);
  }
  sql += ") VALUES (";
  for (std::size_t i = 0; i < their_cols.size(); ++i) sql += i ? ", ?" : "?";
  sql += ")";
  Stmt insert(db_, sql);
  Stmt existing(db_, "SELECT status FROM points WHERE point_id = ?");
  Stmt rows(other, "SELECT * FROM points ORDER BY point_index, point_id");
  int id_col = -1, status_col = -1;
  for (std::size_t i = 0; i < their_cols.size(); ++i) {
    if (their_cols[i].first == "point_id") id_col = static_cast<int>(i);
    if (their_cols[i].first == "status") status_col = static_cast<int>(i);
  }
  if (id_col < 0 || status_col < 0) throw StoreError(other_path + ": not an aggnet sweep database");
  std::size_t taken = 0;
  while (rows.step()) {
    const std::string id = rows.text(id_col);
    const std::string status = rows.text(status_col);
    sqlite3_reset(existing.get());
    existing.bind(1, id);
    if (existing.step()) {
      const std::string have = existing.text(0);
      if (have == "ok" || status != "ok") continue;
    }
    sqlite3_reset(insert.get());
    for (std::size_t i = 0; i < their_cols.size(); ++i) {
      insert.bind_value(static_cast<int>(i + 1),
                        sqlite3_column_value(rows.get(), static_cast<int>(i)));
    }
    insert.step();
    ++taken;
  }
  tx.commit();
  return taken;
}

}  // namespace aggnet::sweeps
