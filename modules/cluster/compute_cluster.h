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

#include "model/network_math.h"
#include "model/params/cluster.h"
#include "model/platform.h"
#include "model/schedule.h"
#include "modules/cluster/retransmitter.h"
#include "modules/core/chunk.h"
#include "modules/core/event_calendar.h"
#include "modules/core/nb_target.h"
#include "modules/core/statistics.h"

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

 private:
  std::map<std::pair<int, int>, std::vector<int>> sites_;  // (step, ring step) -> sites
  sc_core::sc_event changed_;
};

/// What one site does in one round of the schedule period.
struct ClusterRoundPlan {
  std::vector<int> group;  ///< members including this site; size <= 1: sits the round out
  int tree_id = -1;        ///< multicast group table key of this site's sends
  std::uint64_t pacing_interval_ps = 0;  ///< pacing: time between chunk emissions
  std::uint64_t own_slots = 0;  ///< credit: this site's slots, granted to each sender per round
  bool aligned_start = false;   ///< exchange ready messages, start at the agreed time
  std::uint64_t start_delay_ps = 0;  ///< agreed start = last ready time + this
  /// Per receiver: when this site starts the stream that receiver gets, after the agreed
  /// start (arrival-aligned sends). Multicast: one stream, the same offset for all.
  std::map<int, std::uint64_t> send_offset_ps;
  /// Loss recovery: a contribution (or ready / grant message) not acknowledged this long
  /// after it was sent is sent again.
  std::uint64_t retransmit_timeout_ps = 0;
};

struct ComputeClusterConfig {
  int site = 0;
  ClusterParams params;
  std::uint64_t gradient_bytes = 0;  ///< G: bytes each site contributes per round
  std::uint64_t chunk_bytes = 0;     ///< transaction (and aggregation slot) size
  /// Burst mode: the chunk size when a transaction (chunk_bytes) is a burst of several
  /// chunks; 0: a transaction is one chunk.
  std::uint64_t burst_chunk_bytes = 0;
  int steps = 1;
  bool ring = false;            ///< host-based ring all-reduce instead of groups
  std::vector<int> ring_order;  ///< ring order (ring only)
  FlowControl flow_control = FlowControl::kPacing;
  bool multicast = true;                 ///< false: one unicast copy per receiver
  bool aggregation = true;               ///< false: the FPGA passes contributions through
  bool functional = false;               ///< carry real float data and check every sum
  std::uint64_t control_bytes = 64;      ///< size of a ready message
  std::vector<ClusterRoundPlan> rounds;  ///< the schedule period, as seen by this site
  /// Loss recovery (group rounds): receivers acknowledge every chunk's result, senders
  /// retransmit unacknowledged contributions, ready and grant messages are repeated until
  /// answered, results received again are recognised and acknowledged again.
  bool reliable = false;
  /// Host-based collectives without ring: kPointToPoint (rounds[r].group = [sender,
  /// receiver]), kParameterServer (ring_order = [server, workers...]) and
  /// kUnicastAllToAll (ring_order = the members).
  Collective collective = Collective::kGroupAverage;
  int ring_steps_begin = 0;  ///< ring: first ring step run (n - 1 for an all-gather)
  int ring_steps_end = -1;   ///< ring: one past the last (-1: 2(n - 1); n - 1: reduce-scatter)
  RingStepRule ring_step_rule = RingStepRule::kReceive;
  std::shared_ptr<RingProgress> ring_progress;  ///< kSendRecv and kBarrier rules
  /// kPointToPoint: concurrent messages of G bytes.
  int messages = 1;
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

  ComputeCluster(sc_core::sc_module_name name, const ComputeClusterConfig& config, ChunkPool& pool);

