#include "modules/core/statistics.h"

#include <algorithm>
#include <cmath>

namespace aggnet {

void Histogram::add(double value) {
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  ++count_;
  sum_ += value;
  std::size_t bucket = value < 1.0 ? 0 : static_cast<std::size_t>(std::ilogb(value)) + 1;
  if (buckets_.size() <= bucket) buckets_.resize(bucket + 1, 0);
  ++buckets_[bucket];
}

}  // namespace aggnet
