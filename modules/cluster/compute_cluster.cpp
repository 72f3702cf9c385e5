#include "modules/cluster/compute_cluster.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/network_math.h"
#include "modules/core/event_calendar.h"
#include "modules/core/time.h"

namespace aggnet {

using sc_core::sc_time;

namespace {
constexpr int kIdle = 0, kComputing = 1, kCommunicating = 2, kOffsetWait = 3;
int mod(int a, int n) { return ((a % n) + n) % n; }
}  // namespace

ComputeCluster::ComputeCluster(sc_core::sc_module_name name, const ComputeClusterConfig& config,
                               ChunkPool& pool)
    : sc_module(name), out("out"), in("in"), config_(config), pool_(pool) {
  in.bind(*this);
  const auto n = static_cast<std::uint64_t>(config_.ring_order.size());
  if (config_.ring && n > 0) ring_split_ = RingSegmentSplit(config_.gradient_bytes, n);
  if (config_.ring) ring_progress_ = config_.ring_progress.get();
  functional_ = config_.functional;
  if (config_.reliable) {
    retransmitter_ = std::make_unique<Retransmitter>(
        "retransmitter",
        [this](int step, int dst, std::uint32_t chunk) { return resend(step, dst, chunk); });
  }
  SC_HAS_PROCESS(ComputeCluster);
  SC_THREAD(run);
}

float ComputeCluster::gradient_value(int site, int step, std::uint64_t index) {
  return static_cast<float>(
      (static_cast<std::uint64_t>(site + 1) * 131 + static_cast<std::uint64_t>(step) * 17 + index) %
      251);
}

// A data transaction's payload; in burst mode also the chunks it carries (the payload is
// one transaction of config_.chunk_bytes, cut into chunks of burst_chunk_bytes).
void ComputeCluster::set_payload(ChunkExtension& chunk, std::uint64_t bytes) const {
  chunk.payload_bytes = bytes;
  if (config_.burst_chunk_bytes == 0) return;
  chunk.burst_chunk_bytes = config_.burst_chunk_bytes;
  chunk.chunks = static_cast<std::uint32_t>(aggnet::num_chunks(bytes, config_.burst_chunk_bytes));
}

std::uint64_t ComputeCluster::num_chunks(std::uint64_t bytes) const {
  return aggnet::num_chunks(bytes, config_.chunk_bytes);
}

void ComputeCluster::run() {
  const int period = static_cast<int>(config_.rounds.size());
  for (int step = 0; step < config_.steps; ++step) {
    step_ = step;
    StepRecord record;
    record.step = step;
    record.round = config_.ring || period == 0 ? 0 : step % period;
    round_index_ = record.round;
    record.start = EventCalendar::now();
    state_ = kComputing;
    wait(ps_time(config_.params.compute_time_ps));
    state_ = kCommunicating;
    record.send_start = EventCalendar::now();
    first_send_ = agreed_start_ = record.send_start;
    if (config_.functional) data_ = initial_gradient(step);
    transmit_complete_ = sc_core::SC_ZERO_TIME;
    if (config_.ring || config_.collective != Collective::kGroupAverage) {
      run_host_collective(step, record);
    } else {
      const auto& plan = config_.rounds[record.round];
      record.communicated = plan.group.size() > 1;
      if (record.communicated) run_group_round(step, plan);
    }
    record.end = EventCalendar::now();
    record.first_send = first_send_;
    record.agreed_start = agreed_start_;
    record.transmit_complete = transmit_complete_;
    offset_wait_total_ += first_send_ - agreed_start_;
    if (const auto times = result_times(step)) {
      record.first_result = times->first;
      record.last_result = times->second;
    }
    if (noted_.step == step) noted_ = {};
    result_times_.erase(step);
    host_received_.erase(step);
    if (host_receipts_.step == step) host_receipts_ = {};
    records_.push_back(record);
  }
  state_ = kIdle;
  finished_ = true;
}

std::vector<float> ComputeCluster::initial_gradient(int step) const {
  std::vector<float> values(config_.gradient_bytes / 4);
  for (std::uint64_t j = 0; j < values.size(); ++j)
    values[j] = gradient_value(config_.site, step, j);
  return values;
}

std::vector<float>& ComputeCluster::ring_buffer(int step) {
  auto it = ring_data_.find(step);
  if (it == ring_data_.end()) it = ring_data_.emplace(step, initial_gradient(step)).first;
  return it->second;
}

std::shared_ptr<std::vector<float>> ComputeCluster::slice(const std::vector<float>& source,
                                                          std::uint64_t offset_bytes,
                                                          std::uint64_t bytes) const {
  if (!config_.functional) return nullptr;
  auto begin = source.begin() + static_cast<std::ptrdiff_t>(offset_bytes / 4);
  return std::make_shared<std::vector<float>>(begin,
                                              begin + static_cast<std::ptrdiff_t>(bytes / 4));
}

void ComputeCluster::emit(tlm::tlm_generic_payload& trans) { out_sink_(trans); }

// Aligned start: tell every other member we are ready (time-stamped on synchronised
// clocks), wait for everyone's message, then start at last ready + start_delay, a time
// every member computes alike and has reached once all messages could have arrived.
void ComputeCluster::send_control(ChunkKind kind, int step, int dst, std::uint32_t credits) {
  auto& trans = pool_.allocate();
  auto& c = chunk_of(trans);
  c.kind = kind;
  c.src_site = config_.site;
  c.dst_site = dst;
  c.step = step;
  c.credits = credits;
  c.payload_bytes = config_.control_bytes;
  c.stamp_ps = to_ps(EventCalendar::now());
  emit(trans);
}

// A ready message carries this site's ready stamp for `step` (also when repeated): to
// `dst`, or with multicast to every member at once on the site's tree (tree_id, dst -1),
// so that a link carries one per sender, not one per pair of members.
// Loss recovery: a member that is not heard from gets the message again every timeout; a
// member that hears a repeated ready message answers with its own (`reply`, never
// answered), in case its first one was the one lost.
void ComputeCluster::send_ready(int step, int dst, bool reply, int tree_id) {
  auto& trans = pool_.allocate();
  auto& c = chunk_of(trans);
  c.kind = ChunkKind::kReady;
  c.src_site = config_.site;
  c.dst_site = dst;
  c.tree_id = tree_id;
  c.step = step;
  c.payload_bytes = config_.control_bytes;
  c.stamp_ps = own_ready_ps_.at(step);
  c.reply = reply;
  emit(trans);
}

void ComputeCluster::align_start(int step, const ClusterRoundPlan& plan) {
  const std::uint64_t now_ps = to_ps(EventCalendar::now());
  own_ready_ps_[step] = now_ps;
  if (config_.multicast) {
    send_ready(step, -1, false, plan.tree_id);  // once, on this site's tree, as its data
  } else {
    for (int d : plan.group)
      if (d != config_.site) send_ready(step, d, false);
  }
  auto heard = [&](int d) {
    const auto& from = ready_[step].from;
    return d == config_.site || std::find(from.begin(), from.end(), d) != from.end();
  };
  const std::size_t others = plan.group.size() - 1;
  waiting(Waiting::kReady, step);
  sc_time retry_at = EventCalendar::now() + ps_time(plan.retransmit_timeout_ps);
  while (ready_[step].from.size() < others) {
    if (!wait_or_retry(retry_at, plan)) continue;
    for (int d : plan.group) {
      if (heard(d)) continue;
      send_ready(step, d, false);
      ++control_retransmissions_;
    }
  }
  waiting(Waiting::kNothing, step);
  auto& ready = ready_[step];
  ready.started = true;
  const std::uint64_t start = std::max(ready.latest_ps, now_ps) + plan.start_delay_ps;
  if (start > to_ps(EventCalendar::now())) wait(ps_time(start) - EventCalendar::now());
}

// Copies are in flight for at most start_delay (the latest a ready message can take) after
// it was sent. The copy sent again on the new tree is a reply: members that heard the
// first one do not answer it.
void ComputeCluster::tree_rerouted(int tree_id) {
  if (own_ready_ps_.empty()) return;
  const auto& [step, sent_ps] = *own_ready_ps_.rbegin();
  const ClusterRoundPlan& plan = plan_of(step);
  if (plan.tree_id != tree_id || to_ps(EventCalendar::now()) >= sent_ps + plan.start_delay_ps)
    return;
  send_ready(step, -1, true, plan.tree_id);
  ++control_retransmissions_;
}

void ComputeCluster::on_ready(const ChunkExtension& chunk) {
  auto& ready = ready_[chunk.step];
  const bool known =
      std::find(ready.from.begin(), ready.from.end(), chunk.src_site) != ready.from.end();
  if (!known) {
    ready.from.push_back(chunk.src_site);
    ready.latest_ps = std::max(ready.latest_ps, chunk.stamp_ps);
    ++progress_count_;
  }
  const bool repeated = known || ready.started;
  if (config_.reliable && repeated && !chunk.reply && own_ready_ps_.count(chunk.step))
    send_ready(chunk.step, chunk.src_site, true);
}

// Waits for progress, or (loss recovery) until `retry_at`: true when it is time to repeat
// what is awaited, and then `retry_at` moves one timeout on.
bool ComputeCluster::wait_or_retry(sc_time& retry_at, const ClusterRoundPlan& plan) {
  if (!config_.reliable) {
    wait(progress_);
    return false;
  }
  if (EventCalendar::now() < retry_at) wait(retry_at - EventCalendar::now(), progress_);
  if (EventCalendar::now() < retry_at) return false;
  retry_at = EventCalendar::now() + ps_time(plan.retransmit_timeout_ps);
  return true;
}

// Credit: a sender may emit a chunk only with a credit from every receiver for this
// step: its grant plus the slots it has freed so far, less the credits spent.
void ComputeCluster::wait_for_credits(int step, const ClusterRoundPlan& plan,
                                      const std::vector<int>& receivers) {
  auto missing = [&] {
    return std::any_of(receivers.begin(), receivers.end(), [&](int d) {
      return !windows_[{step, d}].open();
    });
  };
  waiting(Waiting::kCredits, step);
  sc_time retry_at = EventCalendar::now() + ps_time(plan.retransmit_timeout_ps);
  while (missing())
    if (wait_or_retry(retry_at, plan)) regrant(step, plan, receivers);
  waiting(Waiting::kNothing, step);
  for (int d : receivers) ++windows_[{step, d}].spent;
}

// Grants this site's whole window to every sender when it enters a credit round; with loss
// recovery they are repeated every timeout until a first result shows every sender had
// them (a result needs every sender's contribution).
void ComputeCluster::send_grants(int step, const ClusterRoundPlan& plan,
                                 const std::vector<int>& receivers) {
  for (int d : receivers)
    send_control(ChunkKind::kGrant, step, d, static_cast<std::uint32_t>(plan.own_slots));
}

// With aggregation a first result shows every sender had its grant (a reduced chunk needs
// all of them); without, a passed-on contribution shows it for its sender only, and the
// grants are repeated until the round is over.
void ComputeCluster::regrant(int step, const ClusterRoundPlan& plan,
                             const std::vector<int>& receivers) {
  if (config_.flow_control != FlowControl::kCredit) return;
  if (config_.aggregation && result_times(step)) return;
  send_grants(step, plan, receivers);
  control_retransmissions_ += receivers.size();
}

void ComputeCluster::run_group_round(int step, const ClusterRoundPlan& plan) {
  if (plan.aligned_start) align_start(step, plan);
  agreed_start_ = EventCalendar::now();
  std::vector<int> receivers;
  for (int s : plan.group)
    if (s != config_.site) receivers.push_back(s);
  if (config_.flow_control == FlowControl::kCredit) {
    send_credit_clocked(step, plan, receivers);
  } else {
    send_paced(step, plan, receivers);
  }
  const std::uint64_t n = num_chunks(config_.gradient_bytes);
  waiting(Waiting::kResults, step);
  sc_time retry_at = EventCalendar::now() + ps_time(plan.retransmit_timeout_ps);
  const std::uint64_t& complete = complete_chunks_[step];
  awaited_ = {&complete, n};
  while (complete < n)
    if (wait_or_retry(retry_at, plan)) regrant(step, plan, receivers);
  awaited_ = {};
  waiting(Waiting::kNothing, step);
  if (config_.functional) average_result(step, plan);
  if (receiving_.step == step) receiving_ = {};
  received_.erase(step);
  complete_chunks_.erase(step);
  finished_steps_.insert(step);
  passed_through_.erase(passed_through_.lower_bound({step, 0, -1}),
                        passed_through_.lower_bound({step + 1, 0, -1}));
  resent_values_.erase(resent_values_.lower_bound({step, 0}),
                       resent_values_.lower_bound({step + 1, 0}));
  expected_results_ += n;
  ++progress_count_;
}

// Idles until `when`: a credit round's send offset before its first chunk (VCD state 3).
void ComputeCluster::wait_offset(const sc_time& when) {
  if (when <= EventCalendar::now()) return;
  state_ = kOffsetWait;
  wait(when - EventCalendar::now());
  state_ = kCommunicating;
}

// Pacing: one stream per multicast tree (or per unicast copy), each starting at its
// send offset after the agreed start and emitting a chunk every pacing interval; the
// streams are merged in time order. The calendar emits them (on_calendar).
void ComputeCluster::send_paced(int step, const ClusterRoundPlan& plan,
                                const std::vector<int>& receivers) {
  const sc_time start = EventCalendar::now();
  auto offset = [&](int d) {
    const auto it = plan.send_offset_ps.find(d);
    return ps_time(it == plan.send_offset_ps.end() ? 0 : it->second);
  };
  paced_.streams.clear();
  if (config_.multicast) {
    paced_.streams.push_back({-1, start + offset(receivers.front())});
  } else {
    for (int d : receivers) paced_.streams.push_back({d, start + offset(d)});
  }
  paced_.step = step;
  paced_.plan = &plan;
  paced_.interval = ps_time(plan.pacing_interval_ps);
  paced_.chunks = num_chunks(config_.gradient_bytes);
  paced_.first = true;
  const PacedStream* next = next_paced_stream();
  if (next == nullptr) return;
  if (next->next > start) state_ = kOffsetWait;
  paced_.active = true;
  EventCalendar::current().schedule(*this, next->next);
  awaited_ = Awaited::nothing();  // received chunks need not wake the thread meanwhile
  while (paced_.active) wait(paced_done_);
  awaited_ = {};
}

ComputeCluster::PacedStream* ComputeCluster::next_paced_stream() {
  const std::uint64_t n = paced_.chunks;
  auto next = std::min_element(paced_.streams.begin(), paced_.streams.end(),
                               [n](const auto& a, const auto& b) {
                                 return a.chunk < n && (b.chunk >= n || a.next < b.next);
                               });
  return next == paced_.streams.end() || next->chunk >= n ? nullptr : &*next;
}

// Emits every paced chunk due now, in time order across the streams.
void ComputeCluster::on_calendar() {
  const sc_time now = EventCalendar::now();
  PacedStream* next = next_paced_stream();
  for (; next != nullptr && next->next <= now; next = next_paced_stream()) {
    if (paced_.first) first_send_ = now;
    paced_.first = false;
    state_ = kCommunicating;
    send_contribution(paced_.step, *paced_.plan, next->dst, next->chunk);
    ++next->chunk;
    next->next += paced_.interval;
  }
  if (next != nullptr) {
    EventCalendar::current().schedule(*this, next->next);
    return;
  }
  paced_.active = false;
  EventCalendar::notify_now(paced_done_);
}

// Credit: the stream starts at the earliest send offset, then every chunk waits for a
// credit from each receiver. Receivers grant their whole window when they enter the
// round (their slots are all free then: the previous round's results are complete).
void ComputeCluster::send_credit_clocked(int step, const ClusterRoundPlan& plan,
                                         const std::vector<int>& receivers) {
  std::uint64_t offset = std::numeric_limits<std::uint64_t>::max();
  for (int d : receivers) {
    const auto it = plan.send_offset_ps.find(d);
    offset = std::min<std::uint64_t>(offset, it == plan.send_offset_ps.end() ? 0 : it->second);
  }
  windows_.erase(windows_.begin(), windows_.lower_bound({step, -1}));  // finished rounds
  send_grants(step, plan, receivers);
  wait_offset(EventCalendar::now() + ps_time(offset));
  first_send_ = EventCalendar::now();
  const std::uint64_t n = num_chunks(config_.gradient_bytes);
  for (std::uint64_t i = 0; i < n; ++i) {
    wait_for_credits(step, plan, receivers);
    if (config_.multicast) {
      send_contribution(step, plan, -1, i);
    } else {
      for (int d : receivers) send_contribution(step, plan, d, i);
    }
  }
}

// Chunk i of this site's gradient, once on the multicast tree (dst -1) or as the
// unicast copy for dst.
void ComputeCluster::send_contribution(int step, const ClusterRoundPlan& plan, int dst,
                                       std::uint64_t i) {
  const std::uint64_t offset = i * config_.chunk_bytes;
  const std::uint64_t bytes = std::min(config_.chunk_bytes, config_.gradient_bytes - offset);
  auto& trans = pool_.allocate();
  auto& chunk = chunk_of(trans);
  chunk.kind = ChunkKind::kContribution;
  chunk.src_site = config_.site;
  chunk.dst_site = dst;
  chunk.tree_id = dst < 0 ? plan.tree_id : -1;
  chunk.step = step;
  chunk.group_size = static_cast<int>(plan.group.size());
  chunk.chunk = static_cast<std::uint32_t>(i);
  set_payload(chunk, bytes);
  chunk.data = slice(data_, offset, bytes);
  emit(trans);
  if (!retransmitter_) return;
  const sc_time timeout = ps_time(plan.retransmit_timeout_ps);
  const sc_time departure = last_departure();
  for (int d : plan.group)
    if (d != config_.site && (dst < 0 || d == dst))
      retransmitter_->track(step, d, static_cast<std::uint32_t>(i), bytes, timeout, departure);
}

std::vector<int> ComputeCluster::current_group() const {
  if (config_.ring || config_.rounds.empty()) return config_.ring_order;
  return plan_of(step_).group;
}

const ClusterRoundPlan& ComputeCluster::plan_of(int step) const {
  return config_.rounds[static_cast<std::size_t>(step) % config_.rounds.size()];
}

// A contribution's timer expired: the same chunk again, unicast to `dst` (the values are
// recomputed: a site's gradient of a step is a function of site, step and index).
sc_time ComputeCluster::resend(int step, int dst, std::uint32_t i) {
  const auto& plan = plan_of(step);
  const std::uint64_t offset = std::uint64_t{i} * config_.chunk_bytes;
  const std::uint64_t bytes = std::min(config_.chunk_bytes, config_.gradient_bytes - offset);
  auto& trans = pool_.allocate();
  auto& chunk = chunk_of(trans);
  chunk.kind = ChunkKind::kContribution;
  chunk.src_site = config_.site;
  chunk.dst_site = dst;
  chunk.step = step;
  chunk.group_size = static_cast<int>(plan.group.size());
  chunk.chunk = i;
  set_payload(chunk, bytes);
  chunk.retransmission = true;
  if (config_.functional) chunk.data = resent_values(step, i, offset, bytes);
  emit(trans);
  return last_departure();
}

std::shared_ptr<std::vector<float>> ComputeCluster::resent_values(int step, std::uint32_t i,
                                                                  std::uint64_t offset_bytes,
                                                                  std::uint64_t bytes) {
  std::weak_ptr<std::vector<float>>& cached = resent_values_[{step, i}];
  if (auto values = cached.lock()) return values;
  auto values = std::make_shared<std::vector<float>>(bytes / 4);
  for (std::uint64_t k = 0; k < values->size(); ++k)
    (*values)[k] = gradient_value(config_.site, step, offset_bytes / 4 + k);
  cached = values;
  ++resent_value_buffers_;
  return values;
}

void ComputeCluster::acknowledge(int step, int dst, std::uint32_t chunk) {
  auto& trans = pool_.allocate();
  auto& c = chunk_of(trans);
  c.kind = ChunkKind::kAck;
  c.src_site = config_.site;
  c.dst_site = dst;
  c.step = step;
  c.chunk = chunk;
  c.payload_bytes = config_.control_bytes;
  ++acks_sent_;
  emit(trans);
}

void ComputeCluster::waiting(Waiting what, int step) {
  wait_what_ = what;
  wait_step_ = step;
  wait_since_ = EventCalendar::now();
}

std::string ComputeCluster::waiting_for(const std::vector<std::string>& codes) const {
  auto names = [&](const std::vector<int>& sites) {
    std::string out;
    for (int s : sites) out += (out.empty() ? "" : ",") + codes.at(static_cast<std::size_t>(s));
    return out;
  };
  const int step = wait_step_;
  std::vector<int> missing;
  switch (wait_what_) {
    case Waiting::kNothing:
      return "";
    case Waiting::kReady: {
      const auto it = ready_.find(step);
      for (int d : plan_of(step).group)
        if (d != config_.site &&
            (it == ready_.end() ||
             std::find(it->second.from.begin(), it->second.from.end(), d) == it->second.from.end()))
          missing.push_back(d);
      return "ready messages of step " + std::to_string(step) + " from " + names(missing);
    }
    case Waiting::kCredits:
      for (int d : plan_of(step).group) {
        const auto it = windows_.find({step, d});
        if (d != config_.site && (it == windows_.end() || !it->second.open())) missing.push_back(d);
      }
      return "credits of step " + std::to_string(step) + " from " + names(missing);
    case Waiting::kResults: {
      const std::uint64_t n = num_chunks(config_.gradient_bytes);
      const auto it = complete_chunks_.find(step);
      const std::uint64_t done = it == complete_chunks_.end() ? 0 : it->second;
      std::vector<int> others;
      for (int d : plan_of(step).group)
        if (d != config_.site) others.push_back(d);
      return "results of step " + std::to_string(step) + " (" + std::to_string(done) + " of " +
             std::to_string(n) + " chunks complete; contributions from " + names(others) + ")";
    }
  }
  return "";
}

// Functional mode: this site's result = (own gradient + the others' sum) / |group|.
void ComputeCluster::average_result(int step, const ClusterRoundPlan& plan) {
  std::vector<float> averaged(data_.size());
  const float members = static_cast<float>(plan.group.size());
  for (std::size_t j = 0; j < data_.size(); ++j)
    averaged[j] = (data_[j] + reduced_sum_[step][j]) / members;
  result_ = std::move(averaged);
  reduced_sum_.erase(step);
}

// A host-to-host chunk (ring segment or point-to-point message), not yet sent.
tlm::tlm_generic_payload& ComputeCluster::host_chunk(int step, int tag, int dst, int segment,
                                                     std::uint64_t index, std::uint64_t bytes) {
  auto& trans = pool_.allocate();
  auto& chunk = chunk_of(trans);
  chunk.kind = ChunkKind::kRingSegment;
  chunk.src_site = config_.site;
  chunk.dst_site = dst;
  chunk.step = step;
  chunk.ring_step = static_cast<std::uint32_t>(tag);
  chunk.segment = static_cast<std::uint32_t>(segment);
  chunk.chunk = static_cast<std::uint32_t>(index);
  set_payload(chunk, bytes);
  return trans;
}

void ComputeCluster::send_segment(int step, int ring_step, int dst, int segment) {
  const std::uint64_t offset_bytes = ring_split_.offset_bytes(static_cast<std::uint64_t>(segment));
  const std::uint64_t bytes = ring_split_.bytes(static_cast<std::uint64_t>(segment));
  const std::uint64_t n = num_chunks(bytes);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t off = i * config_.chunk_bytes;
    const std::uint64_t len = std::min(config_.chunk_bytes, bytes - off);
    auto& trans = host_chunk(step, ring_step, dst, segment, i, len);
    if (config_.functional)
      chunk_of(trans).data = slice(ring_buffer(step), offset_bytes + off, len);
    emit(trans);
  }
}

