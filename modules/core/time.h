// Conversions between plain picosecond integers (configs, traffic/) and sc_time.
#pragma once

#include <cstdint>
#include <systemc>

namespace aggnet {

/// Exact conversion: aggnet keeps SystemC's default 1 ps time resolution, so a
/// picosecond count is an sc_time value without rounding.
inline sc_core::sc_time ps_time(std::uint64_t ps) { return sc_core::sc_time::from_value(ps); }

/// sc_time -> whole picoseconds (exact at the default 1 ps resolution).
inline std::uint64_t to_ps(const sc_core::sc_time& t) { return t.value(); }

/// sc_time -> nanoseconds, the same double as `t.to_seconds() * 1e9` (SystemC computes
/// value x resolution in fs x 1e-15; the resolution is 1,000 fs), without its call into
/// the library and its two loads through the simulation context: a link adds one such
/// value to its queueing histogram per crossing that waited.
inline double to_ns(const sc_core::sc_time& t) {
  return static_cast<double>(t.value()) * 1000.0 * 1e-15 * 1e9;
}

}  // namespace aggnet
