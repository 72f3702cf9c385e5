// A site's GPU cluster: compute phases, then its share of each round's communication.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <systemc>
#include <tlm>
#include <tuple>
#include <vector>

#include "collectives/functional.h"
#include "collectives/paced_schedule.h"
#include "collectives/program.h"
#include "model/network_math.h"
#include "model/params/cluster.h"
#include "model/platform.h"
#include "model/schedule.h"
#include "modules/cluster/retransmitter.h"
#include "modules/cluster/ring_progress.h"
#include "modules/core/chunk.h"
#include "modules/core/event_calendar.h"
#include "modules/core/nb_target.h"
#include "modules/core/statistics.h"
#include "modules/core/time.h"

namespace aggnet {

/// A site's cluster: what its collective program is told (the ProgramContext, which the
/// program gets a copy of), and what the issuer needs besides.
struct ComputeClusterConfig : ProgramContext {
  ClusterParams params;
  /// Burst mode: the chunk size when a transaction (chunk_bytes) is a burst of several
  /// chunks; 0: a transaction is one chunk.
  std::uint64_t burst_chunk_bytes = 0;
  int steps = 1;
  bool ring = false;                         ///< host-based ring all-reduce instead of groups
  bool functional = false;                   ///< carry real float data and check every sum
  std::uint64_t control_bytes = 64;          ///< size of a ready message
  std::uint64_t retransmit_backoff_max = 8;  ///< Retransmitter: the timeout's cap / first
  /// Host-based collectives without ring: kPointToPoint (rounds[r].group = [sender,
  /// receiver]), kParameterServer (order = [server, workers...]) and
  /// kUnicastAllToAll (order = the members).
  Collective collective = Collective::kGroupAverage;
  int ring_steps_begin = 0;  ///< ring: first ring step run (n - 1 for an all-gather)
  int ring_steps_end = -1;   ///< ring: one past the last (-1: 2(n - 1); n - 1: reduce-scatter)
  RingStepRule ring_step_rule = RingStepRule::kReceive;
  std::shared_ptr<RingProgress> ring_progress;  ///< kSendRecv and kBarrier rules
  /// This site's access link (a sender's transmit-complete time).
  WanLinkParams access;
};

/// Per-step timing of one site (simulated time, exact).
struct StepRecord {
  int step = 0;
  int round = 0;  ///< index in the schedule period
  bool communicated = false;
  sc_core::sc_time start;         ///< step start (compute begins)
  sc_core::sc_time send_start;    ///< compute done, communication begins (ready)
  sc_core::sc_time agreed_start;  ///< the group's agreed start (send_start if not aligned)
  sc_core::sc_time first_send;    ///< first chunk sent (agreed start + its send offset)
  sc_core::sc_time end;           ///< this site's round result complete
  sc_core::sc_time first_result;  ///< first reduced chunk (or ring chunk) received
  sc_core::sc_time last_result;   ///< last one received
  /// Host-based sends: when this site's last chunk of the step has left its access link
  /// (SC_ZERO_TIME when it sent nothing).
  sc_core::sc_time transmit_complete;
};

/// ComputeCluster: initiator socket `out` (to its access link towards the edge) and
/// target socket `in` (from the access link out of the FPGA).
///
/// Step k: compute for `compute_time`, then round k mod period: in a group round, send
/// G bytes in chunks to the group (multicast or unicast copies, paced or credit-clocked)
/// and wait for one reduced chunk per chunk index (or all |g|-1 contributions when the
/// FPGA does not aggregate); in a ring round, run the ring collective's steps under its
/// step rule; point-to-point and parameter-server rounds send and receive whole
/// messages over unicast (docs/simulation-semantics.md, "Host-based collectives").
/// The next step starts as soon as this site's result is complete (no global barrier).
class ComputeCluster : public sc_core::sc_module, public NbTarget, private EventCalendar::Client {
 public:
  tlm_utils::simple_initiator_socket<ComputeCluster> out;
  tlm::tlm_target_socket<> in;  ///< bound to the module itself (NbTarget)

  /// `config` by value: a builder's temporary is moved in (its rounds' send offsets are a
  /// map per round).
  ComputeCluster(sc_core::sc_module_name name, ComputeClusterConfig config, ChunkPool& pool);

