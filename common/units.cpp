// Exact parsing and formatting of quantities with units (see units.h).
//
// A quantity "<decimal><unit>" is parsed into an exact rational
//   mantissa * 10^exp10 * unit_num / unit_den
// with 128-bit unsigned integer arithmetic, and accepted only if that is a whole
// number that fits in 64 bits. No floating point is involved, so "33.3ms" is exactly
// 33'300'000'000 ps.
#include "common/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace aggnet {
namespace {

using u128 = unsigned __int128;

constexpr u128 kU128Max = ~static_cast<u128>(0);
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

/// A unit suffix and its value as an exact ratio num / den of the base unit.
struct UnitDef {
  const char* suffix;
  u128 num;
  u128 den;
};

constexpr u128 pow_u128(u128 base, int e) {
  u128 r = 1;
  for (int i = 0; i < e; ++i) r *= base;
  return r;
}

constexpr u128 kKilo = 1000, kMega = pow_u128(1000, 2), kGiga = pow_u128(1000, 3),
               kTera = pow_u128(1000, 4);
constexpr u128 kKi = 1024, kMi = pow_u128(1024, 2), kGi = pow_u128(1024, 3),
               kTi = pow_u128(1024, 4);

// Sizes, in bytes.
const std::vector<UnitDef>& byte_units() {
  static const std::vector<UnitDef> units = {
      {"", 1, 1},         {"B", 1, 1},        {"kB", kKilo, 1},   {"KB", kKilo, 1},
      {"MB", kMega, 1},   {"GB", kGiga, 1},   {"TB", kTera, 1},   {"KiB", kKi, 1},
      {"MiB", kMi, 1},    {"GiB", kGi, 1},    {"TiB", kTi, 1},    {"bit", 1, 8},
      {"bits", 1, 8},     {"kbit", kKilo, 8}, {"Mbit", kMega, 8}, {"Gbit", kGiga, 8},
      {"Tbit", kTera, 8}, {"Kibit", kKi, 8},  {"Mibit", kMi, 8},  {"Gibit", kGi, 8},
      {"Tibit", kTi, 8},
  };
  return units;
}

// Rates, in bits per second. Powers of 1000 for the prefixes, except the explicitly
// binary byte rates (KiB/s ... TiB/s).
const std::vector<UnitDef>& rate_units() {
  static const std::vector<UnitDef> units = {
      {"bps", 1, 1},          {"kbps", kKilo, 1},     {"Mbps", kMega, 1},
      {"Gbps", kGiga, 1},     {"Tbps", kTera, 1},     {"b/s", 1, 1},
      {"kb/s", kKilo, 1},     {"Mb/s", kMega, 1},     {"Gb/s", kGiga, 1},
      {"Tb/s", kTera, 1},     {"bit/s", 1, 1},        {"kbit/s", kKilo, 1},
      {"Mbit/s", kMega, 1},   {"Gbit/s", kGiga, 1},   {"Tbit/s", kTera, 1},
      {"B/s", 8, 1},          {"kB/s", 8 * kKilo, 1}, {"KB/s", 8 * kKilo, 1},
      {"MB/s", 8 * kMega, 1}, {"GB/s", 8 * kGiga, 1}, {"TB/s", 8 * kTera, 1},
      {"KiB/s", 8 * kKi, 1},  {"MiB/s", 8 * kMi, 1},  {"GiB/s", 8 * kGi, 1},
      {"TiB/s", 8 * kTi, 1},
  };
  return units;
}

// Times, in picoseconds.
const std::vector<UnitDef>& time_units() {
  static const std::vector<UnitDef> units = {
      {"ps", 1, 1},
      {"ns", kKilo, 1},
      {"us", kMega, 1},
      {"\xC2\xB5s", kMega, 1},  // "µs" (U+00B5 MICRO SIGN)
      {"\xCE\xBCs", kMega, 1},  // "μs" (U+03BC GREEK SMALL LETTER MU)
      {"ms", kGiga, 1},
      {"s", kTera, 1},
      {"min", 60 * kTera, 1},
  };
  return units;
}

// Frequencies, in Hz.
const std::vector<UnitDef>& frequency_units() {
  static const std::vector<UnitDef> units = {
      {"Hz", 1, 1}, {"kHz", kKilo, 1}, {"MHz", kMega, 1}, {"GHz", kGiga, 1}, {"THz", kTera, 1}};
  return units;
}

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

/// A decimal number split into an integer mantissa and a power of ten.
struct Decimal {
  u128 mantissa = 0;
  int exp10 = 0;
};

/// Parses the leading non-negative decimal of `s` ("33.3", "1.5e3") and returns the
/// rest (the unit) in `rest`. `what` is the UnitError text on failure.
Decimal parse_decimal(const std::string& s, std::string& rest, const std::string& what) {
  std::size_t i = 0;
  if (i < s.size() && s[i] == '-') {
    throw UnitError(what + " (negative values are not allowed)");
  }
  if (i < s.size() && s[i] == '+') ++i;
  std::string int_digits, frac_digits;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) int_digits += s[i++];
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) frac_digits += s[i++];
  }
  if (int_digits.empty() && frac_digits.empty()) throw UnitError(what);
  long long exp10 = 0;
  // Exponent: 'e' or 'E' followed by an optional sign and at least one digit.
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    bool neg = false;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) neg = s[j++] == '-';
    if (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
      long long e = 0;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
        e = e * 10 + (s[j++] - '0');
        if (e > 1000) throw UnitError(what + " (exponent out of range)");
      }
      exp10 = neg ? -e : e;
      i = j;
    }
  }
  // Trailing zeros of the fraction carry no value; dropping them keeps the mantissa small.
  while (!frac_digits.empty() && frac_digits.back() == '0') frac_digits.pop_back();
  std::string digits = int_digits + frac_digits;
  exp10 -= static_cast<long long>(frac_digits.size());
  std::size_t first = digits.find_first_not_of('0');
  Decimal d;
  if (first == std::string::npos) {
    d.mantissa = 0;
    d.exp10 = 0;
  } else {
    for (std::size_t k = first; k < digits.size(); ++k) {
      const u128 digit = static_cast<u128>(digits[k] - '0');
      if (d.mantissa > (kU128Max - digit) / 10) throw UnitError(what + " (value too large)");
      d.mantissa = d.mantissa * 10 + digit;
    }
    d.exp10 = static_cast<int>(exp10);
  }
  rest = trim(s.substr(i));
  return d;
}

