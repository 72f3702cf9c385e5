// Platform description: sites, WAN links and per-site module parameters. Plain data
// (no SystemC, no YAML): config/platform_loader.h reads it from YAML.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/memory_tiers.h"
#include "model/params/cluster.h"
#include "model/params/fpga.h"
#include "model/params/network.h"

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
  /// A fabric's switch (the co-located reference's data-centre switch): no cluster, FPGA
  /// or access link, only its links. Switch-only sites follow every site with a cluster.
  bool switch_only = false;
};

/// A bidirectional WAN link between sites a and b; the builder instantiates one
/// WanLink module per direction, both with `params`.
struct LinkSpec {
  int a = -1, b = -1;  ///< indices into Platform::sites
  WanLinkParams params;
  std::string source;  ///< where the delay figure comes from (for reports)
  /// Jitter seeds of its two directions: run seed + 2 x this + direction; -1: the link's
  /// position in Platform::links.
  int seed_index = -1;
  /// Faults declared on the link (`loss:`, `down:` in the platform file) as `--fault`
  /// specs, e.g. "loss:nyc-lon=0.001", "down:nyc-lon@1s-2s" (model/faults.h).
  std::vector<std::string> faults;
};

/// The co-located reference: the same clusters in one data centre, every pair of sites
/// joined by a path with these parameters (Platform::colocated_variant builds it).
struct ColocatedSpec {
  WanLinkParams link;  ///< default: 2 us, 400 Gbps
};

struct Platform {
  std::string name;
  std::string file;  ///< path it was loaded from (for messages)
  std::vector<Site> sites;
  std::vector<LinkSpec> links;
  ColocatedSpec colocated;
  /// The FPGA buffer's memory technologies, tried in order (`memory_tiers:`, whose
  /// values replace the defaults': docs/memory-tiers.md).
  std::vector<MemoryTier> memory_tiers = default_memory_tiers();
  /// 1-based line of every parameter key read from the file, by dotted path
  /// ("sites.lon.fpga.buffer", "defaults.fpga.buffer"), for errors found later.
  std::map<std::string, int> key_lines;

  /// Index of the site with this code, or -1.
  int site_index(const std::string& code) const;
  /// The same clusters and parameters in one data centre on a non-blocking fabric: one
  /// switch-only site (code kFabricCode, last) and one link from each site to it, O(n)
  /// links. A port link has `colocated.link`'s parameters but half its delay (a path
  /// site - fabric - site takes the declared delay; an odd ps is rounded down) and n - 1
  /// times its bandwidth (a site's port carries what its n - 1 links of a full mesh
  /// carried together, so the fabric throttles no pattern the mesh carried); the fabric
  /// switch forwards without latency. Sites without clusters (switch-only) are dropped.
  Platform colocated_variant() const;
  static constexpr const char* kFabricCode = "fabric";
};

}  // namespace aggnet
