#include "sim/gtkw_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

namespace aggnet {

namespace {

// GTKWave trace flags (gtkwave's analyzer.h TR_*), as written after '@' in hex.
constexpr unsigned kDec = 1u << 2, kRightJustify = 1u << 5, kBlank = 1u << 9,
                   kAnalogStep = 1u << 15, kAnalogStretch = 1u << 17, kAnalogFullScale = 1u << 19,
                   kGroupBegin = 1u << 23, kGroupEnd = 1u << 24;
constexpr unsigned kDigital = kDec | kRightJustify;
constexpr unsigned kAnalog = kDigital | kAnalogStep | kAnalogFullScale;

// GTKWave's trace colours ([color] N): 2 orange, 4 green, 5 blue.
int colour_of(const ViewSignal& s) {
  if (!s.bytes) return 0;
  if (s.vcd_name.find(".fpga.") != std::string::npos) return 2;
  if (s.vcd_name.find(".access_") != std::string::npos) return 5;
  return 4;
}

// "62 MiB": whole units, since GTKWave cuts an alias at its last '.' (a hierarchy
// separator), so "62.0 MiB" would show as "0 MiB".
std::string whole_units(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t u = 0;
  while (value >= 1024 && u + 1 < std::size(units)) {
    value /= 1024;
    ++u;
  }
  return fmt::format("{:.0f} {}", value, units[u]);
}

void write_signal(std::string& out, const ViewSignal& s) {
  const int colour = colour_of(s);
  out += fmt::format("@{:x}\n", s.bytes ? kAnalog : kDigital);
  if (colour) out += fmt::format("[color] {}\n", colour);
  if (!s.bytes) {
    out += fmt::format("+{{{}}} {}\n", s.label, s.vcd_name);
    return;
  }
  // Each analog trace spans its own range (kAnalogFullScale): the label names its top.
  out += fmt::format("+{{{} (max {})}} {}\n", s.label, whole_units(s.max), s.vcd_name);
  // An analog trace is as tall as the blank rows that follow it.
  for (int r = 1; r < kScaleRows; ++r) out += fmt::format("@{:x}\n-\n", kAnalogStretch);
}

}  // namespace

double gtkw_zoom(std::uint64_t span_ps, int pixels) {
  constexpr double kFramePx = 200;
  return -std::log2(kFramePx * static_cast<double>(std::max<std::uint64_t>(span_ps, 1)) / pixels);
}

std::string gtkw_text(const GtkwView& view) {
  if (view.end_ps <= view.start_ps)
    throw std::invalid_argument("GTKWave view: the window ends before it starts");
  std::vector<std::string> sites;
  for (const auto& s : view.signals)
    if (std::find(sites.begin(), sites.end(), s.site) == sites.end()) sites.push_back(s.site);
  std::string out;
  out += "[*]\n[*] " + view.title + "\n";
  out += "[*] Generated with the VCD (docs/waveforms.md). Per site: byte counts as analog\n";
  out += "[*] traces, each scaled to its own maximum (named in its label), then\n";
  out += "[*] slots, cluster state (0 idle 1 compute 2 communicate 3 offset wait), markers.\n[*]\n";
  out += fmt::format("[dumpfile] \"{}\"\n", view.vcd_path);
  out += fmt::format("[timestart] {}\n", view.start_ps);
  out += fmt::format("[size] {} {}\n[pos] -1 -1\n", kViewWidthPx, kViewHeightPx);
  out += fmt::format("*{:.6f} -1\n", gtkw_zoom(view.end_ps - view.start_ps, kWavePx));
  out += fmt::format("[sst_width] {}\n[signals_width] {}\n", kSstWidthPx, kSignalsWidthPx);
  out += "[sst_expanded] 0\n[sst_vpaned_height] 200\n";
  for (const auto& site : sites) {
    out += fmt::format("@{:x}\n-{}\n", kGroupBegin | kBlank, site);
    for (const auto& s : view.signals)
      if (s.site == site) write_signal(out, s);
    out += fmt::format("@{:x}\n-{}\n", kGroupEnd | kBlank, site);
  }
  out += "[pattern_trace] 1\n[pattern_trace] 0\n";
  return out;
}

}  // namespace aggnet
