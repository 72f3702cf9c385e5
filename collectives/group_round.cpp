#include "collectives/group_round.h"

#include <algorithm>
#include <utility>

namespace aggnet {

GroupRoundProgram::GroupRoundProgram(ProgramContext context, bool ready_on_tree)
    : context_(std::move(context)),
      chunks_(context_.chunks()),
      ready_on_tree_(ready_on_tree && context_.multicast) {}

bool GroupRoundProgram::communicates(int step) const {
  return context_.plan_of(step).group.size() > 1;
}

void GroupRoundProgram::start(int step, std::uint64_t now_ps, Actions& out) {
  step_ = step;
  plan_ = &context_.plan_of(step);
  agreed_ps_ = first_send_ps_ = kNever;
  if (plan_->group.size() <= 1) return;  // sits the round out (out.wait: done)
  receivers_.clear();
  for (int s : plan_->group)
    if (s != context_.site) receivers_.push_back(s);
  if (!plan_->aligned_start) return agree(now_ps, out);
  // Aligned start: tell every other member we are ready (time-stamped on synchronised
  // clocks); on the multicast tree once, as the round's data goes.
  own_ready_ps_[step] = now_ps;
  if (ready_on_tree_) {
    send_ready(-1, plan_->tree_id, false, false, step, out);
  } else {
    for (int d : receivers_) send_ready(d, -1, false, false, step, out);
  }
  wait_since_ps_ = now_ps;
  retry_at_ps_ = now_ps + plan_->retransmit_timeout_ps;
  aligning_ = Aligning::kReady;
  await_ready(now_ps, out);
}

void GroupRoundProgram::resume(std::uint64_t now_ps, bool retry, Actions& out) {
  switch (aligning_) {
    case Aligning::kReady:
      if (retry) resend_ready(now_ps, out);
      return await_ready(now_ps, out);
    case Aligning::kUntilStart:
      return agree(now_ps, out);
    case Aligning::kStarted:
      return resume_sending(now_ps, retry, out);
  }
}

void GroupRoundProgram::agree(std::uint64_t now_ps, Actions& out) {
  aligning_ = Aligning::kStarted;
  agreed_ps_ = now_ps;
  begin_sending(now_ps, out);
}

void GroupRoundProgram::send_ready(int dst, int tree_id, bool reply, bool repeat, int step,
                                   Actions& out) {
  Send& s = out.send(Send::Kind::kReady, step);
  s.dst = dst;
  s.tree_id = tree_id;
  s.stamp_ps = own_ready_ps_.at(step);
  s.reply = reply;
  s.repeat = repeat;
}

bool GroupRoundProgram::heard_from(int step, int site) const {
  const auto it = ready_.find(step);
  return it != ready_.end() && it->second.has(site);
}

void GroupRoundProgram::ReadyState::add(int site) {
  const auto s = static_cast<std::size_t>(site);
  if (s / 64 >= from.size()) from.resize(s / 64 + 1, 0);
  from[s / 64] |= std::uint64_t{1} << (s % 64);
  ++count;
}

// Once every member's ready message is in: start at last ready + start_delay, a time every
// member computes alike and has reached once all messages could have arrived.
void GroupRoundProgram::await_ready(std::uint64_t now_ps, Actions& out) {
  auto& ready = ready_[step_];
  if (ready.count < receivers_.size()) {
    out.wait.kind = Wait::Kind::kAwait;
    out.wait.retry_at_ps = retry_at();
    return;
  }
  ready.started = true;
  const std::uint64_t start =
      std::max(ready.latest_ps, own_ready_ps_.at(step_)) + plan_->start_delay_ps;
  if (start <= now_ps) return agree(now_ps, out);
  aligning_ = Aligning::kUntilStart;
  out.wait.kind = Wait::Kind::kUntil;
  out.wait.at_ps = start;
}

// Loss recovery: a member not heard from gets the message again every timeout.
void GroupRoundProgram::resend_ready(std::uint64_t now_ps, Actions& out) {
  retry_at_ps_ = now_ps + plan_->retransmit_timeout_ps;
  for (int d : receivers_) {
    if (heard_from(step_, d)) continue;
    send_ready(d, -1, false, true, step_, out);
    ++counters_.control_retransmissions;
  }
}

void GroupRoundProgram::forget_ready(int step) {
  ready_.erase(step);
  own_ready_ps_.erase(step);
}

void GroupRoundProgram::on_ready(int src, int step, std::uint64_t stamp_ps, bool reply,
                                 Actions& out) {
  auto& ready = ready_[step];
  const bool known = ready.has(src);
  if (!known && src >= 0) {
    ready.add(src);
    ready.latest_ps = std::max(ready.latest_ps, stamp_ps);
    ++counters_.progress;
  }
  const bool repeated = known || ready.started;
  if (context_.reliable && repeated && !reply && own_ready_ps_.count(step))
    send_ready(src, -1, true, false, step, out);
}

std::string GroupRoundProgram::names(const std::vector<int>& sites,
                                     const std::vector<std::string>& codes) {
  std::string out;
  for (int s : sites) out += (out.empty() ? "" : ",") + codes.at(static_cast<std::size_t>(s));
  return out;
}

std::string GroupRoundProgram::waiting_for(const std::vector<std::string>& codes) const {
  if (aligning_ != Aligning::kReady) return sending_waits_for(codes);
  std::vector<int> missing;
  for (int d : receivers_)
    if (!heard_from(step_, d)) missing.push_back(d);
  return "ready messages of step " + std::to_string(step_) + " from " + names(missing, codes);
}

}  // namespace aggnet
