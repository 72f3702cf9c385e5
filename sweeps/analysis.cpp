// Crossover analysis of a sweep's results.
#include "sweeps/analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "common/units.h"

namespace aggnet::sweeps {
namespace {

bool is_buffer_axis(const StoredAxis& a) {
  const std::string suffix = ".fpga.buffer";
  return a.option == "buffer" ||
         (a.option.rfind("set:", 0) == 0 && a.option.size() > suffix.size() &&
          a.option.compare(a.option.size() - suffix.size(), suffix.size(), suffix) == 0);
}

std::string fmt_value(double v) { return std::isinf(v) ? "never" : fmt::format("{:.6g}", v); }

bool is_time_to_eps(const std::string& key) {
  return key == "time_to_eps_s" || key == "comm_time_to_eps_s";
}

// Costs of one step or one round: comparing schedules by them ignores how many rounds
// each needs to mix.
bool is_per_step(const std::string& key) {
  static const std::set<std::string> keys = {"step_time_s_mean",      "step_time_s_max",
                                             "round_time_s_mean",     "round_time_s_max",
                                             "slowdown_vs_colocated", "exposed_comm_time_s_mean",
                                             "gpu_idle_fraction",     "colocated_step_time_s_mean"};
  return keys.count(key) > 0;
}

bool has_time_to_eps(const Table& t, int status_col, int tte_col, int rounds_col) {
  if (tte_col < 0) return false;
  for (const auto& row : t.rows) {
    if (row[status_col].text != "ok" || !row[tte_col].null) continue;
    if (rounds_col < 0 || row[rounds_col].null || row[rounds_col].number >= 0) return false;
  }
  return true;
}

}  // namespace

RankingMetric ranking_metric(ResultStore& store, const std::string& metric) {
  RankingMetric r{metric, ""};
  if (!is_per_step(metric)) return r;
  const Table t = store.read_all();
  const int status_col = t.column("status");
  const int tte_col = t.column(store.metric_column("comm_time_to_eps_s"));
  const int rounds_col = t.column(store.metric_column("rounds_to_eps"));
  if (has_time_to_eps(t, status_col, tte_col, rounds_col)) {
    r.key = "comm_time_to_eps_s";
    r.note = fmt::format(
        "(time to eps-consensus without compute, not the spec's metric {}: that is per step "
        "and ignores how many rounds each schedule needs to mix)\n",
        metric);
  } else {
    r.note = fmt::format(
        "(ranked by the spec's metric {}, a per-step cost: comm_time_to_eps_s is missing for {} "
        "points; with steps: 0 every run simulates the rounds it needs to reach eps)\n",
        metric, tte_col < 0 ? "all" : "some");
  }
  return r;
}

namespace {

std::string fmt_buffer(double bytes) {
  return format_bytes(static_cast<std::uint64_t>(std::llround(bytes)));
}

}  // namespace

namespace {

// The buffer axis (option `buffer` or set:...fpga.buffer) and the category axis (the
// schedule, else the first other text axis); -1 where there is none.
struct AxisRoles {
  int buf = -1, cat = -1;
};

AxisRoles classify_axes(const std::vector<StoredAxis>& axes) {
  AxisRoles r;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (r.buf < 0 && is_buffer_axis(axes[i])) r.buf = static_cast<int>(i);
    if (axes[i].option == "schedule") r.cat = static_cast<int>(i);
  }
  if (r.cat < 0) {
    for (std::size_t i = 0; i < axes.size(); ++i) {
      if (axes[i].kind == "text" && static_cast<int>(i) != r.buf) {
        r.cat = static_cast<int>(i);
        break;
      }
    }
  }
  return r;
}

// A row's ranking value; rows that never reach eps-consensus rank last (+inf), not as
// failed; NaN when missing.
struct MetricReader {
  std::string metric;
  int m_col = -1, rounds_col = -1;
  double operator()(const std::vector<Cell>& row) const {
    if (is_time_to_eps(metric) && row[m_col].null && rounds_col >= 0 && !row[rounds_col].null &&
        row[rounds_col].number < 0) {
      return std::numeric_limits<double>::infinity();
    }
    return row[m_col].null ? std::numeric_limits<double>::quiet_NaN() : row[m_col].number;
  }
};

struct Entry {
  double metric;
  double slowdown;
};
using ByBuffer = std::map<double, std::map<std::string, Entry>>;  // buffer (or 0) -> category

// The rows by group (labels of every axis that is neither the category nor the buffer),
// in order of first appearance.
struct Grouped {
  std::map<std::string, ByBuffer> groups;
  std::map<std::string, std::map<double, std::vector<std::string>>> failed;  // not ok
  std::vector<std::string> group_order, categories;
};

struct Columns {
  int status = -1, cat = -1, buf = -1, slow = -1;
};

std::string group_of(const Table& t, const std::vector<StoredAxis>& axes, AxisRoles roles,
                     const std::vector<Cell>& row) {
  std::string group;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (static_cast<int>(i) == roles.cat || static_cast<int>(i) == roles.buf) continue;
    const int c = t.column(axes[i].name);
    group += (group.empty() ? "" : " ") + axes[i].name + "=" + (c >= 0 ? row[c].text : "");
  }
  return group;
}

