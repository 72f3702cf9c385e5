// A site's edge switch: unicast forwarding by destination site and a multicast group
// table that replicates a chunk onto several egress ports.
#pragma once

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/peq_with_cb_and_phase.h>

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "model/params/network.h"
#include "modules/core/chunk.h"
#include "modules/core/nb_target.h"
#include "modules/core/statistics.h"
#include "modules/network/fanout_log.h"

namespace aggnet {

class WanLink;

/// MulticastSwitch: target socket `in` (any number of ingress links; the switch does not
/// need to know which one), initiator socket `out` (egress ports, numbered in binding
/// order). The tables are filled by whoever
/// composes the platform (routes come from shortest-delay paths there); the switch
/// only knows port numbers.
///
/// Forwarding is store-and-forward per chunk: a chunk leaves `latency` after its last
/// bit arrived. A multicast chunk leaves on every egress port in its group's entry, so a
/// link carries each chunk at most once per tree; each port gets the same transaction,
/// with a reference of its own (chunk.h: what has been sent is only read).
class MulticastSwitch : public sc_core::sc_module, public NbTarget {
 public:
  /// Bound to the module itself (NbTarget): a crossing is one virtual call, not a
  /// multi-socket's binder and static dispatch.
  tlm::tlm_target_socket<32, tlm::tlm_base_protocol_types, 0> in;
  tlm_utils::multi_passthrough_initiator_socket<MulticastSwitch> out;

  MulticastSwitch(sc_core::sc_module_name name, const SwitchParams& params);

  /// Unicast route: chunks for `dst_site` leave on egress `port` (-1: no route; such
  /// chunks are dropped and counted as `unroutable`, as after a link failure).
  void set_unicast_route(int dst_site, int port);
  /// Removes tree `tree_id`'s entry (rerouting); its chunks arriving here are dropped.
  void clear_multicast_group(int tree_id);
  std::uint64_t unroutable() const { return unroutable_; }
  /// Multicast group table entry: chunks of tree `tree_id` leave on every port listed.
  /// Errors: std::invalid_argument for an empty port list, a port outside [0, 65535] or
  /// more than 65,535 ports, and for a port the switch does not have: at once during the
  /// simulation, from sc_start (start_of_simulation) for a tree set before it.
  void set_multicast_group(int tree_id, const std::vector<int>& ports);
  std::vector<int> multicast_ports(int tree_id) const;

  std::uint64_t forwarded() const;
  std::uint64_t replicated() const;
  std::vector<Statistic> statistics() const;

  /// Two lines a multicast forward fetches first, while it looks its tree up: where the
  /// state of what its local port leads to (the site's FPGA) starts. Most trees deliver
  /// there, last, after the other ports' hand-overs. Null: none.
  void set_local_hint(const void* hot) { local_hint_ = static_cast<const char*>(hot); }

  /// A multicast list with at least `min_ports` ports bound directly to WanLinks hands
  /// over to those through a FanoutLog (the switch's shared buffer) from the start of
  /// simulation: each busy link takes the chunk from there when its FIFO runs dry, with the
  /// timing of a hand-over now (fanout_log.h); the list's other ports get it at once. Not
  /// while a trace samples the links at kernel timesteps (a VCD file reads their counters
  /// directly). 0: off (the default).
  void share_fanouts(std::uint32_t min_ports) { share_request_ = min_ports; }
  /// Lists handed over through the log (0 before the start of simulation).
  std::size_t shared_lists() const;

 private:
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override;
  ChunkSink chunk_sink() override {
    return ChunkSink::of_member<MulticastSwitch, &MulticastSwitch::receive>(this);
  }
  void start_of_simulation() override;
  void receive(tlm::tlm_generic_payload& trans);
  void forward_after(tlm::tlm_generic_payload& trans, const sc_core::sc_time& ready);
  void on_ready(tlm::tlm_generic_payload& trans, const tlm::tlm_phase& phase);
  void forward(tlm::tlm_generic_payload& trans);
  void forward_unicast(tlm::tlm_generic_payload& trans, int dst_site);
  void forward_multicast(tlm::tlm_generic_payload& trans, int tree_id);
  void fan_out_shared(tlm::tlm_generic_payload& trans, std::uint32_t list, std::uint32_t count);
  void build_fanout_log();
  void refresh_entries();
  // Errors: std::invalid_argument for a port the switch does not have.
  void check_unicast_port(std::size_t dst_site, int port) const;
  // The sink of unicast destination `dst_site` (unbound: no route).
  const ChunkSink& unicast_sink(int dst_site) {
    if (dst_site == recent_dst_[0]) return recent_sink_[0];
    if (dst_site == recent_dst_[1]) return recent_sink_[1];
    return remember_unicast_sink(dst_site);
  }
  const ChunkSink& remember_unicast_sink(int dst_site);
  void forget_recent() { recent_dst_ = {kNoSite, kNoSite}; }

