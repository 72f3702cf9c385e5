#include "sim/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "common/strings.h"
#include "common/units.h"
#include "config/schedule_io.h"
#include "model/memory_tiers.h"
#include "model/reduction_forest.h"
#include "sim/bound_report.h"

namespace aggnet {

using nlohmann::json;

namespace {

double sim_end_s(const NetworkSystem& system) {
  double end = 0;
  for (const auto& site : system.sites())
    for (const auto& r : site.cluster->steps()) end = std::max(end, r.end.to_seconds());
  return end;
}

// Where each site stands when a run stalls: step, slots in use, waiting contributions.
std::string stall_diagnosis(const NetworkSystem& system) {
  std::string out;
  for (std::size_t i = 0; i < system.sites().size(); ++i) {
    const auto& m = system.sites()[i];
    out += fmt::format("{}{}: step {} of {}, {} slots in use, {} contributions waiting",
                       out.empty() ? "" : "; ", system.platform().sites[i].code,
                       m.cluster->steps().size(), system.steps(), m.fpga->slots_in_use(),
                       m.fpga->waiting_contributions());
  }
  return out;
}

json stats_object(const std::vector<Statistic>& stats) {
  json o = json::object();
  for (const auto& s : stats) o[s.name] = s.value;
  return o;
}

// Host-based sends (point-to-point, parameter server): when the group's last sender had
// its last chunk on the wire, from the group's first ready time.
void add_transmit_complete(json& group, const NetworkSystem& system,
                           const std::vector<int>& members, int k, double first_s) {
  double sent = 0;
  for (int m : members)
    sent = std::max(sent, system.sites()[m].cluster->steps().at(k).transmit_complete.to_seconds());
  if (sent > 0) group["transmit_complete_s"] = sent - first_s;
}

// Round time of each group in step k: last member done - first member's first send.
json step_entry(const NetworkSystem& system, int k) {
  const auto& sites = system.sites();
  const auto& platform = system.platform();
  json entry;
  entry["step"] = k;
  double step_time = 0, comm_time = 0, end = 0;
  for (const auto& s : sites) {
    const auto& r = s.cluster->steps().at(k);
    entry["round"] = r.round;
    step_time = std::max(step_time, (r.end - r.start).to_seconds());
    comm_time = std::max(comm_time, (r.end - r.send_start).to_seconds());
    end = std::max(end, r.end.to_seconds());
  }
  entry["end_s"] = end;  // every site has this step's result
  std::vector<std::vector<int>> groups;
  const Collective collective = system.schedule().collective;
  if (collective == Collective::kPointToPoint) {
    for (const auto& g : system.schedule().rounds.at(entry["round"].get<int>()).groups)
      groups.push_back(g.sites);
  } else if (collective != Collective::kGroupAverage) {
    groups.push_back(system.schedule().rounds.at(0).groups.at(0).sites);
  } else {
    for (const auto& g : system.round_plans().at(entry["round"].get<int>()).groups)
      if (g.members.size() > 1) groups.push_back(g.members);
  }
  json group_list = json::array();
  double round_time = 0;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    double first = std::numeric_limits<double>::infinity(), last = 0;
    json codes = json::array();
    for (int m : groups[gi]) {
      const auto& r = sites[m].cluster->steps().at(k);
      first = std::min(first, r.send_start.to_seconds());
      last = std::max(last, r.end.to_seconds());
      codes.push_back(platform.sites[m].code);
    }
    json g{{"members", codes}, {"round_time_s", last - first}};
    add_transmit_complete(g, system, groups[gi], k, first);
    if (system.schedule().collective == Collective::kGroupAverage) {
      const auto& plan = system.round_plans().at(entry["round"].get<int>());
      for (const auto& gp : plan.groups) {
        if (gp.members != groups[gi]) continue;
        std::uint64_t skew = 0;
        for (const auto& [d, s] : gp.skew_ps) skew = std::max(skew, s);
        if (system.options().flow_control != FlowControl::kCredit)
          g["pacing_rate_gbps"] = gp.pacing_rate * 8e-9;
        g["skew_max_ms"] = static_cast<double>(skew) * 1e-9;
        g["alignment"] = gp.alignment;
      }
    }
    round_time = std::max(round_time, last - first);
    group_list.push_back(g);
  }
  entry["groups"] = group_list;
  entry["round_time_s"] = round_time;
  entry["step_time_s"] = step_time;
  entry["comm_time_s"] = comm_time;
  return entry;
}

json link_entry(const std::string& from, const std::string& to, const std::string& kind,
                const WanLink& link, const sc_core::sc_time& window) {
  json o = stats_object(link.statistics(window));
  o["from"] = from;
  o["to"] = to;
  o["kind"] = kind;
  o["bandwidth_gbps"] = static_cast<double>(link.params().bandwidth_bps) * 1e-9;
  o["delay_ms"] = static_cast<double>(link.params().delay_ps) * 1e-9;
  return o;
}

void check_finished(const NetworkSystem& system) {
  for (const auto& s : system.sites()) {
    if (!s.cluster->finished()) {
      throw std::runtime_error(std::string(s.cluster->name()) +
                               " did not finish its steps: the simulation stalled (" +
                               stall_diagnosis(system) + ")");
    }
  }
}

json site_entries(const NetworkSystem& system, const sc_core::sc_time& window) {
  json sites = json::array();
  for (std::size_t i = 0; i < system.sites().size(); ++i) {
    const auto& m = system.sites()[i];
    json o = stats_object(m.fpga->statistics(window));
    o.update(stats_object(m.cluster->statistics()));
    // The site's acknowledgements: its FPGA's (contributions added) and its cluster's.
    o["acks_sent"] = o["acks_sent"].get<double>() + static_cast<double>(m.fpga->acks_sent());
    o["site"] = system.platform().sites[i].code;
    sites.push_back(o);
  }
  return sites;
}

json link_entries(const NetworkSystem& system, const sc_core::sc_time& window) {
  const auto& platform = system.platform();
  json links = json::array();
  for (const auto& d : system.links()) {
    links.push_back(
        link_entry(platform.sites[d.from].code, platform.sites[d.to].code, "wan", *d.link, window));
  }
  for (std::size_t i = 0; i < system.sites().size(); ++i) {
    const auto& code = platform.sites[i].code;
    const auto& m = system.sites()[i];
    links.push_back(link_entry(code, code, "access_up", *m.access_up, window));
    links.push_back(link_entry(code, code, "access_down", *m.access_down, window));
  }
  return links;
}

double sum_of(const json& rows, const char* key) {
  double total = 0;
  for (const auto& r : rows) total += r[key].get<double>();
  return total;
}

double max_of(const json& rows, const char* key) {
  double best = 0;
  for (const auto& r : rows) best = std::max(best, r[key].get<double>());
  return best;
}

// Faults and loss recovery (docs/simulation-semantics.md): totals over sites and links.
void add_recovery_summary(json& summary, const json& sites, const json& links) {
  summary["retransmissions_total"] = sum_of(sites, "retransmissions");
  summary["retransmitted_bytes_total"] = sum_of(sites, "retransmitted_bytes");
  summary["control_retransmissions_total"] = sum_of(sites, "control_retransmissions");
  summary["dropped_contributions_total"] = sum_of(sites, "dropped_contributions");
  summary["lost_chunks_total"] = sum_of(links, "lost_chunks");
  summary["lost_messages_total"] = sum_of(links, "lost_messages");
  // Gradient bytes that crossed a link without ending up in a result: lost on a link,
  // or dropped or received again at an aggregator.
  summary["wasted_payload_bytes_total"] =
      sum_of(links, "lost_payload_bytes") + sum_of(sites, "fpga_wasted_bytes");
  summary["recovery_time_s_max"] = max_of(sites, "recovery_time_max_s");
}

// Loss recovery per site, printed when anything was lost, dropped or retransmitted.
std::string recovery_table(const json& report) {
  const auto& sm = report["summary"];
  if (!sm.contains("retransmissions_total")) return "";
  if (sm["retransmissions_total"].get<double>() + sm["lost_messages_total"].get<double>() +
          sm["dropped_contributions_total"].get<double>() ==
      0)
    return "";
  std::string out = fmt::format(
      "Loss recovery: {} chunks and {} messages lost on links, {} contributions dropped for "
      "want of a slot, {} wasted\n",
      static_cast<std::uint64_t>(sm["lost_chunks_total"].get<double>()),
      static_cast<std::uint64_t>(sm["lost_messages_total"].get<double>()),
      static_cast<std::uint64_t>(sm["dropped_contributions_total"].get<double>()),
      format_bytes(static_cast<std::uint64_t>(sm["wasted_payload_bytes_total"].get<double>())));
  out += fmt::format("  {:<5} {:>15} {:>14} {:>11} {:>13} {:>13}\n", "site", "retransmissions",
                     "retransmitted", "control", "recovery mean", "recovery max");
  for (const auto& s : report["sites"]) {
    out += fmt::format(
        "  {:<5} {:>15} {:>14} {:>11} {:>13} {:>13}\n", s["site"].get<std::string>(),
        static_cast<std::uint64_t>(s["retransmissions"].get<double>()),
        format_bytes(static_cast<std::uint64_t>(s["retransmitted_bytes"].get<double>())),
        static_cast<std::uint64_t>(s["control_retransmissions"].get<double>()),
        format_time_ps(s["recovery_time_mean_s"].get<double>() * 1e12),
        format_time_ps(s["recovery_time_max_s"].get<double>() * 1e12));
  }
  return out + "\n";
}

// The flat summary (docs/run-json.md) from the steps, sites and links arrays.
json summarize(const json& report, const NetworkSystem& system, double end_s) {
  const auto& steps = report["steps"];
  const auto& sites = report["sites"];
  double round_sum = 0;
  int comm_rounds = 0;
  for (const auto& s : steps) {
    if (s["round_time_s"].get<double>() <= 0) continue;
    round_sum += s["round_time_s"].get<double>();
    ++comm_rounds;
  }
  const double round_mean = comm_rounds ? round_sum / comm_rounds : 0.0;
  const double idle = sum_of(sites, "idle_time_s");
  const double busy = sum_of(sites, "compute_time_s");
  json summary;
  summary["steps"] = system.steps();
  // Per-site means over sites and steps (sites are not synchronised: the slowest site of
  // each step, step_time_s_max, would over-count), so that step = compute + exposed comm
  // holds exactly, mean x steps is a site's total time and exposed / step is the GPU idle
  // fraction. A site's exposed comm never exceeds its group's round time (it waits from
  // its own ready, not the first member's), hence exposed mean <= round_time_s_mean.
  const double site_steps =
      static_cast<double>(std::max<std::size_t>(sites.size(), 1) * std::max(1, system.steps()));
  const double compute_mean = busy / site_steps, exposed_mean = idle / site_steps;
  summary["step_time_s_mean"] = compute_mean + exposed_mean;
  summary["compute_time_s_mean"] = compute_mean;
  summary["exposed_comm_time_s_mean"] = exposed_mean;
  summary["step_time_s_max"] = max_of(steps, "step_time_s");
  // Mean over the steps that communicate of the step's round time (its slowest group).
  summary["round_time_s_mean"] = round_mean;
  summary["round_time_s_max"] = max_of(steps, "round_time_s");
  summary["total_time_s"] = end_s;
  summary["gpu_idle_fraction"] = idle + busy > 0 ? idle / (idle + busy) : 0.0;
  summary["allreduce_bandwidth_gbps"] =
      round_mean > 0 ? static_cast<double>(system.options().gradient_bytes) * 8e-9 / round_mean
                     : 0.0;
  summary["buffer_high_water_bytes_max"] = max_of(sites, "high_water_bytes");
  summary["slot_stalls_total"] = sum_of(sites, "slot_stalls");
  summary["link_utilization_max"] = max_of(report["links"], "utilization");
  summary["functional_checks"] = sum_of(sites, "functional_checks");
  summary["functional_mismatches"] = sum_of(sites, "functional_mismatches");
  summary["duplicate_results"] = sum_of(sites, "duplicate_results");
  add_recovery_summary(summary, sites, report["links"]);
  return summary;
}

// The control plane's send alignment of every group of the schedule period: per member
// its send offset (the earliest, for unicast copies), the residual skew it sees as a
// receiver and the skew it would see without offsets.
json alignment_entries(const NetworkSystem& system) {
  const auto& sites = system.platform().sites;
  json rounds = json::array();
  for (std::size_t r = 0; r < system.round_plans().size(); ++r) {
    for (const auto& g : system.round_plans()[r].groups) {
      if (g.members.size() < 2) continue;
      json members = json::array();
      for (int m : g.members) {
        json offsets = json::object();
        for (const auto& [d, o] : g.send_offset_ps.at(m))
          offsets[sites[d].code] = static_cast<double>(o) * 1e-9;
        members.push_back(
            {{"site", sites[m].code},
             {"waiting_ms", static_cast<double>(g.waiting_ps.at(m)) * 1e-9},
             {"send_offset_ms", offsets},
             {"residual_skew_ms", static_cast<double>(g.skew_ps.at(m)) * 1e-9},
             {"unaligned_skew_ms", static_cast<double>(g.unaligned_skew_ps.at(m)) * 1e-9}});
      }
      json entry{{"round", r}, {"method", g.alignment}, {"members", members}};
      if (system.options().flow_control != FlowControl::kCredit)
        entry["pacing_rate_gbps"] = g.pacing_rate * 8e-9;
      rounds.push_back(entry);
    }
  }
  return rounds;
}

std::string alignment_table(const json& report) {
  std::string out =
      "Send alignment (per group of the period: member offset / residual skew "
      "at it / skew without offsets)\n";
  for (const auto& g : report["alignment"]) {
    std::string members;
    for (const auto& m : g["members"]) {
      members += fmt::format(" {} +{} / {} / {};", m["site"].get<std::string>(),
                             format_time_ps(m["waiting_ms"].get<double>() * 1e9),
                             format_time_ps(m["residual_skew_ms"].get<double>() * 1e9),
                             format_time_ps(m["unaligned_skew_ms"].get<double>() * 1e9));
    }
    const std::string rate = g.contains("pacing_rate_gbps")
                                 ? fmt::format("{:>8.2f} Gbps", g["pacing_rate_gbps"].get<double>())
                                 : std::string("  (credit)");
    out += fmt::format("  round {:>2} {:<11} {}{}\n", g["round"].get<int>(),
                       g["method"].get<std::string>(), rate, members);
  }
  return out;
}

// How a JSON key's unit reads its number: a time (ps per unit), a count, or neither.
struct KeyUnit {
  double ps_per_unit = 0;  ///< > 0: a time in this unit
  bool count = false;
};

// The unit words of report keys (a key's words are separated by '_').
constexpr std::pair<std::string_view, double> kTimeWords[] = {
    {"s", 1e12}, {"ms", 1e9}, {"us", 1e6}, {"ns", 1e3}, {"ps", 1}};
constexpr std::string_view kCountWords[] = {
    "abandoned",     "acks",       "allocations", "bytes",       "checks",          "chunks",
    "contributions", "count",      "credits",     "drops",       "dropped",         "duplicates",
    "events",        "failures",   "forwarded",   "grants",      "groups",          "links",
    "lost",          "members",    "messages",    "mismatches",  "packets",         "received",
    "recovered",     "replicated", "resends",     "results",     "retransmissions", "round",
    "rounds",        "samples",    "sent",        "simulations", "sites",           "slots",
    "stalls",        "step",       "steps",       "timeouts",    "unroutable"};

// Called for every key of the report: words are compared in place, nothing allocated.
KeyUnit unit_of(std::string_view key) {
  KeyUnit unit;
  for (std::size_t begin = 0; begin <= key.size();) {
    const std::size_t end = std::min(key.find('_', begin), key.size());
    const std::string_view word = key.substr(begin, end - begin);
    for (const auto& [name, ps] : kTimeWords)
      if (word == name) return {ps, false};
    if (std::find(std::begin(kCountWords), std::end(kCountWords), word) != std::end(kCountWords))
      unit.count = true;
    begin = end + 1;
  }
  return unit;
}

// `x` (a time in a unit of `ps_per_unit` ps) rounded to whole ps and written back as the
// double nearest to that exact decimal, so 34.855000000000004 s reads 34.855.
double exact_time(double x, double ps_per_unit) {
  const long double ps = std::llroundl(static_cast<long double>(x) * ps_per_unit);
  // Below 2^53 ps the count and the power of ten are exact doubles, and the division rounds
  // their quotient correctly: the double nearest to the decimal, as strtod reads it.
  if (std::fabs(ps) < 0x1p53L) return static_cast<double>(ps) / ps_per_unit;
  if (std::fabs(static_cast<double>(ps)) >= 9.2e18) return x;  // beyond 64-bit ps: as is
  const auto whole_ps = static_cast<long long>(ps);
  const auto per = static_cast<long long>(ps_per_unit);
  const unsigned long long magnitude = whole_ps < 0 ? -whole_ps : whole_ps;
  const int decimals = static_cast<int>(std::lround(std::log10(ps_per_unit)));
  char text[64];
  const auto end =
      decimals == 0
          ? fmt::format_to_n(text, sizeof text - 1, "{}{}", whole_ps < 0 ? "-" : "", magnitude)
          : fmt::format_to_n(text, sizeof text - 1, "{}{}.{:0{}}", whole_ps < 0 ? "-" : "",
                             magnitude / per, magnitude % per, decimals);
  *end.out = '\0';
  return std::strtod(text, nullptr);
}

void tidy(json& value, const KeyUnit& unit) {
  if (value.is_object()) {
    for (auto& [key, child] : value.items()) {
      const KeyUnit own = unit_of(key);
      // A time-keyed object (send_offset_ms: {site: ms}) passes its unit to its members.
      tidy(child, own.ps_per_unit > 0 || own.count || unit.ps_per_unit == 0 ? own : unit);
    }
  } else if (value.is_array()) {
    for (auto& child : value) tidy(child, unit);
  } else if (value.is_number_float()) {
    const double x = value.get<double>();
    if (!std::isfinite(x)) return;
    if (unit.ps_per_unit > 0) {
      value = exact_time(x, unit.ps_per_unit);
    } else if (unit.count && x == std::floor(x) && std::fabs(x) < 9.2e18) {
      value = static_cast<std::int64_t>(x);
    }
  }
}

std::string joined(const json& words, const char* sep) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : sep) + w.get<std::string>();
  return out;
}

