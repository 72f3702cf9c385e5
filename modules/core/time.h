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

}  // namespace aggnet