std::string unit_list(const std::vector<UnitDef>& units) {
  std::string out;
  for (const auto& u : units) {
    if (u.suffix[0] == '\0') continue;
    if (!out.empty()) out += ", ";
    out += u.suffix;
  }
  return out;
}

bool equal_ignoring_case(const std::string& a, const char* b) {
  return std::equal(a.begin(), a.end(), b, b + std::char_traits<char>::length(b),
                    [](char x, char y) {
                      return std::tolower(static_cast<unsigned char>(x)) ==
                             std::tolower(static_cast<unsigned char>(y));
                    });
}

// "(unknown unit 'Mib'; known: B, ...; did you mean 'MiB'?)": a suggestion only for a unit
// that differs in case alone, as any other near miss may be a unit the parser lacks
// ("EiB" is not "GiB").
UnknownUnitError unknown_unit(const std::string& what, const std::string& unit,
                              const std::vector<UnitDef>& units) {
  std::string hint;
  for (const auto& u : units)
    if (u.suffix[0] != '\0' && equal_ignoring_case(unit, u.suffix)) {
      hint = std::string("; did you mean '") + u.suffix + "'?";
      break;
    }
  return UnknownUnitError(what + " (unknown unit '" + unit + "'; known: " + unit_list(units) +
                          hint + ")");
}

/// Parses "<decimal><unit>" exactly. `allow_bare` says whether a number without a unit
/// is accepted (then the unit with the empty suffix, or ratio 1, applies).
/// `fraction_what` names what the result must be a whole number of ("byte", "ps", ...).
std::uint64_t parse_exact(const std::string& text, const std::vector<UnitDef>& units,
                          bool allow_bare, const std::string& expected,
                          const std::string& fraction_what) {
  const std::string s = trim(text);
  const std::string what = "expected " + expected;
  if (s.empty()) throw UnitError(what);
  std::string unit;
  const Decimal d = parse_decimal(s, unit, what);
  const UnitDef* def = nullptr;
  for (const auto& u : units) {
    if (unit == u.suffix) {
      def = &u;
      break;
    }
  }
  if (unit.empty() && !allow_bare) throw UnitError(what + " (a unit is required)");
  if (def == nullptr && !unit.empty()) throw unknown_unit(what, unit, units);
  const u128 num = def ? def->num : 1;
  const u128 den = def ? def->den : 1;
  if (d.mantissa == 0) return 0;
  const std::string too_large = what + " (value too large)";
  // value = mantissa * 10^exp10 * num / den, exactly.
  u128 numerator = d.mantissa;
  u128 denominator = den;
  auto mul = [&](u128& x, u128 f) {
    if (f != 0 && x > kU128Max / f) throw UnitError(too_large);
    x *= f;
  };
  mul(numerator, num);
  if (d.exp10 >= 0) {
    for (int k = 0; k < d.exp10; ++k) mul(numerator, 10);
  } else {
    // More than 38 negative powers of ten cannot divide a 128-bit mantissa evenly.
    if (-d.exp10 > 38) throw UnitError(what + " (not a whole number of " + fraction_what + ")");
    for (int k = 0; k < -d.exp10; ++k) mul(denominator, 10);
  }
  if (numerator % denominator != 0) {
    throw UnitError(what + " (not a whole number of " + fraction_what + ")");
  }
  const u128 value = numerator / denominator;
  if (value > kU64Max) throw UnitError(too_large);
  return static_cast<std::uint64_t>(value);
}

}  // namespace