void ComputeCluster::run_ring(int step) {
  const auto& order = config_.ring_order;
  const int n = static_cast<int>(order.size());
  const auto me = std::find(order.begin(), order.end(), config_.site);
  if (n < 2 || me == order.end()) return;
  const int pos = static_cast<int>(me - order.begin());
  const int succ = order[mod(pos + 1, n)];
  const int end = config_.ring_steps_end < 0 ? 2 * (n - 1) : config_.ring_steps_end;
  if (config_.ring_step_rule == RingStepRule::kReceive) {
    // Each ring step starts when the previous one's chunks are all in: at that arrival,
    // from receive(), as the loop below would once its thread ran at the same instant.
    ring_run_ = {step, config_.ring_steps_begin, end, pos, succ, true};
    ring_advance();
    awaited_ = {&ring_run_.finished, 1};
    while (ring_run_.finished == 0) wait(progress_);
    awaited_ = {};
    ring_run_.active = false;
    if (config_.functional) check_ring_result(step, n);
    return;
  }
  for (int r = config_.ring_steps_begin; r < end; ++r) {
    const std::uint64_t expected = start_ring_step(step, r, pos, succ);
    wait_host_chunks(step, r, expected);
    // An empty segment (a gradient of fewer floats than sites): no chunk arrives to mark
    // it received, and the sendrecv and barrier rules waited for that mark for ever.
    if (expected == 0 && config_.ring_progress) config_.ring_progress->mark(config_.site, step, r);
    wait_ring_step_rule(step, r, succ);
  }
  if (config_.functional) check_ring_result(step, n);
}

