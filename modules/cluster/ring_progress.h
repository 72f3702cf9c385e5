// Ring collectives' shared progress (the sendrecv and barrier step rules wait on it).
#pragma once

#include <map>
#include <systemc>
#include <utility>
#include <vector>

namespace aggnet {

/// Ring collectives: which sites have received which ring step's segment (whole), shared by
/// every ComputeCluster of a system. The `sendrecv` and `barrier` step rules wait on it: an
/// idealised synchronisation (the sender knows its send completed, every site knows the
/// barrier released, the instant the last segment arrives; no messages), as in SimGrid's
/// communication model and s4u::Barrier.
class RingProgress {
 public:
  void mark(int site, int step, int ring_step);
  bool received(int site, int step, int ring_step) const;
  int count(int step, int ring_step) const;
  const sc_core::sc_event& changed() const { return changed_; }
  /// From a thread: waits until `site` has ring step `ring_step`'s segment of `step` (site
  /// -1: all `n` sites have theirs).
  void wait_until(int site, int step, int ring_step, int n) const;

 private:
  std::map<std::pair<int, int>, std::vector<int>> sites_;  // (step, ring step) -> sites
  sc_core::sc_event changed_;
};

}  // namespace aggnet