  // Per tree id (dense: tree ids are round x sites + sender), the index of its egress
  // port list (0: this switch is on no such tree). Trees share lists: a switch has a few
  // ports and its trees use a few dozen distinct lists of them. A 243-site all-to-all's
  // entries are then 2 bytes per tree and switch (118 KiB in all), not a list each. An
  // index from kWideList on (a switch with that many lists) is kept in `wide_lists_`.
  // A list is kept twice: its port numbers (`lists_`, for rerouting and for
  // multicast_ports) and, once the ports are bound, what they are bound to (`routes_`, one
  // line read by a forward: the first kInlineSinks sinks, the rest a slice of
  // `spilled_ports_`, whose sinks a forward looks up in `egress_`: 2 bytes a port, not a
  // sink's 16, as a fabric's lists name most of its ports and would together outgrow the
  // caches (16 MB at 1,000 sites), while `egress_` stays cached).
  static constexpr std::uint16_t kWideList = 0xFFFF;
  static constexpr std::uint32_t kInlineSinks = 3;
  struct alignas(64) Route {
    Route() : offset(0), shared(0) {}
    std::array<ChunkSink, kInlineSinks> first{};
    std::uint32_t count = 0;
    std::uint32_t offset : 31;
    std::uint32_t shared : 1;  // handed over through the fan-out log (shared_)
    // Multicast chunks received on this list (its line is read by each anyway): the
    // switch's forwarded and replicated counts are summed from these.
    std::uint64_t forwarded = 0;
  };
  static_assert(sizeof(Route) == 64, "a route is one cache line");
  const ChunkSink& sink_at(const Route& route, std::uint32_t i) const {
    return i < kInlineSinks ? route.first[i]
                            : egress_[spilled_ports_[route.offset + i - kInlineSinks]];
  }
  // From the multicast line's copies of tree_lists_'s entries and size.
  std::uint32_t list_of(int tree_id) const {
    const auto tree = static_cast<std::size_t>(tree_id);  // negative: out of range
    if (tree >= tree_count_) return 0;
    const std::uint16_t list = tree_entries_[tree];
    return list != kWideList ? list : wide_lists_.at(tree_id);
  }
  // The list tree `tree_id` leaves on, its bit in the default set read first; then its
  // compact entry while they hold, else its entry.
  std::uint32_t multicast_list(int tree_id) const {
    const auto tree = static_cast<std::size_t>(tree_id);  // negative: out of range
    if (tree >= tree_count_) return 0;
    if ((default_words_[tree / 64] >> (tree % 64) & 1u) != 0) return default_list_;
    if (compact_ == nullptr) return list_of(tree_id);
    if (compact_nibbles_) return compact_[tree / 2] >> (4 * (tree % 2)) & 0xFu;
    return compact_[tree];
  }
  void build_compact_entries();
  void drop_compact_entries() { compact_ = nullptr; }
  void mark_default(std::size_t tree, bool on_default) {
    const std::uint64_t bit = std::uint64_t{1} << (tree % 64);
    std::uint64_t& word = default_trees_[tree / 64];
    word = on_default ? word | bit : word & ~bit;
    if (tree / 64 < kInlineDefaultWords) default_inline_[tree / 64] = word;
  }
  void choose_default_list();
  std::uint32_t list_index(const std::vector<int>& ports);
  void resolve_route(std::uint32_t list);
  int missing_port(const std::vector<int>& ports) const;  // -1: every port exists
  [[noreturn]] void throw_missing_port(int tree_id, int port) const;