void add_once(std::vector<std::string>& v, const std::string& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

Grouped group_rows(const Table& t, const std::vector<StoredAxis>& axes, AxisRoles roles,
                   const Columns& col, const MetricReader& value_of) {
  Grouped g;
  for (const auto& row : t.rows) {
    if (row[col.cat].null) continue;
    const std::string group = group_of(t, axes, roles, row);
    const double buf = col.buf >= 0 && !row[col.buf].null ? row[col.buf].number : 0;
    const std::string& cat = row[col.cat].text;
    add_once(g.categories, cat);
    add_once(g.group_order, group);
    if (row[col.status].text != "ok" || std::isnan(value_of(row))) {
      g.failed[group][buf].push_back(cat);
      continue;
    }
    const double slow = col.slow >= 0 && !row[col.slow].null
                            ? row[col.slow].number
                            : std::numeric_limits<double>::quiet_NaN();
    g.groups[group][buf][cat] = {value_of(row), slow};
  }
  return g;
}

// Without a buffer axis (or with a category other than the schedule): a ranking per group.
std::string render_ranking(const Grouped& g, const std::string& cat_name,
                           const RankingMetric& ranking) {
  const std::string& metric = ranking.key;
  std::string s = fmt::format("Ranking by {} (lower is better) over {}:\n", metric, cat_name);
  s += ranking.note;
  for (const auto& group : g.group_order) {
    if (!g.groups.count(group)) continue;
    const auto& by_buf = g.groups.at(group);
    if (!group.empty()) s += fmt::format("  [{}]\n", group);
    std::vector<std::pair<double, std::string>> ranked;
    const auto& cats = by_buf.begin()->second;
    for (const auto& [cat, e] : cats) ranked.emplace_back(e.metric, cat);
    std::sort(ranked.begin(), ranked.end());
    s += fmt::format("  {:<24} {:>16} {:>22}\n", cat_name, metric, "slowdown_vs_colocated");
    for (const auto& [m, cat] : ranked) {
      const double slow = cats.at(cat).slowdown;
      s += fmt::format("  {:<24} {:>16} {:>22}\n", cat, fmt_value(m),
                       std::isnan(slow) ? "-" : fmt_value(slow));
    }
    s += fmt::format("  best: {}\n", ranked.front().second);
  }
  s += "(No crossover analysis: that needs a schedule axis and a buffer axis.)\n";
  return s;
}

// One group's table: per buffer size the winner and every category's value. `best` gets
// the complete sizes' winners; returns whether some size was incomplete.
bool render_group_table(const Grouped& g, const std::string& group, const std::string& buf_name,
                        std::string& s, std::vector<std::pair<double, std::string>>& best) {
  const auto& by_buf = g.groups.at(group);
  const auto failed = g.failed.find(group);
  bool any_incomplete = false;
  std::string head = fmt::format("  {:>12}  {:<16}", buf_name, "best");
  for (const auto& c : g.categories) head += fmt::format(" {:>14}", c);
  s += head + "\n";
  for (const auto& [buf, cats] : by_buf) {
    std::string winner;
    double wm = std::numeric_limits<double>::infinity();
    for (const auto& [cat, e] : cats) {
      if (e.metric < wm) {
        wm = e.metric;
        winner = cat;
      }
    }
    // A buffer size where some category failed cannot name a winner.
    const bool incomplete = failed != g.failed.end() && failed->second.count(buf);
    std::string line =
        fmt::format("  {:>12}  {:<16}", fmt_buffer(buf), incomplete ? winner + "*" : winner);
    for (const auto& c : g.categories) {
      auto it = cats.find(c);
      line += fmt::format(" {:>14}", it == cats.end() ? "failed" : fmt_value(it->second.metric));
    }
    s += line + "\n";
    if (incomplete) {
      any_incomplete = true;
    } else {
      best.emplace_back(buf, winner);
    }
  }
  // Buffer sizes where every point of some category failed are left out as well.
  if (failed != g.failed.end()) {
    for (const auto& [buf, cats] : failed->second) {
      if (!by_buf.count(buf)) {
        s += fmt::format("  {:>12}  {:<16}\n", fmt_buffer(buf), "(all failed)");
        any_incomplete = true;
      }
    }
  }
  return any_incomplete;
}

// The changes of winner along the buffer sizes, each with the new winner's margin over
// the old one just after the change (near-ties show).
std::vector<std::string> winner_changes(const ByBuffer& by_buf,
                                        const std::vector<std::pair<double, std::string>>& best) {
  std::vector<std::string> changes;
  for (std::size_t i = 1; i < best.size(); ++i) {
    if (best[i].second == best[i - 1].second) continue;
    const auto& cats = by_buf.at(best[i].first);
    const double margin = cats.at(best[i - 1].second).metric / cats.at(best[i].second).metric - 1;
    changes.push_back(fmt::format("from {} to {} between {} and {} (by {:.1f}% at {})",
                                  best[i - 1].second, best[i].second, fmt_buffer(best[i - 1].first),
                                  fmt_buffer(best[i].first), 100 * margin,
                                  fmt_buffer(best[i].first)));
  }
  return changes;
}

// Relative spread of each category over the range: does the buffer bind at all?
double max_spread(const ByBuffer& by_buf, const std::vector<std::string>& categories) {
  double spread = 0;
  for (const auto& c : categories) {
    double mn = std::numeric_limits<double>::infinity(), mx = 0;
    for (const auto& [buf, cats] : by_buf) {
      auto it = cats.find(c);
      if (it == cats.end()) continue;
      mn = std::min(mn, it->second.metric);
      mx = std::max(mx, it->second.metric);
    }
    if (mn > 0 && std::isfinite(mn)) spread = std::max(spread, mx / mn - 1);
  }
  return spread;
}

// Lead of the winner `w` over the runner-up at one buffer size.
double lead_of(const std::map<std::string, Entry>& cats, const std::string& w) {
  double wm = cats.count(w) ? cats.at(w).metric : 0, second = 0;
  bool have = false;
  for (const auto& [cat, e] : cats) {
    if (cat == w) continue;
    if (!have || e.metric < second) second = e.metric;
    have = true;
  }
  return have && wm > 0 ? second / wm - 1 : 0.0;
}

// The smallest complete buffer size from which no category's metric moves by more than
// 0.5% any more: above it the buffer no longer binds.
double flat_from(const ByBuffer& by_buf, const std::vector<std::pair<double, std::string>>& best) {
  const double hi = best.back().first;
  double from = hi;
  for (auto it = best.rbegin(); it != best.rend(); ++it) {
    bool flat = true;
    for (const auto& [cat, e] : by_buf.at(it->first)) {
      auto top = by_buf.at(hi).find(cat);
      if (top == by_buf.at(hi).end() || std::fabs(e.metric / top->second.metric - 1) > 0.005) {
        flat = false;
      }
    }
    if (!flat) break;
    from = it->first;
  }
  return from;
}

// No change of winner: say why (one category only, the buffer never binds, it stops
// binding, or the lead shrinks or not).
std::string no_change_verdict(const ByBuffer& by_buf,
                              const std::vector<std::pair<double, std::string>>& best,
                              const std::vector<std::string>& categories, const std::string& where,
                              const std::string& cat_name, const std::string& metric) {
  const double lo = best.front().first, hi = best.back().first;
  const std::string w = best.front().second;
  std::string v = fmt::format("No crossover{} in {}..{}: {} is best at every buffer size", where,
                              fmt_buffer(lo), fmt_buffer(hi), w);
  std::size_t ncat = 0;
  for (const auto& [buf, cats] : by_buf) ncat = std::max(ncat, cats.size());
  if (ncat < 2) return v + " (only one " + cat_name + " finished, nothing to compare).";
  const double lead_lo = lead_of(by_buf.at(lo), w), lead_hi = lead_of(by_buf.at(hi), w);
  const double flat = flat_from(by_buf, best);
  if (max_spread(by_buf, categories) < 0.01) {
    return v + fmt::format(
                   ", because the buffer never binds in this range (no {} changes {} by more "
                   "than 1% across it), so the {} with the cheaper round wins throughout.",
                   cat_name, metric, cat_name);
  }
  if (flat < hi) {
    return v + fmt::format(
                   ". From {} up the buffer no longer binds (every {}'s {} stays within 0.5%) "
                   "and {} still leads the runner-up by {:.1f}%: with an unconstrained buffer "
                   "its rounds are cheaper, so a larger buffer brings no crossover either (its "
                   "lead at {} was {:.1f}%).",
                   fmt_buffer(flat), cat_name, metric, w, 100 * lead_hi, fmt_buffer(lo),
                   100 * lead_lo);
  }
  if (lead_hi < lead_lo) {
    return v + fmt::format(
                   "; its lead over the runner-up shrinks from {:.1f}% at {} to {:.1f}% at {}: "
                   "the buffer still binds at the top of the range, so a crossover, if any, "
                   "lies above {}.",
                   100 * lead_lo, fmt_buffer(lo), 100 * lead_hi, fmt_buffer(hi), fmt_buffer(hi));
  }
  return v + fmt::format(
                 "; its lead over the runner-up does not shrink with the buffer ({:.1f}% at {}, "
                 "{:.1f}% at {}), so in this range the buffer is not what separates them.",
                 100 * lead_lo, fmt_buffer(lo), 100 * lead_hi, fmt_buffer(hi));
}

// With a schedule axis and a buffer axis: per group the table and the verdict.
std::string render_crossover(const Grouped& g, const std::string& cat_name,
                             const std::string& buf_name, const RankingMetric& ranking,
                             bool& found) {
  std::string s =
      fmt::format("Best {} by {} (lower is better) per buffer size:\n", cat_name, ranking.key);
  s += ranking.note;
  std::vector<std::string> verdicts;
  bool any_incomplete = false;
  for (const auto& group : g.group_order) {
    if (!g.groups.count(group)) continue;
    if (!group.empty()) s += fmt::format("  [{}]\n", group);
    std::vector<std::pair<double, std::string>> best;  // buffer, winner
    any_incomplete = render_group_table(g, group, buf_name, s, best) || any_incomplete;
    const std::string where = group.empty() ? "" : " [" + group + "]";
    if (best.empty()) {
      verdicts.push_back(fmt::format(
          "No crossover{}: no buffer size has results for every {} (see the failed points).", where,
          cat_name));
      continue;
    }
    const auto& by_buf = g.groups.at(group);
    const auto changes = winner_changes(by_buf, best);
    if (changes.empty()) {
      verdicts.push_back(
          no_change_verdict(by_buf, best, g.categories, where, cat_name, ranking.key));
      continue;
    }
    found = true;
    std::string v = fmt::format("Crossover{}: the best {} changes ", where, cat_name);
    for (std::size_t i = 0; i < changes.size(); ++i) v += (i ? "; then " : "") + changes[i];
    verdicts.push_back(v + ".");
  }
  if (any_incomplete) {
    s += fmt::format(
        "(* or 'failed': some {} failed at that buffer size; those sizes are left out of the "
        "verdict.)\n",
        cat_name);
  }
  for (const auto& v : verdicts) s += v + "\n";
  return s;
}

// Whether some point that finished has a value of the ranking metric ("never" counts).
bool has_metric(const Table& t, int status_col, const MetricReader& value_of) {
  if (value_of.m_col < 0) return false;
  return std::any_of(t.rows.begin(), t.rows.end(), [&](const std::vector<Cell>& row) {
    return row[status_col].text == "ok" && !std::isnan(value_of(row));
  });
}

// Why a finished run's summary can lack `key`, where the key is one a run omits (or
// leaves null) by design; "" for the others.
std::string why_absent(const std::string& key) {
  if (is_time_to_eps(key))
    return "a run reports it only when it simulated the rounds it needs to reach eps; "
           "steps: 0, the default, does";
  if (key == "colocated_step_time_s_mean" || key == "slowdown_vs_colocated")
    return "a run reports it only with the co-located reference, which no-colocated turns off";
  if (key == "exact_average_time_s" || key == "efficiency")
    return "a run reports it only for an all-reduce that reaches the exact average within "
           "the steps it simulated";
  if (key == "memory_cost_usd" || key == "memory_power_w")
    return "it is null when some site's buffer fits no memory tier (docs/memory-tiers.md)";
  return "";
}

// The verdict when no point has the ranking metric: which metric, and why.
std::string no_metric_text(const Table& t, int status_col, const std::string& key) {
  const auto ok = static_cast<std::size_t>(
      std::count_if(t.rows.begin(), t.rows.end(),
                    [&](const std::vector<Cell>& row) { return row[status_col].text == "ok"; }));
  std::string s = fmt::format("No crossover analysis: no point produced the metric '{}': ", key);
  if (t.rows.empty()) return s + "the results hold no point.\n";
  if (ok == 0)
    return s + fmt::format("all {} points failed (see the failed points).\n", t.rows.size());
  const std::string why = why_absent(key);
  s += fmt::format("{} of {} points finished, none with a value for it", ok, t.rows.size());
  return s + (why.empty() ? "" : " (" + why + ")") + ".\n";
}

}  // namespace

