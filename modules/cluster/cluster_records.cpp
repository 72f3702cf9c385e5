// What a ComputeCluster records: its steps' times (results first and last), functional
// mode's end of a step, its statistics, and what it waits for.
#include <algorithm>

#include "modules/cluster/compute_cluster.h"

namespace aggnet {

using sc_core::sc_time;

// The step's round is over: its record is complete.
void ComputeCluster::close_record(StepRecord& record) {
  const int step = record.step;
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

// Functional mode, at the end of a step: the group's average, or the ring's sum checked.
void ComputeCluster::finish_functional(int step, bool communicated) {
  const auto& order = config_.order;
  if (config_.ring) {
    if (order.size() >= 2 && std::find(order.begin(), order.end(), config_.site) != order.end())
      values_->finish_ring_step(step);
  } else if (config_.collective == Collective::kReductionTree && communicated) {
    values_->finish_tree_step(step, plan_of(step).group.size());
  } else if (config_.collective == Collective::kGroupAverage && communicated) {
    values_->finish_group_step(step, plan_of(step).group.size());
  }
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
      {"functional_checks", static_cast<double>(functional_checks()),
       "results checked (functional)"},
      {"functional_mismatches", static_cast<double>(functional_mismatches()), "results not exact"},
      {"duplicate_results", static_cast<double>(program_->counters().duplicates),
       "reduced chunks delivered twice without a retransmission asking for it"}};
  out.push_back({"recognised_duplicates",
                 static_cast<double>(program_->counters().recognised_duplicates),
                 "results received again for a retransmission, recognised (loss recovery)"});
  out.push_back(
      {"acks_sent", static_cast<double>(acks_sent_), "acknowledgements sent (loss recovery)"});
  out.push_back({"control_retransmissions",
                 static_cast<double>(program_->counters().control_retransmissions),
                 "ready and grant messages repeated after a timeout (loss recovery)"});
  const auto retransmissions = Retransmitter::statistics(
      retransmitter_ ? retransmitter_->counters() : Retransmitter::Counters{});
  out.insert(out.end(), retransmissions.begin(), retransmissions.end());
  return out;
}

std::string ComputeCluster::waiting_for(const std::vector<std::string>& codes) const {
  return program_->waiting_for(codes);
}

std::vector<int> ComputeCluster::current_group() const {
  if (config_.ring || config_.rounds.empty()) return config_.order;
  return plan_of(step_).group;
}

}  // namespace aggnet
