// Options of one simulation run (what `aggnet run` takes besides the platform).
#pragma once

#include <cstdint>

#include "model/params/cluster.h"

namespace aggnet {

/// Arrival-aligned sends (platforms/send_alignment.h): with an aligned start, member s
/// starts its stream at the agreed start + its offset, so contributions reach each
/// receiver together.
enum class SendAlignment {
  kNone,     ///< every member starts at the agreed start
  kArrival,  ///< always use the offsets
  kAuto,     ///< per group, the offsets only where they make the group land earlier
};

/// Plain-unit run options. Defaults are those of `aggnet run` without options.
struct RunOptions {
  std::uint64_t gradient_bytes = 1ull << 30;  ///< G per site and round (1 GiB)
  std::uint64_t chunk_bytes = 1ull << 20;     ///< chunk = aggregation slot (1 MiB)
  std::uint64_t buffer_bytes = 0;             ///< every site's FPGA buffer; 0: the platform's
  int steps = 0;                              ///< 0: one schedule period
  FlowControl flow_control = FlowControl::kPacing;
  double pacing_margin = 0.02;  ///< pacing: fraction below the computed safe rate
  /// Members of a group start sending at one agreed time (after exchanging ready
  /// messages) instead of as soon as each is ready. Pacing assumes it; credit does not.
  bool aligned_start = true;
  /// Send offsets (needs an aligned start; ignored otherwise).
  SendAlignment alignment = SendAlignment::kAuto;
  bool multicast = true;            ///< false: one unicast copy per receiver
  bool aggregation = true;          ///< false: FPGAs pass contributions through
  bool jitter = false;              ///< apply the links' jitter figures
  std::uint64_t seed = 1;           ///< jitter random seed
  bool functional = false;          ///< carry real float data and check every sum
  std::uint64_t credit_bytes = 64;  ///< size of a credit message
};

}  // namespace aggnet
