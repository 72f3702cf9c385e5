// Named statistics that every module registers, so a run can be compared without
// parsing logs (counters/gauges as scalars, distributions as histograms).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace aggnet {

/// One scalar statistic of a module instance. `name` carries its unit ("busy_time_s").
struct Statistic {
  std::string name;
  double value;
  std::string description;
};

/// Running distribution: count, sum, min, max and power-of-two buckets of the value
/// expressed in `unit_scale` units (e.g. ns), enough for queueing-delay histograms.
class Histogram {
 public:
  /// Inline: a link adds one value per crossing, most of them zeros.
  void add(double value) {
    if (count_ == 0) {
      min_ = max_ = value;
    } else {
      min_ = std::min(min_, value);
      max_ = std::max(max_, value);
    }
    ++count_;
    sum_ += value;
    if (value != 0.0) add_to_bucket(value);
  }
  std::uint64_t count() const { return count_; }
  double mean() const { return count_ ? sum_ / count_ : 0.0; }
  double min() const { return count_ ? min_ : 0.0; }
  double max() const { return count_ ? max_ : 0.0; }
  /// bucket b counts values in [2^(b-1), 2^b) (bucket 0: values < 1).
  std::vector<std::uint64_t> buckets() const;

 private:
  void add_to_bucket(double value);

  std::uint64_t count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
  // Zeros (a link crossing that did not queue, the common case) are in count_ only, joined
  // to bucket 0 when read (count_ less the buckets' total): adding one touches no memory
  // but these fields, and the histogram is one cache line (56 bytes) in a link's hot state.
  std::vector<std::uint64_t> buckets_;
};

/// A named histogram of one module instance.
struct NamedHistogram {
  std::string name;  ///< carries the unit, e.g. "queueing_delay_ns"
  const Histogram* histogram;
  std::string description;
};

}  // namespace aggnet