Crossover analyze_crossover(ResultStore& store, const std::string& spec_metric) {
  Crossover out;
  const auto axes = store.axes();
  const Table t = store.read_all();
  const RankingMetric ranking = ranking_metric(store, spec_metric);
  const MetricReader value_of{ranking.key, t.column(store.metric_column(ranking.key)),
                              t.column(store.metric_column("rounds_to_eps"))};
  AxisRoles roles = classify_axes(axes);
  Columns col;
  col.status = t.column("status");
  if (!has_metric(t, col.status, value_of)) {
    out.text = no_metric_text(t, col.status, ranking.key);
    return out;
  }
  if (roles.cat < 0) {
    out.text = "No crossover analysis: the sweep has no schedule (or other category) axis.\n";
    return out;
  }
  // The crossover compares schedules across buffer sizes; any other category (e.g. the
  // ablation's variants) is ranked per combination of the other axes, buffer included.
  if (axes[roles.cat].option != "schedule") roles.buf = -1;
  const std::string cat_name = axes[roles.cat].name;
  col.cat = t.column(cat_name);
  col.buf = roles.buf >= 0 ? t.column(numeric_column(axes[roles.buf].name, ValueKind::kBytes)) : -1;
  col.slow = t.column(store.metric_column("slowdown_vs_colocated"));
  const Grouped g = group_rows(t, axes, roles, col, value_of);
  if (g.groups.empty()) {
    out.text = fmt::format("No crossover analysis: no point with the metric '{}' has a {}.\n",
                           ranking.key, cat_name);
  } else if (roles.buf < 0) {
    out.text = render_ranking(g, cat_name, ranking);
  } else {
    out.text = render_crossover(g, cat_name, axes[roles.buf].name, ranking, out.found);
  }
  return out;
}

}  // namespace aggnet::sweeps
