// One direction of a point-to-point link: FIFO serialization at the line rate with
// per-packet header overhead, then propagation (optionally with jitter).
#pragma once

#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <systemc>
#include <tlm>
#include <vector>

#include "model/params/network.h"
#include "modules/core/arrival_queue.h"
#include "modules/core/chunk.h"
#include "modules/core/nb_target.h"
#include "modules/core/statistics.h"
#include "modules/network/fanout_log.h"
#include "modules/network/price_table.h"

namespace aggnet {

/// WanLink: target socket `in` (the sending side hands over a chunk), initiator socket
/// `out` (delivers the chunk's last bit at the far end).
///
/// Timing (docs/simulation-semantics.md): a chunk handed over at t starts serializing at
/// max(t, end of the previous serialization); it occupies the link for
/// wire_bytes(payload) * 8 / bandwidth; its last bit arrives one propagation delay (plus
/// jitter, clamped so the link never reorders) after its serialization ends.
/// Jitter is a slowly varying extra delay: |N(0, jitter)| drawn anew every
/// kJitterEpochPs (10 ms), as path-delay variations on a WAN last longer than a chunk;
/// a fresh draw per chunk would, through the no-reordering clamp, bias the delay towards
/// the running maximum.
/// Propagation is not occupancy: many chunks propagate at once.
///
/// Faults (docs/simulation-semantics.md, "Faults"): with a loss rate, each transaction
/// handed over is lost with that probability (a seeded draw at hand-over; it still
/// occupies the link and is dropped at its arrival instant). A link that goes down loses
/// every transaction on it (queued, serializing or propagating) and every one handed over
/// until it comes back up. Conservation: sent = delivered + lost + in flight, in wire
/// bytes, at every instant.
class WanLink : public sc_core::sc_module, public NbTarget, public DepartureClock {
 public:
  tlm::tlm_target_socket<> in;  ///< bound to the module itself (NbTarget)
  tlm_utils::simple_initiator_socket<WanLink> out;

  /// `seed` seeds the jitter generator (only used when params.jitter_ps > 0 and
  /// `jitter_enabled`).
  /// `prices`: the table of the links of this kind in the same network (PriceTables; it
  /// must price `params`), or none for a table of its own.
  WanLink(sc_core::sc_module_name name, const WanLinkParams& params, bool jitter_enabled = false,
          std::uint64_t seed = 1, std::shared_ptr<PriceTable> prices = nullptr);