  // What a forward reads, kept in two lines: the switch is cold at each chunk. A unicast
  // forward reads the first, which holds the sinks of the last two destinations forwarded
  // to (a ring's switch sees two: its own site and the successor), and the destination's
  // port in unicast_ and its sink in egress_ only for another. A multicast one reads the
  // second, then its tree's bit in the default set and, for a tree not on the default
  // list, its entry; then its route, which counts it. A switch's trees mostly leave on one
  // list (a site's own port, at every leaf of a tree and at a fabric's site), the default
  // one (chosen at the start of the simulation: the list most trees use): the set is a bit
  // per tree, 16 times smaller than the entries, and the default list's route stays cached.
  // Each line has the latency, read before either forward. The multicast line also names
  // the local FPGA's hot block, fetched first: its miss then overlaps the look-up's.
  // The default set of the first 1,024 trees follows it, in two lines of its own: the
  // link delivering here fetches the three lines ahead of its arrival (DeliveryHint).
  alignas(64) sc_core::sc_time latency_;
  std::uint64_t unicast_forwarded_ = 0;
  static constexpr int kNoSite = std::numeric_limits<int>::min();
  std::array<int, 2> recent_dst_{kNoSite, kNoSite};
  std::array<ChunkSink, 2> recent_sink_{};
  std::uint32_t recent_next_ = 0;                   // the entry a new destination replaces
  alignas(64) sc_core::sc_time multicast_latency_;  // latency_ again
  // tree_lists_'s entries and size, routes_'s entries, default_trees_'s words (bit t % 64
  // of word t / 64 set while tree t's list is the default one): refreshed as they grow.
  const std::uint16_t* tree_entries_ = nullptr;
  std::size_t tree_count_ = 0;
  Route* route_entries_ = nullptr;
  const std::uint64_t* default_words_ = nullptr;
  std::uint32_t default_list_ = 0;  // 0: none (before the start)
  bool compact_nibbles_ = false;    // compact_'s entries are 4 bits
  const char* local_hint_ = nullptr;
  // While set (from the start of simulation until a tree's entry changes), every tree's
  // list in 4 bits (a switch with up to 16 lists, as a WAN site's) or 8 (up to 256): the
  // 2-byte entries spread a 1,000-site all-to-all's over 32 lines a switch (2 MB in all),
  // and a forward's read of its tree's entry missed the caches.
  const std::uint8_t* compact_ = nullptr;
  // default_trees_'s first words, which default_words_ names while there are no more.
  static constexpr std::size_t kInlineDefaultWords = 16;
  alignas(64) std::array<std::uint64_t, kInlineDefaultWords> default_inline_{};
  std::vector<std::uint16_t> tree_lists_;
  std::vector<Route> routes_{Route{}};  // per list; [0]: no list
  std::vector<std::uint64_t> default_trees_;
  std::uint64_t unroutable_ = 0;
  std::vector<std::uint16_t> spilled_ports_;
  std::vector<ChunkSink> egress_;  // per port of `out`: what it is bound to
  std::vector<int> unicast_;       // destination site -> egress port, -1: no route
  bool ports_bound_ = false;       // since the start of simulation
  SwitchParams params_;
  std::vector<std::vector<int>> lists_{{}};                 // per list: its ports
  std::map<std::vector<int>, std::uint32_t> list_indices_;  // port list -> its index
  std::unordered_map<int, std::uint32_t> wide_lists_;       // tree id -> list >= kWideList
  tlm_utils::peq_with_cb_and_phase<MulticastSwitch> peq_;
  static constexpr std::uint32_t kNoSet = ~std::uint32_t{0};
  std::uint32_t share_request_ = 0;
  std::unique_ptr<FanoutLog> fanout_log_;      // null: no list is shared
  std::vector<std::uint8_t> compact_entries_;  // compact_'s block
  std::vector<WanLink*> port_links_;           // [port]: a WanLink bound directly, or null
  // Per list: its member set in the log (kNoSet: not shared), the members' count and the
  // first ports' numbers (the others' are in spilled_ports_).
  struct SharedList {
    std::uint32_t set = kNoSet;
    std::uint32_t members = 0;
    std::array<std::uint16_t, kInlineSinks> first{};
  };
  std::vector<SharedList> shared_;
};

}  // namespace aggnet
