// Group rounds: the members of a round's group (ClusterRoundPlan::group) start it together,
// at once or after the aligned start (a ready message to every other member, time-stamped
// on synchronised clocks; the round starts at the last ready time + the plan's start delay,
// an instant every member computes alike and has reached once all messages could have
// arrived), then send their chunks and wait for the results. GroupAverageProgram and
// ReductionTreeProgram are group rounds: each says how its round sends (begin_sending) and
// goes on after a wait it asked for (resume_sending), and what it waits for then.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "collectives/paced_schedule.h"
#include "collectives/program.h"

namespace aggnet {

class GroupRoundProgram : public CollectiveProgram {
 public:
  bool communicates(int step) const override;
  void start(int step, std::uint64_t now_ps, Actions& out) final;
  void resume(std::uint64_t now_ps, bool retry, Actions& out) final;
  /// Loss recovery: a member that hears a repeated ready message answers with its own
  /// (`reply`, never answered), in case its first one was the one lost.
  void on_ready(int src, int step, std::uint64_t stamp_ps, bool reply, Actions& out) override;
  std::string waiting_for(const std::vector<std::string>& codes) const final;
  std::uint64_t waiting_since_ps() const override { return wait_since_ps_; }
  std::uint64_t agreed_start_ps() const override { return agreed_ps_; }
  std::uint64_t first_send_ps() const override { return first_send_ps_; }

 protected:
  /// `ready_on_tree`: with multicast, the ready message goes once on the round's multicast
  /// tree (else one to each other member).
  GroupRoundProgram(ProgramContext context, bool ready_on_tree);
  /// The round starts (agreed_start_ps() is now): its first sends and wait.
  virtual void begin_sending(std::uint64_t now_ps, Actions& out) = 0;
  /// A wait begin_sending (or this) asked for has ended; `retry`: at its retry time.
  virtual void resume_sending(std::uint64_t now_ps, bool retry, Actions& out) = 0;
  /// What the round waits for after its start ("" when nothing on the network).
  virtual std::string sending_waits_for(const std::vector<std::string>& codes) const = 0;

  std::uint64_t retry_at() const { return context_.reliable ? retry_at_ps_ : kNever; }
  void send_ready(int dst, int tree_id, bool reply, bool repeat, int step, Actions& out);
  /// Drops `step`'s ready messages (a program that never answers a late one).
  void forget_ready(int step);
  /// "a,c": the sites' codes.
  static std::string names(const std::vector<int>& sites, const std::vector<std::string>& codes);

  ProgramContext context_;
  std::uint64_t chunks_ = 0;  // chunks of G
  PacedSchedule paced_;
  // The round in progress.
  int step_ = 0;
  const ClusterRoundPlan* plan_ = nullptr;
  std::vector<int> receivers_;  // the other members
  std::uint64_t retry_at_ps_ = 0;
  std::uint64_t agreed_ps_ = kNever, first_send_ps_ = kNever, wait_since_ps_ = 0;
  std::map<int, std::uint64_t> own_ready_ps_;  // step -> this site's ready stamp

 private:
  enum class Aligning { kReady, kUntilStart, kStarted };
  // Members whose ready message arrived: a bit per site (site s: bit s % 64 of word
  // s / 64), so that each of a large group's messages is heard in O(1).
  struct ReadyState {
    std::vector<std::uint64_t> from;
    std::size_t count = 0;        // bits set in `from`
    std::uint64_t latest_ps = 0;  // latest ready stamp among them
    bool has(int site) const {
      const auto s = static_cast<std::size_t>(site);
      return site >= 0 && s / 64 < from.size() && (from[s / 64] >> (s % 64) & 1u) != 0;
    }
    void add(int site);    // precondition: site >= 0, not has(site)
    bool started = false;  // this site has passed the agreed start
  };
  void await_ready(std::uint64_t now_ps, Actions& out);
  void resend_ready(std::uint64_t now_ps, Actions& out);
  void agree(std::uint64_t now_ps, Actions& out);
  bool heard_from(int step, int site) const;

  bool ready_on_tree_;
  Aligning aligning_ = Aligning::kStarted;
  std::map<int, ReadyState> ready_;  // step -> ready messages heard
};

}  // namespace aggnet
