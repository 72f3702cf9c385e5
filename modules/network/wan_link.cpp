#include "modules/network/wan_link.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

#include "common/units.h"
#include "modules/core/chunk.h"
#include "modules/core/event_calendar.h"
#include "modules/core/time.h"

namespace aggnet {

using sc_core::SC_PS;
using sc_core::sc_time;

WanLink::WanLink(sc_core::sc_module_name name, const WanLinkParams& params, bool jitter_enabled,
                 std::uint64_t seed, std::shared_ptr<PriceTable> prices)
    : sc_module(name),
      in("in"),
      out("out"),
      arrivals_(std::string(this->name()) + ".arrivals", ArrivalHandler{this}),
      delay_(ps_time(params.delay_ps)),
      jitter_enabled_(jitter_enabled && params.jitter_ps > 0),
      shared_prices_(prices ? std::move(prices) : std::make_shared<PriceTable>(params)),
      params_(params) {
  static_assert(sizeof(arrivals_) == 64, "WanLink: the arrival queue should fill one line");
  static_assert(sizeof(detail::ArrivalItem<NoRecord>) == 16, "WanLink: a FIFO item is 16 bytes");
  // The third hot line: three counters, the busy time and the queueing delay's stats.
  static_assert(3 * sizeof(std::uint64_t) + sizeof(busy_) + sizeof(queueing_ns_) == 64,
                "WanLink: line 3");
  if (!shared_prices_->prices(params))
    throw std::invalid_argument(std::string(this->name()) +
                                ": its price table is for links of another kind");
  prices_ = shared_prices_.get();
  in.bind(*this);
  if (jitter_enabled_) jitter_rng_ = std::make_unique<std::mt19937_64>(seed);
}

tlm::tlm_sync_enum WanLink::nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                            sc_time& delay) {
  if (delay == sc_core::SC_ZERO_TIME) {
    accept(trans);
  } else {
    if (!input_peq_)
      input_peq_ =
          std::make_unique<tlm_utils::peq_with_cb_and_phase<WanLink>>(this, &WanLink::on_input);
    input_peq_->notify(trans, phase, EventCalendar::kernel_delay(delay));
  }
  return tlm::TLM_COMPLETED;
}

void WanLink::on_input(tlm::tlm_generic_payload& trans, const tlm::tlm_phase&) { accept(trans); }

void WanLink::attach_fanout(FanoutLog& log, std::uint32_t port) {
  fanout_ = &log;
  fanout_port_ = port;
  cursor_ = log.end();
  fed_ = true;
  refresh_direct();
}

void WanLink::catch_up() {
  while (refill()) {
  }
}

bool WanLink::refill() {
  const std::uint64_t seq = fanout_->next_for(fanout_port_, cursor_);
  if (seq == fanout_->end()) {
    cursor_ = seq;
    return false;
  }
  take(seq);
  return true;
}

void WanLink::take(std::uint64_t seq) {
  const FanoutLog::Entry entry = fanout_->entry(seq);
  fanout_->taken(seq);
  cursor_ = seq + 1;
  hand_over(*entry.trans, entry.at);
}

void WanLink::hand_over(tlm::tlm_generic_payload& trans, const sc_time& now) {
  DeliveryHint::claim(&arrivals_);
  const auto& chunk = chunk_of(trans);
  const bool control = is_control(chunk.kind);
  const PriceTable::Price& cost = price(chunk, control);
  const std::uint64_t wire = cost.wire_bytes;
  if (wire > kMaxWireBytes) {
    throw std::overflow_error(std::string(name()) + ": a transaction of " + std::to_string(wire) +
                              " wire bytes (a transaction has at most 2^63 - 1)");
  }
  wire_bytes_ += wire;
  if (control) {
    ++control_messages_;
    control_bytes_ += chunk.payload_bytes;
  } else {
    payload_bytes_ += chunk.payload_bytes;
    chunks_ += chunk.chunks;
  }
  if (!up_) {  // handed to a dead link: lost at once, the link stays idle
    count_loss(trans, wire);
    trans.release();
    return;
  }
  const sc_time& serialization = cost.serialization;
  const sc_time start = std::max(now, busy_until_);
  busy_until_ = start + serialization;
  sc_time arrival = busy_until_ + delay_;
  if (jitter_enabled_) {  // jitter must not reorder the link's arrivals
    arrival = std::max(arrival + jitter_sample(), last_arrival_);
    last_arrival_ = arrival;
  }

  if (start == now) {
    queueing_ns_.add(0.0);
  } else {
    const double queued_ns = to_ns(start - now);
    queueing_ns_.add(queued_ns);
    if (queued_ns != 0.0) note_queued(queued_ns);
  }
  busy_ += serialization;
  bytes_in_flight_ += wire;
  if (lossy_) lost_.push_back(draw_loss());
  arrivals_.notify_at(trans, arrival);
}

void WanLink::note_queued(double queued_ns) {
  const std::size_t bucket = LogBuckets::bucket_of(queued_ns);
  if (queued_run_ > 0 && bucket == queued_bucket_ && queued_run_ < kMaxRun) {
    ++queued_run_;
    return;
  }
  if (queued_run_ > 0) queueing_buckets_.add_to(queued_bucket_, queued_run_);
  queued_bucket_ = static_cast<std::uint8_t>(bucket);
  queued_run_ = 1;
}

Histogram WanLink::queueing_delay_ns() const {
  settle();
  LogBuckets buckets = queueing_buckets_;
  if (queued_run_ > 0) buckets.add_to(queued_bucket_, queued_run_);
  return {queueing_ns_, buckets};
}

bool WanLink::draw_loss() {
  if (loss_rate_ <= 0) return false;
  return std::uniform_real_distribution<double>(0.0, 1.0)(*loss_rng_) < loss_rate_;
}

