// Reduction trees (in-network reduction): in each round a member sends each tree's chunks
// of its gradient to its own FPGA (dst = its site: up its access link into its switch's
// local port), which sums them with its children's partial sums and forwards one partial
// sum up the tree; the root's FPGA multicasts the complete sum back down. The member paces
// each tree's stream at the tree's interval from its send offset (after the aligned start,
// as group rounds), then waits for one result per chunk index of G holding every member.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "collectives/paced_schedule.h"
#include "collectives/program.h"

namespace aggnet {

class ReductionTreeProgram : public CollectiveProgram {
 public:
  explicit ReductionTreeProgram(ProgramContext context);
  bool communicates(int step) const override;
  void start(int step, std::uint64_t now_ps, Actions& out) override;
  void resume(std::uint64_t now_ps, bool retry, Actions& out) override;
  Verdict on_arrival(const Arrival& arrival, std::uint64_t now_ps, Actions& out) override;
  void on_ready(int src, int step, std::uint64_t stamp_ps, bool reply, Actions& out) override;
  std::string waiting_for(const std::vector<std::string>& codes) const override;
  std::uint64_t waiting_since_ps() const override { return wait_since_ps_; }
  std::uint64_t agreed_start_ps() const override { return agreed_ps_; }
  std::uint64_t first_send_ps() const override { return first_send_ps_; }

 private:
  enum class Phase { kReady, kAligned, kPaced, kResults };
  void await_ready(std::uint64_t now_ps, Actions& out);
  void begin_sending(std::uint64_t now_ps, Actions& out);
  void await_results(std::uint64_t now_ps, Actions& out);
  int others() const { return static_cast<int>(plan_->group.size()) - 1; }

  ProgramContext context_;
  std::uint64_t chunks_ = 0;  // chunks of G
  PacedSchedule paced_;
  int step_ = 0;
  const ClusterRoundPlan* plan_ = nullptr;
  Phase phase_ = Phase::kReady;
  bool waiting_ = false;
  std::uint64_t agreed_ps_ = kNever, first_send_ps_ = kNever, wait_since_ps_ = 0;
  // Per step (results and ready messages may come for steps not yet started).
  std::map<int, std::vector<int>> received_;  // step -> members summed per chunk index
  std::map<int, std::uint64_t> complete_;     // step -> chunk indices complete
  std::map<int, std::vector<int>> ready_from_;
  std::map<int, std::uint64_t> ready_latest_ps_, own_ready_ps_;
};

}  // namespace aggnet