  const std::vector<StepRecord>& steps() const { return records_; }
  bool finished() const { return finished_; }
  /// Functional mode: (chunk, step) results checked against independently summed inputs.
  std::uint64_t functional_checks() const { return checks_; }
  std::uint64_t functional_mismatches() const { return mismatches_; }
  /// Functional mode: this site's gradient after the last step's averaging.
  const std::vector<float>& result() const { return result_; }
  /// Reduced chunks received more than once for the same (step, chunk).
  /// Functional mode: value buffers made for retransmitted chunks (the copies of a chunk
  /// in flight share one).
  std::uint64_t resent_value_buffers() const { return resent_value_buffers_; }
  std::uint64_t duplicate_results() const { return duplicates_; }
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
  std::uint64_t accepted_results() const { return accepted_results_; }
  std::uint64_t expected_results() const { return expected_results_; }
  /// Counts every new piece of information (result, ready, grant, credit, ack, step).
  std::uint64_t progress_count() const { return progress_count_; }
  /// Computing or waiting for its send offset: progress is scheduled, not awaited.
  bool in_timed_phase() const { return state_ == 1 || state_ == 3; }
  /// What the site waits for right now ("" when not waiting on the network) and since when.
  std::string waiting_for(const std::vector<std::string>& codes) const;
  sc_core::sc_time waiting_since() const { return wait_since_; }
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
  static float gradient_value(int site, int step, std::uint64_t index);

 private:
  void run();
  void run_group_round(int step, const ClusterRoundPlan& plan);
  void send_paced(int step, const ClusterRoundPlan& plan, const std::vector<int>& receivers);
  void on_calendar() override;
  struct PacedStream;
  PacedStream* next_paced_stream();
  void send_credit_clocked(int step, const ClusterRoundPlan& plan,
                           const std::vector<int>& receivers);
  void wait_offset(const sc_core::sc_time& when);
  void send_contribution(int step, const ClusterRoundPlan& plan, int dst, std::uint64_t i);
  void average_result(int step, const ClusterRoundPlan& plan);
  void run_ring(int step);
  tlm::tlm_generic_payload& host_chunk(int step, int tag, int dst, int segment, std::uint64_t index,
                                       std::uint64_t bytes);
  void send_segment(int step, int ring_step, int dst, int segment);
  void emit(tlm::tlm_generic_payload& trans);
  std::vector<float> initial_gradient(int step) const;
  std::vector<float>& ring_buffer(int step);
  std::shared_ptr<std::vector<float>> slice(const std::vector<float>& source,
                                            std::uint64_t offset_bytes, std::uint64_t bytes) const;
  void accumulate_result(const ChunkExtension& chunk);
  void check_ring_result(int step, int n);
  std::uint64_t num_chunks(std::uint64_t bytes) const;
  void set_payload(ChunkExtension& chunk, std::uint64_t bytes) const;
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override;
  ChunkSink chunk_sink() override {
    return ChunkSink::of_member<ComputeCluster, &ComputeCluster::receive>(this);
  }
  void start_of_simulation() override {
    out_sink_ = ChunkSink::of(out.operator->());
    access_clock_ = dynamic_cast<const DepartureClock*>(out.operator->());
  }
  void receive(tlm::tlm_generic_payload& trans);
  void on_result(const ChunkExtension& chunk);
  void note_result(int step);
  void align_start(int step, const ClusterRoundPlan& plan);
  void send_control(ChunkKind kind, int step, int dst, std::uint32_t credits);
  void wait_for_credits(int step, const ClusterRoundPlan& plan, const std::vector<int>& receivers);
  /// Returns the chunks of its ring step received so far.
  std::uint64_t on_ring_chunk(const ChunkExtension& chunk);
  // Loss recovery.
  enum class Waiting { kNothing, kReady, kCredits, kResults };
  void waiting(Waiting what, int step);
  bool wait_or_retry(sc_core::sc_time& retry_at, const ClusterRoundPlan& plan);
  void regrant(int step, const ClusterRoundPlan& plan, const std::vector<int>& receivers);
  sc_core::sc_time resend(int step, int dst, std::uint32_t chunk);
  std::shared_ptr<std::vector<float>> resent_values(int step, std::uint32_t chunk,
                                                    std::uint64_t offset_bytes,
                                                    std::uint64_t bytes);
  // When what was last handed to the access link leaves it (now without a DepartureClock).
  sc_core::sc_time last_departure() const {
    return access_clock_ != nullptr ? access_clock_->last_departure() : EventCalendar::now();
  }
  void acknowledge(int step, int dst, std::uint32_t chunk);
  void on_ready(const ChunkExtension& chunk);
  void send_ready(int step, int dst, bool reply, int tree_id = -1);
  void send_grants(int step, const ClusterRoundPlan& plan, const std::vector<int>& receivers);
  bool accept_once(const ChunkExtension& chunk);
  const ClusterRoundPlan& plan_of(int step) const;
  // Host-based collectives (ring step rules, point-to-point, parameter server).
  void run_host_collective(int step, StepRecord& record);
  void wait_ring_step_rule(int step, int ring_step, int successor);
  // A ring under the receive rule, driven by its arrivals (no thread switch per ring step).
  struct RingRun {
    int step = 0, ring_step = 0, end = 0, pos = 0, successor = 0;
    bool active = false;
    bool sent = false;           // ring_step's segment handed to the access link
    std::uint64_t expected = 0;  // chunks of ring_step to receive
    std::uint64_t finished = 0;  // 1 once the last ring step is received (awaited)
  };
  void ring_advance();
  std::uint64_t start_ring_step(int step, int ring_step, int pos, int successor);
  void run_transfer(int step, const ClusterRoundPlan& plan);
  void run_parameter_server(int step);
  void run_unicast_all_to_all(int step);
  void send_streams(int step, int tag, const std::vector<int>& receivers, int streams_each);
  void wait_host_chunks(int step, int tag, std::uint64_t expected);

