#include "modules/cluster/compute_cluster.h"

#include <algorithm>
#include <cmath>

#include "collectives/registry.h"
#include "model/network_math.h"
#include "modules/core/event_calendar.h"
#include "modules/core/messages.h"
#include "modules/core/time.h"

namespace aggnet {

using sc_core::sc_time;

namespace {
constexpr int kIdle = 0, kComputing = 1, kCommunicating = 2, kOffsetWait = 3;

ProgramContext context_of(const ComputeClusterConfig& c) {
  ProgramContext p;
  p.site = c.site;
  p.gradient_bytes = c.gradient_bytes;
  p.chunk_bytes = c.chunk_bytes;
  p.multicast = c.multicast;
  p.aggregation = c.aggregation;
  p.credit = c.flow_control == FlowControl::kCredit;
  p.reliable = c.reliable;
  p.messages = c.messages;
  p.rounds = c.rounds;
  p.order = c.ring_order;
  return p;
}
}  // namespace

ComputeCluster::ComputeCluster(sc_core::sc_module_name name, const ComputeClusterConfig& config,
                               ChunkPool& pool)
    : sc_module(name), out("out"), in("in"), config_(config), pool_(pool) {
  in.bind(*this);
  const auto n = static_cast<std::uint64_t>(config_.ring_order.size());
  if (config_.ring && n > 0) ring_split_ = RingSegmentSplit(config_.gradient_bytes, n);
  if (config_.ring) ring_progress_ = config_.ring_progress.get();
  const RingProgram::Steps ring_steps{config_.ring_steps_begin, config_.ring_steps_end,
                                      config_.ring_step_rule, ring_progress_ != nullptr};
  program_ = make_program(config_.collective, config_.ring, context_of(config_), ring_steps);
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
    if (functional_) data_ = initial_gradient(step);
    transmit_complete_ = sc_core::SC_ZERO_TIME;
    record.communicated = program_->communicates(step);
    drive(step);
    if (functional_) finish_functional(step, record.communicated);
    resent_values_.erase(resent_values_.lower_bound({step, 0}),
                         resent_values_.lower_bound({step + 1, 0}));
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
    records_.push_back(record);
  }
  state_ = kIdle;
  finished_ = true;
}

// The issuer: starts the step's round in the program, then carries out each answer (its
// sends, then its wait) and resumes the program, until the round is complete.
void ComputeCluster::drive(int step) {
  actions_.clear();
  program_->start(step, now_ps(), actions_);
  for (;;) {
    execute(actions_);
    const Wait next = actions_.wait;
    actions_.clear();
    bool retry = false;
    switch (next.kind) {
      case Wait::Kind::kDone:
        if (program_->agreed_start_ps() != kNever) agreed_start_ = ps_time(program_->agreed_start_ps());
        if (program_->first_send_ps() != kNever) first_send_ = ps_time(program_->first_send_ps());
        return;
      case Wait::Kind::kUntil:
        wait(ps_time(next.at_ps) - EventCalendar::now());
        break;
      case Wait::Kind::kOffset:  // idles until its send offset (VCD state 3)
        state_ = kOffsetWait;
        wait(ps_time(next.at_ps) - EventCalendar::now());
        state_ = kCommunicating;
        break;
      case Wait::Kind::kAwait:
        retry = await(next);
        break;
      case Wait::Kind::kPaced:
        run_paced(*next.paced);
        break;
      case Wait::Kind::kTransmitted:
        if (next.even_if_now || transmit_complete_ > EventCalendar::now())
          wait(transmit_complete_ - EventCalendar::now());
        break;
      case Wait::Kind::kRingRule:
        wait_ring_rule(next);
        break;
    }
    program_->resume(now_ps(), retry, actions_);
  }
}

// Waits for progress (a received chunk wakes the thread only once the awaited count is
// reached), or until the retry time: true when it is time to repeat what is awaited.
bool ComputeCluster::await(const Wait& next) {
  awaited_ = {next.count, next.target};
  bool retry = false;
  if (next.retry_at_ps == kNever) {
    wait(progress_);
  } else {
    const sc_time at = ps_time(next.retry_at_ps);
    if (EventCalendar::now() < at) wait(at - EventCalendar::now(), progress_);
    retry = EventCalendar::now() >= at;
  }
  awaited_ = {};
  return retry;
}

void ComputeCluster::wait_ring_rule(const Wait& next) {
  const RingProgress& progress = *config_.ring_progress;
  const int n = static_cast<int>(config_.ring_order.size());
  if (next.site >= 0) {
    while (!progress.received(next.site, next.step, next.ring_step)) wait(progress.changed());
  } else {
    while (progress.count(next.step, next.ring_step) < n) wait(progress.changed());
  }
}

