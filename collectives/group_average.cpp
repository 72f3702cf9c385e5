#include "collectives/group_average.h"

#include <algorithm>
#include <utility>

namespace aggnet {

GroupAverageProgram::GroupAverageProgram(ProgramContext context)
    : GroupRoundProgram(std::move(context), /*ready_on_tree=*/true) {}

void GroupAverageProgram::set_waiting(Waiting what, std::uint64_t now_ps) {
  wait_what_ = what;
  wait_step_ = step_;
  wait_since_ps_ = now_ps;
}

void GroupAverageProgram::resume_sending(std::uint64_t now_ps, bool retry, Actions& out) {
  if (retry && (phase_ == Phase::kCredits || phase_ == Phase::kResults)) {
    retry_at_ps_ = now_ps + plan_->retransmit_timeout_ps;
    regrant(out);
  }
  switch (phase_) {
    case Phase::kOffset:
      first_send_ps_ = now_ps;
      next_chunk_ = 0;
      return send_credit_clocked(now_ps, out);
    case Phase::kCredits:
      return send_credit_clocked(now_ps, out);
    case Phase::kPaced:
      return begin_results(now_ps, out);
    case Phase::kResults:
      return await_results(now_ps, out);
  }
}

void GroupAverageProgram::begin_sending(std::uint64_t now_ps, Actions& out) {
  if (context_.credit) return begin_credit(now_ps, out);
  begin_paced(now_ps, out);
}

// Credit: the stream starts at the earliest send offset, then every chunk waits for a
// credit from each receiver. Receivers grant their whole window when they enter the round
// (their slots are all free then: the previous round's results are complete).
void GroupAverageProgram::begin_credit(std::uint64_t now_ps, Actions& out) {
  std::uint64_t offset = kNever;
  for (int d : receivers_) {
    offset = std::min<std::uint64_t>(offset, plan_->send_offset_ps.to(d));
  }
  windows_.erase(windows_.begin(), windows_.lower_bound({step_, -1}));  // finished rounds
  send_grants(false, out);
  phase_ = Phase::kOffset;
  if (offset == 0) return resume_sending(now_ps, false, out);
  out.wait.kind = Wait::Kind::kOffset;
  out.wait.at_ps = now_ps + offset;
}

bool GroupAverageProgram::credits_missing() {
  return std::any_of(receivers_.begin(), receivers_.end(), [&](int d) {
    return !windows_[{step_, d}].open();
  });
}

// A sender may emit a chunk only with a credit from every receiver for this step: its
// grant plus the slots it has freed so far, less the credits spent.
void GroupAverageProgram::send_credit_clocked(std::uint64_t now_ps, Actions& out) {
  for (; next_chunk_ < chunks_; ++next_chunk_) {
    if (!credit_wait_open_) {
      set_waiting(Waiting::kCredits, now_ps);
      retry_at_ps_ = now_ps + plan_->retransmit_timeout_ps;
      credit_wait_open_ = true;
    }
    if (credits_missing()) {
      phase_ = Phase::kCredits;
      out.wait.kind = Wait::Kind::kAwait;
      out.wait.retry_at_ps = retry_at();
      return;
    }
    set_waiting(Waiting::kNothing, now_ps);
    credit_wait_open_ = false;
    for (int d : receivers_) ++windows_[{step_, d}].spent;
    if (context_.multicast) {
      send_contribution(-1, out);
    } else {
      for (int d : receivers_) send_contribution(d, out);
    }
  }
  begin_results(now_ps, out);
}

void GroupAverageProgram::send_contribution(int dst, Actions& out) {
  Send& s = out.send(Send::Kind::kContribution, step_);
  s.dst = dst;
  s.chunk = static_cast<std::uint32_t>(next_chunk_);
}

// Pacing: one stream per multicast tree (or per unicast copy), emitted by the issuer.
void GroupAverageProgram::begin_paced(std::uint64_t now_ps, Actions& out) {
  auto offset = [&](int d) { return plan_->send_offset_ps.to(d); };
  paced_.reset(step_, chunks_, plan_->pacing_interval_ps);
  if (context_.multicast) {
    paced_.add_stream(-1, now_ps + offset(receivers_.front()));
  } else {
    for (int d : receivers_) paced_.add_stream(d, now_ps + offset(d));
  }
  if (paced_.next() == nullptr) return begin_results(now_ps, out);
  phase_ = Phase::kPaced;
  out.wait.kind = Wait::Kind::kPaced;
  out.wait.paced = &paced_;
}

void GroupAverageProgram::begin_results(std::uint64_t now_ps, Actions& out) {
  set_waiting(Waiting::kResults, now_ps);
  retry_at_ps_ = now_ps + plan_->retransmit_timeout_ps;
  phase_ = Phase::kResults;
  await_results(now_ps, out);
}

void GroupAverageProgram::await_results(std::uint64_t now_ps, Actions& out) {
  if (!out.await(complete_chunks_[step_], chunks_, retry_at())) finish_round(now_ps);
}

void GroupAverageProgram::finish_round(std::uint64_t now_ps) {
  set_waiting(Waiting::kNothing, now_ps);
  if (receiving_.step == step_) receiving_ = {};
  received_.erase(step_);
  complete_chunks_.erase(step_);
  finished_steps_.insert(step_);
  passed_through_.erase(passed_through_.lower_bound({step_, 0, -1}),
                        passed_through_.lower_bound({step_ + 1, 0, -1}));
  counters_.expected_results += chunks_;
  ++counters_.progress;
}

// Loss recovery: grants are repeated every timeout until a first result shows every sender
// had them (with aggregation a reduced chunk needs all of them); without aggregation a
// passed-on contribution shows it for its sender only, and they are repeated until the
// round is over.
void GroupAverageProgram::regrant(Actions& out) {
  if (!context_.credit) return;
  const bool results = receiving_.step == step_ || received_.count(step_) != 0;
  if (context_.aggregation && results) return;
  send_grants(true, out);
  counters_.control_retransmissions += receivers_.size();
}

// This site's whole window to every sender.
void GroupAverageProgram::send_grants(bool repeat, Actions& out) {
  for (int d : receivers_) {
    Send& s = out.send(Send::Kind::kGrant, step_);
    s.dst = d;
    s.credits = static_cast<std::uint32_t>(plan_->own_slots);
    s.repeat = repeat;
  }
}

// A credit or grant sent again (control retransmission) that changes nothing is no
// progress: counting it kept the watchdog from ever seeing a credit deadlock.
void GroupAverageProgram::on_grant(int src, int step, std::uint32_t credits) {
  auto& window = windows_[{step, src}];
  if (window.granted == credits) return;
  window.granted = credits;
  ++counters_.progress;
}

void GroupAverageProgram::on_credit(int src, int step, std::uint32_t freed) {
  auto& window = windows_[{step, src}];
  if (freed <= window.freed) return;
  window.freed = freed;
  ++counters_.progress;
}

void GroupAverageProgram::on_acknowledged(int src, int step) {
  if (!context_.aggregation && context_.credit) ++windows_[{step, src}].acked;
}

// The ready message of the last round announced may still be on its way on the old tree,
// whose branches a member may have left (copies are in flight for at most start_delay): it
// is sent again on the new tree, as a reply (members that heard the first do not answer).
void GroupAverageProgram::on_tree_rerouted(int tree_id, std::uint64_t now_ps, Actions& out) {
  if (own_ready_ps_.empty()) return;
  const auto& [step, sent_ps] = *own_ready_ps_.rbegin();
  const ClusterRoundPlan& plan = context_.plan_of(step);
  if (plan.tree_id != tree_id || now_ps >= sent_ps + plan.start_delay_ps) return;
  send_ready(-1, plan.tree_id, true, true, step, out);
  ++counters_.control_retransmissions;
}

GroupAverageProgram::Receiving& GroupAverageProgram::receiving(int step) {
  if (receiving_.step != step) receiving_ = {step, &received_[step], &complete_chunks_[step]};
  return receiving_;
}

Verdict GroupAverageProgram::on_arrival(const Arrival& arrival, std::uint64_t, Actions& out) {
  Verdict verdict = Verdict::kAccepted;
  if (!accept_once(arrival, out, verdict)) return verdict;
  const Receiving& receipts = receiving(arrival.step);
  auto& counts = *receipts.counts;
  if (counts.empty()) counts.assign(chunks_, 0);
  const int expected = arrival.group_size - 1;
  if (counts[arrival.chunk] >= expected) {
    ++counters_.duplicates;
    return Verdict::kDuplicate;
  }
  counts[arrival.chunk] += arrival.contributions;
  if (counts[arrival.chunk] < expected) return Verdict::kAccepted;
  ++*receipts.complete;
  ++counters_.accepted_results;
  ++counters_.progress;
  return Verdict::kAccepted;  // a result's contributions were acknowledged by the FPGA
}

void GroupAverageProgram::acknowledge(int dst, int step, std::uint32_t chunk, Actions& out) {
  Send& s = out.send(Send::Kind::kAck, step);
  s.dst = dst;
  s.chunk = chunk;
}

// Loss recovery: a result (or passed-through contribution) received again is recognised
// and not counted again; if it came for a retransmission its sender is acknowledged again
// (its first acknowledgement may have been lost). A result nobody asked for is a double
// delivery. A passed-through contribution seen before is absorbed like the aggregator
// absorbs one: besides retransmissions, a tree rerouted after a link failure delivers the
// copies still on their way to its new branches again.
bool GroupAverageProgram::accept_once(const Arrival& a, Actions& out, Verdict& verdict) {
  const bool reduced = a.kind == Arrival::Kind::kResult;
  const bool cached = receiving_.step == a.step;  // then not finished
  bool repeated = !cached && finished_steps_.count(a.step) != 0;
  if (!repeated && reduced) {
    const std::vector<int>* counts = receiving_.counts;
    if (!cached) {
      const auto it = received_.find(a.step);
      counts = it == received_.end() ? nullptr : &it->second;
    }
    repeated = counts != nullptr && !counts->empty() && (*counts)[a.chunk] >= a.group_size - 1;
  }
  if (!repeated && !reduced && context_.reliable)
    repeated = !passed_through_.insert({a.step, a.chunk, a.src}).second;
  const int ack_to = reduced ? a.requester : a.src;
  if (!repeated) {
    if (context_.reliable && !reduced) acknowledge(a.src, a.step, a.chunk, out);
    return true;
  }
  if (a.requester < 0 && !a.retransmission && (reduced || !context_.reliable)) {
    ++counters_.duplicates;
    verdict = Verdict::kDuplicate;
    return false;
  }
  ++counters_.recognised_duplicates;
  verdict = Verdict::kRecognised;
  if (context_.reliable && ack_to >= 0) acknowledge(ack_to, a.step, a.chunk, out);
  return false;
}

std::string GroupAverageProgram::sending_waits_for(const std::vector<std::string>& codes) const {
  const int step = wait_step_;
  const std::string of_step = " of step " + std::to_string(step);
  std::vector<int> missing, others;
  for (int d : context_.plan_of(step).group)
    if (d != context_.site) others.push_back(d);
  switch (wait_what_) {
    case Waiting::kNothing:
      return "";
    case Waiting::kCredits:
      for (int d : others) {
        const auto it = windows_.find({step, d});
        if (it == windows_.end() || !it->second.open()) missing.push_back(d);
      }
      return "credits" + of_step + " from " + names(missing, codes);
    case Waiting::kResults: {
      const auto it = complete_chunks_.find(step);
      const std::uint64_t done = it == complete_chunks_.end() ? 0 : it->second;
      return "results" + of_step + " (" + std::to_string(done) + " of " + std::to_string(chunks_) +
             " chunks complete; contributions from " + names(others, codes) + ")";
    }
  }
  return "";
}

}  // namespace aggnet