// Ring step r at position pos: sends its segment to the successor; returns the chunks it
// receives (reduce-scatter for r < n - 1, then all-gather).
std::uint64_t ComputeCluster::start_ring_step(int step, int r, int pos, int successor) {
  const int n = static_cast<int>(config_.ring_order.size());
  const bool reduce_scatter = r < n - 1;
  const int send_seg = reduce_scatter ? mod(pos - r, n) : mod(pos + 1 - (r - (n - 1)), n);
  const int recv_seg = reduce_scatter ? mod(pos - 1 - r, n) : mod(pos - (r - (n - 1)), n);
  send_segment(step, r, successor, send_seg);
  return num_chunks(ring_split_.bytes(static_cast<std::uint64_t>(recv_seg)));
}

// Sends the current ring step's segment, and moves on while a ring step's chunks are all in
// (they may have arrived before it was sent).
void ComputeCluster::ring_advance() {
  RingRun& run = ring_run_;
  while (run.ring_step < run.end) {
    const int r = run.ring_step;
    if (!run.sent) {
      run.expected = start_ring_step(run.step, r, run.pos, run.successor);
      run.sent = true;
    }
    if (run.expected > 0 && host_received(run.step, r) < run.expected) return;
    ++run.ring_step;
    run.sent = false;
  }
  run.finished = 1;
}

