// Per-module-instance statistics of a NetworkSystem (`aggnet run --stats FILE`): every
// module's named scalar statistics and histograms (modules/core/statistics.h), plus time
// series of occupancy sampled at a fixed interval by an OccupancySampler.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <systemc>
#include <vector>

namespace aggnet {

class NetworkSystem;

/// Samples, every `interval`, each FPGA's buffer occupancy (bytes) and slots in use, and
/// each link's bytes in flight, starting at time 0 and stopping once every cluster of the
/// system has finished (so it never keeps the simulation alive).
class OccupancySampler : public sc_core::sc_module {
 public:
  /// Errors: std::invalid_argument for a zero interval.
  OccupancySampler(sc_core::sc_module_name name, const NetworkSystem& system,
                   std::uint64_t interval_ps);
  std::uint64_t interval_ps() const { return interval_ps_; }
  /// One series per module instance name (e.g. "wan.lon.fpga", "buffer_occupancy_bytes").
  struct Series {
    std::string instance;  ///< SystemC name of the module
    std::string name;      ///< statistic name with unit
    std::vector<std::uint64_t> values;
  };
  const std::vector<Series>& series() const { return series_; }

 private:
  void run();
  const NetworkSystem& system_;
  std::uint64_t interval_ps_;
  std::vector<Series> series_;
  std::vector<const std::uint64_t*> sources_;
};

/// One object per module instance: {"instance", "module", "statistics": {name: value},
/// "histograms": {name: {count, mean, min, max, buckets}}, "series": {name: [values]}}.
/// `sampler` may be null (no series). Call after sc_start returned.
nlohmann::json collect_module_stats(const NetworkSystem& system, const OccupancySampler* sampler);

/// The rows as CSV in long (tidy) form, one value per row, columns
/// instance,module,statistic,kind,index,time_ns,bucket_low,bucket_high,value:
///  - kind `scalar`: a statistic's value (index, time and bucket columns empty);
///  - kind `count`/`mean`/`min`/`max`: a histogram's summary;
///  - kind `bucket`: bucket `index` of a histogram, counting values in
///    [bucket_low, bucket_high) = [2^(index-1), 2^index) ([0, 1) for bucket 0);
///  - kind `sample`: sample `index` of a series, taken at `time_ns`.
std::string module_stats_csv(const nlohmann::json& rows);

}  // namespace aggnet
