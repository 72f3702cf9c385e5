// Named statistics that every module registers, so a run can be compared without
// parsing logs (counters/gauges as scalars, distributions as histograms).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
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
// 48 bytes: a link keeps its queueing histogram on one line with the rest of what a
// crossing touches (docs/performance.md, step 11). The count is the buckets' sum, not
// kept apart, and the buckets are an array, not a std::vector.
class Histogram {
 public:
  Histogram() = default;
  Histogram(const Histogram& other);
  Histogram& operator=(const Histogram& other);
  /// A histogram moved from is empty (and usable).
  Histogram(Histogram&& other) noexcept { swap(other); }
  Histogram& operator=(Histogram&& other) noexcept {
    Histogram taken(std::move(other));
    swap(taken);
    return *this;
  }
  ~Histogram() = default;

  /// Inline: a link adds one value per crossing, most of them zeros.
  void add(double value) {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
    sum_ += value;
    if (value == 0.0) {
      ++zeros_;
      return;
    }
    add_to_bucket(value);
  }
  std::uint64_t count() const;
  double mean() const {
    const std::uint64_t n = count();
    return n ? sum_ / static_cast<double>(n) : 0.0;
  }
  double min() const { return empty() ? 0.0 : min_; }
  double max() const { return empty() ? 0.0 : max_; }
  /// bucket b counts values in [2^(b-1), 2^b) (bucket 0: values < 1).
  std::vector<std::uint64_t> buckets() const;

 private:
  // A bucket array exists once a value went into it (values are finite).
  bool empty() const { return zeros_ == 0 && bucket_count_ == 0; }
  void swap(Histogram& other) noexcept {
    std::swap(sum_, other.sum_);
    std::swap(min_, other.min_);
    std::swap(max_, other.max_);
    std::swap(zeros_, other.zeros_);
    std::swap(buckets_, other.buckets_);
    std::swap(bucket_count_, other.bucket_count_);
  }
  void add_to_bucket(double value);
  double sum_ = 0;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
  // Zeros (a link crossing that did not queue, the common case) are counted here and
  // joined to bucket 0 when read: adding one touches no memory but these fields.
  std::uint64_t zeros_ = 0;
  std::unique_ptr<std::uint64_t[]> buckets_;
  std::uint32_t bucket_count_ = 0;
};

/// A named histogram of one module instance.
struct NamedHistogram {
  std::string name;  ///< carries the unit, e.g. "queueing_delay_ns"
  const Histogram* histogram;
  std::string description;
};

}  // namespace aggnet
