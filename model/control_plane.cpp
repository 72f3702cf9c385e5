#include "model/control_plane.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "common/units.h"
#include "model/arrival_latencies.h"
#include "model/network_math.h"
#include "model/send_alignment.h"

namespace aggnet {

namespace {
bool by_receiver(const OffsetRow::value_type& a, const OffsetRow::value_type& b) {
  return a.first < b.first;
}
}  // namespace

OffsetRow::OffsetRow(std::initializer_list<value_type> entries) : entries_(entries) {
  std::stable_sort(entries_.begin(), entries_.end(), by_receiver);
  const auto same = [](const value_type& a, const value_type& b) { return a.first == b.first; };
  entries_.erase(std::unique(entries_.begin(), entries_.end(), same), entries_.end());
}

std::uint64_t OffsetRow::at(int receiver) const {
  const auto it =
      std::lower_bound(entries_.begin(), entries_.end(), value_type{receiver, 0}, by_receiver);
  if (it == entries_.end() || it->first != receiver)
    throw std::out_of_range("OffsetRow::at: no offset toward " + std::to_string(receiver));
  return it->second;
}

std::uint64_t& OffsetRow::operator[](int receiver) {
  auto it =
      std::lower_bound(entries_.begin(), entries_.end(), value_type{receiver, 0}, by_receiver);
  if (it == entries_.end() || it->first != receiver) it = entries_.insert(it, {receiver, 0});
  return it->second;
}

void OffsetRow::append(int receiver, std::uint64_t offset_ps) {
  if (!entries_.empty() && entries_.back().first >= receiver)
    throw std::logic_error("OffsetRow::append: receivers out of order");
  entries_.emplace_back(receiver, offset_ps);
}

namespace {

std::vector<int> others(const std::vector<int>& members, int me) {
  std::vector<int> out;
  for (int s : members)
    if (s != me) out.push_back(s);
  return out;
}

// Per member position of a group, the directed link (route_groups' directed_link) of
// each of its hops, as GroupPlan::hops lists them.
using GroupLinks = std::vector<std::vector<std::uint32_t>>;

// Member positions in the order of their sites, the first of each site.
std::vector<std::size_t> by_site(const std::vector<int>& members) {
  std::vector<std::size_t> order(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return members[x] < members[y]; });
  order.erase(std::unique(order.begin(), order.end(),
                          [&](std::size_t x, std::size_t y) { return members[x] == members[y]; }),
              order.end());
  return order;
}

// out[j]: arrival_latency_ps from member i to member j for messages of `bytes` (out[i]
// unset): along i's multicast tree, or from the kept sums without multicast.
void sender_latencies(ArrivalLatencyCache& latencies, const GroupPlan& group,
                      const GroupLinks& links, std::size_t i, bool multicast, std::uint64_t bytes,
                      std::uint64_t* out) {
  const auto& m = group.members;
  if (multicast) {
    latencies.tree_arrival_ps(m[i], group.hops.at(m[i]), links[i], bytes, m, out);
    return;
  }
  ArrivalLatencies& from = latencies.from(m[i], bytes);
  for (std::size_t j = 0; j < m.size(); ++j)
    if (j != i) out[j] = from.to(m[j]);
}

std::vector<Hop> unicast_hops(const Routing& routing, int src, const std::vector<int>& receivers) {
  std::vector<Hop> hops;
  for (int d : receivers) {
    const auto path = routing.path(src, d);
    for (std::size_t i = 0; i + 1 < path.size(); ++i) hops.emplace_back(path[i], path[i + 1]);
  }
  return hops;
}

void plan_buffer_limit(const Platform& platform, const RunOptions& options, GroupPlan& group) {
  const double chunk = static_cast<double>(options.chunk_bytes);
  const double fan_in = static_cast<double>(group.members.size() - 1);
  group.buffer_rate = std::numeric_limits<double>::infinity();
  group.pipeline_rate = std::numeric_limits<double>::infinity();
  for (int d : group.members) {
    const auto& fpga = platform.sites[d].fpga;
    group.slots[d] = fpga_buffer_bytes(options, fpga) / options.chunk_bytes;
    if (!options.aggregation) continue;
    const double throughput = static_cast<double>(fpga.throughput_bytes_per_s());
    const double hold_s = static_cast<double>(group.skew_ps.at(d) + fpga.latency_ps()) * 1e-12 +
                          fan_in * chunk / throughput;
    group.pipeline_rate = std::min(group.pipeline_rate, throughput / fan_in);
    // A buffer that holds every chunk of the gradient at once never binds.
    const std::uint64_t chunks = num_chunks(options.gradient_bytes, options.chunk_bytes);
    if (group.slots[d] >= chunks) continue;
    const double usable = static_cast<double>(std::max<std::uint64_t>(group.slots[d], 2) - 1);
    group.buffer_rate = std::min(group.buffer_rate, usable * chunk / hold_s);
  }
}

// A message of `bytes` that reaches d's aggregator at `arrival_ps` reaches d's cluster:
// d's access link down.
std::uint64_t through_access_down_ps(const Platform& platform, int d, std::uint64_t arrival_ps,
                                     std::uint64_t bytes) {
  const WanLinkParams down = access_link(platform.sites[d]);
  return arrival_ps + chunk_serialization_ps(down, bytes) + down.delay_ps;
}

ArrivalMatrix arrival_matrix(ArrivalLatencyCache& latencies, const GroupPlan& group,
                             const GroupLinks& links, bool multicast, std::uint64_t chunk_bytes) {
  const std::size_t n = group.members.size();
  ArrivalMatrix a(n, std::vector<std::uint64_t>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    sender_latencies(latencies, group, links, i, multicast, chunk_bytes, a[i].data());
    a[i][i] = 0;
  }
  return a;
}

// --- Repeated members ------------------------------------------------------------------
// A group naming a site twice (no schedule file or family does) keeps the plan its maps
// made: each site's entry is the last one written. The general path below.

void apply_alignment(const ArrivalMatrix& a, bool align, bool multicast, GroupPlan& group) {
  const auto& m = group.members;
  const SenderAlignment none = unaligned(a);
  const bool per_copy = align && !multicast;
  const SenderAlignment chosen = align && !per_copy ? align_senders(a) : none;
  const auto copies = per_copy ? align_copies(a) : ArrivalMatrix{};
  group.alignment = per_copy ? "per-copy" : chosen.method;
  for (std::size_t i = 0; i < m.size(); ++i) {
    group.unaligned_skew_ps[m[i]] = none.residual_skew_ps[i];
    group.skew_ps[m[i]] = per_copy ? 0 : chosen.residual_skew_ps[i];
    std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t j = 0; j < m.size(); ++j) {
      if (i == j) continue;
      const std::uint64_t offset = per_copy ? copies[i][j] : chosen.offset_ps[i];
      group.send_offset_ps[m[i]][m[j]] = offset;
      first = std::min(first, offset);
    }
    group.waiting_ps[m[i]] = first;
  }
}

