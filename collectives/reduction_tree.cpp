#include "collectives/reduction_tree.h"

#include <algorithm>
#include <utility>

namespace aggnet {

ReductionTreeProgram::ReductionTreeProgram(ProgramContext context)
    : context_(std::move(context)), chunks_(context_.chunks()) {}

bool ReductionTreeProgram::communicates(int step) const {
  return context_.plan_of(step).group.size() > 1;
}

void ReductionTreeProgram::start(int step, std::uint64_t now_ps, Actions& out) {
  step_ = step;
  plan_ = &context_.plan_of(step);
  agreed_ps_ = first_send_ps_ = kNever;
  if (plan_->group.size() <= 1) return;
  if (!plan_->aligned_start) return begin_sending(now_ps, out);
  // Aligned start: a ready message to every other member (unicast: the trees' multicast
  // runs only from the roots).
  own_ready_ps_[step] = now_ps;
  for (int d : plan_->group) {
    if (d == context_.site) continue;
    Send& s = out.send(Send::Kind::kReady, step);
    s.dst = d;
    s.stamp_ps = now_ps;
  }
  waiting_ = true;
  wait_since_ps_ = now_ps;
  phase_ = Phase::kReady;
  await_ready(now_ps, out);
}

void ReductionTreeProgram::await_ready(std::uint64_t now_ps, Actions& out) {
  if (static_cast<int>(ready_from_[step_].size()) < others()) {
    out.wait.kind = Wait::Kind::kAwait;
    return;
  }
  waiting_ = false;
  const std::uint64_t start =
      std::max(ready_latest_ps_[step_], own_ready_ps_.at(step_)) + plan_->start_delay_ps;
  ready_from_.erase(step_);
  ready_latest_ps_.erase(step_);
  own_ready_ps_.erase(step_);
  if (start <= now_ps) return begin_sending(now_ps, out);
  phase_ = Phase::kAligned;
  out.wait.kind = Wait::Kind::kUntil;
  out.wait.at_ps = start;
}

void ReductionTreeProgram::on_ready(int src, int step, std::uint64_t stamp_ps, bool, Actions&) {
  auto& from = ready_from_[step];
  if (std::find(from.begin(), from.end(), src) != from.end()) return;
  from.push_back(src);
  ready_latest_ps_[step] = std::max(ready_latest_ps_[step], stamp_ps);
  ++counters_.progress;
}

// One paced stream per tree: its chunk range, at its interval, from its offset.
void ReductionTreeProgram::begin_sending(std::uint64_t now_ps, Actions& out) {
  agreed_ps_ = now_ps;
  paced_.reset(step_, chunks_, 0);
  std::uint64_t first = kNever;
  for (const TreeStream& t : context_.trees) {
    if (t.first_chunk >= t.end_chunk) continue;
    paced_.add_stream(context_.site, now_ps + t.offset_ps, t.first_chunk, t.end_chunk,
                      t.interval_ps, t.tree);
    first = std::min(first, now_ps + t.offset_ps);
  }
  first_send_ps_ = first;
  if (paced_.next() == nullptr) {
    first_send_ps_ = kNever;
    return resume(now_ps, false, out);  // no chunk to send: straight to the results
  }
  phase_ = Phase::kPaced;
  out.wait.kind = Wait::Kind::kPaced;
  out.wait.paced = &paced_;
}

void ReductionTreeProgram::resume(std::uint64_t now_ps, bool, Actions& out) {
  switch (phase_) {
    case Phase::kReady:
      return await_ready(now_ps, out);
    case Phase::kAligned:
      return begin_sending(now_ps, out);
    case Phase::kPaced:
      phase_ = Phase::kResults;
      waiting_ = true;
      wait_since_ps_ = now_ps;
      return await_results(now_ps, out);
    case Phase::kResults:
      return await_results(now_ps, out);
  }
}

void ReductionTreeProgram::await_results(std::uint64_t now_ps, Actions& out) {
  if (out.await(complete_[step_], chunks_)) return;
  waiting_ = false;
  wait_since_ps_ = now_ps;
  received_.erase(step_);
  complete_.erase(step_);
  counters_.expected_results += chunks_;
  ++counters_.progress;
}

// A result holds `contributions` members (every member, the site's own included, once the
// root has summed them all); a chunk index is complete when they add up to the group.
Verdict ReductionTreeProgram::on_arrival(const Arrival& arrival, std::uint64_t, Actions&) {
  if (arrival.kind != Arrival::Kind::kResult) return Verdict::kRecognised;
  auto& counts = received_[arrival.step];
  if (counts.empty()) counts.assign(chunks_, 0);
  const int members = arrival.group_size;
  if (arrival.chunk >= counts.size() || counts[arrival.chunk] >= members) {
    ++counters_.duplicates;
    return Verdict::kDuplicate;
  }
  counts[arrival.chunk] += arrival.contributions;
  if (counts[arrival.chunk] < members) return Verdict::kAccepted;
  ++complete_[arrival.step];
  ++counters_.accepted_results;
  ++counters_.progress;
  return Verdict::kAccepted;
}

std::string ReductionTreeProgram::waiting_for(const std::vector<std::string>& codes) const {
  if (!waiting_ || plan_ == nullptr) return "";
  std::string missing;
  const std::string of_step = " of step " + std::to_string(step_);
  if (phase_ == Phase::kReady) {
    const auto it = ready_from_.find(step_);
    for (int d : plan_->group) {
      const bool heard = it != ready_from_.end() &&
                         std::find(it->second.begin(), it->second.end(), d) != it->second.end();
      if (d != context_.site && !heard)
        missing += (missing.empty() ? "" : ",") + codes.at(static_cast<std::size_t>(d));
    }
    return "ready messages" + of_step + " from " + missing;
  }
  const auto it = complete_.find(step_);
  const std::uint64_t done = it == complete_.end() ? 0 : it->second;
  return "reduction-tree results" + of_step + " (" + std::to_string(done) + " of " +
         std::to_string(chunks_) + " chunks summed over every member at the roots)";
}

}  // namespace aggnet
