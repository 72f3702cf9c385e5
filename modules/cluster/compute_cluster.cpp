#include "modules/cluster/compute_cluster.h"

#include <algorithm>
#include <utility>

#include "collectives/registry.h"
#include "model/network_math.h"
#include "modules/core/event_calendar.h"
#include "modules/core/time.h"

namespace aggnet {

using sc_core::sc_time;

namespace {
constexpr int kIdle = 0, kComputing = 1, kCommunicating = 2, kOffsetWait = 3;

// An arrival as its program sees it: the fields of `chunk` a program reads.
Arrival arrival_of(const ChunkExtension& chunk, Arrival::Kind kind) {
  Arrival a;
  a.kind = kind;
  a.src = chunk.src_site;
  a.step = chunk.step;
  a.chunk = chunk.chunk;
  a.group_size = chunk.group_size;
  a.contributions = chunk.contributions;
  a.requester = chunk.requester;
  a.retransmission = chunk.retransmission;
  a.tag = static_cast<int>(chunk.ring_step);
  a.segment = static_cast<int>(chunk.segment);
  return a;
}
}  // namespace

ComputeCluster::ComputeCluster(sc_core::sc_module_name name, ComputeClusterConfig config,
                               ChunkPool& pool)
    : sc_module(name),
      out("out"),
      in("in"),
      config_(std::move(config)),
      pool_(pool),
      chunk_bytes_(config_.chunk_bytes),
      burst_chunk_bytes_(config_.burst_chunk_bytes),
      site_(config_.site) {
  in.bind(*this);
  const auto n = static_cast<std::uint64_t>(config_.order.size());
  if (config_.ring && n > 0) ring_split_ = RingSegmentSplit(config_.gradient_bytes, n);
  if (config_.ring) ring_progress_ = config_.ring_progress.get();
  const RingProgram::Steps ring_steps{config_.ring_steps_begin, config_.ring_steps_end,
                                      config_.ring_step_rule, ring_progress_ != nullptr};
  program_ = make_program(config_.collective, config_.ring, config_, ring_steps);
  if (config_.functional) {
    functional_ = std::make_unique<FunctionalValues>(config_.site, config_.gradient_bytes,
                                                     config_.chunk_bytes, config_.order);
    values_ = functional_.get();
  }
  if (config_.reliable) {
    retransmitter_ = std::make_unique<Retransmitter>(
        "retransmitter",
        [this](int step, int dst, std::uint32_t chunk) { return resend(step, dst, chunk); },
        config_.retransmit_backoff_max);
  }
  SC_HAS_PROCESS(ComputeCluster);
  SC_THREAD(run);
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
    if (values_) values_->begin_step(step);
    transmit_complete_ = sc_core::SC_ZERO_TIME;
    record.communicated = program_->communicates(step);
    drive(step);
    if (values_) finish_functional(step, record.communicated);
    close_record(record);
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
        if (program_->agreed_start_ps() != kNever)
          agreed_start_ = ps_time(program_->agreed_start_ps());
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
        config_.ring_progress->wait_until(next.site, next.step, next.ring_step,
                                          static_cast<int>(config_.order.size()));
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

void ComputeCluster::execute(Actions& actions) {
  for (const Send& send : actions.sends) execute(send, actions.receivers);
}

void ComputeCluster::execute(const Send& send, const std::vector<int>& receivers) {
  switch (send.kind) {
    case Send::Kind::kContribution:
      return send_contribution(send.step, plan_of(send.step), send.dst, send.chunk,
                               send.reduction_tree);
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
                      static_cast<std::uint32_t>(next->chunk), next->reduction_tree);
    schedule.advance(*next);
  }
  if (next != nullptr) {
    EventCalendar::current().schedule(*this, ps_time(next->next_ps));
    return;
  }
  paced_ = nullptr;
  EventCalendar::notify_now(paced_done_);
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
      on_acknowledgement(chunk);
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
  const Arrival arrival = arrival_of(
      chunk, chunk.kind == ChunkKind::kReduced ? Arrival::Kind::kResult : Arrival::Kind::kPassedOn);
  const Verdict verdict = program_->on_arrival(arrival, now_ps(), events_);
  if (verdict != Verdict::kAccepted || values_ == nullptr) return;
  if (config_.collective == Collective::kReductionTree)
    return values_->add_tree_result(chunk.step, chunk.chunk, chunk.chunks, *chunk.data,
                                    plan_of(chunk.step).group);
  values_->add_result(chunk.kind == ChunkKind::kReduced, chunk.src_site, chunk.step, chunk.chunk,
                      chunk.chunks, *chunk.data, plan_of(chunk.step).group);
}

void ComputeCluster::on_host_chunk(const ChunkExtension& chunk) {
  note_result(chunk.step);
  if (values_) {
    const std::uint64_t offset_bytes = ring_split_.offset_bytes(chunk.segment);
    const bool reduce_scatter =
        static_cast<int>(chunk.ring_step) < static_cast<int>(config_.order.size()) - 1;
    values_->add_ring_chunk(chunk.step, (offset_bytes + chunk.chunk * config_.chunk_bytes) / 4,
                            reduce_scatter, *chunk.data);
  }
  program_->on_arrival(arrival_of(chunk, Arrival::Kind::kHostChunk), now_ps(), events_);
}

void ComputeCluster::tree_rerouted(int tree_id) {
  program_->on_tree_rerouted(tree_id, now_ps(), events_);
  execute(events_);
  events_.sends.clear();
}

const ClusterRoundPlan& ComputeCluster::plan_of(int step) const {
  return config_.rounds[static_cast<std::size_t>(step) % config_.rounds.size()];
}

}  // namespace aggnet