void apply_given(const ArrivalMatrix& a, const std::vector<std::uint64_t>& given,
                 GroupPlan& group) {
  const auto& m = group.members;
  group.alignment = "given";
  for (std::size_t i = 0; i < m.size(); ++i) {
    group.skew_ps[m[i]] = residual_skew_ps(a, given, i);
    group.waiting_ps[m[i]] = given[i];
    for (int d : m)
      if (d != m[i]) group.send_offset_ps[m[i]][d] = given[i];
  }
}

}  // namespace

void pace(const RunOptions& options, double buffer_rate, double link_rate, double pipeline_rate,
          double access_rate, double& pacing_rate, std::uint64_t& pacing_interval_ps) {
  if (options.flow_control == FlowControl::kDrop)
    buffer_rate = std::numeric_limits<double>::infinity();
  const double limit = std::min({buffer_rate, link_rate, pipeline_rate, access_rate});
  pacing_rate = (1.0 - options.pacing_margin) * limit;
  pacing_interval_ps = static_cast<std::uint64_t>(
      std::ceil(static_cast<double>(options.chunk_bytes) / pacing_rate * 1e12));
}

namespace {
void plan_pacing(const RunOptions& options, GroupPlan& group) {
  pace(options, group.buffer_rate, group.link_rate, group.pipeline_rate, group.access_rate,
       group.pacing_rate, group.pacing_interval_ps);
}

double landing_ps(const ArrivalMatrix& a, const GroupPlan& group, const RunOptions& options) {
  const double chunks =
      static_cast<double>(num_chunks(options.gradient_bytes, options.chunk_bytes));
  double last = 0;
  for (std::size_t i = 0; i < group.members.size(); ++i)
    for (std::size_t j = 0; j < group.members.size(); ++j)
      if (i != j)
        last = std::max(
            last, static_cast<double>(
                      group.send_offset_ps.at(group.members[i]).at(group.members[j]) + a[i][j]));
  return last + (chunks - 1) * static_cast<double>(group.pacing_interval_ps);
}

void plan_alignment_repeated(const ArrivalMatrix& a, const RunOptions& options,
                             const std::vector<std::uint64_t>& given, bool none, bool credit,
                             const Platform& platform, GroupPlan& group) {
  auto with = [&](bool align) {
    GroupPlan g = group;
    apply_alignment(a, align, options.multicast, g);
    plan_buffer_limit(platform, options, g);
    plan_pacing(options, g);
    return g;
  };
  if (!given.empty() && !none) {
    group = with(false);
    apply_given(a, given, group);
    plan_buffer_limit(platform, options, group);
    plan_pacing(options, group);
  } else if (none || (credit && options.alignment == SendAlignment::kAuto)) {
    group = with(false);
  } else if (options.alignment == SendAlignment::kArrival) {
    group = with(true);
  } else {
    GroupPlan plain = with(false), aligned = with(true);
    group = landing_ps(a, aligned, options) < landing_ps(a, plain, options) ? std::move(aligned)
                                                                            : std::move(plain);
  }
}

// --- Distinct members ------------------------------------------------------------------
// The same decisions by member position, each written to the group's maps once.

// One way of sending (offsets and what follows from them), by member position.
struct SendPlan {
  std::string method;
  std::vector<std::uint64_t> sender_offset_ps;  // per sender (unless per_copy)
  ArrivalMatrix copy_offset_ps;                 // [i][j] per unicast copy (per_copy)
  std::vector<std::uint64_t> skew_ps, waiting_ps;
  double buffer_rate = 0, pipeline_rate = 0, pacing_rate = 0;
  std::uint64_t pacing_interval_ps = 0;
  bool per_copy = false;
  std::uint64_t offset_ps(std::size_t i, std::size_t j) const {
    return per_copy ? copy_offset_ps[i][j] : sender_offset_ps[i];
  }
};

// plan_buffer_limit and plan_pacing on a SendPlan (`group`: members and rates; `drop`
// has no flow control: the buffer does not limit the senders' rate).
void plan_limits(const Platform& platform, const RunOptions& options, const GroupPlan& group,
                 SendPlan& send) {
  const double chunk = static_cast<double>(options.chunk_bytes);
  const double fan_in = static_cast<double>(group.members.size() - 1);
  send.buffer_rate = std::numeric_limits<double>::infinity();
  send.pipeline_rate = std::numeric_limits<double>::infinity();
  const std::uint64_t chunks = num_chunks(options.gradient_bytes, options.chunk_bytes);
  for (std::size_t i = 0; i < group.members.size() && options.aggregation; ++i) {
    const auto& fpga = platform.sites[group.members[i]].fpga;
    const std::uint64_t slots = fpga_buffer_bytes(options, fpga) / options.chunk_bytes;
    const double throughput = static_cast<double>(fpga.throughput_bytes_per_s());
    const double hold_s = static_cast<double>(send.skew_ps[i] + fpga.latency_ps()) * 1e-12 +
                          fan_in * chunk / throughput;
    send.pipeline_rate = std::min(send.pipeline_rate, throughput / fan_in);
    if (slots >= chunks) continue;
    const double usable = static_cast<double>(std::max<std::uint64_t>(slots, 2) - 1);
    send.buffer_rate = std::min(send.buffer_rate, usable * chunk / hold_s);
  }
  pace(options, send.buffer_rate, group.link_rate, send.pipeline_rate, group.access_rate,
       send.pacing_rate, send.pacing_interval_ps);
}

// Offsets 0 (align false), the senders' aligned offsets (multicast) or per-copy offsets.
SendPlan plan_sends(const ArrivalMatrix& a, const SenderAlignment& none, bool align,
                    bool multicast) {
  const std::size_t n = a.size();
  SendPlan send;
  send.per_copy = align && !multicast;
  if (send.per_copy) {
    send.method = "per-copy";
    send.copy_offset_ps = align_copies(a);
    send.skew_ps.assign(n, 0);
  } else if (align) {
    SenderAlignment chosen = align_senders(a);
    send.method = std::move(chosen.method);
    send.sender_offset_ps = std::move(chosen.offset_ps);
    send.skew_ps = std::move(chosen.residual_skew_ps);
  } else {
    send.method = none.method;
    send.sender_offset_ps = none.offset_ps;
    send.skew_ps = none.residual_skew_ps;
  }
  send.waiting_ps.assign(n, std::numeric_limits<std::uint64_t>::max());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i != j) send.waiting_ps[i] = std::min(send.waiting_ps[i], send.offset_ps(i, j));
  return send;
}