// "10 Gbps" or "10 - 100 Gbps" over the links of one kind.
std::string rate_range(const json& links, const std::string& kind) {
  double lo = 1e300, hi = 0;
  for (const auto& l : links) {
    if (l["kind"] != kind) continue;
    lo = std::min(lo, l["bandwidth_gbps"].get<double>());
    hi = std::max(hi, l["bandwidth_gbps"].get<double>());
  }
  if (hi == 0) return "-";
  return lo == hi ? format_rate(lo * 1e9) : format_rate(lo * 1e9) + " to " + format_rate(hi * 1e9);
}

std::string buffer_range(const json& sites) {
  std::uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto& s : sites) {
    lo = std::min(lo, s["buffer_bytes"].get<std::uint64_t>());
    hi = std::max(hi, s["buffer_bytes"].get<std::uint64_t>());
  }
  if (hi == 0) return "-";
  return lo == hi ? format_bytes(lo) + " at every site"
                  : format_bytes(lo) + " to " + format_bytes(hi) + " per site";
}

// "16MiB": the largest binary (then decimal) unit that holds `bytes` exactly.
std::string exact_size(std::uint64_t bytes) {
  static const std::pair<const char*, std::uint64_t> units[] = {
      {"TiB", 1ull << 40},       {"GiB", 1ull << 30},   {"MiB", 1ull << 20}, {"KiB", 1ull << 10},
      {"TB", 1'000'000'000'000}, {"GB", 1'000'000'000}, {"MB", 1'000'000},   {"kB", 1000}};
  for (const auto& [name, size] : units)
    if (bytes >= size && bytes % size == 0) return fmt::format("{}{}", bytes / size, name);
  return fmt::format("{}B", bytes);
}

std::string on_off(const json& flag) { return flag.get<bool>() ? "on" : "off"; }

// The run's inputs as the command line and the platform gave them.
std::string inputs_table(const json& report) {
  const auto& o = report["options"]["resolved"];
  const auto& given = report["options"]["given"];
  std::string out = "Inputs\n";
  auto line = [&out](const char* name, const std::string& text) {
    out += fmt::format("  {:<13} {}\n", name, text);
  };
  line("platform", fmt::format("{} ({}), {} sites", report["platform"].get<std::string>(),
                               o["platform"].get<std::string>(), report["sites"].size()));
  line("link rate", fmt::format("WAN {}, access {}", rate_range(report["links"], "wan"),
                                rate_range(report["links"], "access_up")));
  line("schedule", fmt::format("{}, {} steps, eps {}", o["schedule"].get<std::string>(),
                               o["steps"].get<int>(), o["eps"].get<double>()));
  const auto burst_chunks = o["burst_chunks"].get<std::uint64_t>();
  const std::string burst =
      burst_chunks > 1 ? fmt::format(" in bursts of {} (timed per burst)", burst_chunks) : "";
  line("gradient", fmt::format("{}, chunk {}{}, buffer {}",
                               exact_size(o["gradient_bytes"].get<std::uint64_t>()),
                               exact_size(o["chunk_bytes"].get<std::uint64_t>()), burst,
                               given.contains("buffer")
                                   ? given["buffer"].get<std::string>() + " at every site"
                                   : "from the platform, " + buffer_range(report["sites"])));
  const std::string flow = o["flow_control"] == "pacing"
                               ? fmt::format("pacing (margin {})", o["pacing_margin"].get<double>())
                               : o["flow_control"].get<std::string>();
  line("flow control",
       fmt::format("{}, round start {}, alignment {}, multicast {}, aggregation {}", flow,
                   o["round_start"].get<std::string>(), o["alignment"].get<std::string>(),
                   on_off(o["multicast"]), on_off(o["aggregation"])));
  line("jitter", fmt::format("{} (seed {}){}", on_off(o["jitter"]), o["seed"].get<std::uint64_t>(),
                             o["functional"].get<bool>() ? ", functional data check" : ""));
  if (!o["set"].empty()) line("overrides", "--set " + joined(o["set"], ", --set "));
  return out + "\n";
}

// Rounds to eps and the time to it, or why the run has no time for it.
std::string consensus_line(const json& report) {
  const auto& sm = report["summary"];
  const long rounds = sm["rounds_to_eps"].get<long>();
  const std::string eps =
      report.contains("options")
          ? fmt::format("{}", report["options"]["resolved"]["eps"].get<double>())
          : "";
  if (rounds < 0)
    return fmt::format("  rounds to eps {:<10} never: this schedule does not mix to eps\n", eps);
  const std::string head = fmt::format("  rounds to eps {:<10} {}", eps, rounds);
  if (!sm.contains("time_to_eps_s")) {
    const int steps = sm["steps"].get<int>();
    return fmt::format(
        "{}\n  time to eps              not measured: the run simulated {} step{} (--steps 0 "
        "or --steps {} measures it)\n",
        head, steps, steps == 1 ? "" : "s", rounds);
  }
  return fmt::format(
      "{}\n  time to eps              {} (every site has the eps-consensus result, compute "
      "included); without compute {}\n",
      head, format_time_ps(sm["time_to_eps_s"].get<double>() * 1e12),
      format_time_ps(sm["comm_time_to_eps_s"].get<double>() * 1e12));
}

}  // namespace

void tidy_numbers(json& document) { tidy(document, KeyUnit{}); }

// The collective and its ring step rule, for every schedule but the group averages and
// the default ring (their reports predate the key and stay as they were).
static void add_collective(json& report, const Schedule& schedule) {
  if (schedule.collective == Collective::kGroupAverage ||
      (schedule.collective == Collective::kRing && schedule.ring_step == RingStepRule::kReceive))
    return;
  report["collective"] = collective_name(schedule.collective);
  if (is_ring_collective(schedule.collective))
    report["ring_step"] = ring_step_rule_name(schedule.ring_step);
  if (schedule.collective == Collective::kPointToPoint)
    report["messages_per_pair"] = schedule.messages;
}

namespace {

json tier_entries(const std::vector<MemoryTier>& tiers) {
  json out = json::array();
  for (const MemoryTier& t : tiers)
    out.push_back({{"name", t.name},
                   {"key", t.key},
                   {"capacity_bytes", t.capacity_bytes},
                   {"bandwidth_gbps", t.bandwidth_bytes_per_s * 8 / 1e9},
                   {"cost_usd_per_gib", t.cost_usd_per_gib},
                   {"energy_pj_per_bit", t.energy_pj_per_bit}});
  return out;
}

// A buffer no tier holds has no price: null, not 0 (a sweep ranking by cost would take the
// largest buffer for the cheapest).
json tier_cost_usd(const TierChoice& c) { return c.tier < 0 ? json(nullptr) : json(c.cost_usd); }
json tier_power_w(const TierChoice& c) { return c.tier < 0 ? json(nullptr) : json(c.power_w); }

// Per site, the buffer access rate its memory must sustain: a group schedule's peak over
// its groups (none without aggregation), a reduction forest's trees together (they run
// at once).
std::vector<double> access_bytes_per_s(const NetworkSystem& system, double margin) {
  const Platform& p = system.platform();
  // Without aggregation a group schedule's FPGAs pass every chunk through, holding none.
  if (!system.options().aggregation && system.schedule().collective == Collective::kGroupAverage)
    return std::vector<double>(p.sites.size(), 0.0);
  if (system.schedule().collective != Collective::kReductionTree)
    return peak_access_bytes_per_s(system.round_plans(), p.sites.size(), margin);
  return tree_access_bytes_per_s(p, system.routing(), system.schedule().forest,
                                 system.forest_plan(), transaction_bytes(system.options()));
}

// The memory tier each site's buffer needs at its peak access rate (access_bytes_per_s)
// (docs/memory-tiers.md): per site, in the summary (sums) and as `memory` (the costliest
// tier any site needs, and the tiers' parameters).
void add_memory_tiers(json& report, const NetworkSystem& system) {
  const Platform& p = system.platform();
  const RunOptions& o = system.options();
  const double margin = o.flow_control == FlowControl::kCredit ? 0.0 : o.pacing_margin;
  const std::vector<double> access = access_bytes_per_s(system, margin);
  std::vector<TierChoice> choices;
  for (std::size_t i = 0; i < report["sites"].size(); ++i) {  // switch-only sites: none
    const TierChoice& c = choices.emplace_back(
        choose_memory_tier(p.memory_tiers, fpga_buffer_bytes(o, p.sites[i].fpga), access[i]));
    json& site = report["sites"][i];
    site["memory_tier"] = tier_name(p.memory_tiers, c);
    site["memory_access_gbps"] = access[i] * 8 / 1e9;
    site["memory_cost_usd"] = tier_cost_usd(c);
    site["memory_power_w"] = tier_power_w(c);
  }
  const TierChoice total = total_of(choices);
  report["summary"]["memory_cost_usd"] = tier_cost_usd(total);
  report["summary"]["memory_power_w"] = tier_power_w(total);
  report["memory"] = {{"tier", tier_name(p.memory_tiers, total)},
                      {"cost_usd", tier_cost_usd(total)},
                      {"power_w", tier_power_w(total)},
                      {"tiers", tier_entries(p.memory_tiers)}};
}

}  // namespace

json collect_report(const NetworkSystem& system) {
  check_finished(system);
  const double end = sim_end_s(system);
  const sc_core::sc_time window(end, sc_core::SC_SEC);
  json report;
  report["platform"] = system.platform().name;
  report["schedule"] = system.schedule().name;
  add_collective(report, system.schedule());
  report["steps"] = json::array();
  for (int k = 0; k < system.steps(); ++k) report["steps"].push_back(step_entry(system, k));
  report["alignment"] = alignment_entries(system);
  report["sites"] = site_entries(system, window);
  report["links"] = link_entries(system, window);
  report["summary"] = summarize(report, system, end);
  add_memory_tiers(report, system);
  return report;
}

void add_colocated(json& report, const json& colocated) {
  const double ref = colocated["summary"]["step_time_s_mean"].get<double>();
  report["summary"]["colocated_step_time_s_mean"] = ref;
  report["summary"]["slowdown_vs_colocated"] =
      ref > 0 ? report["summary"]["step_time_s_mean"].get<double>() / ref : 0.0;
  report["colocated"] = colocated["summary"];
  for (const char* key : {"memory_cost_usd", "memory_power_w"}) report["colocated"].erase(key);
}

namespace {

// One step's groups: "{members} round time (sent transmit complete) ...".
std::string step_groups(const json& step) {
  std::string groups;
  for (const auto& g : step["groups"]) {
    std::string members;
    for (const auto& m : g["members"])
      members += (members.empty() ? "" : " ") + m.get<std::string>();
    groups +=
        fmt::format("{{{}}} {} ", members, format_time_ps(g["round_time_s"].get<double>() * 1e12));
    if (g.contains("transmit_complete_s"))
      groups +=
          fmt::format("(sent {}) ", format_time_ps(g["transmit_complete_s"].get<double>() * 1e12));
  }
  return groups;
}

std::string steps_table(const json& report) {
  std::string out;
  auto line = [&out](const std::string& s) { out += s + "\n"; };
  const std::string collective =
      report.contains("collective")
          ? ", " + report["collective"].get<std::string>() +
                (report.contains("ring_step")
                     ? " (step rule " + report["ring_step"].get<std::string>() + ")"
                     : "")
          : "";
  line(fmt::format("Steps ({} platform, schedule {}{})", report["platform"].get<std::string>(),
                   report["schedule"].get<std::string>(), collective));
  line(fmt::format("  {:>4} {:>5} {:>12} {:>12}  {}", "step", "round", "round time", "step time",
                   "groups (round time)"));
  for (const auto& s : report["steps"])
    line(fmt::format("  {:>4} {:>5} {:>12} {:>12}  {}", s["step"].get<int>(), s["round"].get<int>(),
                     format_time_ps(s["round_time_s"].get<double>() * 1e12),
                     format_time_ps(s["step_time_s"].get<double>() * 1e12), step_groups(s)));
  return out + "\n";
}

std::string sites_table(const json& report) {
  std::string out = "Sites\n";
  out += fmt::format("  {:<5} {:>11} {:>11} {:>8} {:>11} {:>11} {:>8}\n", "site", "buffer",
                     "high-water", "stalls", "stall time", "offset wait", "GPU idle");
  for (const auto& s : report["sites"]) {
    out += fmt::format(
        "  {:<5} {:>11} {:>11} {:>8} {:>11} {:>11} {:>7.1f}%\n", s["site"].get<std::string>(),
        format_bytes(static_cast<std::uint64_t>(s["buffer_bytes"].get<double>())),
        format_bytes(static_cast<std::uint64_t>(s["high_water_bytes"].get<double>())),
        static_cast<std::uint64_t>(s["slot_stalls"].get<double>()),
        format_time_ps(s["stall_time_s"].get<double>() * 1e12),
        format_time_ps(s["offset_wait_s"].get<double>() * 1e12),
        100 * s["idle_fraction"].get<double>());
  }
  return out + "\n";
}

std::string links_table(const json& report, std::size_t busiest_links) {
  std::string out;
  auto line = [&out](const std::string& s) { out += s + "\n"; };
  std::vector<json> links(report["links"].begin(), report["links"].end());
  std::sort(links.begin(), links.end(), [](const json& a, const json& b) {
    return a["utilization"].get<double>() > b["utilization"].get<double>();
  });
  line(
      "Busiest links (utilization: busy time / run time, wire bytes with headers and control; "
      "payload: gradient bytes only)");
  line(fmt::format("  {:<22} {:>10} {:>11} {:>12} {:>13}", "link", "rate", "utilization", "payload",
                   "max queueing"));
  for (std::size_t i = 0; i < std::min(busiest_links, links.size()); ++i) {
    const auto& l = links[i];
    const std::string name =
        l["kind"] == "wan" ? l["from"].get<std::string>() + " -> " + l["to"].get<std::string>()
                           : l["from"].get<std::string>() + " " + l["kind"].get<std::string>();
    line(fmt::format("  {:<22} {:>10} {:>10.1f}% {:>12} {:>13}", name,
                     format_rate(l["bandwidth_gbps"].get<double>() * 1e9),
                     100 * l["utilization"].get<double>(),
                     format_bytes(static_cast<std::uint64_t>(l["payload_bytes"].get<double>())),
                     format_time_ps(l["queueing_delay_max_ns"].get<double>() * 1e3)));
  }
  return out + "\n";
}

// "HBM at every site" or "on-chip at lon, nyc; HBM at tyo" (in the tiers' order), then
// the memory's cost and access power summed over the sites (docs/memory-tiers.md).
std::string memory_tier_line(const json& report) {
  std::vector<std::string> order;
  for (const auto& t : report["memory"]["tiers"]) order.push_back(t["name"].get<std::string>());
  order.push_back("none fits");
  std::map<std::string, std::string> sites_of;
  for (const auto& s : report["sites"]) {
    std::string& names = sites_of[s["memory_tier"].get<std::string>()];
    names += (names.empty() ? "" : ", ") + s["site"].get<std::string>();
  }
  std::string tiers;
  for (const std::string& name : order) {
    if (!sites_of.count(name)) continue;
    tiers += (tiers.empty() ? "" : "; ") + name + " at " +
             (sites_of.size() == 1 ? "every site" : sites_of.at(name));
  }
  const json& memory = report["memory"];
  if (memory["cost_usd"].is_null())
    return fmt::format(
        "  memory tier              {}; cost and access power unknown (no tier "
        "holds the buffer at its access rate)\n",
        tiers);
  return fmt::format("  memory tier              {}; {:.2f} USD, access power {:.2f} W\n", tiers,
                     memory["cost_usd"].get<double>(), memory["power_w"].get<double>());
}

// The summary's last lines: buffers, stalls, the co-located reference, functional checks.
std::string summary_tail(const json& report) {
  std::string out;
  auto line = [&out](const std::string& s) { out += s + "\n"; };
  const auto& sm = report["summary"];
  auto time_of = [&sm](const char* key) { return format_time_ps(sm[key].get<double>() * 1e12); };
  line(fmt::format(
      "  buffer high-water (max)  {}",
      format_bytes(static_cast<std::uint64_t>(sm["buffer_high_water_bytes_max"].get<double>()))));
  if (report.contains("memory")) out += memory_tier_line(report);
  line(fmt::format("  slot stalls (all sites)  {}",
                   static_cast<std::uint64_t>(sm["slot_stalls_total"].get<double>())));
  if (sm.contains("slowdown_vs_colocated")) {
    line(fmt::format("  co-located step time     {}", time_of("colocated_step_time_s_mean")));
    line(
        fmt::format("  slowdown vs co-located   {:.3f}x (mean step time ratio: per step, "
                    "not to consensus)",
                    sm["slowdown_vs_colocated"].get<double>()));
  } else if (report.value("collective", "") == "reduction-tree") {
    line(
        "  co-located reference     none for reduction trees (one data centre's fabric has no "
        "links for a tree's edges; docs/reduction-trees.md)");
  }
  if (sm["functional_checks"].get<double>() > 0) {
    line(fmt::format("  functional checks        {} chunks, {} mismatches",
                     static_cast<std::uint64_t>(sm["functional_checks"].get<double>()),
                     static_cast<std::uint64_t>(sm["functional_mismatches"].get<double>())));
  }
  return out;
}

std::string summary_lines(const json& report) {
  std::string out;
  auto line = [&out](const std::string& s) { out += s + "\n"; };
  const auto& sm = report["summary"];
  auto time_of = [&sm](const char* key) { return format_time_ps(sm[key].get<double>() * 1e12); };
  line("Summary (step table: round time = slowest group, step time = slowest site)");
  line(fmt::format("  mean step time per site  {} = compute {} + exposed comm {}",
                   time_of("step_time_s_mean"), time_of("compute_time_s_mean"),
                   time_of("exposed_comm_time_s_mean")));
  line(
      fmt::format("  mean round time          {} (slowest group of each step: first member "
                  "ready to last result)",
                  time_of("round_time_s_mean")));
  line(fmt::format("  GPU idle fraction        {:.1f}% (exposed comm / step time)",
                   100 * sm["gpu_idle_fraction"].get<double>()));
  line(fmt::format("  all-reduce bandwidth     {:.2f} Gbps (gradient / mean round time)",
                   sm["allreduce_bandwidth_gbps"].get<double>()));
  if (sm.contains("rounds_to_eps")) out += consensus_line(report);
  out += bound_lines(report);
  return out + summary_tail(report);
}

}  // namespace

std::string format_report(const json& report, std::size_t busiest_links) {
  std::string out;
  if (report.contains("options")) out += inputs_table(report);
  out += steps_table(report);
  if (report.contains("alignment") && !report["alignment"].empty())
    out += alignment_table(report) + "\n";
  out += recovery_table(report);
  out += sites_table(report);
  out += links_table(report, busiest_links);
  return out + summary_lines(report);
}

}  // namespace aggnet
