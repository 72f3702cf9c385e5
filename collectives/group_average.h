// Group average (the intelligent WAN), a group round (group_round.h): in each round a site
// sends its gradient in chunks to its group (once on its multicast tree, or one unicast
// copy per member), paced or clocked by credits, optionally after an aligned start (ready
// messages) and at a send offset per receiver, and waits for one reduced chunk per chunk
// index (or, when the FPGAs do not aggregate, every other member's contribution).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collectives/group_round.h"

namespace aggnet {

class GroupAverageProgram : public GroupRoundProgram {
 public:
  explicit GroupAverageProgram(ProgramContext context);
  Verdict on_arrival(const Arrival& arrival, std::uint64_t now_ps, Actions& out) override;
  void on_grant(int src, int step, std::uint32_t credits) override;
  void on_credit(int src, int step, std::uint32_t freed) override;
  void on_acknowledged(int src, int step) override;
  void on_tree_rerouted(int tree_id, std::uint64_t now_ps, Actions& out) override;

 private:
  enum class Phase { kOffset, kCredits, kPaced, kResults };
  enum class Waiting { kNothing, kCredits, kResults };
  void begin_sending(std::uint64_t now_ps, Actions& out) override;
  void resume_sending(std::uint64_t now_ps, bool retry, Actions& out) override;
  std::string sending_waits_for(const std::vector<std::string>& codes) const override;
  void set_waiting(Waiting what, std::uint64_t now_ps);
  void begin_credit(std::uint64_t now_ps, Actions& out);
  void send_credit_clocked(std::uint64_t now_ps, Actions& out);
  void begin_paced(std::uint64_t now_ps, Actions& out);
  void begin_results(std::uint64_t now_ps, Actions& out);
  void await_results(std::uint64_t now_ps, Actions& out);
  void finish_round(std::uint64_t now_ps);
  void send_contribution(int dst, Actions& out);
  void regrant(Actions& out);
  void send_grants(bool repeat, Actions& out);
  bool credits_missing();
  bool accept_once(const Arrival& arrival, Actions& out, Verdict& verdict);
  void acknowledge(int dst, int step, std::uint32_t chunk, Actions& out);

  // Receipts of the step whose results arrive now: looked up once per step, not once per
  // result (map entries stay put until erased). Only a step not yet finished is cached.
  struct Receiving {
    int step = -1;
    std::vector<int>* counts = nullptr;
    std::uint64_t* complete = nullptr;
  };
  Receiving& receiving(int step);
  // Credit windows, (step, receiver) -> grant (-1: not yet), slots freed so far (cumulative
  // credit messages), credits spent. Without aggregation a receiver acknowledges a
  // contribution as it passes it on, which is when it frees its credit: `acked` (first
  // acknowledgements) repairs a lost credit.
  struct Window {
    std::int64_t granted = -1, freed = 0, spent = 0, acked = 0;
    bool open() const { return granted >= 0 && granted + std::max(freed, acked) - spent > 0; }
  };

  alignas(64) Receiving receiving_;
  // The round in progress.
  Phase phase_ = Phase::kOffset;
  std::uint64_t next_chunk_ = 0;
  bool credit_wait_open_ = false;
  Waiting wait_what_ = Waiting::kNothing;
  int wait_step_ = 0;
  // Per step (arrivals may come for steps this site has not started).
  std::map<int, std::vector<int>> received_;  // step -> results per chunk index
  std::map<int, std::uint64_t> complete_chunks_;
  std::set<int> finished_steps_;
  std::map<std::pair<int, int>, Window> windows_;
  std::set<std::tuple<int, std::uint32_t, int>> passed_through_;  // (step, chunk, sender)
};

}  // namespace aggnet