// The schedule file's offsets, one per member (every copy of a sender alike).
SendPlan given_sends(const ArrivalMatrix& a, const std::vector<std::uint64_t>& given) {
  SendPlan send;
  send.method = "given";
  for (std::size_t i = 0; i < a.size(); ++i) send.skew_ps.push_back(residual_skew_ps(a, given, i));
  send.sender_offset_ps = given;
  send.waiting_ps.assign(given.begin(), given.begin() + static_cast<std::ptrdiff_t>(a.size()));
  return send;
}

// When the last contribution lands, from the agreed start: the latest offset + arrival
// plus the paced stream's length (the control plane's estimate, queueing left out).
double landing_ps(const ArrivalMatrix& a, const SendPlan& send, const RunOptions& options) {
  const double chunks =
      static_cast<double>(num_chunks(options.gradient_bytes, options.chunk_bytes));
  std::uint64_t last = 0;  // the largest sum, as a double the largest double
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < a.size(); ++j)
      if (i != j) last = std::max(last, send.offset_ps(i, j) + a[i][j]);
  return static_cast<double>(last) + (chunks - 1) * static_cast<double>(send.pacing_interval_ps);
}

// Writes `send` into the group's maps, in key order (members distinct).
void take_sends(const Platform& platform, const RunOptions& options, const SenderAlignment& none,
                SendPlan&& send, GroupPlan& group) {
  const auto& m = group.members;
  const std::vector<std::size_t> order = by_site(m);
  group.alignment = std::move(send.method);
  group.unaligned_skew_ps.clear();
  group.skew_ps.clear();
  group.waiting_ps.clear();
  group.slots.clear();
  group.send_offset_ps.clear();
  for (std::size_t i : order) {
    group.unaligned_skew_ps.emplace_hint(group.unaligned_skew_ps.end(), m[i],
                                         none.residual_skew_ps[i]);
    group.skew_ps.emplace_hint(group.skew_ps.end(), m[i], send.skew_ps[i]);
    group.waiting_ps.emplace_hint(group.waiting_ps.end(), m[i], send.waiting_ps[i]);
    group.slots.emplace_hint(
        group.slots.end(), m[i],
        fpga_buffer_bytes(options, platform.sites[m[i]].fpga) / options.chunk_bytes);
    auto& row =
        group.send_offset_ps.emplace_hint(group.send_offset_ps.end(), m[i], OffsetRow{})->second;
    row.reserve(order.size() - 1);
    for (std::size_t j : order)
      if (j != i) row.append(m[j], send.offset_ps(i, j));
  }
  group.buffer_rate = send.buffer_rate;
  group.pipeline_rate = send.pipeline_rate;
  group.pacing_rate = send.pacing_rate;
  group.pacing_interval_ps = send.pacing_interval_ps;
}

