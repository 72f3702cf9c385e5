// Collective programs: what one site sends in a round, and when, as plain C++.
//
// A program sees the round begin, the messages that reach its site (ready, grant, credit,
// acknowledgement, a result or a host chunk) and the end of what it waits for (an
// instant, a count, a retry time); each time it answers with Actions: messages to send now,
// and what to wait for next. The SystemC issuer (modules/cluster/compute_cluster.h) builds
// and sends the messages and does the waiting; loss recovery's timers (Retransmitter) and
// functional mode's values stay with it. Programs know nothing of SystemC: the unit tests
// (tests/collectives) drive them with hand-made events and instants.
// docs/architecture.md, "Collective programs", says how to add one.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace aggnet {

/// Per receiver: when a site starts the stream that receiver gets, after the agreed start.
/// A flat map sorted by receiver (an all-to-all of 1,000 sites gives each of its senders
/// 999 of them, a std::map node each before), shared by its copies (the cluster's config
/// and its program's context): it does not change once made.
class SendOffsets {
 public:
  using Entry = std::pair<int, std::uint64_t>;
  SendOffsets() = default;
  /// As a std::map keeps them: by receiver, the first of a repeated receiver.
  explicit SendOffsets(std::vector<Entry> entries);
  SendOffsets(std::initializer_list<Entry> entries) : SendOffsets(std::vector<Entry>(entries)) {}
  /// The offset of the stream toward `receiver`; 0 for a receiver without one.
  std::uint64_t to(int receiver) const;
  bool empty() const { return !entries_ || entries_->empty(); }

 private:
  std::shared_ptr<const std::vector<Entry>> entries_;
};

/// What one site does in one round of the schedule period (group rounds).
struct ClusterRoundPlan {
  std::vector<int> group;  ///< members including this site; size <= 1: sits the round out
  int tree_id = -1;        ///< multicast group table key of this site's sends
  std::uint64_t pacing_interval_ps = 0;  ///< pacing: time between chunk emissions
  std::uint64_t own_slots = 0;  ///< credit: this site's slots, granted to each sender per round
  bool aligned_start = false;   ///< exchange ready messages, start at the agreed time
  std::uint64_t start_delay_ps = 0;  ///< agreed start = last ready time + this
  /// Per receiver: when this site starts the stream that receiver gets, after the agreed
  /// start (arrival-aligned sends). Multicast: one stream, the same offset for all.
  SendOffsets send_offset_ps;
  /// Loss recovery: a contribution (or ready / grant message) not acknowledged this long
  /// after it was sent is sent again.
  std::uint64_t retransmit_timeout_ps = 0;
};

/// One tree of a reduction forest as a member sends it (Collective::kReductionTree): its
/// chunks [first_chunk, end_chunk) of G, one every interval_ps (0: back to back), from
/// offset_ps after the agreed start, each marked with the tree's key.
struct TreeStream {
  int tree = 0;  ///< the chunks' reduction_tree key (the tree's index in the forest)
  std::uint64_t first_chunk = 0, end_chunk = 0;
  std::uint64_t interval_ps = 0;
  std::uint64_t offset_ps = 0;
};

constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

/// A message a program asks its issuer to send now.
struct Send {
  enum class Kind : std::uint8_t {
    kContribution,  ///< chunk `chunk` of this site's gradient (dst -1: on the round's tree)
    kReady,         ///< ready message with stamp_ps (dst -1: on tree_id)
    kGrant,         ///< credit window `credits`
    kAck,           ///< acknowledgement of (step, chunk)
    kSegment,       ///< ring segment `segment` as ring step `tag`'s chunks
    kStreams,       ///< `streams` messages of G per receiver (Actions::receivers), tag `tag`
    kMarkRingStep,  ///< this site has its ring step `tag` segment (no message)
  };
  Kind kind = Kind::kContribution;
  int dst = -1;
  int tree_id = -1;
  int step = 0;
  std::uint32_t chunk = 0;
  std::uint32_t credits = 1;
  std::uint64_t stamp_ps = 0;
  int tag = 0;
  int segment = 0;
  int streams = 1;
  bool reply = false;       ///< kReady: an answer (never answered)
  bool repeat = false;      ///< a control message repeated after a retry time (loss recovery)
  int reduction_tree = -1;  ///< kContribution: the reduction tree it goes up (-1: none)
};

class PacedSchedule;

/// What the issuer waits for before it resumes the program.
struct Wait {
  enum class Kind : std::uint8_t {
    kDone,         ///< the round is complete
    kUntil,        ///< until at_ps
    kOffset,       ///< until at_ps, idle before the first chunk (send offset)
    kAwait,        ///< until *count >= target (count null: any progress), or retry_at_ps
    kPaced,        ///< until the issuer has emitted `paced`'s chunks at their instants
    kTransmitted,  ///< until this site's host sends have left its access link
    kRingRule,     ///< until ring step `ring_step` is received by `site` (-1: every site)
  };
  Kind kind = Kind::kDone;
  std::uint64_t at_ps = 0;
  const std::uint64_t* count = nullptr;
  std::uint64_t target = 0;
  std::uint64_t retry_at_ps = kNever;
  PacedSchedule* paced = nullptr;
  bool even_if_now = false;  ///< kTransmitted: wait (a delta cycle) even when it is now
  int site = -1, step = 0, ring_step = 0;
};