bool WanLink::arrives_lost() {
  if (!lossy_) return false;
  const bool lost = lost_.front();
  lost_.pop_front();
  return lost;
}

void WanLink::count_loss(const tlm::tlm_generic_payload& trans, std::uint64_t wire) {
  if (miscount_losses_) return;
  const auto& chunk = chunk_of(trans);
  ++lost_messages_;
  lost_wire_bytes_ += wire;
  if (is_control(chunk.kind)) return;
  lost_chunks_ += chunk.chunks;
  lost_payload_bytes_ += chunk.payload_bytes;
}

// What is in flight already was handed over without a loss draw.
void WanLink::set_loss_rate(double rate, std::uint64_t seed) {
  if (fed_) catch_up();
  loss_rate_ = rate;
  loss_rng_ = std::make_unique<std::mt19937_64>(seed);
  if (!lossy_) lost_.assign(arrivals_.size(), false);
  lossy_ = true;
  refresh_direct();
}

// Everything on the link (queued, serializing, propagating) is lost now: the arrival FIFO
// is emptied, so what is handed over after the link is up again never waits behind it.
void WanLink::set_down() {
  if (!up_) return;
  if (fed_) catch_up();
  up_ = false;
  arrivals_.clear(
      [this](tlm::tlm_generic_payload& trans) { lose_in_flight(trans, wire_bytes_of(trans)); });
  lost_.clear();
  busy_until_ = last_arrival_ = EventCalendar::now();
  down_since_ = EventCalendar::now();
  refresh_direct();
}

void WanLink::set_up() {
  if (up_) return;
  up_ = true;
  down_total_ += EventCalendar::now() - down_since_;
  refresh_direct();
}

sc_time WanLink::down_time() const {
  return down_total_ + (up_ ? sc_core::SC_ZERO_TIME : EventCalendar::now() - down_since_);
}

void WanLink::on_arrival(tlm::tlm_generic_payload& trans) {
  const std::uint64_t wire = wire_bytes_of(trans);
  if (arrives_lost()) return lose_in_flight(trans, wire);
  bytes_in_flight_ -= wire;
  delivered_wire_bytes_ += wire;
  const auto delivering = arrivals_.delivering();
  out_sink_(trans);
}

void WanLink::lose_in_flight(tlm::tlm_generic_payload& trans, std::uint64_t wire) {
  bytes_in_flight_ -= wire;
  count_loss(trans, wire);
  trans.release();
}

sc_time WanLink::jitter_sample() {
  const sc_time now = EventCalendar::now();
  if (now >= jitter_until_) {
    // Extra one-way delay: |N(0, jitter)|, held for one jitter epoch.
    std::normal_distribution<double> dist(0.0, static_cast<double>(params_.jitter_ps));
    jitter_ = ps_time(static_cast<std::uint64_t>(std::abs(dist(*jitter_rng_))));
    jitter_until_ = now + ps_time(kJitterEpochPs);
  }
  return jitter_;
}

double WanLink::utilization(const sc_time& window) const {
  settle();
  return window == sc_core::SC_ZERO_TIME ? 0.0 : busy_.to_seconds() / window.to_seconds();
}

std::vector<Statistic> WanLink::statistics(const sc_time& window) const {
  settle();
  return {
      {"chunks", static_cast<double>(chunks_), "data chunks carried (control not included)"},
      {"payload_bytes", static_cast<double>(payload_bytes_),
       "gradient bytes carried (control not included)"},
      {"control_messages", static_cast<double>(control_messages_),
       "control messages carried (ready, grant, credit, ack)"},
      {"control_bytes", static_cast<double>(control_bytes_), "bytes of control messages"},
      {"wire_bytes", static_cast<double>(wire_bytes_),
       "bytes on the wire incl. headers (data and control)"},
      {"lost_chunks", static_cast<double>(lost_chunks_), "data chunks lost (faults)"},
      {"lost_messages", static_cast<double>(lost_messages_),
       "transactions lost, data and control (faults)"},
      {"lost_payload_bytes", static_cast<double>(lost_payload_bytes_),
       "gradient bytes lost (faults)"},
      {"lost_wire_bytes", static_cast<double>(lost_wire_bytes_), "wire bytes lost (faults)"},
      {"down_time_s", down_time().to_seconds(), "time the link was down (faults)"},
      {"busy_time_s", busy_.to_seconds(), "total serialization time"},
      {"utilization", utilization(window), "busy time / simulated time"},
      {"queueing_delay_mean_ns", queueing_ns_.mean(), "mean wait before serialization"},
      {"queueing_delay_max_ns", queueing_ns_.max(), "max wait before serialization"},
  };
}

int WanLink::hot_state_lines() const {
  std::set<std::uintptr_t> lines;
  const auto add = [&lines](const auto& field) {
    const auto first = reinterpret_cast<std::uintptr_t>(&field);
    for (auto line = first / 64; line <= (first + sizeof(field) - 1) / 64; ++line)
      lines.insert(line);
  };
  add(arrivals_);
  add(bytes_in_flight_), add(delivered_wire_bytes_), add(out_sink_), add(busy_until_);
  add(delay_), add(prices_), add(up_), add(jitter_enabled_), add(lossy_), add(fed_);
  add(queued_bucket_), add(queued_run_);
  add(payload_bytes_), add(wire_bytes_), add(chunks_), add(busy_), add(queueing_ns_);
  return static_cast<int>(lines.size());
}

std::vector<NamedHistogram> WanLink::histograms() const {
  return {{"queueing_delay_ns", queueing_delay_ns(), "wait before serialization starts"}};
}

}  // namespace aggnet
