// In-line FPGA aggregator at a site's edge: sums the contributions of the other group
// members chunk by chunk in a pipeline, holding partial sums in a BufferMemory.
#pragma once

#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <array>
#include <cstdint>
#include <memory>
#include <set>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "model/faults.h"
#include "model/params/fpga.h"
#include "modules/core/arrival_queue.h"
#include "modules/core/chunk.h"
#include "modules/core/nb_target.h"
#include "modules/core/statistics.h"
#include "modules/fpga/buffer_memory.h"
#include "modules/fpga/slot_table.h"
#include "modules/fpga/stall_queue.h"

namespace aggnet {

/// How the aggregator treats contributions.
struct FpgaAggregatorConfig {
  int site = 0;
  FpgaParams params;
  std::uint64_t slot_bytes = 1 << 20;  ///< one chunk
  /// false: pass every contribution but a reduction tree's through to the cluster (its
  /// buffer may then hold no slot)
  bool aggregate = true;
  bool return_credits = false;      ///< credit flow control: send a credit per freed slot
  std::uint64_t credit_bytes = 64;  ///< size of a credit message
  /// Loss recovery: every contribution is acknowledged to its sender when it is added to
  /// its slot (selective acknowledgement: one lost contribution keeps only its own sender
  /// waiting); contributions already added (retransmissions) are recognised, never added
  /// twice, and acknowledged again; one for a chunk already reduced makes the aggregator
  /// re-send the result to its cluster (to be acknowledged again) and, with credits, the
  /// credit.
  bool reliable = false;
  /// `drop` flow control: a contribution that needs a new slot when none is free, or
  /// whose chunk index is outside the step's admission window (the lowest index not yet
  /// reduced here, plus the slots' count), is dropped instead of waiting, and answered
  /// with a negative acknowledgement (its sender puts it in line to send again at once);
  /// acknowledgements and negative ones carry the window's end, and when the window moves
  /// the senders refused since it last moved are told its new end (a negative one for no
  /// chunk: a window update).
  /// The window keeps the held slots on every sender's lowest unacknowledged chunks, which
  /// its retransmissions serve first (Retransmitter).
  bool drop_when_full = false;
  TestHook test_hook = TestHook::kNone;  ///< breaks one mechanism on purpose (tests only)
};

/// This site's place in one reduction tree (in-transit aggregation). Its FPGA sums
/// `children` partial sums and, if the site is a member, its cluster's own contribution;
/// the sum holds `subtree_members` original contributions. A non-root sends it to
/// `parent_site`'s FPGA; the root (parent -1) multicasts it on `result_tree_id`.
struct ReductionRole {
  int parent_site = -1;  ///< -1: the root
  int children = 0;
  bool member = true;       ///< the site's own cluster contributes
  int subtree_members = 1;  ///< members below and at this site (invariant check)
  int result_tree_id = -1;  ///< the root's multicast tree to every member
  int inputs() const { return children + (member ? 1 : 0); }
};

/// FpgaAggregator: target socket `in` (from the switch's local port), initiator sockets
/// `out` (to the access link towards the cluster) and `to_network` (credit messages back
/// into the switch).
///
/// Aggregation: a slot is taken when the first contribution of (step, chunk) arrives and
/// freed when the last of its group_size - 1 contributions has left the pipeline
/// (serial, datapath_width_bits/8 x clock bytes/s, then latency_cycles/clock). Exactly one
/// reduced chunk per (step, chunk) goes to the cluster. A contribution needing a new slot
/// when all are taken waits (a slot stall); contributions to chunks that already hold a
/// slot pass it, so stalls cannot deadlock (with `drop_when_full` it is dropped instead).
/// Credits, ring segments and reduced chunks pass through unchanged.
///
/// Reduction trees: a contribution with `reduction_tree` >= 0 is summed (whether or not
/// `aggregate` is set) in a slot expecting its role's inputs, with the same pipeline and
/// slot rules; the sum leaves on `to_network` (ReductionRole). Loss recovery and credits
/// do not apply to tree rounds. Credit messages
/// carry the number of slots freed so far for that sender in that step (cumulative, so a
/// lost one is repaired by the next).
class FpgaAggregator : public sc_core::sc_module, public NbTarget {
 public:
  tlm::tlm_target_socket<> in;  ///< bound to the module itself (NbTarget)
  tlm_utils::simple_initiator_socket<FpgaAggregator> out;
  tlm_utils::simple_initiator_socket<FpgaAggregator> to_network;

  /// Errors: std::invalid_argument if the buffer holds no slot.
  FpgaAggregator(sc_core::sc_module_name name, const FpgaAggregatorConfig& config, ChunkPool& pool);

  /// This site's role in reduction tree `reduction_tree` (the chunks' key).
  /// Errors: std::invalid_argument for a negative key, no input, fewer subtree members
  /// than inputs, or a root without a result tree.
  void set_reduction_role(int reduction_tree, const ReductionRole& role);
  /// Partial sums and root results sent into the network (reduction trees).
  std::uint64_t tree_sums() const { return tree_sums_; }

