// The network's control plane for one schedule round: multicast trees, the streams each
// link carries, and the senders' pacing rates and credit windows. Plain C++ (no SystemC):
// the SystemC builder installs its decisions in the modules, and the analytic time model
// in traffic/ reasons about the same decisions.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/arrival_latencies.h"
#include "model/network_math.h"
#include "model/routing.h"
#include "model/run_options.h"
#include "model/schedule.h"

namespace aggnet {

/// Directed hop between adjacent sites (u -> v).
using Hop = std::pair<int, int>;

/// One sender's send offsets (ps) per receiver, sorted by receiver: a flat map (a group
/// of 1,000 members has a million of them, a std::map node each before).
class OffsetRow {
 public:
  using value_type = std::pair<int, std::uint64_t>;
  using iterator = std::vector<value_type>::const_iterator;
  using const_iterator = iterator;
  OffsetRow() = default;
  /// As a std::map keeps them: by receiver, the first of a repeated receiver.
  OffsetRow(std::initializer_list<value_type> entries);
  /// Errors: std::out_of_range for a receiver without an offset.
  std::uint64_t at(int receiver) const;
  /// The offset toward `receiver`, added as 0 if it has none (as std::map's []).
  std::uint64_t& operator[](int receiver);
  /// Adds a receiver above every one the row has. Errors: std::logic_error otherwise.
  void append(int receiver, std::uint64_t offset_ps);
  void reserve(std::size_t receivers) { entries_.reserve(receivers); }
  iterator begin() const { return entries_.begin(); }
  iterator end() const { return entries_.end(); }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  bool operator==(const OffsetRow& other) const { return entries_ == other.entries_; }
  bool operator!=(const OffsetRow& other) const { return !(*this == other); }

 private:
  std::vector<value_type> entries_;
};

/// Decisions for one group of a round.
struct GroupPlan {
  std::vector<int> members;
  /// Per member d: arrival skew of the other members' contributions at d's aggregator,
  /// in ps, with this plan's send offsets (the residual skew when aligned).
  std::map<int, std::uint64_t> skew_ps;
  /// Per member d: the same skew if every member started at the agreed start (offsets 0).
  std::map<int, std::uint64_t> unaligned_skew_ps;
  /// Per sender s and receiver d: when s starts the stream d receives, after the agreed
  /// start (ps). With multicast one stream serves every receiver, so the offset is the
  /// same for every d; without multicast each unicast copy has its own.
  std::map<int, OffsetRow> send_offset_ps;
  /// Per member: time it idles after the agreed start before its first chunk (ps).
  std::map<int, std::uint64_t> waiting_ps;
  /// "none" (offsets 0), "closed-form", "cycle-mean", "per-copy" (unicast) or "given" (the
  /// schedule file's send_offsets).
  std::string alignment = "none";
  /// Per member d: aggregation slots (buffer / chunk).
  std::map<int, std::uint64_t> slots;
  /// Rate limits in payload bytes/s, each already divided among the streams sharing it.
  double buffer_rate = 0, link_rate = 0, pipeline_rate = 0, access_rate = 0;
  /// Paced sending rate, payload bytes/s: (1 - margin) x min of the limits above.
  double pacing_rate = 0;
  std::uint64_t pacing_interval_ps = 0;  ///< chunk / pacing_rate, rounded up
  /// Aligned start: members start sending this long after the last member was ready
  /// (the largest latency of a ready message from one member's cluster to another's:
  /// access links, switches, serialization and propagation of the shortest path, plus
  /// |g| - 2 serializations per link of it up to d's switch, and with multicast of d's
  /// access link down too: the other ready messages it may queue behind), so every member
  /// has heard every ready message by then unless it queued behind data.
  std::uint64_t start_delay_ps = 0;
  /// Per sender: the directed hops its chunks take (multicast tree or unicast paths).
  std::map<int, std::vector<Hop>> hops;
  /// [i][j]: latency of a chunk from member i's cluster to member j's aggregator, as
  /// `members` orders them (arrival_latency_ps; 0 on the diagonal); what the alignment
  /// was planned from. Empty for a group of fewer than two.
  std::vector<std::vector<std::uint64_t>> arrival_ps;
};

struct RoundPlan {
  std::vector<GroupPlan> groups;
  /// Streams (trees or unicast copies) crossing each directed hop in this round.
  std::map<Hop, int> link_streams;
};

/// Latency of a message of `bytes` from s's cluster to d's cluster (a ready message, an
/// acknowledgement): up to d's aggregator as any chunk (network_math.h), then d's access
/// link down. Queueing not included.
std::uint64_t cluster_latency_ps(const Platform& platform, const Routing& routing, int s, int d,
                                 std::uint64_t bytes);

/// Loss recovery's default retransmission timeout for a group: twice the longest
/// chunk-out, acknowledgement-back round trip between two members, plus the group's
/// unaligned arrival skew and its longest send offset (a chunk's result waits for the
/// last member's contribution), at least 1 ms.
std::uint64_t retransmit_timeout_ps(const Platform& platform, const Routing& routing,
                                    const GroupPlan& group, const RunOptions& options);

/// The paced sending rate, (1 - margin) x the least of a group's four limits (bytes/s), and
/// its interval between chunks in ps, rounded up, as plan_round sets them (`drop` has no
/// flow control: the buffer's limit does not apply).
void pace(const RunOptions& options, double buffer_rate, double link_rate, double pipeline_rate,
          double access_rate, double& pacing_rate, std::uint64_t& pacing_interval_ps);

/// Plans one round. Errors: std::invalid_argument if a member is not a platform site.
RoundPlan plan_round(const Platform& platform, const Routing& routing, const Round& round,
                     const RunOptions& options);
/// The same plan on `latencies`' platform and routing, the arrival latencies it asks for
/// kept there for the next rounds (the builder plans a whole schedule period); without
/// RoundPlan::link_streams unless `keep_link_streams`.
RoundPlan plan_round(ArrivalLatencyCache& latencies, const Round& round, const RunOptions& options,
                     bool keep_link_streams);

}  // namespace aggnet
