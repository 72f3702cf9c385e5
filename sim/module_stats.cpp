#include "sim/module_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "common/csv.h"
#include "modules/core/time.h"
#include "sim/builder.h"

namespace aggnet {

using nlohmann::json;

OccupancySampler::OccupancySampler(sc_core::sc_module_name name, const NetworkSystem& system,
                                   std::uint64_t interval_ps)
    : sc_module(name), system_(system), interval_ps_(interval_ps) {
  if (interval_ps == 0) throw std::invalid_argument("statistics sampling interval is zero");
  auto add = [&](const sc_core::sc_object& module, const char* stat, const std::uint64_t& v) {
    series_.push_back({module.name(), stat, {}});
    sources_.push_back(&v);
  };
  for (const auto& s : system.sites()) {
    add(*s.fpga, "buffer_occupancy_bytes", s.fpga->buffer().occupancy_bytes());
    add(*s.fpga, "slots_in_use", s.fpga->slots_in_use());
    add(*s.access_up, "bytes_in_flight", s.access_up->bytes_in_flight());
    add(*s.access_down, "bytes_in_flight", s.access_down->bytes_in_flight());
  }
  for (const auto& d : system.links()) add(*d.link, "bytes_in_flight", d.link->bytes_in_flight());
  SC_HAS_PROCESS(OccupancySampler);
  SC_THREAD(run);
}

void OccupancySampler::run() {
  const sc_core::sc_time interval = ps_time(interval_ps_);
  for (;;) {
    for (std::size_t i = 0; i < sources_.size(); ++i) series_[i].values.push_back(*sources_[i]);
    const auto& sites = system_.sites();
    if (std::all_of(sites.begin(), sites.end(),
                    [](const SiteModules& m) { return m.cluster->finished(); }))
      return;
    wait(interval);
  }
}

namespace {

json histogram_json(const Histogram& h) {
  return {{"count", h.count()},
          {"mean", h.mean()},
          {"min", h.min()},
          {"max", h.max()},
          {"buckets", h.buckets()}};
}

json row(const sc_core::sc_object& module, const std::string& type,
         const std::vector<Statistic>& stats, const std::vector<NamedHistogram>& histograms) {
  json o{{"instance", module.name()},
         {"module", type},
         {"statistics", json::object()},
         {"histograms", json::object()},
         {"series", json::object()}};
  for (const auto& s : stats) o["statistics"][s.name] = s.value;
  for (const auto& h : histograms) o["histograms"][h.name] = histogram_json(*h.histogram);
  return o;
}

}  // namespace

json collect_module_stats(const NetworkSystem& system, const OccupancySampler* sampler) {
  double end_s = 0;
  for (const auto& site : system.sites())
    for (const auto& r : site.cluster->steps()) end_s = std::max(end_s, r.end.to_seconds());
  const sc_core::sc_time window(end_s, sc_core::SC_SEC);
  json rows = json::array();
  for (const auto& s : system.sites()) {
    rows.push_back(row(*s.cluster, "ComputeCluster", s.cluster->statistics(), {}));
    rows.push_back(
        row(*s.access_up, "WanLink", s.access_up->statistics(window), s.access_up->histograms()));
    rows.push_back(row(*s.sw, "MulticastSwitch", s.sw->statistics(), {}));
    rows.push_back(
        row(*s.fpga, "FpgaAggregator", s.fpga->statistics(window), s.fpga->histograms()));
    rows.push_back(row(*s.access_down, "WanLink", s.access_down->statistics(window),
                       s.access_down->histograms()));
  }
  for (const auto& d : system.links())
    rows.push_back(row(*d.link, "WanLink", d.link->statistics(window), d.link->histograms()));
  if (sampler) {
    for (const auto& series : sampler->series()) {
      for (auto& r : rows) {
        if (r["instance"] != series.instance) continue;
        r["series"][series.name] = series.values;
        r["series_interval_ns"] = static_cast<double>(sampler->interval_ps()) * 1e-3;
      }
    }
  }
  return rows;
}

namespace {

std::string joined(const json& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ";") + v.dump();
  return out;
}

}  // namespace

std::string module_stats_csv(const json& rows) {
  std::set<std::string> stats, hists, series;
  for (const auto& r : rows) {
    for (const auto& [k, v] : r["statistics"].items()) stats.insert(k);
    for (const auto& [k, v] : r["histograms"].items()) hists.insert(k);
    for (const auto& [k, v] : r["series"].items()) series.insert(k);
  }
  std::vector<std::string> header{"instance", "module"};
  header.insert(header.end(), stats.begin(), stats.end());
  for (const auto& h : hists)
    for (const char* f : {"_count", "_mean", "_min", "_max", "_buckets"}) header.push_back(h + f);
  if (!series.empty()) header.push_back("series_interval_ns");
  for (const auto& s : series) header.push_back(s + "_samples");
  CsvWriter csv;
  csv.row(header);
  for (const auto& r : rows) {
    std::vector<std::string> cells{r["instance"].get<std::string>(),
                                   r["module"].get<std::string>()};
    for (const auto& s : stats)
      cells.push_back(
          r["statistics"].contains(s) ? fmt::format("{}", r["statistics"][s].get<double>()) : "");
    for (const auto& h : hists) {
      if (!r["histograms"].contains(h)) {
        cells.insert(cells.end(), 5, "");
        continue;
      }
      const auto& o = r["histograms"][h];
      cells.push_back(o["count"].dump());
      for (const char* f : {"mean", "min", "max"})
        cells.push_back(fmt::format("{}", o[f].get<double>()));
      cells.push_back(joined(o["buckets"]));
    }
    if (!series.empty())
      cells.push_back(r.contains("series_interval_ns") ? r["series_interval_ns"].dump() : "");
    for (const auto& s : series)
      cells.push_back(r["series"].contains(s) ? joined(r["series"][s]) : "");
    csv.row(cells);
  }
  return csv.str();
}

}  // namespace aggnet
