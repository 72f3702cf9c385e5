// Parameters of the in-line FPGA aggregator and its buffer memory (plain units),
// declared once in the struct's table (model/param_info.h).
#pragma once

#include <cstdint>
#include <string>

#include "model/param_info.h"

namespace aggnet {

/// FPGA aggregator pipeline + buffer memory at one site's edge.
struct FpgaParams {
  std::uint64_t datapath_width_bits = 512;
  std::uint64_t clock_hz = 500'000'000;
  std::uint64_t latency_cycles = 64;
  std::uint64_t buffer_bytes = 64ull << 20;

  /// Reduction throughput in bits/s = datapath_width_bits x clock_hz, in 128 bits.
  unsigned __int128 throughput_bps_wide() const {
    return static_cast<unsigned __int128>(datapath_width_bits) * clock_hz;
  }
  /// Pipeline latency in ps (rounded up), in 128 bits.
  unsigned __int128 latency_ps_wide() const {
    return (static_cast<unsigned __int128>(latency_cycles) * 1'000'000'000'000ull + clock_hz - 1) /
           clock_hz;
  }
  /// Reduction throughput in bytes/s = datapath_width_bits / 8 * clock_hz. The table's
  /// invariants keep it and latency_ps() within 64 bits for loaded platforms.
  std::uint64_t throughput_bytes_per_s() const { return datapath_width_bits / 8 * clock_hz; }
  std::uint64_t latency_ps() const { return static_cast<std::uint64_t>(latency_ps_wide()); }

  static const ParamTable<FpgaParams>& table();
};

inline const ParamTable<FpgaParams>& FpgaParams::table() {
  using P = FpgaParams;
  static const ParamTable<P> table{
      "FpgaAggregator",
      "fpga",
      "In-line FPGA aggregator pipeline and its buffer memory at a site's edge (YAML: "
      "defaults.fpga, sites[*].fpga). Throughput = datapath_width / 8 x clock bytes/s. "
      "Defaults are estimates: a 512-bit Versal AXI-stream datapath at 500 MHz (32 GB/s), "
      "64 cycles latency, 64 MiB buffer (on-chip SRAM scale of the AMD V80, 'tens of MB'; "
      "its 32 GB HBM is the other end of a buffer sweep).",
      {
          {"datapath_width", &P::datapath_width_bits, "width of the reduction datapath in bits",
           Check{true, 8}},
          {"clock", &P::clock_hz, "pipeline clock", kPositive},
          {"latency_cycles", &P::latency_cycles, "pipeline fill latency in cycles"},
          {"buffer", &P::buffer_bytes, "buffer memory for aggregation slots (one chunk per slot)",
           kPositive},
      },
      {{"`datapath_width` x `clock` < 2^64 bit/s",
        {"datapath_width", "clock"},
        [](const P& p) -> std::string {
          if (p.throughput_bps_wide() >> 64 == 0) return "";
          return "expected a throughput datapath_width x clock below 2^64 bit/s, got " +
                 std::to_string(p.datapath_width_bits) + " bit at " + std::to_string(p.clock_hz) +
                 " Hz";
        }},
       {"`latency_cycles` / `clock` <= 1000 s (every delay term's bound)",
        {"latency_cycles", "clock"},
        [](const P& p) -> std::string {
          if (p.latency_ps_wide() <= kMaxDelayPs) return "";
          return "expected a pipeline latency latency_cycles / clock of at most 1000 s, got " +
                 std::to_string(p.latency_cycles) + " cycles at " + std::to_string(p.clock_hz) +
                 " Hz";
        }}}};
  return table;
}

}  // namespace aggnet
