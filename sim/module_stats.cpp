#include "sim/module_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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
  for (const auto& h : histograms) o["histograms"][h.name] = histogram_json(h.histogram);
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

std::string number(const json& v) { return fmt::format("{}", v.get<double>()); }

}  // namespace

std::string module_stats_csv(const json& rows) {
  CsvWriter csv;
  csv.row({"instance", "module", "statistic", "kind", "index", "time_ns", "bucket_low",
           "bucket_high", "value"});
  for (const auto& r : rows) {
    const std::string inst = r["instance"].get<std::string>();
    const std::string mod = r["module"].get<std::string>();
    auto out = [&](const std::string& stat, const char* kind, const std::string& index,
                   const std::string& time, const std::string& lo, const std::string& hi,
                   const std::string& value) {
      csv.row({inst, mod, stat, kind, index, time, lo, hi, value});
    };
    for (const auto& [name, v] : r["statistics"].items())
      out(name, "scalar", "", "", "", "", number(v));
    for (const auto& [name, h] : r["histograms"].items()) {
      out(name, "count", "", "", "", "", number(h["count"]));
      for (const char* f : {"mean", "min", "max"}) out(name, f, "", "", "", "", number(h[f]));
      const auto& buckets = h["buckets"];
      for (std::size_t b = 0; b < buckets.size(); ++b) {
        // Bucket b counts values in [2^(b-1), 2^b); bucket 0 those below 1.
        const double lo = b == 0 ? 0.0 : std::ldexp(1.0, static_cast<int>(b) - 1);
        out(name, "bucket", std::to_string(b), "", fmt::format("{}", lo),
            fmt::format("{}", std::ldexp(1.0, static_cast<int>(b))), number(buckets[b]));
      }
    }
    const double interval_ns = r.value("series_interval_ns", 0.0);
    for (const auto& [name, values] : r["series"].items()) {
      for (std::size_t i = 0; i < values.size(); ++i) {
        out(name, "sample", std::to_string(i),
            fmt::format("{}", interval_ns * static_cast<double>(i)), "", "", number(values[i]));
      }
    }
  }
  return csv.str();
}

}  // namespace aggnet
