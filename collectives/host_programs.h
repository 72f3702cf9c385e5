// Host-based collectives: the ring (all-reduce, reduce-scatter, all-gather) under its step
// rule, point-to-point transfers, the parameter server and the unicast all-to-all. Their
// chunks travel host to host (no in-network help); a site counts them per (step, tag), a
// tag being a ring step or a message's phase.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "collectives/program.h"
#include "model/network_math.h"
#include "model/schedule.h"

namespace aggnet {

/// Host chunks received per step and tag; the step received last is cached (one lookup per
/// step, not per chunk). A step's counts never move, so a wait may point at one.
class HostReceipts {
 public:
  explicit HostReceipts(std::size_t tags) : tags_(tags) {}
  std::uint64_t& at(int step, int tag);
  /// The count of (step, tag) without making room for it (0 if none arrived).
  std::uint64_t peek(int step, int tag) const;
  /// Whether any count of `step` is held.
  bool holds(int step) const { return counts_.count(step) != 0; }
  void erase(int step);

 private:
  std::size_t tags_;
  int cached_step_ = -1;
  std::uint64_t* cached_ = nullptr;
  std::map<int, std::vector<std::uint64_t>> counts_;
};

/// The ring over `context.order`: ring step r sends one segment to the successor and
/// receives one from the predecessor (reduce-scatter for r < n - 1, then all-gather).
/// Cache-line aligned: what an arrival and the ring step it starts read is on the lines of
/// the vtable pointer and the next (the program is cold at each chunk at hundreds of sites).
class alignas(64) RingProgram : public CollectiveProgram {
 public:
  struct Steps {
    int begin = 0;  ///< first ring step run (n - 1 for an all-gather)
    int end = -1;   ///< one past the last (-1: 2(n - 1); n - 1: reduce-scatter)
    RingStepRule rule = RingStepRule::kReceive;
    bool mark = false;  ///< report each ring step's segment received (kMarkRingStep)
  };
  RingProgram(ProgramContext context, Steps steps);
  bool communicates(int) const override { return context_.order.size() > 1; }
  void start(int step, std::uint64_t now_ps, Actions& out) override;
  void resume(std::uint64_t now_ps, bool retry, Actions& out) override;
  Verdict on_arrival(const Arrival& arrival, std::uint64_t now_ps, Actions& out) override;
  /// The segment site position `pos` sends (received: receives) in ring step r.
  static int send_segment(int pos, int r, int n);
  static int receive_segment(int pos, int r, int n);

 private:
  std::uint64_t start_ring_step(int r, Actions& out);
  void advance(Actions& out);
  void next_ring_step(Actions& out);
  void after_chunks(Actions& out);
  void finish(Actions& out);
  std::uint64_t segment_chunks(int segment) const {
    return static_cast<std::uint64_t>(segment) < longer_segments_ ? longer_chunks_
                                                                  : shorter_chunks_;
  }
  void enter_ring_step(int r) {
    run_.ring_step = r;
    run_.received =
        counts_current_ && run_.ahead && r < run_.end ? receipts_.peek(run_.step, r) : 0;
  }

  // The round in progress: under the receive rule driven by arrivals (a ring step starts
  // when the previous one's chunks are all in, perhaps before it was sent).
  struct Run {
    int step = 0, ring_step = 0, end = 0, pos = 0, successor = 0;
    bool active = false;
    bool sent = false;           // ring_step's segment handed over
    bool rule_wait = false;      // sendrecv / barrier: waited for the rule
    bool ahead = false;          // receipts_ may hold counts of this step (counts_current_)
    std::uint64_t expected = 0;  // chunks of ring_step to receive
    std::uint64_t received = 0;  // of ring_step, while counts_current_ and active
  };
  Run run_;
  int n_ = 0;
  // The receive rule without marks reads a ring step's count only while it is the current
  // one: that count is kept in run_, the others (arrivals ahead of it) in receipts_.
  bool counts_current_ = false;
  std::uint64_t longer_segments_ = 0;  // the ring split: segments [0, longer_segments_)
  std::uint64_t longer_chunks_ = 0;    // have this many chunks,
  std::uint64_t shorter_chunks_ = 0;   // the others this many

  std::uint64_t finished_ = 0;  // 1 once the last ring step is received (awaited)
  ProgramContext context_;
  Steps steps_;
  HostReceipts receipts_;
};

/// Point-to-point (plan group = [sender, receiver]: `messages` messages of G), parameter
/// server (order = [server, workers...]) and unicast all-to-all (order = the members).
class TransferProgram : public CollectiveProgram {
 public:
  TransferProgram(ProgramContext context, Collective collective);
  bool communicates(int step) const override;
  void start(int step, std::uint64_t now_ps, Actions& out) override;
  void resume(std::uint64_t now_ps, bool retry, Actions& out) override;
  Verdict on_arrival(const Arrival& arrival, std::uint64_t now_ps, Actions& out) override;

 private:
  enum class Next { kDone, kServerSends, kTransmitted, kTransmittedIfLater };
  void streams(int tag, std::vector<int> receivers, int each, Actions& out);
  void await(int tag, std::uint64_t expected, Next then, Actions& out);
  void transmitted(bool even_if_now, Actions& out);
  void finish(Actions& out);
  void start_point_to_point(Actions& out);
  void start_parameter_server(Actions& out);
  void start_unicast_all_to_all(Actions& out);

  ProgramContext context_;
  Collective collective_;
  HostReceipts receipts_;
  int step_ = 0;
  Next next_ = Next::kDone;
};

}  // namespace aggnet