void ComputeCluster::execute(Actions& actions) {
  for (const Send& send : actions.sends) execute(send, actions.receivers);
}

void ComputeCluster::execute(const Send& send, const std::vector<int>& receivers) {
  switch (send.kind) {
    case Send::Kind::kContribution:
      return send_contribution(send.step, plan_of(send.step), send.dst, send.chunk);
    case Send::Kind::kReady:
      return send_control(send, ChunkKind::kReady);
    case Send::Kind::kGrant:
      return send_control(send, ChunkKind::kGrant);
    case Send::Kind::kAck:
      ++acks_sent_;
      return send_control(send, ChunkKind::kAck);
    case Send::Kind::kSegment:
      return send_segment(send.step, send.tag, send.dst, send.segment);
    case Send::Kind::kStreams:
      return send_streams(send.step, send.tag, receivers, send.streams);
    case Send::Kind::kMarkRingStep:
      return config_.ring_progress->mark(config_.site, send.step, send.tag);
  }
}

// Pacing: the calendar emits the streams' chunks (a method call each, not a thread switch);
// the thread waits for paced_done_.
void ComputeCluster::run_paced(PacedSchedule& schedule) {
  paced_ = &schedule;
  paced_plan_ = &plan_of(schedule.step());
  paced_first_ = true;
  const sc_time first = ps_time(schedule.next()->next_ps);
  if (first > EventCalendar::now()) state_ = kOffsetWait;
  EventCalendar::current().schedule(*this, first);
  awaited_ = Awaited::nothing();  // received chunks need not wake the thread meanwhile
  while (paced_ != nullptr) wait(paced_done_);
  awaited_ = {};
}

// Emits every paced chunk due now, in time order across the streams.
void ComputeCluster::on_calendar() {
  const sc_time now = EventCalendar::now();
  PacedSchedule& schedule = *paced_;
  const PacedSchedule::Stream* next = schedule.next();
  for (; next != nullptr && next->next_ps <= to_ps(now); next = schedule.next()) {
    if (paced_first_) first_send_ = now;
    paced_first_ = false;
    state_ = kCommunicating;
    send_contribution(schedule.step(), *paced_plan_, next->dst,
                      static_cast<std::uint32_t>(next->chunk));
    schedule.advance(*next);
  }
  if (next != nullptr) {
    EventCalendar::current().schedule(*this, ps_time(next->next_ps));
    return;
  }
  paced_ = nullptr;
  EventCalendar::notify_now(paced_done_);
}

void ComputeCluster::send_control(const Send& send, ChunkKind kind) {
  ControlMessage m;
  m.kind = kind;
  m.src_site = config_.site;
  m.dst_site = send.dst;
  m.step = send.step;
  m.bytes = config_.control_bytes;
  if (kind == ChunkKind::kReady) {
    m.tree_id = send.tree_id;
    m.stamp_ps = send.stamp_ps;
    m.reply = send.reply;
  } else if (kind == ChunkKind::kGrant) {
    m.credits = send.credits;
    m.stamp_ps = now_ps();
  } else {
    m.chunk = send.chunk;
  }
  emit(make_control(pool_, m));
}

// A data chunk of this site's, not yet sent.
tlm::tlm_generic_payload& ComputeCluster::data_chunk(ChunkKind kind, int step, int dst,
                                                     std::uint32_t index, std::uint64_t bytes) {
  auto& trans = pool_.allocate();
  auto& chunk = chunk_of(trans);
  chunk.kind = kind;
  chunk.src_site = config_.site;
  chunk.dst_site = dst;
  chunk.step = step;
  chunk.chunk = index;
  set_payload(chunk, bytes);
  return trans;
}

// Chunk i of this site's gradient, once on the multicast tree (dst -1) or as the unicast
// copy for dst; with loss recovery tracked per receiver until acknowledged.
void ComputeCluster::send_contribution(int step, const ClusterRoundPlan& plan, int dst,
                                       std::uint32_t i) {
  const std::uint64_t offset = std::uint64_t{i} * config_.chunk_bytes;
  const std::uint64_t bytes = std::min(config_.chunk_bytes, config_.gradient_bytes - offset);
  auto& trans = data_chunk(ChunkKind::kContribution, step, dst, i, bytes);
  auto& chunk = chunk_of(trans);
  chunk.tree_id = dst < 0 ? plan.tree_id : -1;
  chunk.group_size = static_cast<int>(plan.group.size());
  chunk.data = slice(data_, offset, bytes);
  emit(trans);
  if (!retransmitter_) return;
  const sc_time timeout = ps_time(plan.retransmit_timeout_ps);
  const sc_time departure = last_departure();
  for (int d : plan.group)
    if (d != config_.site && (dst < 0 || d == dst))
      retransmitter_->track(step, d, i, bytes, timeout, departure);
}

