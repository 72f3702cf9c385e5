// Parameters of the in-line FPGA aggregator and its buffer memory (plain units).
#pragma once

#include <cstdint>

#include "model/param_info.h"

namespace aggnet {

/// FPGA aggregator pipeline + buffer memory at one site's edge.
/// Defaults: 512-bit datapath at 500 MHz (32 GB/s, a typical Versal AXI-stream
/// reduction datapath; our estimate), 64 cycles latency (estimate), 64 MiB buffer
/// (on-chip SRAM scale of the AMD V80's Versal device, "tens of MB": shared/data README).
struct FpgaParams {
  std::uint64_t datapath_bits = 512;         ///< width of the reduction datapath
  std::uint64_t clock_hz = 500'000'000;      ///< pipeline clock
  std::uint64_t latency_cycles = 64;         ///< pipeline fill latency
  std::uint64_t buffer_bytes = 64ull << 20;  ///< buffer memory for aggregation slots
  /// Reduction throughput in bytes/s = datapath_bits / 8 * clock_hz.
  std::uint64_t throughput_bytes_per_s() const { return datapath_bits / 8 * clock_hz; }
  /// Pipeline latency in ps (rounded up).
  std::uint64_t latency_ps() const {
    return (latency_cycles * 1'000'000'000'000ull + clock_hz - 1) / clock_hz;
  }
  static const ModuleParamInfo& info();
};

}  // namespace aggnet
