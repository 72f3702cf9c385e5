#include "collectives/functional.h"

#include <cmath>
#include <utility>

namespace aggnet {

FunctionalValues::FunctionalValues(int site, std::uint64_t gradient_bytes,
                                   std::uint64_t chunk_bytes, std::vector<int> ring_order)
    : site_(site),
      gradient_bytes_(gradient_bytes),
      chunk_bytes_(chunk_bytes),
      ring_order_(std::move(ring_order)) {}

float FunctionalValues::gradient_value(int site, int step, std::uint64_t index) {
  return static_cast<float>(
      (static_cast<std::uint64_t>(site + 1) * 131 + static_cast<std::uint64_t>(step) * 17 + index) %
      251);
}

std::vector<float> FunctionalValues::gradient(int step) const {
  std::vector<float> values(gradient_bytes_ / 4);
  for (std::uint64_t j = 0; j < values.size(); ++j) values[j] = gradient_value(site_, step, j);
  return values;
}

FunctionalValues::Values FunctionalValues::slice(const std::vector<float>& source,
                                                 std::uint64_t offset_bytes, std::uint64_t bytes) {
  auto begin = source.begin() + static_cast<std::ptrdiff_t>(offset_bytes / 4);
  return std::make_shared<std::vector<float>>(begin,
                                              begin + static_cast<std::ptrdiff_t>(bytes / 4));
}

FunctionalValues::Values FunctionalValues::contribution(std::uint64_t offset_bytes,
                                                        std::uint64_t bytes) const {
  return slice(own_, offset_bytes, bytes);
}

// A timeout far below the round trip puts dozens of copies of a chunk on the wire at once:
// they share one buffer. The step's entries are dropped when its round ends.
FunctionalValues::Values FunctionalValues::resent(int step, std::uint32_t chunk,
                                                  std::uint64_t offset_bytes, std::uint64_t bytes) {
  std::weak_ptr<std::vector<float>>& cached = resent_[{step, chunk}];
  if (auto values = cached.lock()) return values;
  auto values = std::make_shared<std::vector<float>>(bytes / 4);
  for (std::uint64_t k = 0; k < values->size(); ++k)
    (*values)[k] = gradient_value(site_, step, offset_bytes / 4 + k);
  cached = values;
  ++resent_buffers_;
  return values;
}

void FunctionalValues::add_result(bool reduced, int src, int step, std::uint32_t chunk,
                                  std::uint32_t chunks, const std::vector<float>& data,
                                  const std::vector<int>& group) {
  auto& sum = sum_[step];
  if (sum.empty()) sum.assign(gradient_bytes_ / 4, 0.0f);
  const std::uint64_t first = chunk * chunk_bytes_ / 4;
  for (std::size_t k = 0; k < data.size(); ++k) sum[first + k] += data[k];
  float error = 0;
  for (std::size_t k = 0; k < data.size(); ++k) {
    float expected = 0;
    if (reduced) {
      for (int s : group)
        if (s != site_) expected += gradient_value(s, step, first + k);
    } else {
      expected = gradient_value(src, step, first + k);
    }
    error += std::abs(data[k] - expected);
  }
  checks_ += chunks;  // in chunks: a burst's result checks its K chunks
  if (error != 0) mismatches_ += chunks;
}

void FunctionalValues::add_tree_result(int step, std::uint32_t chunk, std::uint32_t chunks,
                                       const std::vector<float>& data,
                                       const std::vector<int>& members) {
  auto& sum = sum_[step];
  if (sum.empty()) sum.assign(gradient_bytes_ / 4, 0.0f);
  const std::uint64_t first = chunk * chunk_bytes_ / 4;
  float error = 0;
  for (std::size_t k = 0; k < data.size(); ++k) {
    sum[first + k] += data[k];
    float expected = 0;
    for (int s : members) expected += gradient_value(s, step, first + k);
    error += std::abs(data[k] - expected);
  }
  checks_ += chunks;
  if (error != 0) mismatches_ += chunks;
}

void FunctionalValues::finish_tree_step(int step, std::size_t members) {
  std::vector<float> averaged(own_.size());
  const auto& sum = sum_[step];
  for (std::size_t j = 0; j < own_.size(); ++j)
    averaged[j] = (j < sum.size() ? sum[j] : 0.0f) / static_cast<float>(members);
  result_ = std::move(averaged);
  sum_.erase(step);
}

void FunctionalValues::finish_group_step(int step, std::size_t members) {
  std::vector<float> averaged(own_.size());
  for (std::size_t j = 0; j < own_.size(); ++j)
    averaged[j] = (own_[j] + sum_[step][j]) / static_cast<float>(members);
  result_ = std::move(averaged);
  sum_.erase(step);
  resent_.erase(resent_.lower_bound({step, 0}), resent_.lower_bound({step + 1, 0}));
}

std::vector<float>& FunctionalValues::ring_buffer(int step) {
  auto it = ring_.find(step);
  if (it == ring_.end()) it = ring_.emplace(step, gradient(step)).first;
  return it->second;
}

FunctionalValues::Values FunctionalValues::ring_slice(int step, std::uint64_t offset_bytes,
                                                      std::uint64_t bytes) {
  return slice(ring_buffer(step), offset_bytes, bytes);
}

void FunctionalValues::add_ring_chunk(int step, std::uint64_t first, bool reduce_scatter,
                                      const std::vector<float>& data) {
  auto& values = ring_buffer(step);
  for (std::size_t k = 0; k < data.size(); ++k) {
    if (reduce_scatter) {
      values[first + k] += data[k];
    } else {
      values[first + k] = data[k];
    }
  }
}

void FunctionalValues::finish_ring_step(int step) {
  const auto& sum = ring_buffer(step);
  result_.resize(sum.size());
  for (std::uint64_t j = 0; j < sum.size(); ++j) {
    float expected = 0;
    for (int s : ring_order_) expected += gradient_value(s, step, j);
    if (sum[j] != expected) ++mismatches_;
    result_[j] = sum[j] / static_cast<float>(ring_order_.size());
  }
  checks_ += sum.size();
  ring_.erase(step);
}

}  // namespace aggnet