// A contribution's timer expired: the same chunk again, unicast to `dst` (the values are
// recomputed: a site's gradient of a step is a function of site, step and index).
sc_time ComputeCluster::resend(int step, int dst, std::uint32_t i) {
  const std::uint64_t offset = std::uint64_t{i} * config_.chunk_bytes;
  const std::uint64_t bytes = std::min(config_.chunk_bytes, config_.gradient_bytes - offset);
  auto& trans = data_chunk(ChunkKind::kContribution, step, dst, i, bytes);
  auto& chunk = chunk_of(trans);
  chunk.group_size = static_cast<int>(plan_of(step).group.size());
  chunk.retransmission = true;
  if (functional_) chunk.data = resent_values(step, i, offset, bytes);
  emit(trans);
  return last_departure();
}

void ComputeCluster::send_segment(int step, int ring_step, int dst, int segment) {
  const std::uint64_t offset_bytes = ring_split_.offset_bytes(static_cast<std::uint64_t>(segment));
  const std::uint64_t bytes = ring_split_.bytes(static_cast<std::uint64_t>(segment));
  const std::uint64_t n = num_chunks(bytes);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t off = i * config_.chunk_bytes;
    const std::uint64_t len = std::min(config_.chunk_bytes, bytes - off);
    auto& trans = data_chunk(ChunkKind::kRingSegment, step, dst, static_cast<std::uint32_t>(i), len);
    chunk_of(trans).ring_step = static_cast<std::uint32_t>(ring_step);
    chunk_of(trans).segment = static_cast<std::uint32_t>(segment);
    if (functional_) chunk_of(trans).data = slice(ring_buffer(step), offset_bytes + off, len);
    emit(trans);
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
        auto& trans = data_chunk(ChunkKind::kRingSegment, step, d, static_cast<std::uint32_t>(i), bytes);
        chunk_of(trans).ring_step = static_cast<std::uint32_t>(tag);
        chunk_of(trans).segment = static_cast<std::uint32_t>(m);
        const std::uint64_t wire = transaction_wire_bytes(chunk_of(trans), config_.access.mtu_bytes,
                                                          config_.access.header_bytes);
        serialization_ps += aggnet::serialization_ps(wire, config_.access.bandwidth_bps);
        emit(trans);
      }
    }
  }
  transmit_complete_ = EventCalendar::now() + ps_time(serialization_ps);
}

tlm::tlm_sync_enum ComputeCluster::nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase&,
                                                   sc_time&) {
  receive(trans);
  return tlm::TLM_COMPLETED;
}

// Every arrival goes to the program; what it sends in answer leaves before the arrival's
// transaction returns to the pool.
void ComputeCluster::receive(tlm::tlm_generic_payload& trans) {
  const auto& chunk = chunk_of(trans);
  switch (chunk.kind) {
    case ChunkKind::kCredit:
      program_->on_credit(chunk.src_site, chunk.step, chunk.credits);
      break;
    case ChunkKind::kGrant:
      program_->on_grant(chunk.src_site, chunk.step, chunk.credits);
      break;
    case ChunkKind::kAck:
      if (retransmitter_ && retransmitter_->ack(chunk.step, chunk.src_site, chunk.chunk)) {
        ++acknowledged_;
        program_->on_acknowledged(chunk.src_site, chunk.step);
      }
      break;
    case ChunkKind::kRingSegment:
      on_host_chunk(chunk);
      break;
    case ChunkKind::kReady:
      program_->on_ready(chunk.src_site, chunk.step, chunk.stamp_ps, chunk.reply, events_);
      break;
    default:
      on_result(chunk);
  }
  if (!events_.sends.empty()) {
    execute(events_);
    events_.sends.clear();
  }
  trans.release();
  if (awaited_.holds()) EventCalendar::notify_now(progress_);
}

