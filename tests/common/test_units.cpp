// Exactness of unit parsing and of the wire-size / serialization closed forms.
// Expected values are computed by hand in the comments.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>

#include "common/units.h"

namespace aggnet {
namespace {

TEST(Units, TimeIsExactDecimal) {
  // 33.3 ms = 33.3e-3 s = 33'300'000'000 ps; a double round trip would give ...299999.
  EXPECT_EQ(parse_time_ps("33.3ms"), 33'300'000'000ull);
  EXPECT_EQ(parse_time_ps("33.465ms"), 33'465'000'000ull);
  EXPECT_EQ(parse_time_ps("2us"), 2'000'000ull);
  EXPECT_EQ(parse_time_ps("2 us"), 2'000'000ull);
  EXPECT_EQ(parse_time_ps("2\xC2\xB5s"), 2'000'000ull);  // µs
  EXPECT_EQ(parse_time_ps("1s"), 1'000'000'000'000ull);
  EXPECT_EQ(parse_time_ps("1min"), 60'000'000'000'000ull);
  EXPECT_EQ(parse_time_ps("1e3ms"), 1'000'000'000'000ull);
  EXPECT_EQ(parse_time_ps("0.001ns"), 1ull);
  EXPECT_EQ(parse_time_ps("7ps"), 7ull);
  EXPECT_EQ(parse_time_ps("0ms"), 0ull);
}

TEST(Units, TimeRejects) {
  EXPECT_THROW(parse_time_ps("5"), UnitError);        // a time needs a unit
  EXPECT_THROW(parse_time_ps("0"), UnitError);        // even zero
  EXPECT_THROW(parse_time_ps("-1ms"), UnitError);     // negative
  EXPECT_THROW(parse_time_ps("1parsec"), UnitError);  // unknown unit
  EXPECT_THROW(parse_time_ps("0.5ps"), UnitError);    // fraction of a ps
  EXPECT_THROW(parse_time_ps("ms"), UnitError);       // no number
  EXPECT_THROW(parse_time_ps(""), UnitError);
  // 2^64 ps is about 213 days; a year overflows.
  EXPECT_THROW(parse_time_ps("600000min"), UnitError);
  try {
    parse_time_ps("-3ms");
    FAIL() << "no exception";
  } catch (const UnitError& e) {
    EXPECT_NE(std::string(e.what()).find("negative"), std::string::npos) << e.what();
  }
}

TEST(Units, Bytes) {
  EXPECT_EQ(parse_bytes("1.5KiB"), 1536ull);  // 1.5 * 1024
  EXPECT_EQ(parse_bytes("64MiB"), 67'108'864ull);
  EXPECT_EQ(parse_bytes("1GiB"), 1'073'741'824ull);
  EXPECT_EQ(parse_bytes("1TiB"), 1'099'511'627'776ull);
  EXPECT_EQ(parse_bytes("2048B"), 2048ull);
  EXPECT_EQ(parse_bytes("1kB"), 1000ull);
  EXPECT_EQ(parse_bytes("1KB"), 1000ull);
  EXPECT_EQ(parse_bytes("1.5MB"), 1'500'000ull);
  EXPECT_EQ(parse_bytes("32GB"), 32'000'000'000ull);
  EXPECT_EQ(parse_bytes("512bit"), 64ull);
  EXPECT_EQ(parse_bytes("1Mbit"), 125'000ull);
  EXPECT_EQ(parse_bytes("18446744073709551615B"), 18'446'744'073'709'551'615ull);
}

TEST(Units, BytesRejects) {
  EXPECT_THROW(parse_bytes("12bit"), UnitError);  // 1.5 bytes
  EXPECT_THROW(parse_bytes("1.5B"), UnitError);
  EXPECT_THROW(parse_bytes("2048"), UnitError);  // a size needs its unit, as a rate does
  EXPECT_THROW(parse_bytes("-1MB"), UnitError);
  EXPECT_THROW(parse_bytes("3 furlongs"), UnitError);
  EXPECT_THROW(parse_bytes("1Mb"), UnitError);                    // ambiguous: write Mbit or MB
  EXPECT_THROW(parse_bytes("18446744073709551616B"), UnitError);  // 2^64
  EXPECT_THROW(parse_bytes("99999999999TB"), UnitError);          // ~1e23
  EXPECT_THROW(parse_bytes("1e40B"), UnitError);
}

TEST(Units, Rates) {
  EXPECT_EQ(parse_rate_bps("100Gbps"), 100'000'000'000ull);
  EXPECT_EQ(parse_rate_bps("100Gb/s"), 100'000'000'000ull);
  EXPECT_EQ(parse_rate_bps("12.5GB/s"), 100'000'000'000ull);  // 12.5e9 B/s * 8
  EXPECT_EQ(parse_rate_bps("10Gbps"), 10'000'000'000ull);
  EXPECT_EQ(parse_rate_bps("400Gbps"), 400'000'000'000ull);
  EXPECT_EQ(parse_rate_bps("1Tbps"), 1'000'000'000'000ull);
  EXPECT_EQ(parse_rate_bps("1.5kbps"), 1'500ull);
  EXPECT_EQ(parse_rate_bps("3Mbps"), 3'000'000ull);
  EXPECT_EQ(parse_rate_bps("1B/s"), 8ull);
  EXPECT_EQ(parse_rate_bps("1GiB/s"), 8'589'934'592ull);  // 8 * 2^30
  EXPECT_EQ(parse_rate_bps("0bps"), 0ull);                // zero is the caller's call
}

TEST(Units, RatesReject) {
  EXPECT_THROW(parse_rate_bps("100"), UnitError);  // a rate needs a unit
  EXPECT_THROW(parse_rate_bps("-10Gbps"), UnitError);
  EXPECT_THROW(parse_rate_bps("10 GHz"), UnitError);
  EXPECT_THROW(parse_rate_bps("0.5bps"), UnitError);
  EXPECT_THROW(parse_rate_bps("100000000Tbps"), UnitError);  // 1e20 > 2^64
}

// The message of an unknown unit: `expect` with the unit it did not know and every unit it
// knows, so "20EiB" does not read as a malformed number (sizes stop at TiB).
std::string unknown_unit_message(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const UnknownUnitError& e) {
    return e.what();
  } catch (const UnitError& e) {
    return std::string("not an UnknownUnitError: ") + e.what();
  }
  return "accepted";
}

TEST(Units, UnknownUnitsAreNamedWithTheKnownOnes) {
  EXPECT_EQ(unknown_unit_message([] { parse_bytes("20EiB"); }),
            "expected a size like '64MiB' or '2048B' (unknown unit 'EiB'; known: B, kB, KB, MB, "
            "GB, TB, KiB, MiB, GiB, TiB, bit, bits, kbit, Mbit, Gbit, Tbit, Kibit, Mibit, Gibit, "
            "Tibit)");
  EXPECT_EQ(unknown_unit_message([] { parse_time_ps("5hours"); }),
            "expected a time like '33.3ms' or '2us' (unknown unit 'hours'; known: ps, ns, us, "
            "\xC2\xB5s, \xCE\xBCs, ms, s, min)");
  EXPECT_EQ(unknown_unit_message([] { parse_rate_bps("10Xbps"); }),
            "expected a rate like '100Gbps' or '12.5GB/s' (unknown unit 'Xbps'; known: bps, kbps, "
            "Mbps, Gbps, Tbps, b/s, kb/s, Mb/s, Gb/s, Tb/s, bit/s, kbit/s, Mbit/s, Gbit/s, Tbit/s, "
            "B/s, kB/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s)");
  // A unit that differs in case only is suggested; a near miss of another letter is not
  // ("EiB" above is no typo of "GiB").
  EXPECT_NE(unknown_unit_message([] { parse_bytes("4Mib"); }).find("Tibit; did you mean 'MiB'?)"),
            std::string::npos);
  EXPECT_NE(unknown_unit_message([] { parse_time_ps("3MS"); }).find("min; did you mean 'ms'?)"),
            std::string::npos);
  // Other mistakes are plain UnitErrors, not unknown units.
  EXPECT_EQ(unknown_unit_message([] { parse_bytes("64"); }).rfind("not an UnknownUnitError", 0),
            0u);
  EXPECT_EQ(unknown_unit_message([] { parse_bytes("-1MiB"); }).rfind("not an UnknownUnitError", 0),
            0u);
}

TEST(Units, FrequencyAndNumber) {
  EXPECT_EQ(parse_frequency_hz("500MHz"), 500'000'000ull);
  EXPECT_EQ(parse_frequency_hz("1.5GHz"), 1'500'000'000ull);
  EXPECT_EQ(parse_frequency_hz("10kHz"), 10'000ull);
  EXPECT_THROW(parse_frequency_hz("500"), UnitError);
  EXPECT_THROW(parse_frequency_hz("-1MHz"), UnitError);
  EXPECT_DOUBLE_EQ(parse_number("0.05"), 0.05);
  EXPECT_DOUBLE_EQ(parse_number("1e-3"), 0.001);
  EXPECT_DOUBLE_EQ(parse_number("3"), 3.0);
  EXPECT_THROW(parse_number("-1"), UnitError);
  EXPECT_THROW(parse_number("abc"), UnitError);
  EXPECT_THROW(parse_number("inf"), UnitError);
  EXPECT_THROW(parse_number("nan"), UnitError);
  EXPECT_THROW(parse_number("1ms"), UnitError);
  EXPECT_THROW(parse_number(""), UnitError);
}

TEST(Units, WireBytes) {
  // One full packet: 2048 - 80 = 1968 payload bytes -> exactly 2048 on the wire.
  EXPECT_EQ(wire_bytes(1968, 2048, 80), 2048ull);
  // One byte more needs a second packet: 1969 + 2 * 80.
  EXPECT_EQ(wire_bytes(1969, 2048, 80), 2129ull);
  // 1 MiB = 1'048'576 B: ceil(1'048'576 / 1968) = 533 packets (1968 * 532 = 1'046'976),
  // so 1'048'576 + 533 * 80 = 1'091'216.
  EXPECT_EQ(wire_bytes(1'048'576, 2048, 80), 1'091'216ull);
  EXPECT_EQ(wire_bytes(0, 2048, 80), 0ull);
  EXPECT_EQ(wire_bytes(1, 2048, 80), 81ull);
  EXPECT_THROW(wire_bytes(100, 80, 80), std::invalid_argument);
  // Payloads near 2^64: ceil(payload / (mtu - header)) without a wrapped sum.
  constexpr std::uint64_t kHalf = std::uint64_t{1} << 63;
  EXPECT_EQ(wire_bytes(kHalf, kHalf + 1, 1), kHalf + 1);      // 1 packet
  EXPECT_EQ(wire_bytes(kHalf + 1, kHalf + 1, 1), kHalf + 3);  // 2 packets
  EXPECT_EQ(wire_bytes(~0ull - 1, ~0ull, 1), ~0ull);          // 1 packet, 2^64 - 1
  EXPECT_THROW(wire_bytes(~0ull - 100, 2048, 80), std::overflow_error);
}

TEST(Units, SerializationPs) {
  // 2048 B = 16'384 bit at 1e11 bit/s = 1.6384e-7 s = 163'840 ps.
  EXPECT_EQ(serialization_ps(2048, 100'000'000'000ull), 163'840ull);
  // 1 B at 3 bit/s = 8/3 s = 2'666'666'666'666.67 ps -> rounded up.
  EXPECT_EQ(serialization_ps(1, 3), 2'666'666'666'667ull);
  // 1e9 B at 1 Gbit/s = 8 s; the intermediate 8e9 * 1e12 = 8e21 exceeds 64 bits.
  EXPECT_EQ(serialization_ps(1'000'000'000ull, 1'000'000'000ull), 8'000'000'000'000ull);
  // 1 MiB header-inflated (1'091'216 B) at 100 Gbps: 8'729'728 bit / 1e11 = 87'297.28 ns.
  EXPECT_EQ(serialization_ps(1'091'216, 100'000'000'000ull), 87'297'280ull);
  EXPECT_EQ(serialization_ps(0, 100), 0ull);
  EXPECT_THROW(serialization_ps(1, 0), std::invalid_argument);
  // 1 TiB at 1 bit/s = 8.8e12 s = 8.8e24 ps > 2^64.
  EXPECT_THROW(serialization_ps(1'099'511'627'776ull, 1), std::overflow_error);
  // Either side of bytes x 8e12 + rate - 1 = 2^64 (64-bit division below, 128-bit above):
  // ceil(bytes * 8e12 / rate) by plain 128-bit arithmetic.
  const std::uint64_t rate = 100'000'000'007ull;
  for (std::uint64_t bytes : {2'305'842ull, 2'305'843ull, 2'305'844ull, 2'305'845ull}) {
    const unsigned __int128 bits_ps = static_cast<unsigned __int128>(bytes) * 8'000'000'000'000ull;
    EXPECT_EQ(serialization_ps(bytes, rate),
              static_cast<std::uint64_t>((bits_ps + rate - 1) / rate))
        << bytes;
  }
  // 2,305,843 x 8e12 = 2^64 - 73,709,551,616: these two rates put the dividend (that
  // + rate - 1) at exactly 2^64 - 1 and 2^64; both quotients are 250,262,600.
  EXPECT_EQ(serialization_ps(2'305'843ull, 73'709'551'616ull), 250'262'600ull);
  EXPECT_EQ(serialization_ps(2'305'843ull, 73'709'551'617ull), 250'262'600ull);
}

TEST(Units, Formatting) {
  EXPECT_EQ(format_bytes(64ull << 20), "64.0 MiB");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_rate(1e11), "100 Gbps");
  EXPECT_EQ(format_rate(12.5e9), "12.5 Gbps");
  EXPECT_EQ(format_time_ps(33.3e9), "33.300 ms");
  EXPECT_EQ(format_time_ps(2e6), "2.000 us");
  EXPECT_EQ(format_time_ps(1.5e12), "1.500 s");
  EXPECT_EQ(format_time_ps(12), "12 ps");
}

}  // namespace
}  // namespace aggnet