bool has_repeats(std::vector<int> members) {
  std::sort(members.begin(), members.end());
  return std::adjacent_find(members.begin(), members.end()) != members.end();
}

// Offsets, buffer limit and pacing of a group whose link and access shares are known.
// Alignment needs a common start; `auto` keeps the offsets only where they make the
// group land earlier (they cost the short-arm members' waiting).
void plan_alignment(ArrivalLatencyCache& latencies, const RunOptions& options,
                    const std::vector<std::uint64_t>& given, const GroupLinks& links,
                    GroupPlan& group) {
  const Platform& platform = latencies.platform();
  ArrivalMatrix a = arrival_matrix(latencies, group, links, options.multicast, options.chunk_bytes);
  const bool screened_out = given.empty() && !options.general_offsets && options.multicast &&
                            !align_senders_closed_form(a);
  const bool none =
      !options.aligned_start || options.alignment == SendAlignment::kNone || screened_out;
  // Credit windows clock the senders; offsets would only delay the first window.
  const bool credit = options.flow_control == FlowControl::kCredit;
  if (has_repeats(group.members)) {
    plan_alignment_repeated(a, options, given, none, credit, platform, group);
    group.arrival_ps = std::move(a);
    return;
  }
  const SenderAlignment unaligned_sends = unaligned(a);
  auto with = [&](SendPlan send) {
    plan_limits(platform, options, group, send);
    return send;
  };
  SendPlan chosen;
  if (!given.empty() && !none) {
    chosen = with(given_sends(a, given));
  } else if (none || (credit && options.alignment == SendAlignment::kAuto)) {
    chosen = with(plan_sends(a, unaligned_sends, false, options.multicast));
  } else if (options.alignment == SendAlignment::kArrival) {
    chosen = with(plan_sends(a, unaligned_sends, true, options.multicast));
  } else {
    // `auto` only keeps offsets that help.
    SendPlan plain = with(plan_sends(a, unaligned_sends, false, options.multicast));
    SendPlan aligned = with(plan_sends(a, unaligned_sends, true, options.multicast));
    chosen = landing_ps(a, aligned, options) < landing_ps(a, plain, options) ? std::move(aligned)
                                                                             : std::move(plain);
  }
  take_sends(platform, options, unaligned_sends, std::move(chosen), group);
  group.arrival_ps = std::move(a);
}

}  // namespace