std::uint64_t parse_bytes(const std::string& text) {
  return parse_exact(text, byte_units(), /*allow_bare=*/false, "a size like '64MiB' or '2048B'",
                     "bytes");
}

std::uint64_t parse_rate_bps(const std::string& text) {
  return parse_exact(text, rate_units(), /*allow_bare=*/false,
                     "a rate like '100Gbps' or '12.5GB/s'", "bits per second");
}

std::uint64_t parse_time_ps(const std::string& text) {
  return parse_exact(text, time_units(), /*allow_bare=*/false, "a time like '33.3ms' or '2us'",
                     "picoseconds");
}

std::uint64_t parse_frequency_hz(const std::string& text) {
  return parse_exact(text, frequency_units(), /*allow_bare=*/false, "a frequency like '500MHz'",
                     "Hz");
}

double parse_number(const std::string& text) {
  const std::string s = trim(text);
  const std::string what = "expected a non-negative number like '0.05' or '1e-3'";
  if (s.empty()) throw UnitError(what);
  if (s[0] == '-') throw UnitError(what + " (negative values are not allowed)");
  // Only plain decimal syntax: no hex, inf or nan, which strtod would also accept.
  for (char c : s) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
          c == '+' || c == '-')) {
      throw UnitError(what);
    }
  }
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) throw UnitError(what);
  if (errno == ERANGE && std::isinf(v)) throw UnitError(what + " (value too large)");
  if (!std::isfinite(v) || v < 0) throw UnitError(what);
  return v;
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* const names[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double v = static_cast<double>(bytes);
  int idx = -1;
  while (v >= 1024.0 && idx < 5) {
    v /= 1024.0;
    ++idx;
  }
  return fmt::format("{:.1f} {}", v, names[idx]);
}

std::string format_rate(double bps) {
  static const char* const names[] = {"bps", "kbps", "Mbps", "Gbps", "Tbps", "Pbps"};
  double v = bps;
  int idx = 0;
  while (std::fabs(v) >= 1000.0 && idx < 5) {
    v /= 1000.0;
    ++idx;
  }
  return fmt::format("{:.4g} {}", v, names[idx]);
}

std::string format_time_ps(double ps) {
  static const char* const names[] = {"ps", "ns", "us", "ms", "s"};
  double v = ps;
  int idx = 0;
  while (std::fabs(v) >= 1000.0 && idx < 4) {
    v /= 1000.0;
    ++idx;
  }
  if (idx == 0) return fmt::format("{:.0f} ps", v);
  return fmt::format("{:.3f} {}", v, names[idx]);
}

std::uint64_t wire_bytes(std::uint64_t payload_bytes, std::uint64_t mtu_bytes,
                         std::uint64_t header_bytes) {
  if (mtu_bytes <= header_bytes) {
    throw std::invalid_argument(
        fmt::format("wire_bytes: MTU {} B must exceed header {} B", mtu_bytes, header_bytes));
  }
  // Quotient and remainder of one 64-bit division (the 128-bit one is a library call,
  // and the optimizer prices every hop of every candidate's paths with this).
  const std::uint64_t per_packet = mtu_bytes - header_bytes;
  const u128 packets = payload_bytes / per_packet + (payload_bytes % per_packet != 0 ? 1 : 0);
  const u128 total = static_cast<u128>(payload_bytes) + packets * header_bytes;
  if (total > kU64Max) throw std::overflow_error("wire_bytes: result exceeds 64 bits");
  return static_cast<std::uint64_t>(total);
}

std::uint64_t serialization_ps(std::uint64_t bytes, std::uint64_t rate_bps) {
  if (rate_bps == 0) throw std::invalid_argument("serialization_ps: rate must be positive");
  const u128 bits_ps = static_cast<u128>(bytes) * 8u * static_cast<u128>(1'000'000'000'000ull);
  // A 64-bit division while the dividend fits (bytes x 8e12 < 2^64: up to about 2.3 MB),
  // which covers pricing a chunk; larger transactions (bursts) take the library's 128-bit
  // division.
  const u128 dividend = bits_ps + rate_bps - 1;
  const u128 ps =
      dividend <= kU64Max ? static_cast<std::uint64_t>(dividend) / rate_bps : dividend / rate_bps;
  if (ps > kU64Max) throw std::overflow_error("serialization_ps: result exceeds 64 bits");
  return static_cast<std::uint64_t>(ps);
}

}  // namespace aggnet
