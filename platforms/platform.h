// Platform description: sites, WAN links and per-site module parameters, loaded and
// validated from YAML. Plain C++ (no SystemC): used by the SystemC builder, by the
// analytic time model in traffic/ and by the sweep tools.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "modules/cluster/params.h"
#include "modules/fpga/params.h"
#include "modules/network/params.h"

namespace aggnet {

/// One site: a city with a multicast switch, an FPGA aggregator and a GPU cluster.
struct Site {
  std::string code;       ///< short unique code used everywhere ("lon")
  std::string name;       ///< display name ("London")
  std::string continent;  ///< "europe", "north_america", "asia", ...
  double lat_deg = 0, lng_deg = 0;
  FpgaParams fpga;        ///< defaults.fpga overridden by the site's own `fpga:` keys
  ClusterParams cluster;  ///< defaults.cluster overridden by the site's `cluster:` keys
  SwitchParams sw;        ///< defaults.switch overridden by the site's `switch:` keys
};

/// A bidirectional WAN link between sites a and b; the builder instantiates one
/// WanLink module per direction, both with `params`.
struct LinkSpec {
  int a = -1, b = -1;  ///< indices into Platform::sites
  WanLinkParams params;
  std::string source;  ///< where the delay figure comes from (for reports)
};

/// The co-located reference: the same clusters in one data centre, every pair of
/// switches joined by a data-centre link with these parameters.
struct ColocatedSpec {
  WanLinkParams link;  ///< default: 2 us, 400 Gbps
};

struct Platform {
  std::string name;
  std::string file;  ///< path it was loaded from (for messages)
  std::vector<Site> sites;
  std::vector<LinkSpec> links;
  ColocatedSpec colocated;
  /// 1-based line of every parameter key read from the file, by dotted path
  /// ("sites.lon.fpga.buffer", "defaults.fpga.buffer"), for errors found later.
  std::map<std::string, int> key_lines;

  /// Index of the site with this code, or -1.
  int site_index(const std::string& code) const;
  /// The same clusters and parameters in one data centre: a full mesh of `colocated.link`.
  Platform colocated_variant() const;
};

/// One `--set path=value` override applied to the YAML tree before validation,
/// e.g. {"defaults.link.bandwidth", "10Gbps"} or {"sites.lon.fpga.buffer", "1GiB"}.
using Override = std::pair<std::string, std::string>;

/// Loads and validates a platform file. Errors: ConfigError (one line with file, line,
/// key and what was expected) for malformed YAML, unknown keys, bad units, zero or
/// negative rates, duplicate or unknown sites, links to unknown sites, a disconnected
/// graph, an MTU not larger than the header.
Platform load_platform(const std::string& path, const std::vector<Override>& overrides = {});

/// Shortest-delay routing over the platform's links (Boost.Graph Dijkstra; the
/// reference network routes by IS-IS metric = RTT, so shortest delay is faithful).
class Routing {
 public:
  explicit Routing(const Platform& platform);
  int num_sites() const { return n_; }
  /// One-way propagation delay of the shortest path s -> d, in ps (0 when s == d).
  std::uint64_t delay_ps(int s, int d) const;
  /// Sites on the shortest path s -> d, both ends included.
  std::vector<int> path(int s, int d) const;
  /// Next site after `at` on the shortest path at -> d (d itself if adjacent).
  int next_hop(int at, int d) const;
  /// Index into Platform::links of the link joining adjacent sites u and v, or -1.
  int link_index(int u, int v) const;
  /// Multicast tree from `src` to `receivers`: the union of the shortest paths, as
  /// directed hops (u, v). Each hop appears once however many receivers lie behind it.
  std::vector<std::pair<int, int>> multicast_tree(int src, const std::vector<int>& receivers) const;

 private:
  int n_ = 0;
  std::vector<std::vector<std::uint64_t>> dist_ps_;  // [s][d]
  std::vector<std::vector<int>> pred_;               // [s][d]: predecessor of d from s
  std::map<std::pair<int, int>, int> link_of_;
};

}  // namespace aggnet