std::uint64_t cluster_latency_ps(const Platform& platform, const Routing& routing, int s, int d,
                                 std::uint64_t bytes) {
  return through_access_down_ps(platform, d, arrival_latency_ps(platform, routing, s, d, bytes),
                                bytes);
}

std::uint64_t retransmit_timeout_ps(const Platform& platform, const Routing& routing,
                                    const GroupPlan& group, const RunOptions& options) {
  std::uint64_t round_trip = 0, skew = 0, offset = 0;
  for (int d : group.members) {
    skew = std::max(skew, group.unaligned_skew_ps.count(d) ? group.unaligned_skew_ps.at(d) : 0);
    offset = std::max(offset, group.waiting_ps.count(d) ? group.waiting_ps.at(d) : 0);
    for (int s : others(group.members, d))
      round_trip = std::max(round_trip,
                            arrival_latency_ps(platform, routing, s, d, options.chunk_bytes) +
                                cluster_latency_ps(platform, routing, d, s, options.credit_bytes));
  }
  constexpr std::uint64_t kFloorPs = 1'000'000'000;  // 1 ms
  return std::max(kFloorPs, 2 * round_trip + skew + offset);
}

namespace {
// A directed hop u -> v as an index: twice its link's index, + 1 from the higher site to
// the lower (the link joining u and v is the same one both ways: Routing::link_index).
std::size_t directed_link(int link_index, const Hop& hop) {
  return 2 * static_cast<std::size_t>(link_index) + (hop.first < hop.second ? 0 : 1);
}
std::size_t directed_link(const Routing& routing, const Hop& hop) {
  return directed_link(routing.link_index(hop.first, hop.second), hop);
}

// Each group's members and, for groups of two or more, every member's hops to the others
// (its multicast tree, or its unicast paths), counted per directed link in `streams`;
// `used`: the hops counted, each once; `links`: per group and member position, the
// directed link of each of its hops.
void route_groups(const Platform& platform, const Routing& routing, const Round& round,
                  const RunOptions& options, RoundPlan& plan, std::vector<int>& streams,
                  std::vector<Hop>& used, std::vector<GroupLinks>& links) {
  const int n = static_cast<int>(platform.sites.size());
  streams.assign(2 * platform.links.size(), 0);
  std::vector<int> tree_links;
  for (const auto& g : round.groups) {
    GroupPlan group;
    group.members = g.sites;
    for (int s : g.sites) {
      if (s < 0 || s >= n) throw std::invalid_argument("group member is not a platform site");
    }
    GroupLinks& group_links = links.emplace_back();
    if (g.sites.size() < 2) {
      plan.groups.push_back(std::move(group));
      continue;
    }
    group_links.resize(g.sites.size());
    for (std::size_t i = 0; i < g.sites.size(); ++i) {
      const int s = g.sites[i];
      const auto receivers = others(g.sites, s);
      auto& hops = group.hops[s];
      hops = options.multicast ? routing.multicast_tree(s, receivers, &tree_links)
                               : unicast_hops(routing, s, receivers);
      group_links[i].reserve(hops.size());
      for (std::size_t h = 0; h < hops.size(); ++h) {
        const Hop& hop = hops[h];
        const std::size_t link =
            options.multicast ? directed_link(tree_links[h], hop) : directed_link(routing, hop);
        group_links[i].push_back(static_cast<std::uint32_t>(link));
        if (streams[link]++ == 0) used.push_back(hop);
      }
    }
    plan.groups.push_back(std::move(group));
  }
}

// When every member's ready message has reached every other member.
std::uint64_t ready_delay_ps(ArrivalLatencyCache& latencies, const GroupPlan& group,
                             const GroupLinks& links, const RunOptions& options) {
  const Platform& platform = latencies.platform();
  // A ready message may queue behind |g| - 2 others on every link it crosses. Without
  // multicast a member sends its |g| - 1 back to back, on the links up to d's switch.
  // With multicast it sends one, on its tree (whose path to d is the shortest path), and
  // the other members' converge on d: on those links and on d's access link down (a
  // term the pair d -> s bounds already while access links are symmetric, as now).
  const std::uint64_t queued = group.members.size() - 2;
  const auto& m = group.members;
  if (std::adjacent_find(m.begin(), m.end(), std::not_equal_to<>()) == m.end()) return 0;
  // Per receiver: its access link down, and (multicast) its serialization once more.
  std::vector<std::uint64_t> down_ps(m.size()), down_serialization_ps(m.size(), 0);
  for (std::size_t j = 0; j < m.size(); ++j) {
    down_ps[j] = through_access_down_ps(platform, m[j], 0, options.credit_bytes);
    if (options.multicast)
      down_serialization_ps[j] =
          chunk_serialization_ps(access_link(platform.sites[m[j]]), options.credit_bytes);
  }
  std::vector<std::uint64_t> ready(m.size()), bare(m.size());
  std::uint64_t delay = 0;
  for (std::size_t i = 0; i < m.size(); ++i) {
    sender_latencies(latencies, group, links, i, options.multicast, options.credit_bytes,
                     ready.data());
    sender_latencies(latencies, group, links, i, options.multicast, 0, bare.data());
    for (std::size_t j = 0; j < m.size(); ++j) {
      if (m[j] == m[i]) continue;
      const std::uint64_t serialization = ready[j] - bare[j] + down_serialization_ps[j];
      delay = std::max(delay, ready[j] + down_ps[j] + queued * serialization);
    }
  }
  return delay;
}

// The group's slowest link share (streams sharing each link) and its slowest access link.
void plan_rates(ArrivalLatencyCache& latencies, const RunOptions& options,
                const std::vector<int>& streams, const GroupLinks& links, GroupPlan& group) {
  const Platform& platform = latencies.platform();
  LinkTerms& terms = latencies.link_terms(options.chunk_bytes);
  const auto& m = group.members;
  const double fan_in = static_cast<double>(m.size() - 1);
  group.link_rate = std::numeric_limits<double>::infinity();
  group.access_rate = std::numeric_limits<double>::infinity();
  // Senders in the order of group.hops, each once.
  for (std::size_t i : by_site(m)) {
    for (const std::uint32_t link : links[i]) {
      group.link_rate = std::min(group.link_rate, terms.payload_rate(link / 2) / streams[link]);
    }
    // The sender's access link carries its stream (one copy per receiver without
    // multicast); as a receiver, its access link carries the reduced stream (or every
    // other member's contribution without in-line aggregation).
    const double access = payload_rate(access_link(platform.sites[m[i]]), options.chunk_bytes);
    group.access_rate = std::min(group.access_rate, options.multicast ? access : access / fan_in);
    group.access_rate = std::min(group.access_rate, options.aggregation ? access : access / fan_in);
  }
}
}  // namespace