void ComputeCluster::on_result(const ChunkExtension& chunk) {
  note_result(chunk.step);
  Arrival arrival;
  arrival.kind = chunk.kind == ChunkKind::kReduced ? Arrival::Kind::kResult
                                                   : Arrival::Kind::kPassedOn;
  arrival.src = chunk.src_site;
  arrival.step = chunk.step;
  arrival.chunk = chunk.chunk;
  arrival.group_size = chunk.group_size;
  arrival.contributions = chunk.contributions;
  arrival.requester = chunk.requester;
  arrival.retransmission = chunk.retransmission;
  const Verdict verdict = program_->on_arrival(arrival, now_ps(), events_);
  if (verdict == Verdict::kAccepted && functional_) accumulate_result(chunk);
}

void ComputeCluster::on_host_chunk(const ChunkExtension& chunk) {
  note_result(chunk.step);
  if (functional_) accumulate_ring_chunk(chunk);
  Arrival arrival;
  arrival.kind = Arrival::Kind::kHostChunk;
  arrival.src = chunk.src_site;
  arrival.step = chunk.step;
  arrival.chunk = chunk.chunk;
  arrival.tag = static_cast<int>(chunk.ring_step);
  arrival.segment = static_cast<int>(chunk.segment);
  program_->on_arrival(arrival, now_ps(), events_);
}

void ComputeCluster::tree_rerouted(int tree_id) {
  program_->on_tree_rerouted(tree_id, now_ps(), events_);
  execute(events_);
  events_.sends.clear();
}

std::string ComputeCluster::waiting_for(const std::vector<std::string>& codes) const {
  return program_->waiting_for(codes);
}

std::vector<int> ComputeCluster::current_group() const {
  if (config_.ring || config_.rounds.empty()) return config_.ring_order;
  return plan_of(step_).group;
}

const ClusterRoundPlan& ComputeCluster::plan_of(int step) const {
  return config_.rounds[static_cast<std::size_t>(step) % config_.rounds.size()];
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

// Functional mode: the values travel with the chunks and every result is checked.
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
  if (!functional_) return nullptr;
  auto begin = source.begin() + static_cast<std::ptrdiff_t>(offset_bytes / 4);
  return std::make_shared<std::vector<float>>(begin,
                                              begin + static_cast<std::ptrdiff_t>(bytes / 4));
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

void ComputeCluster::accumulate_result(const ChunkExtension& chunk) {
  auto& sum = reduced_sum_[chunk.step];
  if (sum.empty()) sum.assign(config_.gradient_bytes / 4, 0.0f);
  const std::uint64_t first = chunk.chunk * config_.chunk_bytes / 4;
  for (std::size_t k = 0; k < chunk.data->size(); ++k) sum[first + k] += (*chunk.data)[k];
  float expected_sum_error = 0;
  // Exactness check: a reduced chunk must equal the sum of the other members' inputs;
  // a passed-through contribution must equal its sender's input.
  const auto& group = plan_of(chunk.step).group;
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

void ComputeCluster::accumulate_ring_chunk(const ChunkExtension& chunk) {
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
}

// Functional mode, at the end of a step: the group's average, or the ring's sum checked.
void ComputeCluster::finish_functional(int step, bool communicated) {
  const auto& order = config_.ring_order;
  const int n = static_cast<int>(order.size());
  if (config_.ring) {
    if (n >= 2 && std::find(order.begin(), order.end(), config_.site) != order.end())
      check_ring_result(step, n);
  } else if (config_.collective == Collective::kGroupAverage && communicated) {
    average_result(step, plan_of(step));
  }
}

// This site's result = (own gradient + the others' sum) / |group|.
void ComputeCluster::average_result(int step, const ClusterRoundPlan& plan) {
  std::vector<float> averaged(data_.size());
  const float members = static_cast<float>(plan.group.size());
  for (std::size_t j = 0; j < data_.size(); ++j)
    averaged[j] = (data_[j] + reduced_sum_[step][j]) / members;
  result_ = std::move(averaged);
  reduced_sum_.erase(step);
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
      {"duplicate_results", static_cast<double>(program_->counters().duplicates),
       "reduced chunks delivered twice without a retransmission asking for it"}};
  out.push_back({"recognised_duplicates", static_cast<double>(program_->counters().recognised_duplicates),
                 "results received again for a retransmission, recognised (loss recovery)"});
  out.push_back(
      {"acks_sent", static_cast<double>(acks_sent_), "acknowledgements sent (loss recovery)"});
  out.push_back({"control_retransmissions", static_cast<double>(program_->counters().control_retransmissions),
                 "ready and grant messages repeated after a timeout (loss recovery)"});
  const auto retransmissions = Retransmitter::statistics(
      retransmitter_ ? retransmitter_->counters() : Retransmitter::Counters{});
  out.insert(out.end(), retransmissions.begin(), retransmissions.end());
  return out;
}

}  // namespace aggnet
