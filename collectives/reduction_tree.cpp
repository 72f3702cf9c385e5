#include "collectives/reduction_tree.h"

#include <algorithm>
#include <utility>

namespace aggnet {

// The ready messages go one to each other member: the trees' multicast runs only from the
// roots.
ReductionTreeProgram::ReductionTreeProgram(ProgramContext context)
    : GroupRoundProgram(std::move(context), /*ready_on_tree=*/false) {}

// One paced stream per tree: its chunk range, at its interval, from its offset.
void ReductionTreeProgram::begin_sending(std::uint64_t now_ps, Actions& out) {
  forget_ready(step_);
  paced_.reset(step_, chunks_, 0);
  std::uint64_t first = kNever;
  for (const TreeStream& t : context_.trees) {
    if (t.first_chunk >= t.end_chunk) continue;
    paced_.add_stream(context_.site, now_ps + t.offset_ps, t.first_chunk, t.end_chunk,
                      t.interval_ps, t.tree);
    first = std::min(first, now_ps + t.offset_ps);
  }
  first_send_ps_ = first;
  phase_ = Phase::kPaced;
  if (paced_.next() == nullptr) {
    first_send_ps_ = kNever;
    return resume_sending(now_ps, false, out);  // no chunk to send: straight to the results
  }
  out.wait.kind = Wait::Kind::kPaced;
  out.wait.paced = &paced_;
}

void ReductionTreeProgram::resume_sending(std::uint64_t now_ps, bool, Actions& out) {
  switch (phase_) {
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

std::string ReductionTreeProgram::sending_waits_for(const std::vector<std::string>&) const {
  if (!waiting_) return "";
  const auto it = complete_.find(step_);
  const std::uint64_t done = it == complete_.end() ? 0 : it->second;
  return "reduction-tree results of step " + std::to_string(step_) + " (" + std::to_string(done) +
         " of " + std::to_string(chunks_) + " chunks summed over every member at the roots)";
}

}  // namespace aggnet