  /// Where the three lines a received chunk reads start (FpgaAggregator::set_out_hint).
  const void* hot_state() const { return &out_sink_; }
  const std::vector<StepRecord>& steps() const { return records_; }
  bool finished() const { return finished_; }
  /// Functional mode: (chunk, step) results checked against independently summed inputs.
  std::uint64_t functional_checks() const { return values_ ? values_->checks() : 0; }
  std::uint64_t functional_mismatches() const { return values_ ? values_->mismatches() : 0; }
  /// Functional mode: this site's gradient after the last step's averaging.
  const std::vector<float>& result() const {
    static const std::vector<float> none;
    return values_ ? values_->result() : none;
  }
  /// Reduced chunks received more than once for the same (step, chunk).
  /// Functional mode: value buffers made for retransmitted chunks (the copies of a chunk
  /// in flight share one).
  std::uint64_t resent_value_buffers() const { return values_ ? values_->resent_buffers() : 0; }
  std::uint64_t duplicate_results() const { return program_->counters().duplicates; }
  /// 0 idle, 1 computing, 2 communicating, 3 waiting for its send offset (arrival-aligned
  /// sends; stable address, traced in VCD).
  const int& state() const { return state_; }
  /// Current round index in the schedule period (stable address, traced in VCD).
  const int& round_index() const { return round_index_; }
  /// Current training step (stable address, traced in VCD as the step marker).
  const int& step_index() const { return step_; }
  std::vector<Statistic> statistics() const;

  // Loss recovery and the run's invariants (sim/invariants.h, sim/watchdog.h).
  /// Results accepted (chunk results of communicating group steps) and how many there
  /// should be for the steps finished; reduced chunks that arrived again without being
  /// asked for (a double delivery).
  std::uint64_t accepted_results() const { return program_->counters().accepted_results; }
  std::uint64_t expected_results() const { return program_->counters().expected_results; }
  /// Counts every new piece of information (result, ready, grant, credit, ack, step).
  std::uint64_t progress_count() const { return program_->counters().progress + acknowledged_; }
  /// Computing or waiting for its send offset: progress is scheduled, not awaited.
  bool in_timed_phase() const { return state_ == 1 || state_ == 3; }
  /// What the site waits for right now ("" when not waiting on the network) and since when.
  std::string waiting_for(const std::vector<std::string>& codes) const;
  sc_core::sc_time waiting_since() const { return ps_time(program_->waiting_since_ps()); }
  /// Multicast tree `tree_id` of this site was rerouted (faults): if it is the tree of the
  /// round this site's last ready message announced, that message may still be on its way
  /// on the old tree, whose branches a member may have left; it is sent again.
  void tree_rerouted(int tree_id);
  /// Contributions sent and not yet acknowledged (loss recovery).
  std::size_t unacknowledged() const { return retransmitter_ ? retransmitter_->outstanding() : 0; }
  /// Stops retransmitting what can no longer be acknowledged (the watchdog, after every
  /// site has its results).
  void abandon_retransmissions() {
    if (retransmitter_) retransmitter_->abandon();
  }
  /// The group of the current step's round (empty for host-based collectives).
  std::vector<int> current_group() const;

  /// The functional-mode gradient value of `site` at `step`, element `index`: small
  /// integers, so sums of a few of them are exact in float.
  static float gradient_value(int site, int step, std::uint64_t index) {
    return FunctionalValues::gradient_value(site, step, index);
  }

