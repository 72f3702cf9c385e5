// Exact parsing and formatting of quantities with units.
//
// All configuration values in aggnet carry units ("64MiB", "100Gbps", "33.3ms").
// Parsing is exact decimal arithmetic on integers (no double round trip), so
// "33.3ms" becomes exactly 33'300'000'000 ps: SystemC's default 1 ps resolution
// then represents it without truncation drift.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace aggnet {

/// Thrown when a string is not a valid quantity. what() says what was expected,
/// e.g. "expected a size like '64MiB' or '2048B'". Callers add file/line/key.
class UnitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A quantity whose unit is not an accepted one ("20EiB": sizes stop at TiB). what() names
/// the unit and lists the accepted ones, so callers pass it on rather than a generic form.
class UnknownUnitError : public UnitError {
 public:
  using UnitError::UnitError;
};

/// Size in bytes. Accepts B, kB/KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB
/// (powers of 1024), and bit forms "bit", "kbit" ... (must be a whole number of bytes).
/// A bare number is rejected, as for rates and times: "64" could mean bytes or MiB.
/// Fractions are allowed if the result is whole ("1.5KiB").
/// Errors: UnknownUnitError for an unknown unit; UnitError on syntax, negative value,
/// overflow or a fraction of a byte.
std::uint64_t parse_bytes(const std::string& text);

/// Bit rate in bits per second. Accepts bps, kbps, Mbps, Gbps, Tbps, the "b/s" forms
/// (Gb/s) and byte rates (B/s, MB/s, GB/s, GiB/s). Powers of 1000 for rates.
/// Errors: UnitError; zero is accepted here, callers reject it where it is invalid.
std::uint64_t parse_rate_bps(const std::string& text);

/// Time in picoseconds. Accepts ps, ns, us, ms, s, min. A bare number is rejected
/// (a time needs a unit). Errors: UnitError, also when not a whole number of ps.
std::uint64_t parse_time_ps(const std::string& text);

/// Frequency in Hz. Accepts Hz, kHz, MHz, GHz. Errors: UnitError.
std::uint64_t parse_frequency_hz(const std::string& text);

/// Plain non-negative decimal number ("0.05", "1e-3"). Errors: UnitError.
double parse_number(const std::string& text);

/// Human-readable forms used in tables: "64.0 MiB", "100 Gbps", "33.300 ms".
std::string format_bytes(std::uint64_t bytes);
std::string format_rate(double bps);
std::string format_time_ps(double ps);

/// Header-inflated wire size of a payload split into packets of at most `mtu_bytes`
/// (header included): payload + ceil(payload / (mtu - header)) * header.
/// Precondition: mtu_bytes > header_bytes.
std::uint64_t wire_bytes(std::uint64_t payload_bytes, std::uint64_t mtu_bytes,
                         std::uint64_t header_bytes);

/// Serialization time of `bytes` at `rate_bps`, in ps, rounded up to a whole ps.
/// Exact integer arithmetic (128-bit intermediate).
std::uint64_t serialization_ps(std::uint64_t bytes, std::uint64_t rate_bps);

}  // namespace aggnet
