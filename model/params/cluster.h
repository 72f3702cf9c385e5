// Parameters of a site's GPU compute cluster (plain units), declared once in the
// struct's table (model/param_info.h).
#pragma once

#include <cstdint>

#include "model/param_info.h"

namespace aggnet {

/// How senders avoid overrunning the receivers' aggregation slots
/// (docs/simulation-semantics.md): `kPacing` sends at a rate computed from the buffer and
/// the known skews; `kCredit` sends only with a credit (a free slot) from every receiver;
/// `kDrop` has no flow control: senders send at the link rate, a contribution that finds
/// no free slot is dropped and retransmitted after a timeout.
enum class FlowControl { kPacing, kCredit, kDrop };

/// The GPU cluster behind one site's edge, and its access link to the edge device.
struct ClusterParams {
  std::uint64_t compute_time_ps = 1'000'000'000'000;
  std::uint64_t access_bandwidth_bps = 400'000'000'000;
  std::uint64_t access_delay_ps = 2'000'000;
  static const ParamTable<ClusterParams>& table();
};

inline const ParamTable<ClusterParams>& ClusterParams::table() {
  using P = ClusterParams;
  static const ParamTable<P> table{
      "Cluster",
      "cluster",
      "The GPU cluster behind a site's edge and its access link (YAML: defaults.cluster, "
      "sites[*].cluster). Defaults are illustrative of one training step of a large model "
      "(our estimate).",
      {
          {"compute_time", &P::compute_time_ps, "compute phase per training step"},
          {"access_bandwidth", &P::access_bandwidth_bps, "rate of the cluster <-> edge access link",
           kPositive},
          {"access_delay", &P::access_delay_ps, "one-way delay of the cluster <-> edge access link",
           kDelay},
      }};
  return table;
}

}  // namespace aggnet
