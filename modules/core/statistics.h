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

/// A distribution's count, sum, min and max: 32 bytes, the part of a histogram that every
/// value updates (a link keeps it in its hot state and its buckets apart).
class RunningStats {
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
  }
  std::uint64_t count() const { return count_; }
  double mean() const { return count_ ? sum_ / count_ : 0.0; }
  double min() const { return count_ ? min_ : 0.0; }
  double max() const { return count_ ? max_ : 0.0; }

 private:
  std::uint64_t count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
};

/// Power-of-two buckets of the non-zero values: bucket b counts values in [2^(b-1), 2^b)
/// (bucket 0: values < 1). Zeros, the common case (a link crossing that did not queue),
/// touch no bucket: a histogram counts them as its count less the buckets' total.
class LogBuckets {
 public:
  void add(double value) { add_to(bucket_of(value), 1); }
  /// `count` values in bucket `bucket` (a run of equal buckets counted elsewhere).
  void add_to(std::size_t bucket, std::uint64_t count);
  /// The bucket of a non-zero value.
  static std::size_t bucket_of(double value);
  const std::vector<std::uint64_t>& counts() const { return counts_; }

 private:
  std::vector<std::uint64_t> counts_;
};

/// Running distribution: count, sum, min, max and power-of-two buckets of the value
/// expressed in `unit_scale` units (e.g. ns), enough for queueing-delay histograms.
class Histogram {
 public:
  Histogram() = default;
  /// A histogram of values kept as their running stats and their non-zero values' buckets.
  Histogram(const RunningStats& stats, const LogBuckets& buckets)
      : stats_(stats), buckets_(buckets) {}
  void add(double value) {
    stats_.add(value);
    if (value != 0.0) buckets_.add(value);
  }
  std::uint64_t count() const { return stats_.count(); }
  double mean() const { return stats_.mean(); }
  double min() const { return stats_.min(); }
  double max() const { return stats_.max(); }
  /// bucket b counts values in [2^(b-1), 2^b) (bucket 0: values < 1, zeros included).
  std::vector<std::uint64_t> buckets() const;

 private:
  RunningStats stats_;
  LogBuckets buckets_;
};

/// A named histogram of one module instance.
struct NamedHistogram {
  std::string name;  ///< carries the unit, e.g. "queueing_delay_ns"
  Histogram histogram;
  std::string description;
};

}  // namespace aggnet
