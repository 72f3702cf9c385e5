// Reduction trees (in-network reduction), a group round (group_round.h): in each round a member
// sends each tree's chunks of its gradient to its own FPGA (dst = its site: up its access link into
// its switch's local port), which sums them with its children's partial sums and forwards one
// partial sum up the tree; the root's FPGA multicasts the complete sum back down. The member paces
// each tree's stream at the tree's interval from its send offset (after the aligned start,
// as group rounds), then waits for one result per chunk index of G holding every member.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "collectives/group_round.h"

namespace aggnet {

class ReductionTreeProgram : public GroupRoundProgram {
 public:
  explicit ReductionTreeProgram(ProgramContext context);
  Verdict on_arrival(const Arrival& arrival, std::uint64_t now_ps, Actions& out) override;

 private:
  enum class Phase { kPaced, kResults };
  void begin_sending(std::uint64_t now_ps, Actions& out) override;
  void resume_sending(std::uint64_t now_ps, bool retry, Actions& out) override;
  std::string sending_waits_for(const std::vector<std::string>& codes) const override;
  void await_results(std::uint64_t now_ps, Actions& out);

  Phase phase_ = Phase::kPaced;
  bool waiting_ = false;  // for the results
  // Per step (results may come for steps not yet started).
  std::map<int, std::vector<int>> received_;  // step -> members summed per chunk index
  std::map<int, std::uint64_t> complete_;     // step -> chunk indices complete
};

}  // namespace aggnet
