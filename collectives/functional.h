// Functional mode: real float values travel with the chunks, and every result a site
// receives is checked against independently summed inputs. A site's gradient of a step is
// a function of site, step and index (small integers, so sums of a few are exact in float).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace aggnet {

class FunctionalValues {
 public:
  using Values = std::shared_ptr<std::vector<float>>;
  FunctionalValues(int site, std::uint64_t gradient_bytes, std::uint64_t chunk_bytes,
                   std::vector<int> ring_order);
  static float gradient_value(int site, int step, std::uint64_t index);

  // Group rounds.
  void begin_step(int step) { own_ = gradient(step); }
  /// Bytes [offset, offset + bytes) of this step's own gradient.
  Values contribution(std::uint64_t offset_bytes, std::uint64_t bytes) const;
  /// The same values recomputed for a retransmission, shared by every copy in flight.
  Values resent(int step, std::uint32_t chunk, std::uint64_t offset_bytes, std::uint64_t bytes);
  /// A reduced chunk (the sum of the other members' inputs) or a contribution passed on
  /// (its sender's input), `chunks` chunks long (a burst): added to the step's sum, checked.
  void add_result(bool reduced, int src, int step, std::uint32_t chunk, std::uint32_t chunks,
                  const std::vector<float>& data, const std::vector<int>& group);
  /// A reduction tree's result: the sum of every member's input (its own included).
  void add_tree_result(int step, std::uint32_t chunk, std::uint32_t chunks,
                       const std::vector<float>& data, const std::vector<int>& members);
  /// End of a reduction-tree round: result = the members' sum / members.
  void finish_tree_step(int step, std::size_t members);
  /// End of a group round: result = (own gradient + the others' sum) / members.
  void finish_group_step(int step, std::size_t members);

  // The ring.
  Values ring_slice(int step, std::uint64_t offset_bytes, std::uint64_t bytes);
  /// A ring chunk at float `first`: added (reduce-scatter) or copied (all-gather).
  void add_ring_chunk(int step, std::uint64_t first, bool reduce_scatter,
                      const std::vector<float>& data);
  /// End of a ring: every element must be the sum over the ring; result = sum / n.
  void finish_ring_step(int step);

  std::uint64_t checks() const { return checks_; }
  std::uint64_t mismatches() const { return mismatches_; }
  std::uint64_t resent_buffers() const { return resent_buffers_; }
  const std::vector<float>& result() const { return result_; }

 private:
  std::vector<float> gradient(int step) const;
  std::vector<float>& ring_buffer(int step);
  static Values slice(const std::vector<float>& source, std::uint64_t offset_bytes,
                      std::uint64_t bytes);

  int site_;
  std::uint64_t gradient_bytes_, chunk_bytes_;
  std::vector<int> ring_order_;
  std::vector<float> own_;                  // this step's own gradient (group rounds)
  std::map<int, std::vector<float>> sum_;   // step -> sum of the others
  std::map<int, std::vector<float>> ring_;  // step -> ring working copy
  std::map<std::pair<int, std::uint32_t>, std::weak_ptr<std::vector<float>>> resent_;
  std::vector<float> result_;
  std::uint64_t checks_ = 0, mismatches_ = 0, resent_buffers_ = 0;
};

}  // namespace aggnet