  const WanLinkParams& params() const { return params_; }
  /// Loss injection: every transaction handed over from now is lost with probability
  /// `rate` in [0, 1), drawn from a generator seeded with `seed` (not the jitter's).
  void set_loss_rate(double rate, std::uint64_t seed);
  double loss_rate() const { return loss_rate_; }
  /// Link failure: everything on the link now is lost, and so is everything handed over
  /// until set_up().
  void set_down();
  void set_up();
  bool up() const { return up_; }
  /// A stalled end (faults): nothing starts serializing before `until` (what is handed
  /// over meanwhile queues).
  void hold_until(const sc_core::sc_time& until) {
    if (fed_) catch_up();
    busy_until_ = std::max(busy_until_, until);
  }
  /// When what was handed over last has been serialized (now or earlier if idle).
  sc_core::sc_time last_departure() const override {
    settle();
    return busy_until_;
  }
  /// Egress port `port` of a switch whose wide fan-outs wait in `log` (FanoutLog): while
  /// its arrivals are scheduled, the link takes them from there as its FIFO runs dry, with
  /// the timing it would have given them at their hand-over; every reading of its state
  /// (the accessors below, a hand-over, a fault) first takes all that wait.
  void attach_fanout(FanoutLog& log, std::uint32_t port);
  /// Takes every hand-over waiting for it in its fan-out log, in their order.
  void catch_up();
  /// Test-only: lost transactions are not counted (breaks the conservation invariant).
  void set_test_miscount_losses(bool on) { miscount_losses_ = on; }
  /// Bytes handed to the link that have not yet arrived at the far end (queue + wire).
  /// Stable address, traced in VCD.
  const std::uint64_t& bytes_in_flight() const {
    settle();
    return bytes_in_flight_;
  }
  /// Gradient bytes handed over (contributions, reduced chunks, ring segments; control
  /// messages are counted apart).
  std::uint64_t payload_bytes() const { return settle(), payload_bytes_; }
  std::uint64_t wire_bytes_sent() const { return settle(), wire_bytes_; }
  std::uint64_t wire_bytes_delivered() const { return delivered_wire_bytes_; }
  std::uint64_t wire_bytes_lost() const { return lost_wire_bytes_; }
  /// Data chunks handed over (control messages not included).
  std::uint64_t chunks() const { return settle(), chunks_; }
  /// Control messages (ready, grant, credit, ack) handed over and their bytes.
  std::uint64_t control_messages() const { return settle(), control_messages_; }
  std::uint64_t control_bytes() const { return settle(), control_bytes_; }
  /// Transactions lost (data chunks and control messages) and the data chunks among them.
  std::uint64_t lost_messages() const { return lost_messages_; }
  std::uint64_t lost_chunks() const { return lost_chunks_; }
  std::uint64_t lost_payload_bytes() const { return lost_payload_bytes_; }
  /// Simulated time the link spent down (up to now).
  sc_core::sc_time down_time() const;
  /// Total serialization time (the link's busy time).
  sc_core::sc_time busy_time() const { return settle(), busy_; }
  /// busy time / `window` (0 if the window is empty).
  double utilization(const sc_core::sc_time& window) const;
  Histogram queueing_delay_ns() const;
  std::vector<Statistic> statistics(const sc_core::sc_time& window) const;
  std::vector<NamedHistogram> histograms() const;
  /// Cache lines the state every crossing reads or writes spans (three, see below).
  int hot_state_lines() const;
  /// Where that state starts, and what its arrivals fetch ahead: the hot state of the link
  /// its last delivery went on to, if any (EventCalendar::schedule's hint).
  const void* hot_state() const { return &arrivals_; }
  const void* arrival_hint() const { return arrivals_.hint(); }

 private:
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override;
  ChunkSink chunk_sink() override { return ChunkSink::of_member<WanLink, &WanLink::accept>(this); }
  void start_of_simulation() override { out_sink_ = ChunkSink::of(out.operator->(), this); }
  void accept(tlm::tlm_generic_payload& trans) {
    if (fed_) catch_up();
    hand_over(trans, EventCalendar::now());
  }
  // A hand-over made at `now` (the fan-out log's: earlier than the simulation's).
  void hand_over(tlm::tlm_generic_payload& trans, const sc_core::sc_time& now);
  // The fan-out log: takes entry `seq`; the next waiting entry when the FIFO runs dry.
  void take(std::uint64_t seq);
  bool refill();
  bool defers() const { return up_ && !lossy_ && !jitter_enabled_; }
  // A link not scheduled takes a fan-out at once: the calendar entry is made then.
  void refresh_direct() { mark_direct(arrivals_.scheduled()); }
  void mark_direct(bool scheduled) {
    if (fed_) fanout_->set_direct(fanout_port_, !scheduled || !defers());
  }
  // Accessors report what was handed over, waiting hand-overs included.
  void settle() const {
    if (fed_) const_cast<WanLink*>(this)->catch_up();
  }
  void on_input(tlm::tlm_generic_payload& trans, const tlm::tlm_phase& phase);
  static constexpr std::uint64_t kMaxWireBytes = (std::uint64_t{1} << 63) - 1;
  static constexpr std::uint16_t kMaxRun = ~std::uint16_t{0};
  void on_arrival(tlm::tlm_generic_payload& trans);
  // A crossing's wire size, priced again at its arrival from its chunk as at its hand-over
  // (a transaction's payload and kind do not change in flight), not kept in the arrival
  // FIFO: its items are 16 bytes, four a line, and the FIFOs of a thousand congested
  // links are what a hop misses in the caches.
  std::uint64_t wire_bytes_of(const tlm::tlm_generic_payload& trans) {
    const auto& chunk = chunk_of(trans);
    return price(chunk, is_control(chunk.kind)).wire_bytes;
  }
  bool arrives_lost();
  void lose_in_flight(tlm::tlm_generic_payload& trans, std::uint64_t wire);
  // The arrival FIFO's callback: a direct call, in 8 bytes of the link's hot state.
  struct ArrivalHandler {
    WanLink* link;
    void operator()(tlm::tlm_generic_payload& trans) const { link->on_arrival(trans); }
    bool refill() const { return link->fed_ && link->refill(); }
    void scheduled(bool on) const { link->mark_direct(on); }
  };
  sc_core::sc_time jitter_sample();
  bool draw_loss();
  void count_loss(const tlm::tlm_generic_payload& trans, std::uint64_t wire);
  void note_queued(double queued_ns);
  const PriceTable::Price& price(const ChunkExtension& chunk, bool control) {
    return control ? prices_->control(chunk) : prices_->data(chunk);
  }

