#include "modules/core/statistics.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>

namespace aggnet {

namespace {

// std::ilogb of a finite double >= 1 (a normal number): its biased exponent field less
// the bias. std::ilogb is a libm call, and this runs once per link crossing.
int binary_exponent(double value) {
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<int>((bits >> 52) & 0x7ff) - 1023;
}

}  // namespace

std::size_t LogBuckets::bucket_of(double value) {
  return value < 1.0 ? 0 : static_cast<std::size_t>(binary_exponent(value)) + 1;
}

void LogBuckets::add_to(std::size_t bucket, std::uint64_t count) {
  if (counts_.size() <= bucket) counts_.resize(bucket + 1, 0);
  counts_[bucket] += count;
}

std::vector<std::uint64_t> Histogram::buckets() const {
  std::vector<std::uint64_t> all = buckets_.counts();
  const std::uint64_t zeros = count() - std::accumulate(all.begin(), all.end(), std::uint64_t{0});
  if (zeros == 0) return all;
  if (all.empty()) all.push_back(0);
  all[0] += zeros;
  return all;
}

}  // namespace aggnet