/// A program's answer: sends, in order, then one wait. Reused (no allocation per event).
struct Actions {
  std::vector<Send> sends;
  std::vector<int> receivers;  ///< kStreams' receivers
  Wait wait;
  void clear() {
    sends.clear();
    wait = Wait{};
  }
  Send& send(Send::Kind kind, int step) {
    sends.emplace_back();
    sends.back().kind = kind;
    sends.back().step = step;
    return sends.back();
  }
  /// Unless `count` has reached `target`, waits (kAwait) until it does or until
  /// `retry_at_ps`: true when it waits. `count` must stay put until the wait ends.
  bool await(const std::uint64_t& count, std::uint64_t target, std::uint64_t retry_at_ps = kNever) {
    if (count >= target) return false;
    wait.kind = Wait::Kind::kAwait;
    wait.count = &count;
    wait.target = target;
    wait.retry_at_ps = retry_at_ps;
    return true;
  }
};

/// A message that reached the site, as a program sees it.
struct Arrival {
  enum class Kind : std::uint8_t { kResult, kPassedOn, kHostChunk };
  Kind kind = Kind::kResult;
  int src = -1;
  int step = 0;
  std::uint32_t chunk = 0;
  int group_size = 0;
  int contributions = 1;
  int requester = -1;  ///< a result re-sent for a retransmission: the sender to acknowledge
  bool retransmission = false;
  int tag = 0;      ///< kHostChunk: ring step or message tag
  int segment = 0;  ///< kHostChunk: ring segment
};

/// How the program judged an arrival.
enum class Verdict : std::uint8_t { kAccepted, kDuplicate, kRecognised };

/// Counters the watchdog and the statistics read.
struct ProgramCounters {
  std::uint64_t progress = 0;  ///< new information: results, ready, grant, credit, steps
  std::uint64_t accepted_results = 0, expected_results = 0;
  std::uint64_t duplicates = 0, recognised_duplicates = 0;
  std::uint64_t control_retransmissions = 0;
};

/// What every program is told of its site and the run.
struct ProgramContext {
  int site = 0;
  std::uint64_t gradient_bytes = 0;  ///< G: bytes each site contributes per round
  std::uint64_t chunk_bytes = 0;     ///< transaction (and aggregation slot) size
  bool multicast = true;             ///< false: one unicast copy per receiver
  bool aggregation = true;           ///< false: the FPGA passes contributions through
  bool credit = false;               ///< credit flow control (else pacing or drop)
  /// Loss recovery (group rounds): receivers' FPGAs acknowledge every contribution (the
  /// cluster, without aggregation), senders retransmit unacknowledged contributions with
  /// a timeout that backs off, ready and grant messages are repeated until answered,
  /// results received again are recognised and acknowledged again.
  bool reliable = false;
  int messages = 1;                      ///< point-to-point: concurrent messages of G
  std::vector<ClusterRoundPlan> rounds;  ///< the schedule period, as seen by this site
  std::vector<int> order;                ///< ring order, or [server, workers...], or the members
  std::vector<TreeStream> trees;         ///< reduction forests: this member's stream per tree
  std::uint64_t chunks() const;          ///< chunks of G
  const ClusterRoundPlan& plan_of(int step) const {
    return rounds[static_cast<std::size_t>(step) % rounds.size()];
  }
};

/// One collective's behaviour at one site. start() opens a step's round; resume() follows
/// each wait it asked for; on_*() handle arrivals at any time, also for steps not yet
/// started (others may be ahead). Each call fills `out` (cleared by the issuer).
class CollectiveProgram {
 public:
  virtual ~CollectiveProgram() = default;
  /// Whether this site takes part in `step`'s round (its record says so).
  virtual bool communicates(int step) const = 0;
  virtual void start(int step, std::uint64_t now_ps, Actions& out) = 0;
  /// `retry`: the wait ended at its retry time, not on progress.
  virtual void resume(std::uint64_t now_ps, bool retry, Actions& out) = 0;
  virtual Verdict on_arrival(const Arrival& arrival, std::uint64_t now_ps, Actions& out) = 0;
  virtual void on_ready(int /*src*/, int /*step*/, std::uint64_t /*stamp_ps*/, bool /*reply*/,
                        Actions& /*out*/) {}
  virtual void on_grant(int /*src*/, int /*step*/, std::uint32_t /*credits*/) {}
  virtual void on_credit(int /*src*/, int /*step*/, std::uint32_t /*freed*/) {}
  /// A first acknowledgement of a contribution from receiver `src`.
  virtual void on_acknowledged(int /*src*/, int /*step*/) {}
  /// The multicast tree `tree_id` was rerouted (faults).
  virtual void on_tree_rerouted(int /*tree_id*/, std::uint64_t /*now_ps*/, Actions& /*out*/) {}
  /// The current wait, for the watchdog ("" when not waiting on the network), and since when.
  virtual std::string waiting_for(const std::vector<std::string>& /*codes*/) const { return ""; }
  virtual std::uint64_t waiting_since_ps() const { return 0; }
  /// The agreed start and first send of the last round started (group rounds).
  virtual std::uint64_t agreed_start_ps() const { return kNever; }
  virtual std::uint64_t first_send_ps() const { return kNever; }
  const ProgramCounters& counters() const { return counters_; }

 protected:
  ProgramCounters counters_;
};

}  // namespace aggnet
