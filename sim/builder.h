// Composes the SystemC modules of a platform: per site a ComputeCluster, its access
// links, a MulticastSwitch and an FpgaAggregator; per WAN link two WanLink modules.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "model/control_plane.h"
#include "model/reduction_forest.h"
#include "model/routing.h"
#include "model/run_options.h"
#include "model/schedule.h"
#include "modules/cluster/compute_cluster.h"
#include "modules/core/chunk.h"
#include "modules/fpga/fpga_aggregator.h"
#include "modules/network/multicast_switch.h"
#include "modules/network/price_table.h"
#include "modules/network/wan_link.h"

namespace aggnet {

class FaultInjector;  // sim/faults.h
class Watchdog;       // sim/watchdog.h

/// One site's modules, children of the site's scope module: `<system>.<site>.cluster`,
/// `.access_up`, `.access_down`, `.switch`, `.fpga` (one naming for statistics and waveforms).
struct SiteModules {
  std::unique_ptr<ComputeCluster> cluster;
  std::unique_ptr<WanLink> access_up, access_down;
  std::unique_ptr<MulticastSwitch> sw;
  std::unique_ptr<FpgaAggregator> fpga;
};

/// One direction of a WAN link, with its ends; a child of the sending site's scope:
/// `<system>.<from>.link_to_<to>`.
struct DirectedLink {
  int from = -1, to = -1;
  std::unique_ptr<WanLink> link;
};

/// A whole platform running one schedule. Construct during elaboration (before
/// sc_start); several systems (the WAN and its co-located reference) can run side by
/// side in one simulation. Errors: std::invalid_argument for a buffer smaller than one
/// chunk (the CLI validates this earlier with a ConfigError).
class NetworkSystem : public sc_core::sc_module {
 public:
  NetworkSystem(sc_core::sc_module_name name, const Platform& platform, const Schedule& schedule,
                const RunOptions& options);
  ~NetworkSystem() override;

  const Platform& platform() const { return platform_; }
  const Schedule& schedule() const { return schedule_; }
  const RunOptions& options() const { return options_; }
  const Routing& routing() const { return routing_; }
  /// The sites with a cluster (Platform::sites' first ones; switch-only sites follow).
  const std::vector<SiteModules>& sites() const { return sites_; }
  /// Both directions of every platform link, except for host-based collectives without
  /// faults: only the links on the routes between group members (the others carry nothing).
  const std::vector<DirectedLink>& links() const { return links_; }
  const std::vector<RoundPlan>& round_plans() const { return plans_; }
  /// Reduction-forest schedules: the control plane's chunk ranges and send offsets.
  const ForestPlan& forest_plan() const { return forest_; }
  int steps() const { return steps_; }
  /// Switch egress ports: towards neighbour `to` (-1 if not adjacent or the link is not
  /// built) and to the FPGA.
  int port_to(int from, int to) const {
    const auto it = port_to_[from].find(to);
    return it == port_to_[from].end() ? -1 : it->second;
  }
  int local_port(int site) const { return local_port_[site]; }
  /// The run's faults (options().faults installed) and its watchdog (sim/faults.h,
  /// sim/watchdog.h).
  const FaultInjector& faults() const { return *faults_; }
  const Watchdog& watchdog() const { return *watchdog_; }

 private:
  void build_sites();
  MulticastSwitch& switch_of(int site) const;
  void build_links();
  std::vector<bool> links_in_use() const;  // [platform link]
  void install_routes();
  ComputeClusterConfig cluster_config(int site) const;
  ComputeClusterConfig host_collective_config(ComputeClusterConfig c) const;
  ComputeClusterConfig reduction_tree_config(ComputeClusterConfig c) const;
  void install_reduction_trees();

  Platform platform_;
  Schedule schedule_;
  RunOptions options_;
  Routing routing_;
  int steps_;
  ChunkPool pool_;
  PriceTables prices_;  // the links' wire sizes and serialization times, per kind of link
  std::vector<RoundPlan> plans_;
  std::vector<std::vector<int>> group_of_;  // [round][site]: its group in plans_, or -1
  ForestPlan forest_;
  // Ring step rules sendrecv and barrier: which sites have which ring step's segment.
  std::shared_ptr<RingProgress> ring_progress_;
  std::vector<std::unique_ptr<sc_core::sc_module>> scopes_;  // [site]; outlives its children
  std::vector<SiteModules> sites_;                           // [site with a cluster]
  std::vector<std::unique_ptr<MulticastSwitch>> fabric_;     // [switch-only site - sites_.size()]
  std::vector<DirectedLink> links_;
  std::vector<std::map<int, int>> port_to_;  // [site][neighbour] -> switch egress port
  std::vector<int> local_port_;              // [site] -> switch egress port to the FPGA
  std::unique_ptr<FaultInjector> faults_;
  std::unique_ptr<Watchdog> watchdog_;
};

/// The co-located reference of a run: the platform's clusters on a data-centre fabric
/// (Platform::colocated_variant: one switch, one port link per site), and the schedule
/// with the rounds that never run emptied (the period unchanged; only the reference's
/// summary is reported).
struct ColocatedReference {
  Platform platform;
  Schedule schedule;
};
ColocatedReference colocated_reference(const Platform& platform, const Schedule& schedule,
                                       const RunOptions& options);

}  // namespace aggnet
