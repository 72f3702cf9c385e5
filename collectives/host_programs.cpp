#include "collectives/host_programs.h"

#include <algorithm>
#include <utility>

namespace aggnet {

namespace {
int mod(int a, int n) { return ((a % n) + n) % n; }
std::size_t tags_of(const ProgramContext& context) {
  return std::max<std::size_t>(2, 2 * context.order.size());
}
int position(const ProgramContext& context) {
  const auto me = std::find(context.order.begin(), context.order.end(), context.site);
  return me == context.order.end() ? -1 : static_cast<int>(me - context.order.begin());
}
}  // namespace

std::uint64_t& HostReceipts::at(int step, int tag) {
  if (cached_step_ != step) {
    auto& counts = counts_[step];
    if (counts.empty()) counts.assign(tags_, 0);
    cached_step_ = step;
    cached_ = counts.data();
  }
  return cached_[tag];
}

std::uint64_t HostReceipts::peek(int step, int tag) const {
  if (cached_step_ == step) return cached_[tag];
  const auto it = counts_.find(step);
  return it == counts_.end() || it->second.empty() ? 0 : it->second[static_cast<std::size_t>(tag)];
}

void HostReceipts::erase(int step) {
  counts_.erase(step);
  if (cached_step_ == step) cached_step_ = -1;
}

RingProgram::RingProgram(ProgramContext context, Steps steps)
    : context_(std::move(context)), steps_(steps), receipts_(tags_of(context_)) {
  n_ = static_cast<int>(context_.order.size());
  counts_current_ = steps_.rule == RingStepRule::kReceive && !steps_.mark;
  if (n_ > 0 && context_.chunk_bytes > 0) {
    const RingSegmentSplit split(context_.gradient_bytes, static_cast<std::uint64_t>(n_));
    longer_segments_ = split.longer_segments();
    longer_chunks_ = num_chunks(split.bytes(0), context_.chunk_bytes);
    shorter_chunks_ = num_chunks(split.bytes(longer_segments_), context_.chunk_bytes);
  }
}

int RingProgram::send_segment(int pos, int r, int n) {
  return r < n - 1 ? mod(pos - r, n) : mod(pos + 1 - (r - (n - 1)), n);
}

int RingProgram::receive_segment(int pos, int r, int n) {
  return r < n - 1 ? mod(pos - 1 - r, n) : mod(pos - (r - (n - 1)), n);
}

void RingProgram::start(int step, std::uint64_t, Actions& out) {
  const int pos = position(context_);
  run_ = Run{};
  finished_ = 0;
  run_.step = step;
  if (n_ < 2 || pos < 0) return finish(out);
  run_.ring_step = steps_.begin;
  run_.end = steps_.end < 0 ? 2 * (n_ - 1) : steps_.end;
  run_.pos = pos;
  run_.successor = context_.order[static_cast<std::size_t>(mod(pos + 1, n_))];
  if (steps_.rule != RingStepRule::kReceive) return next_ring_step(out);
  // Receive rule: each ring step starts when the previous one's chunks are all in, at that
  // arrival (on_arrival), not when the issuer next runs.
  run_.active = true;
  run_.ahead = receipts_.holds(step);
  enter_ring_step(run_.ring_step);
  advance(out);
  if (!out.await(finished_, 1)) finish(out);
}

// Ring step r: sends its segment to the successor; returns the chunks it receives.
std::uint64_t RingProgram::start_ring_step(int r, Actions& out) {
  Send& s = out.send(Send::Kind::kSegment, run_.step);
  s.dst = run_.successor;
  s.tag = r;
  s.segment = send_segment(run_.pos, r, n_);
  return segment_chunks(receive_segment(run_.pos, r, n_));
}

// Sends the current ring step's segment, and moves on while a ring step's chunks are all in
// (they may have arrived before it was sent).
void RingProgram::advance(Actions& out) {
  while (run_.ring_step < run_.end) {
    const int r = run_.ring_step;
    if (!run_.sent) {
      run_.expected = start_ring_step(r, out);
      run_.sent = true;
    }
    const std::uint64_t received = counts_current_ ? run_.received : receipts_.at(run_.step, r);
    if (run_.expected > 0 && received < run_.expected) return;
    enter_ring_step(r + 1);
    run_.sent = false;
  }
  finished_ = 1;
}

// The sendrecv and barrier rules: a ring step after another, each waiting for its chunks,
// then for the rule.
void RingProgram::next_ring_step(Actions& out) {
  if (run_.ring_step >= run_.end) return finish(out);
  run_.expected = start_ring_step(run_.ring_step, out);
  run_.rule_wait = false;
  if (!out.await(receipts_.at(run_.step, run_.ring_step), run_.expected)) after_chunks(out);
}

// After ring step r's segment arrived: `sendrecv` also waits until the successor has this
// site's step-r segment, `barrier` until every site has its step-r segment. An empty
// segment (fewer floats than sites) brings no chunk to mark it received: it is marked here.
void RingProgram::after_chunks(Actions& out) {
  if (run_.expected == 0 && steps_.mark)
    out.send(Send::Kind::kMarkRingStep, run_.step).tag = run_.ring_step;
  run_.rule_wait = true;
  out.wait.kind = Wait::Kind::kRingRule;
  out.wait.site = steps_.rule == RingStepRule::kSendRecv ? run_.successor : -1;
  out.wait.step = run_.step;
  out.wait.ring_step = run_.ring_step;
}

void RingProgram::resume(std::uint64_t, bool, Actions& out) {
  if (steps_.rule == RingStepRule::kReceive) return finish(out);
  if (!run_.rule_wait) return after_chunks(out);
  ++run_.ring_step;
  next_ring_step(out);
}

void RingProgram::finish(Actions&) {
  run_.active = false;
  receipts_.erase(run_.step);
}

Verdict RingProgram::on_arrival(const Arrival& a, std::uint64_t, Actions& out) {
  const bool current = run_.active && a.step == run_.step && a.tag == run_.ring_step;
  std::uint64_t received = 0;
  if (current && counts_current_) {
    received = ++run_.received;
  } else {
    received = ++receipts_.at(a.step, a.tag);
    if (a.step == run_.step) run_.ahead = true;
  }
  if (steps_.mark && received == segment_chunks(a.segment))
    out.send(Send::Kind::kMarkRingStep, a.step).tag = a.tag;
  if (current && received >= run_.expected) advance(out);
  return Verdict::kAccepted;
}

TransferProgram::TransferProgram(ProgramContext context, Collective collective)
    : context_(std::move(context)), collective_(collective), receipts_(tags_of(context_)) {}

bool TransferProgram::communicates(int step) const {
  if (collective_ == Collective::kPointToPoint) return context_.plan_of(step).group.size() > 1;
  return context_.order.size() > 1;
}

void TransferProgram::start(int step, std::uint64_t, Actions& out) {
  step_ = step;
  next_ = Next::kDone;
  if (collective_ == Collective::kPointToPoint) return start_point_to_point(out);
  if (collective_ == Collective::kParameterServer) return start_parameter_server(out);
  start_unicast_all_to_all(out);
}

// One-way transfer: the sender's step ends when its access link has sent the last chunk
// (transmit complete), the receiver's when the last chunk has arrived.
void TransferProgram::start_point_to_point(Actions& out) {
  const auto& group = context_.plan_of(step_).group;
  if (group.size() <= 1) return finish(out);
  if (context_.site == group.at(0)) {
    streams(0, {group.at(1)}, context_.messages, out);
    return transmitted(true, out);
  }
  await(0, static_cast<std::uint64_t>(context_.messages) * context_.chunks(), Next::kDone, out);
}

// Parameter server: every worker sends G to the server (tag 0); once the server has all of
// them it sends G to every worker (tag 1, one unicast copy each, chunks round-robin).
void TransferProgram::start_parameter_server(Actions& out) {
  const auto& order = context_.order;
  if (context_.site == order.front())
    return await(0, context_.chunks() * (order.size() - 1), Next::kServerSends, out);
  if (position(context_) < 0) return finish(out);
  streams(0, {order.front()}, 1, out);
  await(1, context_.chunks(), Next::kDone, out);
}

// Unicast all-to-all: one unicast copy of G to every other member, chunks round-robin over
// the receivers starting at this site's successor in member order (MPI's pairwise order, so
// no receiver is everyone's first); done once every other member's G has arrived and this
// site's last chunk has left its access link.
void TransferProgram::start_unicast_all_to_all(Actions& out) {
  const int pos = position(context_);
  if (pos < 0) return finish(out);
  const int n = static_cast<int>(context_.order.size());
  std::vector<int> receivers;
  for (int k = 1; k < n; ++k) receivers.push_back(context_.order[mod(pos + k, n)]);
  streams(0, receivers, 1, out);
  await(0, context_.chunks() * receivers.size(), Next::kTransmittedIfLater, out);
}

void TransferProgram::streams(int tag, std::vector<int> receivers, int each, Actions& out) {
  Send& s = out.send(Send::Kind::kStreams, step_);
  s.tag = tag;
  s.streams = each;
  out.receivers = std::move(receivers);
}

void TransferProgram::await(int tag, std::uint64_t expected, Next then, Actions& out) {
  next_ = then;
  if (!out.await(receipts_.at(step_, tag), expected)) resume(0, false, out);
}

void TransferProgram::transmitted(bool even_if_now, Actions& out) {
  next_ = Next::kDone;
  out.wait.kind = Wait::Kind::kTransmitted;
  out.wait.even_if_now = even_if_now;
}

void TransferProgram::resume(std::uint64_t, bool, Actions& out) {
  switch (next_) {
    case Next::kDone:
      return finish(out);
    case Next::kServerSends:
      streams(1, std::vector<int>(context_.order.begin() + 1, context_.order.end()), 1, out);
      return transmitted(true, out);
    case Next::kTransmitted:
      return transmitted(true, out);
    case Next::kTransmittedIfLater:
      return transmitted(false, out);
  }
}

void TransferProgram::finish(Actions& out) {
  receipts_.erase(step_);
  out.wait.kind = Wait::Kind::kDone;
}

Verdict TransferProgram::on_arrival(const Arrival& a, std::uint64_t, Actions&) {
  ++receipts_.at(a.step, a.tag);
  return Verdict::kAccepted;
}

}  // namespace aggnet
