// Installs a run's fault plan (model/faults.h) in a built NetworkSystem: loss rates on the
// WAN links, links going down and back up with rerouting over the surviving graph, stalled
// sites, and the test-only hooks. Seeded: the same seed gives the same losses.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "model/routing.h"

namespace aggnet {

class NetworkSystem;

/// FaultInjector: an SC_THREAD that applies the timed faults in time order. When a link
/// goes down (or comes back up) every switch's unicast routes and every multicast tree are
/// recomputed over the links that are up (shortest delay, as at build time); a receiver
/// cut off from a sender leaves its tree. The control plane's pacing rates and offsets
/// are not recomputed.
class FaultInjector : public sc_core::sc_module {
 public:
  /// Errors: std::invalid_argument for a site or link the platform does not have.
  FaultInjector(sc_core::sc_module_name name, const NetworkSystem& system);

  /// Routing over the links up now (the system's until a link goes down or comes up).
  const Routing& routing() const;
  bool link_up(int link_index) const { return up_.at(static_cast<std::size_t>(link_index)); }
  /// "lon-nyc down since 150.000 ms; ..." (empty when every link is up).
  std::string outages() const;
  /// Group members that `site` cannot reach or be reached from over the links up now.
  std::vector<int> unreachable_from(int site, const std::vector<int>& members) const;
  std::uint64_t reroutes() const { return reroutes_; }

 private:
  struct Event {
    std::uint64_t at_ps;
    int kind;  // 0: link down, 1: link up, 2: site stall
    int index;
    std::uint64_t until_ps;
  };
  void run();
  bool all_finished() const;
  void set_link(int link, bool up);
  void reroute();
  void install_trees(const Routing& routing);
  bool set_tree(int tree_id, const std::map<int, std::vector<int>>& ports);
  std::map<int, std::vector<int>> tree_ports(const Routing& routing,
                                             const std::vector<int>& members, int sender) const;

  const NetworkSystem& system_;
  std::vector<Event> events_;
  std::vector<bool> up_;                      // [platform link]
  std::vector<std::uint64_t> down_since_ps_;  // [platform link]
  std::vector<int> down_windows_;             // [platform link] down windows open now
  std::unique_ptr<Routing> routing_;          // null: no reroute yet, the system's routing
  std::uint64_t reroutes_ = 0;
};

}  // namespace aggnet
