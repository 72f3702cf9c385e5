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

Histogram::Histogram(const Histogram& other)
    : sum_(other.sum_),
      min_(other.min_),
      max_(other.max_),
      zeros_(other.zeros_),
      bucket_count_(other.bucket_count_) {
  if (bucket_count_ == 0) return;
  buckets_ = std::make_unique<std::uint64_t[]>(bucket_count_);
  std::copy_n(other.buckets_.get(), bucket_count_, buckets_.get());
}

Histogram& Histogram::operator=(const Histogram& other) {
  if (this != &other) *this = Histogram(other);
  return *this;
}

void Histogram::add_to_bucket(double value) {
  const auto bucket = static_cast<std::uint32_t>(value < 1.0 ? 0 : binary_exponent(value) + 1);
  if (bucket >= bucket_count_) {
    auto grown = std::make_unique<std::uint64_t[]>(bucket + 1);  // zeroed
    std::copy_n(buckets_.get(), bucket_count_, grown.get());
    buckets_ = std::move(grown);
    bucket_count_ = bucket + 1;
  }
  ++buckets_[bucket];
}

std::uint64_t Histogram::count() const {
  return std::accumulate(buckets_.get(), buckets_.get() + bucket_count_, zeros_);
}

std::vector<std::uint64_t> Histogram::buckets() const {
  std::vector<std::uint64_t> all(buckets_.get(), buckets_.get() + bucket_count_);
  if (zeros_ == 0) return all;
  if (all.empty()) all.push_back(0);
  all[0] += zeros_;
  return all;
}

}  // namespace aggnet
