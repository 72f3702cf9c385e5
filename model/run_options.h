// Options of one simulation run (what `aggnet run` takes besides the platform): the one
// RunOptions type of the simulation, the analytic time model, the optimizer and the sizing.
// The command-line options that set it are declared once in options/run_option_table.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "model/faults.h"
#include "model/params/cluster.h"
#include "model/params/fpga.h"
#include "model/schedule.h"

namespace aggnet {

/// Arrival-aligned sends (platforms/send_alignment.h): with an aligned start, member s
/// starts its stream at the agreed start + its offset, so contributions reach each
/// receiver together.
enum class SendAlignment {
  kNone,     ///< every member starts at the agreed start
  kArrival,  ///< always use the offsets
  kAuto,     ///< per group, the offsets only where they make the group land earlier
};

/// Plain-unit run options. Defaults are those of `aggnet run` without options (a test
/// checks that the option table's defaults give exactly these).
struct RunOptions {
  std::uint64_t gradient_bytes = 1ull << 30;  ///< G per site and round (1 GiB)
  std::uint64_t chunk_bytes = 1ull << 20;     ///< chunk = aggregation slot (1 MiB)
  /// Burst mode (`--burst K`): one transaction carries K consecutive chunks of a stream,
  /// timed as one unit (docs/simulation-semantics.md, "Burst mode"). 1: exact per chunk.
  std::uint64_t burst_chunks = 1;
  std::uint64_t buffer_bytes = 0;  ///< every site's FPGA buffer; 0: the platform's
  /// 0: one schedule period (`aggnet run` first raises it to the rounds to eps-consensus)
  int steps = 0;
  double eps = 1e-3;  ///< target consensus error ||W_r ... W_1 - J||_2
  FlowControl flow_control = FlowControl::kPacing;
  double pacing_margin = 0.02;  ///< pacing: fraction below the computed safe rate
  /// Members of a group start sending at one agreed time (after exchanging ready
  /// messages) instead of as soon as each is ready (`--round-start`: by default with
  /// pacing, not with credit).
  bool aligned_start = true;
  /// `--round-start auto`: reduction trees then start immediately (ready_exchange).
  bool round_start_auto = true;
  /// Send offsets (needs an aligned start; ignored otherwise).
  SendAlignment alignment = SendAlignment::kAuto;
  /// false: a multicast group whose offsets need the general method (4 or more members,
  /// or a triad the closed form cannot align; model/send_alignment.h) gets none, as with
  /// kNone; the closed form still applies (the optimizer's screening).
  bool general_offsets = true;
  bool multicast = true;            ///< false: one unicast copy per receiver
  bool aggregation = true;          ///< false: FPGAs pass contributions through
  bool jitter = false;              ///< apply the links' jitter figures
  std::uint64_t seed = 1;           ///< jitter random seed
  bool functional = false;          ///< carry real float data and check every sum
  std::uint64_t credit_bytes = 64;  ///< size of a control message (ready, grant, credit, ack)
  FaultPlan faults;                 ///< fault injection and loss recovery (model/faults.h)
  /// `--routing load-aware`: the command plans link_metric for its schedule
  /// (traffic/load_aware.h) before it times or simulates it.
  bool load_aware_routing = false;
  /// Routing weight of each platform link (Routing's metric); empty: each link's delay.
  std::vector<std::uint64_t> link_metric;
};

/// Whether members of a `collective` round exchange ready messages and start together.
/// `--round-start auto` decides `aligned_start` for group schedules (aligned with pacing and
/// drop); reduction trees under `auto` start as each member is ready, their send offsets
/// counted from its own start: members ready together (equal compute) align without the
/// exchange's cost of the longest path, a late one's partial sums wait in relays' buffers.
inline bool ready_exchange(const RunOptions& o, Collective collective) {
  if (collective == Collective::kReductionTree && o.round_start_auto) return false;
  return o.aligned_start;
}

/// Bytes of one transaction: a chunk, or a burst of burst_chunks chunks.
inline std::uint64_t transaction_bytes(const RunOptions& o) {
  return o.chunk_bytes * o.burst_chunks;
}

/// The options as the timing sees them: a burst is timed (serialized, paced, credited,
/// held in the FPGA) as one chunk of transaction_bytes, so the control plane's rates,
/// slots and latencies are those of bursts. The result has burst_chunks 1.
inline RunOptions per_transaction(RunOptions o) {
  o.chunk_bytes = transaction_bytes(o);
  o.burst_chunks = 1;
  return o;
}

/// A site's FPGA buffer in a run: `--buffer` (RunOptions::buffer_bytes) for every site when
/// given, else the platform's. The one place that resolves the override.
inline std::uint64_t fpga_buffer_bytes(const RunOptions& options, const FpgaParams& fpga) {
  return options.buffer_bytes ? options.buffer_bytes : fpga.buffer_bytes;
}

}  // namespace aggnet