  // Read or written by every crossing, kept together: a link's state is cold by the time
  // its next chunk arrives, and each line is a miss. Three lines, each starting where its
  // alignas says: the arrival FIFO's header; what an arrival reads (the calendar fetches
  // these two ahead, see EventCalendar::prefetch_next; the link delivering to this one
  // fetches all three ahead, by its arrivals' hint) and the hand-over's timing; the
  // byte counts and the queueing delay's running stats. A hand-over touches all three,
  // and the queueing delay's buckets (kept apart) only when its bucket differs from the
  // run of equal ones before it.
  alignas(64) BasicArrivalQueue<NoRecord, ArrivalHandler> arrivals_;  // FIFO; one line
  alignas(64) std::uint64_t bytes_in_flight_ = 0;
  std::uint64_t delivered_wire_bytes_ = 0;
  ChunkSink out_sink_;  // what `out` is bound to
  sc_core::sc_time busy_until_ = sc_core::SC_ZERO_TIME;
  sc_core::sc_time delay_;
  PriceTable* prices_ = nullptr;  // the table shared_prices_ holds
  bool up_ = true;
  bool jitter_enabled_;
  bool lossy_ = false;  // since a loss rate was set: lost_ follows the FIFO
  bool fed_ = false;    // attached to a fan-out log
  // The queueing delays' latest run of equal buckets, not yet in queueing_buckets_ (its
  // counts are a vector apart: two more lines per queued crossing otherwise).
  std::uint8_t queued_bucket_ = 0;
  std::uint16_t queued_run_ = 0;
  alignas(64) std::uint64_t payload_bytes_ = 0;  // (an alignas applies to each declarator)
  std::uint64_t wire_bytes_ = 0, chunks_ = 0;
  sc_core::sc_time busy_ = sc_core::SC_ZERO_TIME;
  RunningStats queueing_ns_;

  LogBuckets queueing_buckets_;
  std::shared_ptr<PriceTable> shared_prices_;  // the network's, or the link's own
  double loss_rate_ = 0;
  WanLinkParams params_;
  sc_core::sc_time jitter_, jitter_until_;
  sc_core::sc_time last_arrival_ = sc_core::SC_ZERO_TIME;  // read with jitter only
  // Out of line and made only when used (jitter, a hand-over with a delay, loss): a
  // generator is 2.5 KiB and the queue 5 KiB with a process, per link of a full mesh.
  std::unique_ptr<std::mt19937_64> jitter_rng_;
  std::unique_ptr<tlm_utils::peq_with_cb_and_phase<WanLink>> input_peq_;
  std::unique_ptr<std::mt19937_64> loss_rng_;
  std::deque<bool> lost_;  // while lossy_: per crossing in the arrival FIFO, its loss draw
  std::uint64_t control_messages_ = 0, control_bytes_ = 0;
  std::uint64_t lost_wire_bytes_ = 0;
  std::uint64_t lost_messages_ = 0, lost_chunks_ = 0, lost_payload_bytes_ = 0;
  bool miscount_losses_ = false;
  sc_core::sc_time down_since_, down_total_;
  FanoutLog* fanout_ = nullptr;
  std::uint32_t fanout_port_ = 0;
  std::uint64_t cursor_ = 0;  // the fan-out log's entries before it are taken or not ours
};

}  // namespace aggnet