  // The step whose results arrive now and its entries in received_ and complete_chunks_,
  // looked up once per step, not once per result (map entries stay put until erased).
  // Only a step not yet finished is cached; finishing it clears the cache.
  struct Receiving {
    int step = -1;
    std::vector<int>* counts = nullptr;
    std::uint64_t* complete = nullptr;
  };
  Receiving& receiving(int step);
  // The first and last result times of the step received last, kept here (not in
  // result_times_, where the other steps' are) so that a result touches no map node.
  struct Noted {
    int step = -1;
    sc_core::sc_time first, last;
  };
  void flush_noted();
  std::optional<std::pair<sc_core::sc_time, sc_core::sc_time>> result_times(int step) const;
  // Host chunks received (ring segments, point-to-point messages), per step one count per
  // tag (ring step), and the step received last cached: one lookup per step, not per chunk.
  struct HostReceipts {
    int step = -1;
    std::uint64_t* counts = nullptr;
  };
  std::uint64_t& host_received(int step, int tag);
  // Pacing: the calendar emits the streams' chunks (a method call each, not a thread
  // switch); the thread waits for paced_done_.
  struct PacedStream {
    int dst;  // -1: the multicast tree
    sc_core::sc_time next;
    std::uint64_t chunk = 0;
  };
  struct Paced {
    int step = 0;
    const ClusterRoundPlan* plan = nullptr;
    sc_core::sc_time interval;
    std::uint64_t chunks = 0;
    std::vector<PacedStream> streams;
    bool first = true, active = false;
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
  ChunkPool& pool_;
  // Read per paced chunk or received result or ring chunk, kept together in four cache
  // lines (the cluster's state is cold at each chunk): the pacing; what every received
  // chunk reads; a received ring chunk; a received result, and a ring step's segment.
  alignas(64) Paced paced_;
  alignas(64) ChunkSink out_sink_;  // what `out` is bound to
  Awaited awaited_;
  Noted noted_;
  bool functional_ = false;  // config_.functional
  alignas(64) HostReceipts host_receipts_;
  RingRun ring_run_;
  RingProgress* ring_progress_ = nullptr;  // config_.ring_progress, if the ring uses it
  alignas(64) Receiving receiving_;
  std::uint64_t accepted_results_ = 0, progress_count_ = 0;
  RingSegmentSplit ring_split_;  // the ring's segments (ring only)
  static_assert(sizeof(ChunkSink) + sizeof(Awaited) + sizeof(Noted) + sizeof(bool) <= 64);
  static_assert(sizeof(HostReceipts) + sizeof(RingRun) + sizeof(RingProgress*) <= 64);
  static_assert(sizeof(Receiving) + 2 * sizeof(std::uint64_t) + sizeof(RingSegmentSplit) <= 64);
  sc_core::sc_time first_send_;
  int state_ = 0;
  std::vector<StepRecord> records_;
  // Receipts per step: reduced chunks (or pass-through contributions) per chunk index.
  std::map<int, std::vector<int>> received_;
  std::map<int, std::uint64_t> complete_chunks_;
  std::map<int, std::vector<std::uint64_t>> host_received_;  // step -> chunks per tag
  const DepartureClock* access_clock_ = nullptr;             // the access link `out` is bound to
  // Credit windows, (step, receiver) -> grant (-1: not yet), slots freed so far (cumulative
  // credit messages), credits spent.
  // Without aggregation a receiver acknowledges a contribution as it passes it on, which
  // is when it frees its credit: `acked` (first acknowledgements) repairs a lost credit.
  struct Window {
    std::int64_t granted = -1, freed = 0, spent = 0, acked = 0;
    bool open() const { return granted >= 0 && granted + std::max(freed, acked) - spent > 0; }
  };
  std::map<std::pair<int, int>, Window> windows_;
  std::map<int, std::pair<sc_core::sc_time, sc_core::sc_time>> result_times_;  // first, last
  struct ReadyState {
    std::vector<int> from;        // members whose ready message arrived
    std::uint64_t latest_ps = 0;  // latest ready stamp among them
    bool started = false;         // this site has passed the agreed start
  };
  std::map<int, ReadyState> ready_;            // step -> ready messages heard
  std::map<int, std::uint64_t> own_ready_ps_;  // step -> this site's ready stamp
  std::set<int> finished_steps_;               // group steps whose result is complete
  // Functional mode: the values of a chunk being retransmitted, shared by all its copies
  // in flight (a timeout far below the round trip puts dozens on the wire at once).
  std::map<std::pair<int, std::uint32_t>, std::weak_ptr<std::vector<float>>> resent_values_;
  std::set<std::tuple<int, std::uint32_t, int>> passed_through_;  // (step, chunk, sender)
  std::unique_ptr<Retransmitter> retransmitter_;
  Waiting wait_what_ = Waiting::kNothing;
  int wait_step_ = 0;
  sc_core::sc_time wait_since_;
  std::uint64_t acks_sent_ = 0, recognised_duplicates_ = 0, control_retransmissions_ = 0;
  std::uint64_t resent_value_buffers_ = 0;
  std::uint64_t expected_results_ = 0;
  sc_core::sc_event progress_;
  sc_core::sc_event paced_done_;  // the paced streams are done
  std::vector<float> data_;       // functional: this step's own gradient (group rounds)
  std::map<int, std::vector<float>> reduced_sum_;  // functional: step -> sum of the others
  std::map<int, std::vector<float>> ring_data_;    // functional: step -> ring working copy
  std::vector<float> result_;
  sc_core::sc_time agreed_start_, transmit_complete_;
  sc_core::sc_time offset_wait_total_;  // sum over steps of first_send - agreed_start
  int step_ = 0, round_index_ = 0;
  bool finished_ = false;
  std::uint64_t checks_ = 0, mismatches_ = 0, duplicates_ = 0;
};

}  // namespace aggnet