  const BufferMemory& buffer() const { return buffer_; }
  std::uint64_t slot_stalls() const { return stalls_; }
  /// Contributions waiting for a free slot right now.
  std::size_t waiting_contributions() const { return stalled_.size(); }
  /// Peak bytes of contributions waiting for a slot: memory the stall needs upstream.
  std::uint64_t stall_backlog_high_water_bytes() const { return waiting_high_water_bytes_; }
  sc_core::sc_time stall_time() const { return stall_time_; }
  std::uint64_t reduced_chunks() const { return reduced_; }
  std::uint64_t contributions() const { return contributions_; }
  sc_core::sc_time pipeline_busy() const { return pipeline_busy_; }
  /// Loss recovery: contributions recognised as already added (not added again), results
  /// re-sent for them, and contributions dropped for want of a slot (`drop`).
  std::uint64_t duplicate_contributions() const { return duplicates_; }
  std::uint64_t result_resends() const { return result_resends_; }
  std::uint64_t dropped_contributions() const { return drops_; }
  /// Loss recovery: acknowledgements of contributions added (or recognised as added); with
  /// `drop` each dropped contribution is answered with a negative one besides.
  std::uint64_t acks_sent() const { return acks_sent_; }
  /// Invariant data: reductions whose contributions were not exactly one per other member,
  /// and aggregation slots held right now.
  std::uint64_t bad_reductions() const { return bad_reductions_; }
  std::size_t slots_held() const { return slots_.size(); }
  /// Slots kept in the slot table's overflow map (collisions in its array).
  std::size_t slots_overflowed() const { return slots_.overflowed(); }
  /// Slots in use (stable address, traced in VCD).
  const std::uint64_t& slots_in_use() const { return slots_in_use_; }
  std::vector<Statistic> statistics(const sc_core::sc_time& window) const;
  std::vector<NamedHistogram> histograms() const;

  /// Three lines of what `out` leads to (the cluster's hot state), fetched as a chunk
  /// passes through to it: its link is short, so they are still cached when it arrives.
  void set_out_hint(const void* hot) { out_hint_ = static_cast<const char*>(hot); }
  /// Where the state every contribution reads starts (an aligned block of two lines): the
  /// switch in front of this FPGA fetches it as a multicast chunk reaches it
  /// (MulticastSwitch::set_local_hint).
  const void* hot_state() const { return &pipeline_free_; }

 private:
  // A slot and its key fill one cache line (SlotTable), read by every contribution: the
  // senders of sites below kInlineSenderSites are bits in it, those of sites beyond
  // (site s: bit s - kInlineSenderSites) bits of its side words in the table, whose
  // address follows from the key as the slot's does (both fetched at once); their count
  // grows with the highest such sender seen.
  static constexpr int kInlineSenderSites = 256;
  struct Slot {
    int received = 0;
    int expected = 0;
    std::array<std::uint64_t, kInlineSenderSites / 64> senders{};  // bit s % 64 of word s / 64
    std::shared_ptr<std::vector<float>> sum;
  };
  static_assert(sizeof(Slot) + sizeof(std::uint64_t) == 64, "a slot with its key is a line");
  using Found = SlotTable<Slot>::Found;  // a slot and its senders beyond the inline ones
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override;
  ChunkSink chunk_sink() override {
    return ChunkSink::of_member<FpgaAggregator, &FpgaAggregator::on_arrival>(this);
  }
  void start_of_simulation() override;
  void on_arrival(tlm::tlm_generic_payload& trans);
  bool absorb_duplicate(tlm::tlm_generic_payload& trans);  // loss recovery only
  void resend_result(const ChunkExtension& chunk);
  void send_credit(int step, std::uint32_t chunk, int sender, bool fresh);
  // `dropped`: a negative acknowledgement. With `drop` both carry the admission window's
  // end (in `credits`), as TCP's acknowledgements carry the receive window.
  void send_ack(int step, std::uint32_t chunk, int sender, bool dropped = false);
  bool outside_window(const ChunkExtension& chunk) const;
  std::uint32_t window_end(int step) const;
  void advance_window(int step);
  bool first_pass(const ChunkExtension& chunk);
  static std::uint64_t step_sender(int step, int sender) {
    return (static_cast<std::uint64_t>(step) << 32) | static_cast<std::uint32_t>(sender);
  }
  void admit(tlm::tlm_generic_payload& trans);
  Found slot_for(const ChunkExtension& chunk);
  Found fresh_slot(std::uint64_t key);
  sc_core::sc_time service_time(std::uint64_t payload_bytes);
  void mark_sender(Found& slot, std::uint64_t key, int site);
  bool has_sender(const Found& slot, int site) const;
  // Every sender's bit (site s: bit s % 64 of word s / 64) into `bits`.
  void copy_senders(const Found& slot, std::vector<std::uint64_t>& bits) const;
  void check_senders(const Found& slot, int group_size);
  void on_reduced(tlm::tlm_generic_payload& trans);
  const ReductionRole& role_of(const ChunkExtension& chunk) const;
  void finish_tree_sum(const Found& slot, std::uint64_t key, ChunkExtension& sum);
  int senders_of(const Found& slot) const;
  // The pipeline output FIFO's callback: a direct call, 8 bytes.
  struct OutputHandler {
    FpgaAggregator* fpga;
    void operator()(tlm::tlm_generic_payload& trans) const { fpga->on_reduced(trans); }
  };
  void admit_stalled();
  void admit_waiting(const StallQueue::Stalled& stalled, const sc_core::sc_time& now);
  void fetch_out_hint() const {
    if (out_hint_ == nullptr) return;
    __builtin_prefetch(out_hint_);
    __builtin_prefetch(out_hint_ + 64);
    __builtin_prefetch(out_hint_ + 128);
  }
  // In-trees carry the same chunk indices, one tree per receiver: a tree chunk's key has
  // its tree in the top 12 bits (the builder keeps trees below 4096 and steps below 2^20).
  static std::uint64_t key_of(const ChunkExtension& c) {
    const auto tree = static_cast<std::uint64_t>(c.reduction_tree + 1) << 52;
    return tree | (static_cast<std::uint64_t>(c.step) << 32) | c.chunk;
  }