void ComputeCluster::check_ring_result(int step, int n) {
  const auto& sum = ring_buffer(step);
  result_.resize(sum.size());
  for (std::uint64_t j = 0; j < sum.size(); ++j) {
    float expected = 0;
    for (int s : config_.ring_order) expected += gradient_value(s, step, j);
    if (sum[j] != expected) ++mismatches_;
    result_[j] = sum[j] / static_cast<float>(n);
  }
  checks_ += sum.size();
  ring_data_.erase(step);
}

tlm::tlm_sync_enum ComputeCluster::nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase&,
                                                   sc_time&) {
  receive(trans);
  return tlm::TLM_COMPLETED;
}

void ComputeCluster::receive(tlm::tlm_generic_payload& trans) {
  const auto& chunk = chunk_of(trans);
  switch (chunk.kind) {
    // A credit or grant sent again (control retransmission) that changes nothing is no
    // progress: counting it kept the watchdog from ever seeing a credit deadlock.
    case ChunkKind::kCredit: {
      auto& window = windows_[{chunk.step, chunk.src_site}];
      if (chunk.credits > window.freed) {
        window.freed = chunk.credits;
        ++progress_count_;
      }
      break;
    }
    case ChunkKind::kGrant: {
      auto& window = windows_[{chunk.step, chunk.src_site}];
      if (window.granted != chunk.credits) {
        window.granted = chunk.credits;
        ++progress_count_;
      }
      break;
    }
    case ChunkKind::kAck:
      if (retransmitter_ && retransmitter_->ack(chunk.step, chunk.src_site, chunk.chunk)) {
        ++progress_count_;
        if (!config_.aggregation && config_.flow_control == FlowControl::kCredit)
          ++windows_[{chunk.step, chunk.src_site}].acked;
      }
      break;
    case ChunkKind::kRingSegment: {
      const std::uint64_t received = on_ring_chunk(chunk);
      if (ring_run_.active && chunk.step == ring_run_.step &&
          static_cast<int>(chunk.ring_step) == ring_run_.ring_step &&
          received >= ring_run_.expected)
        ring_advance();
      break;
    }
    case ChunkKind::kReady:
      on_ready(chunk);
      break;
    default:
      on_result(chunk);
  }
  trans.release();
  if (awaited_.holds()) EventCalendar::notify_now(progress_);
}

