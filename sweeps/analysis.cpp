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
  const int tte_col = t.column(store.metric_column("time_to_eps_s"));
  const int rounds_col = t.column(store.metric_column("rounds_to_eps"));
  if (has_time_to_eps(t, status_col, tte_col, rounds_col)) {
    r.key = "time_to_eps_s";
    r.note = fmt::format(
        "(time to eps-consensus, not the spec's metric {}: that is per step and ignores how "
        "many rounds each schedule needs to mix)\n",
        metric);
  } else {
    r.note = fmt::format(
        "(ranked by the spec's metric {}, a per-step cost: time_to_eps_s is missing for {} "
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

Crossover analyze_crossover(ResultStore& store, const std::string& spec_metric) {
  Crossover out;
  const auto axes = store.axes();
  const Table t = store.read_all();
  const int status_col = t.column("status");
  const RankingMetric ranking = ranking_metric(store, spec_metric);
  const std::string& metric = ranking.key;
  const std::string metric_col = store.metric_column(metric);
  const int m_col = t.column(metric_col);
  // Rows that never reach eps-consensus rank last (+inf), not as failed.
  const int rounds_col = t.column(store.metric_column("rounds_to_eps"));
  auto value_of = [&](const std::vector<Cell>& row) {
    if (is_time_to_eps(metric) && row[m_col].null && rounds_col >= 0 && !row[rounds_col].null &&
        row[rounds_col].number < 0) {
      return std::numeric_limits<double>::infinity();
    }
    return row[m_col].null ? std::numeric_limits<double>::quiet_NaN() : row[m_col].number;
  };

  int buf_axis = -1, cat_axis = -1;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (buf_axis < 0 && is_buffer_axis(axes[i])) buf_axis = static_cast<int>(i);
    if (axes[i].option == "schedule") cat_axis = static_cast<int>(i);
  }
  if (cat_axis < 0) {
    for (std::size_t i = 0; i < axes.size(); ++i) {
      if (axes[i].kind == "text" && static_cast<int>(i) != buf_axis) {
        cat_axis = static_cast<int>(i);
        break;
      }
    }
  }
  bool any_ok = false;
  for (const auto& row : t.rows) any_ok = any_ok || row[status_col].text == "ok";
  if (!any_ok) {
    out.text = "No crossover analysis: no point finished successfully.\n";
    return out;
  }
  if (m_col < 0) {
    out.text = fmt::format("No crossover analysis: the results have no metric '{}'.\n", metric);
    return out;
  }
  if (cat_axis < 0) {
    out.text = "No crossover analysis: the sweep has no schedule (or other category) axis.\n";
    return out;
  }
  // The crossover compares schedules across buffer sizes; any other category (e.g. the
  // ablation's variants) is ranked per combination of the other axes, buffer included.
  if (axes[cat_axis].option != "schedule") buf_axis = -1;
  const std::string cat_name = axes[cat_axis].name;
  const int cat_col = t.column(cat_name);
  const int buf_col =
      buf_axis >= 0 ? t.column(numeric_column(axes[buf_axis].name, ValueKind::kBytes)) : -1;
  const int slow_col = t.column(store.metric_column("slowdown_vs_colocated"));

  // Group key: labels of every axis that is neither the category nor the buffer.
  struct Entry {
    double metric;
    double slowdown;
  };
  // group -> buffer (or 0) -> category -> entry; groups in order of first appearance.
  std::map<std::string, std::map<double, std::map<std::string, Entry>>> groups;
  std::map<std::string, std::map<double, std::vector<std::string>>> failed;  // not ok
  std::vector<std::string> group_order;
  std::vector<std::string> categories;
  for (const auto& row : t.rows) {
    if (row[cat_col].null) continue;
    std::string group;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      if (static_cast<int>(i) == cat_axis || static_cast<int>(i) == buf_axis) continue;
      const int c = t.column(axes[i].name);
      group += (group.empty() ? "" : " ") + axes[i].name + "=" + (c >= 0 ? row[c].text : "");
    }
    const double buf = buf_col >= 0 && !row[buf_col].null ? row[buf_col].number : 0;
    const std::string& cat = row[cat_col].text;
    if (std::find(categories.begin(), categories.end(), cat) == categories.end()) {
      categories.push_back(cat);
    }
    if (std::find(group_order.begin(), group_order.end(), group) == group_order.end()) {
      group_order.push_back(group);
    }
    if (row[status_col].text != "ok" || std::isnan(value_of(row))) {
      failed[group][buf].push_back(cat);
      continue;
    }
    const double slow = slow_col >= 0 && !row[slow_col].null
                            ? row[slow_col].number
                            : std::numeric_limits<double>::quiet_NaN();
    groups[group][buf][cat] = {value_of(row), slow};
  }
  if (groups.empty()) {
    out.text = "No crossover analysis: no point finished successfully.\n";
    return out;
  }

  std::string& s = out.text;
  if (buf_axis < 0) {
    s += fmt::format("Ranking by {} (lower is better) over {}:\n", metric, cat_name);
    s += ranking.note;
    for (const auto& group : group_order) {
      if (!groups.count(group)) continue;
      const auto& by_buf = groups.at(group);
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
    return out;
  }

  s += fmt::format("Best {} by {} (lower is better) per buffer size:\n", cat_name, metric);
  s += ranking.note;
  std::vector<std::string> verdicts;
  bool any_incomplete = false;
  for (const auto& group : group_order) {
    if (!groups.count(group)) continue;
    const auto& by_buf = groups.at(group);
    if (!group.empty()) s += fmt::format("  [{}]\n", group);
    std::string head = fmt::format("  {:>12}  {:<16}", axes[buf_axis].name, "best");
    for (const auto& c : categories) head += fmt::format(" {:>14}", c);
    s += head + "\n";
    std::vector<std::pair<double, std::string>> best;  // buffer, winner
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
      const bool incomplete = failed.count(group) && failed.at(group).count(buf);
      std::string line =
          fmt::format("  {:>12}  {:<16}", fmt_buffer(buf), incomplete ? winner + "*" : winner);
      for (const auto& c : categories) {
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
    if (failed.count(group)) {
      for (const auto& [buf, cats] : failed.at(group)) {
        if (!by_buf.count(buf)) {
          s += fmt::format("  {:>12}  {:<16}\n", fmt_buffer(buf), "(all failed)");
          any_incomplete = true;
        }
      }
    }
    if (best.empty()) {
      verdicts.push_back(fmt::format(
          "No crossover{}: no buffer size has results for every {} (see the failed points).",
          group.empty() ? "" : " [" + group + "]", cat_name));
      continue;
    }
    const std::string where = group.empty() ? "" : " [" + group + "]";
    std::vector<std::string> changes;
    for (std::size_t i = 1; i < best.size(); ++i) {
      if (best[i].second != best[i - 1].second) {
        // Margin of the new winner over the old one just after the change (near-ties show).
        const auto& cats = by_buf.at(best[i].first);
        const double margin =
            cats.at(best[i - 1].second).metric / cats.at(best[i].second).metric - 1;
        changes.push_back(fmt::format("from {} to {} between {} and {} (by {:.1f}% at {})",
                                      best[i - 1].second, best[i].second,
                                      fmt_buffer(best[i - 1].first), fmt_buffer(best[i].first),
                                      100 * margin, fmt_buffer(best[i].first)));
      }
    }
    if (!changes.empty()) {
      out.found = true;
      std::string v = fmt::format("Crossover{}: the best {} changes ", where, cat_name);
      for (std::size_t i = 0; i < changes.size(); ++i) v += (i ? "; then " : "") + changes[i];
      verdicts.push_back(v + ".");
      continue;
    }
    // No change: say why.
    const double lo = best.front().first, hi = best.back().first;
    const std::string w = best.front().second;
    std::string v = fmt::format("No crossover{} in {}..{}: {} is best at every buffer size", where,
                                fmt_buffer(lo), fmt_buffer(hi), w);
    std::size_t ncat = 0;
    for (const auto& [buf, cats] : by_buf) ncat = std::max(ncat, cats.size());
    if (ncat < 2) {
      verdicts.push_back(v + " (only one " + cat_name + " finished, nothing to compare).");
      continue;
    }
    // Does the buffer bind at all? Relative spread of each category over the range.
    double max_spread = 0;
    for (const auto& c : categories) {
      double mn = std::numeric_limits<double>::infinity(), mx = 0;
      for (const auto& [buf, cats] : by_buf) {
        auto it = cats.find(c);
        if (it == cats.end()) continue;
        mn = std::min(mn, it->second.metric);
        mx = std::max(mx, it->second.metric);
      }
      if (mn > 0 && std::isfinite(mn)) max_spread = std::max(max_spread, mx / mn - 1);
    }
    // Lead of the winner over the runner-up at both ends of the range.
    auto lead = [&](const std::map<std::string, Entry>& cats) {
      double wm = cats.count(w) ? cats.at(w).metric : 0, second = 0;
      bool have = false;
      for (const auto& [cat, e] : cats) {
        if (cat == w) continue;
        if (!have || e.metric < second) second = e.metric;
        have = true;
      }
      return have && wm > 0 ? second / wm - 1 : 0.0;
    };
    const double lead_lo = lead(by_buf.at(lo)), lead_hi = lead(by_buf.at(hi));
    // The smallest complete buffer size from which no category's metric moves by more
    // than 0.5% any more: above it the buffer no longer binds.
    double flat_from = hi;
    for (auto it = best.rbegin(); it != best.rend(); ++it) {
      bool flat = true;
      for (const auto& [cat, e] : by_buf.at(it->first)) {
        auto top = by_buf.at(hi).find(cat);
        if (top == by_buf.at(hi).end() || std::fabs(e.metric / top->second.metric - 1) > 0.005) {
          flat = false;
        }
      }
      if (!flat) break;
      flat_from = it->first;
    }
    if (max_spread < 0.01) {
      v += fmt::format(
          ", because the buffer never binds in this range (no {} changes {} by more than 1% "
          "across it), so the {} with the cheaper round wins throughout.",
          cat_name, metric, cat_name);
    } else if (flat_from < hi) {
      v += fmt::format(
          ". From {} up the buffer no longer binds (every {}'s {} stays within 0.5%) and {} "
          "still leads the runner-up by {:.1f}%: with an unconstrained buffer its rounds are "
          "cheaper, so a larger buffer brings no crossover either (its lead at {} was {:.1f}%).",
          fmt_buffer(flat_from), cat_name, metric, w, 100 * lead_hi, fmt_buffer(lo), 100 * lead_lo);
    } else if (lead_hi < lead_lo) {
      v += fmt::format(
          "; its lead over the runner-up shrinks from {:.1f}% at {} to {:.1f}% at {}: the buffer "
          "still binds at the top of the range, so a crossover, if any, lies above {}.",
          100 * lead_lo, fmt_buffer(lo), 100 * lead_hi, fmt_buffer(hi), fmt_buffer(hi));
    } else {
      v += fmt::format(
          "; its lead over the runner-up does not shrink with the buffer ({:.1f}% at {}, {:.1f}% "
          "at {}), so in this range the buffer is not what separates them.",
          100 * lead_lo, fmt_buffer(lo), 100 * lead_hi, fmt_buffer(hi));
    }
    verdicts.push_back(v);
  }
  if (any_incomplete) {
    s += fmt::format(
        "(* or 'failed': some {} failed at that buffer size; those sizes are left out of the "
        "verdict.)\n",
        cat_name);
  }
  for (const auto& v : verdicts) s += v + "\n";
  return out;
}

}  // namespace aggnet::sweeps
