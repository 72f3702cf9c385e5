// The GTKWave save file's layout rules, checked on the text (the gui test opens it in
// GTKWave itself).
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <stdexcept>
#include <string>

#include "sim/gtkw_view.h"

namespace aggnet {
namespace {

// Rows a signal takes: its own line plus the blank stretch rows (@20000 then "-") after it.
int rows_of(const std::string& text, const std::string& alias) {
  const auto at = text.find("+{" + alias + "}");
  if (at == std::string::npos) return 0;
  int rows = 1;
  std::size_t pos = text.find('\n', at) + 1;
  while (text.compare(pos, 9, "@20000\n-\n") == 0) {
    ++rows;
    pos += 9;
  }
  return rows;
}

GtkwView two_sites() {
  GtkwView v;
  v.title = "test";
  v.vcd_path = "/tmp/x.vcd";
  v.start_ps = 1'000'000'000'000;
  v.end_ps = 3'000'000'000'000;
  v.signals = {
      {"lon", "SystemC.wan.lon.fpga.buffer_occupancy_bytes[63:0]", "fpga buffer", true, 32u << 20},
      {"lon", "SystemC.wan.lon.link_to_tyo.bytes_in_flight[63:0]", "lon->tyo", true, 64u << 20},
      {"lon", "SystemC.wan.lon.cluster.state[31:0]", "state", false, 0},
      {"tyo", "SystemC.wan.tyo.link_to_lon.bytes_in_flight[63:0]", "tyo->lon", true, 1u << 20}};
  return v;
}

// Every byte trace is equally tall and spans its own range, its maximum in its label: a
// 1 MiB buffer next to a 64 MiB link is as readable as the link (issue 34).
TEST(GtkwView, EachByteTraceScalesOnItsOwn) {
  const std::string text = gtkw_text(two_sites());
  EXPECT_EQ(rows_of(text, "lon->tyo (max 64 MiB)"), kScaleRows);
  EXPECT_EQ(rows_of(text, "fpga buffer (max 32 MiB)"), kScaleRows);
  EXPECT_EQ(rows_of(text, "tyo->lon (max 1 MiB)"), kScaleRows);
  EXPECT_EQ(rows_of(text, "state"), 1);
  // Analog rows: step drawing, scaled to the trace's whole range (TR_ANALOG_FULLSCALE).
  const auto buffer = text.find("+{fpga buffer");
  ASSERT_NE(buffer, std::string::npos);
  const std::string analog_orange = "@88024\n[color] 2\n";
  EXPECT_EQ(text.rfind(analog_orange, buffer) + analog_orange.size(), buffer) << text;
  EXPECT_NE(text.find("@800200\n-lon\n"), std::string::npos) << text;
  // No '.' in an alias: GTKWave would show only what follows the last one.
  GtkwView odd = two_sites();
  odd.signals[0].max = 1536 * 1024;  // 1.5 MiB
  EXPECT_EQ(rows_of(gtkw_text(odd), "fpga buffer (max 2 MiB)"), kScaleRows);
}

TEST(GtkwView, GroupsOpenAndCloseInFirstSeenOrder) {
  const std::string text = gtkw_text(two_sites());
  const auto lon = text.find("@800200\n-lon"), lon_end = text.find("@1000200\n-lon"),
             tyo = text.find("@800200\n-tyo"), tyo_end = text.find("@1000200\n-tyo");
  ASSERT_NE(lon, std::string::npos);
  EXPECT_LT(lon, text.find("+{lon->tyo"));
  EXPECT_LT(text.find("+{state}"), lon_end);
  EXPECT_LT(lon_end, tyo);
  EXPECT_LT(tyo, text.find("+{tyo->lon"));
  EXPECT_LT(text.find("+{tyo->lon"), tyo_end);
}

// GTKWave: a pixel spans 2^-zoom / 200 time units; the window fills kWavePx pixels.
TEST(GtkwView, ZoomFitsTheWindow) {
  const std::string text = gtkw_text(two_sites());
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(\n\*(-?[0-9.]+) )")));
  const double zoom = std::stod(m[1]);
  EXPECT_NEAR(kWavePx * std::pow(2.0, -zoom) / 200, 2e12, 2e12 * 1e-6);
  EXPECT_NE(text.find("[timestart] 1000000000000\n"), std::string::npos);
  EXPECT_NEAR(gtkw_zoom(200, 1), -std::log2(40000.0), 1e-12);
}

TEST(GtkwView, RejectsAnEmptyWindow) {
  GtkwView v = two_sites();
  v.end_ps = v.start_ps;
  EXPECT_THROW(gtkw_text(v), std::invalid_argument);
}

}  // namespace
}  // namespace aggnet