void ComputeCluster::note_result(int step) {
  const sc_time now = EventCalendar::now();
  if (noted_.step != step) {
    flush_noted();
    const auto it = result_times_.find(step);
    noted_ = it == result_times_.end() ? Noted{step, now, now}
                                       : Noted{step, it->second.first, it->second.second};
  }
  noted_.last = now;
}

void ComputeCluster::flush_noted() {
  if (noted_.step >= 0) result_times_[noted_.step] = {noted_.first, noted_.last};
}

// (first, last) result time of `step`; none before its first result.
std::optional<std::pair<sc_time, sc_time>> ComputeCluster::result_times(int step) const {
  if (noted_.step == step) return std::pair{noted_.first, noted_.last};
  const auto it = result_times_.find(step);
  if (it == result_times_.end()) return std::nullopt;
  return it->second;
}

// Tags are ring steps (2(n - 1) of them) or a point-to-point message's tag (0 or 1); a
// step's counts never move, so wait_host_chunks may await one.
std::uint64_t& ComputeCluster::host_received(int step, int tag) {
  if (host_receipts_.step != step) {
    auto& counts = host_received_[step];
    if (counts.empty()) counts.assign(std::max<std::size_t>(2, 2 * config_.ring_order.size()), 0);
    host_receipts_ = {step, counts.data()};
  }
  return host_receipts_.counts[tag];
}