RoundPlan plan_round(const Platform& platform, const Routing& routing, const Round& round,
                     const RunOptions& options) {
  ArrivalLatencyCache latencies(platform, routing);
  return plan_round(latencies, round, options, true);
}

RoundPlan plan_round(ArrivalLatencyCache& latencies, const Round& round, const RunOptions& options,
                     bool keep_link_streams) {
  const Platform& platform = latencies.platform();
  const Routing& routing = latencies.routing();
  RoundPlan plan;
  std::vector<int> streams;
  std::vector<Hop> used;
  std::vector<GroupLinks> links;
  route_groups(platform, routing, round, options, plan, streams, used, links);
  for (std::size_t gi = 0; gi < plan.groups.size(); ++gi) {
    GroupPlan& group = plan.groups[gi];
    if (group.members.size() < 2) continue;
    group.start_delay_ps = ready_delay_ps(latencies, group, links[gi], options);
    plan_rates(latencies, options, streams, links[gi], group);
    plan_alignment(latencies, options, round.groups[gi].send_offset_ps, links[gi], group);
  }
  if (keep_link_streams) {
    std::sort(used.begin(), used.end());
    for (const Hop& hop : used)
      plan.link_streams.emplace_hint(plan.link_streams.end(), hop,
                                     streams[directed_link(routing, hop)]);
  }
  return plan;
}

}  // namespace aggnet
