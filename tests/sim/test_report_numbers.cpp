// tidy_numbers: a time reads as the double nearest to its whole-ps decimal (checked against
// strtod of that decimal, the second method), a count as an integer, other numbers as they are.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "sim/report.h"

namespace aggnet {
namespace {

using nlohmann::json;

// The decimal of `whole_ps` in a unit of 10^decimals ps, read by strtod.
double decimal_of(long long whole_ps, int decimals) {
  const long long per = static_cast<long long>(std::llround(std::pow(10.0, decimals)));
  const unsigned long long magnitude = whole_ps < 0 ? -whole_ps : whole_ps;
  const std::string text = decimals == 0 ? fmt::format("{}{}", whole_ps < 0 ? "-" : "", magnitude)
                                         : fmt::format("{}{}.{:0{}}", whole_ps < 0 ? "-" : "",
                                                       magnitude / per, magnitude % per, decimals);
  return std::strtod(text.c_str(), nullptr);
}

double tidied(const std::string& key, double x) {
  json doc = {{key, x}};
  tidy_numbers(doc);
  return doc[key].get<double>();
}

TEST(ReportNumbers, ATimeIsTheDoubleNearestToItsWholePicoseconds) {
  std::mt19937_64 rng(7);
  const std::pair<const char*, int> units[] = {
      {"round_time_s", 12}, {"waiting_ms", 9}, {"delay_us", 6}, {"skew_ns", 3}, {"at_ps", 0}};
  for (const auto& [key, decimals] : units) {
    for (int i = 0; i < 2000; ++i) {
      // Whole ps counts from 1 to 2^62: both sides of 2^53, where the division stops.
      const int bits = 1 + static_cast<int>(rng() % 62);
      long long whole_ps = static_cast<long long>(rng() >> (64 - bits));
      if (rng() & 1) whole_ps = -whole_ps;
      // The simulation's number: the decimal plus a rounding error (beyond 2^52 ps the
      // error can pass half a ps: then the nearest whole ps is another one).
      const double noisy =
          std::nextafter(decimal_of(whole_ps, decimals), rng() & 1 ? INFINITY : -INFINITY);
      const long double nearest_ps = std::llroundl(noisy * std::pow(10.0L, decimals));
      const double expected = std::fabs(nearest_ps) >= 9.2e18L
                                  ? noisy
                                  : decimal_of(static_cast<long long>(nearest_ps), decimals);
      ASSERT_EQ(tidied(key, noisy), expected) << key << " " << whole_ps;
    }
  }
  EXPECT_EQ(tidied("time_s", 34.855000000000004), 34.855);
  EXPECT_EQ(tidied("time_s", 1e-13), 0.0);
}

TEST(ReportNumbers, CountsBecomeIntegersAndOtherNumbersStay) {
  json doc = {
      {"chunks_sent", 12.0}, {"ratio", 0.1 + 0.2}, {"send_offset_ms", {{"nyc", 1.0000000001e-3}}}};
  tidy_numbers(doc);
  EXPECT_TRUE(doc["chunks_sent"].is_number_integer());
  EXPECT_EQ(doc["ratio"].get<double>(), 0.1 + 0.2);
  EXPECT_EQ(doc["send_offset_ms"]["nyc"].get<double>(), 1e-3);  // the unit passes to members
}

}  // namespace
}  // namespace aggnet