// Loss recovery: a result (or passed-through contribution) received again is recognised
// and not counted again; if it came for a retransmission its sender is acknowledged again
// (its first acknowledgement may have been lost). A result nobody asked for is a double
// delivery. A passed-through contribution seen before is absorbed like the aggregator
// absorbs one: besides retransmissions, a tree rerouted after a link failure delivers the
// copies still on their way to its new branches again.
bool ComputeCluster::accept_once(const ChunkExtension& chunk) {
  const bool reduced = chunk.kind == ChunkKind::kReduced;
  const bool cached = receiving_.step == chunk.step;  // then not finished
  bool repeated = !cached && finished_steps_.count(chunk.step) != 0;
  if (!repeated && reduced) {
    const std::vector<int>* counts = receiving_.counts;
    if (!cached) {
      const auto it = received_.find(chunk.step);
      counts = it == received_.end() ? nullptr : &it->second;
    }
    repeated =
        counts != nullptr && !counts->empty() && (*counts)[chunk.chunk] >= chunk.group_size - 1;
  }
  if (!repeated && !reduced && config_.reliable)
    repeated = !passed_through_.insert({chunk.step, chunk.chunk, chunk.src_site}).second;
  const int ack_to = reduced ? chunk.requester : chunk.src_site;
  if (!repeated) {
    if (config_.reliable && !reduced) acknowledge(chunk.step, chunk.src_site, chunk.chunk);
    return true;
  }
  if (chunk.requester < 0 && !chunk.retransmission && (reduced || !config_.reliable)) {
    ++duplicates_;
    return false;
  }
  ++recognised_duplicates_;
  if (config_.reliable && ack_to >= 0) acknowledge(chunk.step, ack_to, chunk.chunk);
  return false;
}