  // Read or written by every contribution, kept together in two cache lines of one
  // aligned 128-byte block (the second is fetched with the first): the aggregator's state
  // is cold by the time its next contribution arrives, and each line is a miss. The slot
  // table's look-up reads only its start (SlotTable).
  alignas(128) sc_core::sc_time pipeline_free_ = sc_core::SC_ZERO_TIME;
  sc_core::sc_time pipeline_busy_ = sc_core::SC_ZERO_TIME;
  sc_core::sc_time service_;
  std::uint64_t service_payload_bytes_ = ~std::uint64_t{0};
  std::uint64_t contributions_ = 0;
  // config_'s switches read per contribution (config_ itself spans two more lines).
  TestHook test_hook_;
  bool aggregate_, reliable_, drop_when_full_, return_credits_;
  SlotTable<Slot> slots_;

  sc_core::sc_time latency_;
  std::uint64_t reduced_ = 0, slots_in_use_ = 0;
  // The pipeline is serial: outputs leave in time order.
  BasicArrivalQueue<NoRecord, OutputHandler> outputs_;
  ChunkSink out_sink_, network_sink_;  // what `out` and `to_network` are bound to
  const char* out_hint_ = nullptr;
  ChunkPool& pool_;
  int site_;
  // Reused (no allocation per reduced chunk): the senders of the slot just freed (credits).
  std::vector<std::uint64_t> senders_;
  FpgaAggregatorConfig config_;
  BufferMemory buffer_;
  StallQueue stalled_;
  std::vector<std::uint64_t> newly_held_;       // admit_stalled's scratch
  std::vector<StallQueue::Stalled> same_slot_;  // admit_stalled's scratch

  sc_core::sc_time stall_time_ = sc_core::SC_ZERO_TIME;
  std::uint64_t stalls_ = 0;
  Histogram stall_ns_;
  std::uint64_t waiting_bytes_ = 0, waiting_high_water_bytes_ = 0;
  // Loss recovery: reduced (step, chunk) -> its result (data in functional mode), and per
  // (step, sender) the slots freed so far (cumulative credits).
  std::unordered_map<std::uint64_t, std::shared_ptr<std::vector<float>>> completed_;
  std::unordered_map<std::uint64_t, std::uint32_t> freed_;
  // Without aggregation: per (step, sender) the chunks already passed on (first copies).
  std::unordered_map<std::uint64_t, std::vector<bool>> passed_on_;
  std::uint64_t duplicates_ = 0, result_resends_ = 0, drops_ = 0, bad_reductions_ = 0;
  std::uint64_t wasted_bytes_ = 0, acks_sent_ = 0;
  // `drop`: per step, the lowest chunk index not yet reduced (the admission window's base).
  std::unordered_map<int, std::uint32_t> window_base_;
  // `drop`: per step, the senders refused since the window last moved (they hear its end).
  std::unordered_map<int, std::set<int>> refused_;
  static constexpr std::uint32_t kNoChunk = ~std::uint32_t{0};  // a window update's chunk
  bool leaked_once_ = false;
  // Reduction trees: key -> this site's role; per open tree slot, the original member
  // contributions summed so far.
  std::unordered_map<int, ReductionRole> roles_;
  std::unordered_map<std::uint64_t, int> tree_contributions_;
  std::uint64_t tree_sums_ = 0;
};

}  // namespace aggnet
