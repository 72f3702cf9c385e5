// Parameters of a site's GPU compute cluster (plain units).
#pragma once

#include <cstdint>

#include "model/param_info.h"

namespace aggnet {

/// How senders avoid overrunning the receivers' aggregation slots
/// (docs/simulation-semantics.md): `kPacing` sends at a rate computed from the buffer and
/// the known skews; `kCredit` sends only with a credit (a free slot) from every receiver.
enum class FlowControl { kPacing, kCredit };

/// The GPU cluster behind one site's edge, and its access link to the edge device.
/// Defaults are illustrative of one training step of a large model (our estimate):
/// 1 s compute phase, 400 Gb/s access link, 2 us access delay.
struct ClusterParams {
  std::uint64_t compute_ps = 1'000'000'000'000;          ///< compute phase per step
  std::uint64_t access_bandwidth_bps = 400'000'000'000;  ///< cluster <-> edge link rate
  std::uint64_t access_delay_ps = 2'000'000;             ///< cluster <-> edge one-way delay
  static const ModuleParamInfo& info();
};

}  // namespace aggnet