ComputeCluster::Receiving& ComputeCluster::receiving(int step) {
  if (receiving_.step != step) receiving_ = {step, &received_[step], &complete_chunks_[step]};
  return receiving_;
}

void ComputeCluster::on_result(const ChunkExtension& chunk) {
  note_result(chunk.step);
  if (!accept_once(chunk)) return;
  const Receiving& receipts = receiving(chunk.step);
  auto& counts = *receipts.counts;
  if (counts.empty()) counts.assign(num_chunks(config_.gradient_bytes), 0);
  const int expected = chunk.group_size - 1;
  if (counts[chunk.chunk] >= expected) {
    ++duplicates_;
    return;
  }
  counts[chunk.chunk] += chunk.contributions;
  if (config_.functional) accumulate_result(chunk);
  if (counts[chunk.chunk] < expected) return;
  ++*receipts.complete;
  ++accepted_results_;
  ++progress_count_;
  if (!config_.reliable || chunk.kind != ChunkKind::kReduced) return;
  for (int d : plan_of(chunk.step).group)
    if (d != config_.site) acknowledge(chunk.step, d, chunk.chunk);
}

void ComputeCluster::accumulate_result(const ChunkExtension& chunk) {
  auto& sum = reduced_sum_[chunk.step];
  if (sum.empty()) sum.assign(config_.gradient_bytes / 4, 0.0f);
  const std::uint64_t first = chunk.chunk * config_.chunk_bytes / 4;
  for (std::size_t k = 0; k < chunk.data->size(); ++k) sum[first + k] += (*chunk.data)[k];
  float expected_sum_error = 0;
  // Exactness check: a reduced chunk must equal the sum of the other members' inputs;
  // a passed-through contribution must equal its sender's input.
  const int period = static_cast<int>(config_.rounds.size());
  const auto& group = config_.rounds[chunk.step % period].group;
  for (std::size_t k = 0; k < chunk.data->size(); ++k) {
    float expected = 0;
    if (chunk.kind == ChunkKind::kReduced) {
      for (int s : group)
        if (s != config_.site) expected += gradient_value(s, chunk.step, first + k);
    } else {
      expected = gradient_value(chunk.src_site, chunk.step, first + k);
    }
    expected_sum_error += std::abs((*chunk.data)[k] - expected);
  }
  checks_ += chunk.chunks;  // in chunks: a burst's result checks its K chunks
  if (expected_sum_error != 0) mismatches_ += chunk.chunks;
}

std::uint64_t ComputeCluster::on_ring_chunk(const ChunkExtension& chunk) {
  note_result(chunk.step);
  const auto received = ++host_received(chunk.step, static_cast<int>(chunk.ring_step));
  if (ring_progress_ != nullptr && received == num_chunks(ring_split_.bytes(chunk.segment)))
    ring_progress_->mark(config_.site, chunk.step, static_cast<int>(chunk.ring_step));
  if (!functional_) return received;
  const int n = static_cast<int>(config_.ring_order.size());
  const std::uint64_t first =
      (ring_split_.offset_bytes(chunk.segment) + chunk.chunk * config_.chunk_bytes) / 4;
  const bool reduce_scatter = static_cast<int>(chunk.ring_step) < n - 1;
  auto& values = ring_buffer(chunk.step);
  for (std::size_t k = 0; k < chunk.data->size(); ++k) {
    if (reduce_scatter) {
      values[first + k] += (*chunk.data)[k];
    } else {
      values[first + k] = (*chunk.data)[k];
    }
  }
  return received;
}

void RingProgress::mark(int site, int step, int ring_step) {
  sites_[{step, ring_step}].push_back(site);
  EventCalendar::notify_now(changed_);
}

bool RingProgress::received(int site, int step, int ring_step) const {
  const auto it = sites_.find({step, ring_step});
  return it != sites_.end() &&
         std::find(it->second.begin(), it->second.end(), site) != it->second.end();
}

int RingProgress::count(int step, int ring_step) const {
  const auto it = sites_.find({step, ring_step});
  return it == sites_.end() ? 0 : static_cast<int>(it->second.size());
}

void ComputeCluster::run_host_collective(int step, StepRecord& record) {
  if (config_.ring) {
    record.communicated = config_.ring_order.size() > 1;
    run_ring(step);
  } else if (config_.collective == Collective::kParameterServer) {
    record.communicated = config_.ring_order.size() > 1;
    run_parameter_server(step);
  } else if (config_.collective == Collective::kUnicastAllToAll) {
    record.communicated = config_.ring_order.size() > 1;
    run_unicast_all_to_all(step);
  } else {
    const auto& plan = config_.rounds[record.round];
    record.communicated = plan.group.size() > 1;
    if (record.communicated) run_transfer(step, plan);
  }
}

// After ring step r's segment arrived: `sendrecv` also waits until the successor has this
// site's step-r segment, `barrier` until every site has its step-r segment.
void ComputeCluster::wait_ring_step_rule(int step, int ring_step, int successor) {
  const auto& progress = config_.ring_progress;
  const int n = static_cast<int>(config_.ring_order.size());
  if (config_.ring_step_rule == RingStepRule::kSendRecv) {
    while (!progress->received(successor, step, ring_step)) wait(progress->changed());
  } else if (config_.ring_step_rule == RingStepRule::kBarrier) {
    while (progress->count(step, ring_step) < n) wait(progress->changed());
  }
}

