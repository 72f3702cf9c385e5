// A GTKWave save file (.gtkw) written with each VCD (`aggnet run --vcd FILE [--gtkw FILE]`):
// the traced signals grouped per site, links by alias (`lon->tyo`), byte counts as analog
// traces each drawn to its own range (its maximum in its label), zoomed to the recorded
// window. docs/waveforms.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aggnet {

/// One row of the view.
struct ViewSignal {
  std::string site;       ///< group (site code)
  std::string vcd_name;   ///< GTKWave's full name, "SystemC.wan.lon.fpga.slots_in_use[63:0]"
  std::string label;      ///< alias shown in the signal pane
  bool bytes = false;     ///< analog, scaled to its own range
  std::uint64_t max = 0;  ///< largest recorded value (bytes rows)
};

/// What the view shows.
struct GtkwView {
  std::string title;     ///< first comment line, e.g. "aggnet 0.9.0: all-to-all on nine_city"
  std::string vcd_path;  ///< [dumpfile]
  std::uint64_t start_ps = 0, end_ps = 0;  ///< the zoom window
  std::vector<ViewSignal> signals;         ///< in display order; groups keep first-seen order
};

/// Rows of every byte trace: each is as tall as the others and spans its own range (GTKWave
/// scales an analog trace to its own minimum and maximum), so a 1 MiB buffer shows as
/// clearly as a 272 MiB link; the label gives the maximum, "lon->tyo (max 257 MiB)".
inline constexpr int kScaleRows = 6;

/// Window size the view asks for and its panes; GTKWave 3.3.118 leaves a 1060-pixel
/// waveform pane (measured under Xvfb), and the zoom fits the window into kWavePx of it.
inline constexpr int kViewWidthPx = 1600, kViewHeightPx = 1000, kSignalsWidthPx = 300,
                     kSstWidthPx = 200, kWavePx = 1000;

/// GTKWave's zoom for `span_ps` across `pixels`: a 200-pixel frame spans 2^-zoom time
/// units (gtkwave's calczoom), so a pixel is 2^-zoom / 200.
double gtkw_zoom(std::uint64_t span_ps, int pixels);

/// The save file's text. Errors: std::invalid_argument for end_ps <= start_ps.
std::string gtkw_text(const GtkwView& view);

}  // namespace aggnet
