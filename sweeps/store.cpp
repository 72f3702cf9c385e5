// SQLite results store (C API).
#include "sweeps/store.h"

#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>

#include "common/atomic_file.h"
#include "common/csv.h"
#include "common/strings.h"

namespace fs = std::filesystem;

namespace aggnet::sweeps {
namespace {

/// Tables of per-site and per-link results, one row per point and site / link.
const std::vector<std::string> kRecordTables = {"sites", "links"};

/// The run option columns of a spec: every option its base or axes set that no axis
/// column already holds.
struct OptionColumn {
  std::string option;         ///< run option, or "set:PATH"
  std::string column;         ///< label as written (numbers for plain-number options)
  std::string number_column;  ///< value in base units ("gradient_bytes"), or ""
  ValueKind kind = ValueKind::kText;
  bool integer = false;  ///< whole-number option (stored INTEGER)
};

std::vector<OptionColumn> option_columns(const SweepSpec& spec);

/// SQL type of a result field or summary key.
std::string field_type(const std::string& key, bool is_text) {
  if (is_text) return "TEXT";
  return is_count_key(key) ? "INTEGER" : "REAL";
}

/// Fixed columns of the points table, in order, with their SQL types.
const std::vector<std::pair<std::string, std::string>> kFixedColumns = {
    {"point_id", "TEXT PRIMARY KEY"},
    {"point_index", "INTEGER"},
    {"status", "TEXT"},
    {"error", "TEXT"},
    {"exit_code", "INTEGER"},
    {"wall_time_s", "REAL"},
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
  /// A number in a column of SQL type `type`: whole numbers go to INTEGER columns as
  /// integers (typeof() = 'integer'), everything else as REAL.
  void bind_number(int i, double v, const std::string& type) {
    if (type == "INTEGER" && std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e18) {
      bind(i, static_cast<long long>(v));
    } else {
      bind(i, v);
    }
  }
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

bool is_count_key(const std::string& key) {
  static const std::set<std::string> measures = {
      "s",      "ms",   "us",       "ns",    "ps",       "gbps",      "mbps",
      "bps",    "hz",   "fraction", "ratio", "slowdown", "bandwidth", "utilization",
      "margin", "rate", "mean",     "skew",  "share",    "factor"};
  for (const auto& token : split(key, '_')) {
    if (measures.count(token)) return false;
  }
  return true;
}

namespace {

std::string option_column_name(const std::string& option) {
  std::string col = option.rfind("set:", 0) == 0 ? "set_" + option.substr(4) : option;
  for (char& c : col) {
    if (c == '-' || c == '.') c = '_';
  }
  return col;
}

std::vector<OptionColumn> option_columns(const SweepSpec& spec) {
  std::set<std::string> taken, options;
  for (const auto& [name, type] : kFixedColumns) taken.insert(name);
  std::set<std::string> axis_options;
  for (const auto& a : spec.axes) {
    taken.insert(a.name);
    if (a.kind != ValueKind::kText) taken.insert(numeric_column(a.name, a.kind));
    if (!a.option.empty()) axis_options.insert(a.option);
  }
  auto add = [&](const RunArguments& o) {
    for (const auto& [k, v] : o.options) options.insert(k);
    for (const auto& [k, v] : o.sets) options.insert("set:" + k);
  };
  add(spec.base);
  for (const auto& a : spec.axes)
    for (const auto& v : a.values) add(v.assigns);
  std::vector<OptionColumn> out;
  for (const auto& opt : options) {
    if (axis_options.count(opt)) continue;  // the axis column holds it
    OptionColumn c;
    c.option = opt;
    c.column = option_column_name(opt);
    if (taken.count(c.column)) c.column = "option_" + c.column;
    c.kind = run_option_kind(opt, &c.integer);
    if (c.kind != ValueKind::kNumber) c.number_column = numeric_column(c.column, c.kind);
    taken.insert(c.column);
    if (!c.number_column.empty()) taken.insert(c.number_column);
    out.push_back(std::move(c));
  }
  return out;
}

/// The value a point gives option `opt` ("" when it does not set it).
std::string option_value(const Point& p, const std::string& opt) {
  const auto& m = opt.rfind("set:", 0) == 0 ? p.options.sets : p.options.options;
  auto it = m.find(opt.rfind("set:", 0) == 0 ? opt.substr(4) : opt);
  return it == m.end() ? "" : it->second;
}

/// Name of a result field's column (`from`/`to` are SQL keywords).
std::string record_column(const std::string& table, const std::string& field) {
  if (table == "links" && (field == "from" || field == "to")) return field + "_site";
  return field;
}

}  // namespace

int Table::column(const std::string& name) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

ResultStore::ResultStore(const std::string& path, const std::string& name)
    : path_(name.empty() ? path : name) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(fmt::format("{}: cannot open results database: {}", path_, msg));
  }
  try {
    open_schema();
  } catch (const StoreError&) {
    // A constructor that throws runs no destructor: close here or the handle leaks.
    const bool not_db = sqlite3_errcode(db_) == SQLITE_NOTADB;
    sqlite3_close(db_);
    db_ = nullptr;
    if (not_db) {
      throw StoreError(path_ + ": not an SQLite database (expected an aggnet results database)");
    }
    throw;
  }
}

void ResultStore::open_schema() {
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
  for (const auto& t : kRecordTables) {
    exec(fmt::format("CREATE TABLE IF NOT EXISTS {} (point_id TEXT NOT NULL)", t));
    exec(fmt::format("CREATE INDEX IF NOT EXISTS {}_point ON {} (point_id)", t, t));
  }
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

std::vector<std::pair<std::string, std::string>> ResultStore::columns(const std::string& table) {
  std::vector<std::pair<std::string, std::string>> cols;
  Stmt st(db_, "PRAGMA table_info(" + quote_id(table) + ")");
  while (st.step()) cols.emplace_back(st.text(1), st.text(2));
  return cols;
}

void ResultStore::refresh_columns() {
  tables_.clear();
  for (const char* t : {"points", "sites", "links"}) {
    for (const auto& [name, type] : columns(t)) tables_[t][name] = type;
  }
}

void ResultStore::ensure_column(const std::string& name, const std::string& type,
                                const std::string& table) {
  auto& cols = tables_[table];
  if (cols.count(name)) return;
  exec("ALTER TABLE " + quote_id(table) + " ADD COLUMN " + quote_id(name) + " " + type);
  cols[name] = type;
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

ValueKind kind_from_name(const std::string& name) {
  for (ValueKind k : {ValueKind::kBytes, ValueKind::kRate, ValueKind::kTime, ValueKind::kFrequency,
                      ValueKind::kNumber}) {
    if (kind_name(k) == name) return k;
  }
  return ValueKind::kText;
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
    if (a.kind != ValueKind::kText) {
      ensure_column(numeric_column(a.name, a.kind),
                    a.kind == ValueKind::kBytes ? "INTEGER" : "REAL");
    }
  }
  std::string option_list;
  for (const auto& c : option_columns(spec)) {
    const bool numeric = c.kind == ValueKind::kNumber;
    ensure_column(c.column, numeric ? (c.integer ? "INTEGER" : "REAL") : "TEXT");
    if (!c.number_column.empty()) {
      ensure_column(c.number_column, c.kind == ValueKind::kBytes ? "INTEGER" : "REAL");
    }
    option_list += (option_list.empty() ? "" : ",") + c.column;
    if (!c.number_column.empty()) option_list += "," + c.number_column;
  }
  if (meta("created_at").empty()) put_meta("created_at", now_utc());
  put_meta("spec_hash", spec.hash);
  put_meta("spec_name", spec.name);
  put_meta("spec_file", spec.file);
  put_meta("metric", spec.metric);
  put_meta("mode", spec.mode == SweepMode::kGrid ? "grid" : "zip");
  put_meta("option_columns", option_list);
  refresh_views();
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
  for (const auto& a : axes()) {
    clash = clash || key == a.name || key == numeric_column(a.name, kind_from_name(a.kind));
  }
  for (const auto& c : split(meta("option_columns"), ',', EmptyFields::kSkip)) {
    clash = clash || key == c;
  }
  if (!clash) return key;
  std::string s = "metric_";
  for (char c : key) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

namespace {

// A point's axis labels and, for numeric axes, their numbers, from parameter i on.
void bind_axes(Stmt& st, int& i, const SweepSpec& spec, const Point& point) {
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    st.bind(i++, point.labels[a]);
    if (spec.axes[a].kind == ValueKind::kText) continue;
    if (point.numbers[a]) {
      st.bind_number(i++, *point.numbers[a],
                     spec.axes[a].kind == ValueKind::kBytes ? "INTEGER" : "");
    } else {
      st.bind_null(i++);
    }
  }
}

// One option column (and its number column), from parameter i on.
void bind_option_column(Stmt& st, int& i, const OptionColumn& c, const Point& point) {
  const std::string v = option_value(point, c.option);
  std::optional<double> number;
  if (!v.empty() && c.kind != ValueKind::kText) {
    try {
      number = parse_value(c.kind, v);
    } catch (const std::exception&) {
    }
  }
  if (v.empty()) {
    st.bind_null(i++);
  } else if (c.kind == ValueKind::kNumber && number) {
    st.bind_number(i++, *number, c.integer ? "INTEGER" : "");
  } else {
    st.bind(i++, v);
  }
  if (c.number_column.empty()) return;
  if (number) {
    st.bind_number(i++, *number, c.kind == ValueKind::kBytes ? "INTEGER" : "");
  } else {
    st.bind_null(i++);
  }
}

}  // namespace

void ResultStore::record(const SweepSpec& spec, const Point& point, const PointResult& r) {
  Transaction tx(db_);
  std::vector<std::string> cols = {"point_id",    "point_index", "status",         "error",
                                   "exit_code",   "wall_time_s", "aggnet_version", "spec_hash",
                                   "finished_at", "options"};
  for (const auto& a : spec.axes) {
    cols.push_back(a.name);
    if (a.kind != ValueKind::kText) cols.push_back(numeric_column(a.name, a.kind));
  }
  const std::vector<OptionColumn> opt_cols = option_columns(spec);
  for (const auto& c : opt_cols) {
    cols.push_back(c.column);
    if (!c.number_column.empty()) cols.push_back(c.number_column);
  }
  std::vector<std::pair<std::string, double>> metrics;
  for (const auto& [key, value] : r.metrics) {
    if (key == "wall_time_s") continue;  // the runner's wall_time_s is the one wall time
    metrics.emplace_back(metric_column(key), value);
    ensure_column(metrics.back().first, field_type(key, false));
    cols.push_back(metrics.back().first);
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
  st.bind(i++, r.wall_time_s);
  st.bind(i++, r.aggnet_version);
  st.bind(i++, spec.hash);
  st.bind(i++, now_utc());
  st.bind(i++, point.options_json());
  bind_axes(st, i, spec, point);
  for (const auto& c : opt_cols) bind_option_column(st, i, c, point);
  for (const auto& [col, value] : metrics) st.bind_number(i++, value, tables_["points"][col]);
  st.step();
  write_records("sites", point.id, r.sites);
  write_records("links", point.id, r.links);
  refresh_views();
  tx.commit();
}

void ResultStore::write_records(const std::string& table, const std::string& point_id,
                                const std::vector<Record>& records) {
  {
    Stmt del(db_, "DELETE FROM " + quote_id(table) + " WHERE point_id = ?");
    del.bind(1, point_id);
    del.step();
  }
  for (const Record& rec : records) {
    std::string names = "point_id", marks = "?";
    std::vector<std::pair<std::string, const FieldValue*>> fields;
    for (const auto& [field, value] : rec) {
      const std::string col = record_column(table, field);
      if (col == "point_id") continue;
      ensure_column(col, field_type(field, value.is_text), table);
      fields.emplace_back(col, &value);
      names += ", " + quote_id(col);
      marks += ", ?";
    }
    Stmt ins(db_, fmt::format("INSERT INTO {} ({}) VALUES ({})", quote_id(table), names, marks));
    ins.bind(1, point_id);
    int i = 2;
    for (const auto& [col, value] : fields) {
      if (value->is_text) {
        ins.bind(i++, value->text);
      } else {
        ins.bind_number(i++, value->number, tables_[table][col]);
      }
    }
    ins.step();
  }
}

void ResultStore::refresh_views() {
  // site_results / link_results: every site or link row with its point's status, axes
  // and options (a point column whose name the table also has gets a `point_` prefix).
  std::vector<std::string> point_cols = {"status"};
  for (const auto& a : axes()) {
    point_cols.push_back(a.name);
    const std::string n = numeric_column(a.name, kind_from_name(a.kind));
    if (!n.empty()) point_cols.push_back(n);
  }
  for (const auto& c : split(meta("option_columns"), ',', EmptyFields::kSkip)) {
    point_cols.push_back(c);
  }
  for (const auto& table : kRecordTables) {
    const std::string view = table == "sites" ? "site_results" : "link_results";
    std::string sel;
    for (const auto& c : point_cols) {
      if (!tables_["points"].count(c)) continue;
      const std::string alias = tables_[table].count(c) ? "point_" + c : c;
      sel += fmt::format("p.{} AS {}, ", quote_id(c), quote_id(alias));
    }
    exec("DROP VIEW IF EXISTS " + view);
    exec(
        fmt::format("CREATE VIEW {} AS SELECT {}r.* FROM {} r JOIN points p ON p.point_id = "
                    "r.point_id",
                    view, sel, table));
  }
}

Table ResultStore::read_table(const std::string& table) {
  Table t;
  for (const auto& [name, type] : columns(table)) t.columns.push_back(name);
  const std::string order = table == "points" ? "point_index, point_id" : "rowid";
  Stmt st(db_, "SELECT * FROM " + quote_id(table) + " ORDER BY " + order);
  while (st.step()) {
    std::vector<Cell> row;
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      row.push_back(read_cell(st.get(), static_cast<int>(i)));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table ResultStore::read_all() { return read_table("points"); }

void ResultStore::export_csv(const std::string& csv_path) {
  const Table t = read_all();
  CsvWriter csv;
  csv.row(t.columns);
  for (const auto& row : t.rows) {
    for (const auto& c : row) csv.field(c.null ? std::string() : c.text);  // numbers as read
    csv.end_row();
  }
  try {
    write_file_atomically(csv_path, csv.str());
  } catch (const std::exception& e) {
    throw StoreError(e.what());
  }
}

std::size_t ResultStore::merge_records(sqlite3* other, const std::string& table,
                                       const std::set<std::string>& ids) {
  std::vector<std::pair<std::string, std::string>> cols;
  {
    Stmt c(other, "PRAGMA table_info(" + quote_id(table) + ")");
    while (c.step()) cols.emplace_back(c.text(1), c.text(2));
  }
  if (cols.empty() || ids.empty()) return 0;  // a database written before the table existed
  int id_col = -1;
  std::string names, marks;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    if (cols[i].first == "point_id") id_col = static_cast<int>(i);
    ensure_column(cols[i].first, cols[i].second.empty() ? "REAL" : cols[i].second, table);
    names += (i ? ", " : "") + quote_id(cols[i].first);
    marks += i ? ", ?" : "?";
  }
  if (id_col < 0) return 0;
  for (const auto& id : ids) {
    Stmt del(db_, "DELETE FROM " + quote_id(table) + " WHERE point_id = ?");
    del.bind(1, id);
    del.step();
  }
  Stmt ins(db_, fmt::format("INSERT INTO {} ({}) VALUES ({})", quote_id(table), names, marks));
  Stmt rows(other, "SELECT * FROM " + quote_id(table) + " ORDER BY rowid");
  std::size_t n = 0;
  while (rows.step()) {
    if (!ids.count(rows.text(id_col))) continue;
    sqlite3_reset(ins.get());
    for (std::size_t i = 0; i < cols.size(); ++i) {
      ins.bind_value(static_cast<int>(i + 1),
                     sqlite3_column_value(rows.get(), static_cast<int>(i)));
    }
    ins.step();
    ++n;
  }
  return n;
}

namespace {

// Another sweep database's axes, meta data and points columns (name, type).
struct Schema {
  std::vector<StoredAxis> axes;
  std::map<std::string, std::string> meta;
  std::vector<std::pair<std::string, std::string>> columns;
};

Schema read_schema(sqlite3* other, const std::string& other_path) {
  Schema s;
  try {
    Stmt a(other, "SELECT name, option, kind FROM axes ORDER BY position");
    while (a.step()) s.axes.push_back({a.text(0), a.text(1), a.text(2)});
    Stmt m(other, "SELECT key, value FROM meta");
    while (m.step()) s.meta[m.text(0)] = m.text(1);
    Stmt c(other, "PRAGMA table_info(points)");
    while (c.step()) s.columns.emplace_back(c.text(1), c.text(2));
  } catch (const StoreError& e) {
    throw StoreError(fmt::format("{}: not an aggnet sweep database ({})", other_path, e.what()));
  }
  if (s.columns.empty()) throw StoreError(other_path + ": not an aggnet sweep database");
  return s;
}

std::string placeholders(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += i ? ", ?" : "?";
  return s;
}

// Copies each row of `rows` through `insert` unless this database already has that point
// finished, or has it and the row did not finish ("ok" wins); returns the ids copied.
std::set<std::string> copy_points(Stmt& rows, Stmt& existing, Stmt& insert, int id_col,
                                  int status_col, std::size_t columns) {
  std::set<std::string> taken;
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
    for (std::size_t i = 0; i < columns; ++i) {
      insert.bind_value(static_cast<int>(i + 1),
                        sqlite3_column_value(rows.get(), static_cast<int>(i)));
    }
    insert.step();
    taken.insert(id);
  }
  return taken;
}

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
using DbHandle = std::unique_ptr<sqlite3, DbCloser>;

// Another results database, `path`, opened with `flags`. Errors: StoreError naming it.
DbHandle open_database(const std::string& path, int flags) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw StoreError(fmt::format("{}: cannot open results database: {}", path, msg));
  }
  return DbHandle(db);
}

}  // namespace

std::size_t ResultStore::merge_from(const std::string& other_path) {
  const DbHandle handle = open_database(other_path, SQLITE_OPEN_READONLY);
  sqlite3* other = handle.get();

  const Schema theirs = read_schema(other, other_path);
  const auto& their_axes = theirs.axes;
  const auto& their_meta = theirs.meta;
  const auto& their_cols = theirs.columns;

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
  Stmt insert(db_, sql + ") VALUES (" + placeholders(their_cols.size()) + ")");
  Stmt existing(db_, "SELECT status FROM points WHERE point_id = ?");
  Stmt rows(other, "SELECT * FROM points ORDER BY point_index, point_id");
  int id_col = -1, status_col = -1;
  for (std::size_t i = 0; i < their_cols.size(); ++i) {
    if (their_cols[i].first == "point_id") id_col = static_cast<int>(i);
    if (their_cols[i].first == "status") status_col = static_cast<int>(i);
  }
  if (id_col < 0 || status_col < 0) throw StoreError(other_path + ": not an aggnet sweep database");
  const std::set<std::string> taken =
      copy_points(rows, existing, insert, id_col, status_col, their_cols.size());
  for (const auto& t : kRecordTables) merge_records(other, t, taken);
  refresh_views();
  tx.commit();
  return taken.size();
}

StoredSweep read_sweep(const std::string& path) {
  StoredSweep out;
  std::error_code ec;
  if (fs::file_size(path, ec) == 0 && !ec) return out;  // made by SQLite, nothing in it yet
  // Read-write without create: a hot journal left by a killed sweep can be rolled back.
  const DbHandle handle = open_database(path, SQLITE_OPEN_READWRITE);
  sqlite3* db = handle.get();
  sqlite3_busy_timeout(db, 30000);
  Schema schema = read_schema(db, path);
  out.axes = std::move(schema.axes);
  out.meta = std::move(schema.meta);
  Stmt count(db, "SELECT COUNT(*) FROM points");
  count.step();
  out.rows = static_cast<std::size_t>(sqlite3_column_int64(count.get(), 0));
  return out;
}

namespace {

std::string axis_names(const std::vector<StoredAxis>& axes) {
  std::string names;
  for (const auto& a : axes)
    names += (names.empty() ? "" : ", ") + a.name +
             (a.option.empty() || a.option == a.name ? "" : " (" + a.option + ")");
  return names.empty() ? "none" : names;
}

}  // namespace

std::string sweep_mismatch(const StoredSweep& stored, const SweepSpec& spec) {
  if (stored.axes.empty() && stored.rows == 0) return "";
  std::vector<StoredAxis> mine;
  for (const auto& a : spec.axes) mine.push_back({a.name, a.option, kind_name(a.kind)});
  std::string differs;
  const auto name = stored.meta.find("spec_name");
  if (name != stored.meta.end() && name->second != spec.name)
    differs = fmt::format("spec '{}', not '{}'", name->second, spec.name);
  if (!same_axes(stored.axes, mine))
    differs += fmt::format("{}axes {}, not {}", differs.empty() ? "" : "; ",
                           axis_names(stored.axes), axis_names(mine));
  return differs;
}

std::size_t merge_databases(const std::string& out_path, const std::vector<std::string>& inputs,
                            std::size_t* rows) {
  std::error_code ec;
  // Not followed: the merged file replaces `out_path`, which must be the file itself (a
  // link, even a dangling one, would be replaced or written through).
  const auto st = fs::symlink_status(out_path, ec);
  const bool exists = fs::exists(st);
  if (fs::is_symlink(st)) {
    throw StoreError(
        out_path + ": a symbolic link (merge writes a results database file, not through a link)");
  }
  if (exists && !fs::is_regular_file(st)) {
    throw StoreError(out_path + ": not a regular file (merge writes a results database file)");
  }
  const std::string tmp = fmt::format("{}.merge-{}.tmp", out_path, getpid());
  auto cleanup = [&] {
    fs::remove(tmp, ec);
    fs::remove(tmp + "-journal", ec);
  };
  cleanup();
  try {
    if (exists) fs::copy_file(out_path, tmp);
    std::size_t taken = 0;
    {
      ResultStore store(tmp, out_path);
      for (const auto& in : inputs) taken += store.merge_from(in);
      if (rows) *rows = store.row_count();
    }
    fs::rename(tmp, out_path);
    return taken;
  } catch (const fs::filesystem_error& e) {
    cleanup();
    throw StoreError(
        fmt::format("{}: cannot write the merged database: {}", out_path, e.code().message()));
  } catch (...) {
    cleanup();
    throw;
  }
}

}  // namespace aggnet::sweeps