// Hands `streams_each` messages of G bytes per receiver to the access link, chunk by chunk
// round-robin over the messages (the flows share the link fairly), and notes when the
// access link has serialized the last one (it carries only this site's sends).
void ComputeCluster::send_streams(int step, int tag, const std::vector<int>& receivers,
                                  int streams_each) {
  const std::uint64_t n = num_chunks(config_.gradient_bytes);
  std::uint64_t serialization_ps = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t bytes =
        std::min(config_.chunk_bytes, config_.gradient_bytes - i * config_.chunk_bytes);
    for (int d : receivers) {
      for (int m = 0; m < streams_each; ++m) {
        auto& trans = host_chunk(step, tag, d, m, i, bytes);
        const std::uint64_t wire = transaction_wire_bytes(chunk_of(trans), config_.access.mtu_bytes,
                                                          config_.access.header_bytes);
        serialization_ps += aggnet::serialization_ps(wire, config_.access.bandwidth_bps);
        emit(trans);
      }
    }
  }
  transmit_complete_ = EventCalendar::now() + ps_time(serialization_ps);
}

void ComputeCluster::wait_host_chunks(int step, int tag, std::uint64_t expected) {
  const std::uint64_t& received = host_received(step, tag);
  awaited_ = {&received, expected};
  while (received < expected) wait(progress_);
  awaited_ = {};
}

// One-way transfer: the sender's step ends when its access link has sent the last chunk
// (transmit complete), the receiver's when the last chunk has arrived.
void ComputeCluster::run_transfer(int step, const ClusterRoundPlan& plan) {
  const int sender = plan.group.at(0), receiver = plan.group.at(1);
  const auto messages = static_cast<std::uint64_t>(config_.messages);
  if (config_.site == sender) {
    send_streams(step, 0, {receiver}, config_.messages);
    wait(transmit_complete_ - EventCalendar::now());
  } else {
    wait_host_chunks(step, 0, messages * num_chunks(config_.gradient_bytes));
  }
}

// Parameter server (ring_order = [server, workers...]): every worker sends G to the
// server (tag 0); once the server has all of them it sends G to every worker (tag 1,
// one unicast copy each, chunks round-robin over the workers).
void ComputeCluster::run_parameter_server(int step) {
  const auto& order = config_.ring_order;
  const int server = order.front();
  const std::uint64_t n = num_chunks(config_.gradient_bytes);
  if (config_.site == server) {
    const std::vector<int> workers(order.begin() + 1, order.end());
    wait_host_chunks(step, 0, n * workers.size());
    send_streams(step, 1, workers, 1);
    wait(transmit_complete_ - EventCalendar::now());
  } else if (std::find(order.begin(), order.end(), config_.site) != order.end()) {
    send_streams(step, 0, {server}, 1);
    wait_host_chunks(step, 1, n);
  }
}

// Unicast all-to-all (ring_order = the members): one unicast copy of G to every other
// member, chunks round-robin over the receivers starting at this site's successor in
// member order (MPI's pairwise order, so no receiver is everyone's first); done once every
// other member's G has arrived and this site's last chunk has left its access link.
void ComputeCluster::run_unicast_all_to_all(int step) {
  const auto& members = config_.ring_order;
  const auto me = std::find(members.begin(), members.end(), config_.site);
  if (me == members.end()) return;
  const int n = static_cast<int>(members.size());
  const int pos = static_cast<int>(me - members.begin());
  std::vector<int> receivers;
  for (int k = 1; k < n; ++k) receivers.push_back(members[mod(pos + k, n)]);
  send_streams(step, 0, receivers, 1);
  wait_host_chunks(step, 0, num_chunks(config_.gradient_bytes) * receivers.size());
  if (transmit_complete_ > EventCalendar::now()) wait(transmit_complete_ - EventCalendar::now());
}

std::vector<Statistic> ComputeCluster::statistics() const {
  double busy = 0, total = 0;
  for (const auto& r : records_) {
    total += (r.end - r.start).to_seconds();
    busy += (r.send_start - r.start).to_seconds();
  }
  std::vector<Statistic> out = {
      {"steps", static_cast<double>(records_.size()), "steps completed"},
      {"compute_time_s", busy, "time spent computing"},
      {"idle_time_s", total - busy, "time waiting for communication (GPU idle)"},
      {"idle_fraction", total > 0 ? (total - busy) / total : 0.0, "idle / total"},
      {"offset_wait_s", offset_wait_total_.to_seconds(),
       "time idled after the agreed start before the first chunk (arrival-aligned sends)"},
      {"functional_checks", static_cast<double>(checks_), "results checked (functional)"},
      {"functional_mismatches", static_cast<double>(mismatches_), "results not exact"},
      {"duplicate_results", static_cast<double>(duplicates_),
       "reduced chunks delivered twice without a retransmission asking for it"}};
  out.push_back({"recognised_duplicates", static_cast<double>(recognised_duplicates_),
                 "results received again for a retransmission, recognised (loss recovery)"});
  out.push_back(
      {"acks_sent", static_cast<double>(acks_sent_), "acknowledgements sent (loss recovery)"});
  out.push_back({"control_retransmissions", static_cast<double>(control_retransmissions_),
                 "ready and grant messages repeated after a timeout (loss recovery)"});
  const auto retransmissions = Retransmitter::statistics(
      retransmitter_ ? retransmitter_->counters() : Retransmitter::Counters{});
  out.insert(out.end(), retransmissions.begin(), retransmissions.end());
  return out;
}

}  // namespace aggnet