 private:
  void run();
  // The issuer: feeds the program its events and carries out its actions.
  void drive(int step);
  bool await(const Wait& wait);
  void execute(Actions& actions);
  void execute(const Send& send, const std::vector<int>& receivers);
  void run_paced(PacedSchedule& schedule);
  void on_calendar() override;
  std::uint64_t now_ps() const { return to_ps(EventCalendar::now()); }
  // Messages.
  void emit(tlm::tlm_generic_payload& trans) { out_sink_(trans); }
  void send_control(const Send& send, ChunkKind kind);
  void send_contribution(int step, const ClusterRoundPlan& plan, int dst, std::uint32_t i,
                         int reduction_tree = -1);
  sc_core::sc_time resend(int step, int dst, std::uint32_t chunk);
  tlm::tlm_generic_payload& data_chunk(ChunkKind kind, int step, int dst, std::uint32_t index,
                                       std::uint64_t bytes);
  void send_segment(int step, int ring_step, int dst, int segment);
  void send_streams(int step, int tag, const std::vector<int>& receivers, int streams_each);
  // When what was last handed to the access link leaves it (now without a DepartureClock).
  sc_core::sc_time last_departure() const {
    return access_clock_ != nullptr ? access_clock_->last_departure() : EventCalendar::now();
  }
  // Arrivals.
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override;
  ChunkSink chunk_sink() override {
    return ChunkSink::of_member<ComputeCluster, &ComputeCluster::receive>(this);
  }
  void start_of_simulation() override {
    out_sink_ = ChunkSink::of(out.operator->(), this);
    access_clock_ = dynamic_cast<const DepartureClock*>(out.operator->());
  }
  void receive(tlm::tlm_generic_payload& trans);
  void on_result(const ChunkExtension& chunk);
  void on_acknowledgement(const ChunkExtension& chunk);
  void on_host_chunk(const ChunkExtension& chunk);
  void close_record(StepRecord& record);
  void note_result(int step);
  void flush_noted();
  std::optional<std::pair<sc_core::sc_time, sc_core::sc_time>> result_times(int step) const;
  const ClusterRoundPlan& plan_of(int step) const;
  void finish_functional(int step, bool communicated);
  std::uint64_t num_chunks(std::uint64_t bytes) const;
  void set_payload(ChunkExtension& chunk, std::uint64_t bytes) const;

  // The first and last result times of the step received last, kept here (not in
  // result_times_, where the other steps' are) so that a result touches no map node.
  struct Noted {
    int step = -1;
    sc_core::sc_time first, last;
  };
  // What the thread awaits on progress_: a count reaching a target (unset: anything;
  // `nothing()`: no received chunk). A received chunk wakes the thread only once it holds,
  // not once per chunk (a thread switch each).
  struct Awaited {
    const std::uint64_t* count = nullptr;
    std::uint64_t target = 0;
    bool holds() const { return count == nullptr || *count >= target; }
    static Awaited nothing() {
      static const std::uint64_t zero = 0;
      return {&zero, 1};
    }
  };

  ComputeClusterConfig config_;
  // Read per paced chunk or received chunk, kept together in three lines: the cluster's
  // state is cold at each chunk. A ring segment's arrival, and the send it starts, read
  // the first two and the sends of the third (config_'s fields they need are copied here).
  alignas(64) ChunkSink out_sink_;  // what `out` is bound to
  Awaited awaited_;
  Noted noted_;
  FunctionalValues* values_ = nullptr;  // functional mode: functional_.get()
  alignas(64) ChunkPool& pool_;
  std::unique_ptr<CollectiveProgram> program_;
  RingSegmentSplit ring_split_;  // the ring's segments (ring only)
  const std::uint64_t chunk_bytes_;
  const std::uint64_t burst_chunk_bytes_;
  const int site_;
  alignas(64) Actions events_;      // the program's answer to an arrival
  PacedSchedule* paced_ = nullptr;  // the streams being emitted
  const ClusterRoundPlan* paced_plan_ = nullptr;
  bool paced_first_ = false;
  RingProgress* ring_progress_ = nullptr;  // config_.ring_progress, if the ring uses it
  sc_core::sc_time first_send_;
  int state_ = 0;
  std::vector<StepRecord> records_;
  const DepartureClock* access_clock_ = nullptr;  // the access link `out` is bound to
  std::map<int, std::pair<sc_core::sc_time, sc_core::sc_time>> result_times_;  // first, last
  std::unique_ptr<Retransmitter> retransmitter_;
  std::unique_ptr<FunctionalValues> functional_;
  std::uint64_t acks_sent_ = 0, acknowledged_ = 0;
  sc_core::sc_event progress_;
  sc_core::sc_event paced_done_;  // the paced streams are done
  Actions actions_;               // the program's answer to the thread
  sc_core::sc_time agreed_start_, transmit_complete_;
  sc_core::sc_time offset_wait_total_;  // sum over steps of first_send - agreed_start
  int step_ = 0, round_index_ = 0;
  bool finished_ = false;
};

}  // namespace aggnet
