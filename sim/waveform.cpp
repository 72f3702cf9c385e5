#include "sim/waveform.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "common/config_error.h"
#include "common/strings.h"
#include "modules/core/time.h"
#include "sim/builder.h"

namespace aggnet {

namespace {

// Reaches sc_trace_file::cycle (protected) of another trace file: a pointer to member
// named through a derived class may be applied to any sc_trace_file.
struct CycleAccess : sc_core::sc_trace_file {
  static void call(sc_core::sc_trace_file* file, bool delta_cycle) {
    (file->*&CycleAccess::cycle)(delta_cycle);
  }
};

}  // namespace

TraceSelection parse_trace_selection(const std::vector<std::string>& items) {
  TraceSelection sel;
  for (const auto& option : items) {
    std::istringstream words(option);
    std::string item;
    while (words >> item) {
      const auto eq = item.find('=');
      if (eq == std::string::npos)
        throw ConfigError("--trace", 0, item, "expected KEY=LIST like sites=lon,tyo", item);
      const std::string key = item.substr(0, eq);
      const auto values = split(item.substr(eq + 1), ',', EmptyFields::kSkip);
      if (values.empty()) throw ConfigError("--trace", 0, key, "expected a non-empty list", item);
      if (key == "sites") {
        for (const auto& v : values) sel.sites.insert(v == "all" ? std::string() : v);
        sel.sites.erase(std::string());
      } else if (key == "signals") {
        for (const auto& v : values) {
          if (v == "buffer") {
            sel.signals.insert(SignalFamily::kBuffer);
          } else if (v == "slots") {
            sel.signals.insert(SignalFamily::kSlots);
          } else if (v == "links") {
            sel.signals.insert(SignalFamily::kLinks);
          } else if (v == "state") {
            sel.signals.insert(SignalFamily::kState);
          } else if (v != "all") {
            throw ConfigError("--trace", 0, "signals",
                              "expected a list of buffer, slots, links, state or all", v);
          }
        }
      } else {
        throw ConfigError("--trace", 0, key, "unknown key, expected sites or signals", item);
      }
    }
  }
  return sel;
}

void check_trace_sites(const TraceSelection& selection, const std::vector<std::string>& codes) {
  for (const auto& s : selection.sites) {
    if (std::find(codes.begin(), codes.end(), s) != codes.end()) continue;
    std::string all;
    for (const auto& c : codes) all += (all.empty() ? "" : ", ") + c;
    throw ConfigError("--trace", 0, "sites", "expected site codes among " + all, s);
  }
}

void trace_selection(const NetworkSystem& system, sc_core::sc_trace_file* file,
                     const TraceSelection& sel) {
  const auto& platform = system.platform();
  const std::string top = std::string(system.name()) + ".";
  for (std::size_t s = 0; s < system.sites().size(); ++s) {
    const std::string& code = platform.sites[s].code;
    if (!sel.wants_site(code)) continue;
    const auto& m = system.sites()[s];
    const std::string site = top + code + ".";
    if (sel.wants(SignalFamily::kBuffer))
      sc_core::sc_trace(file, m.fpga->buffer().occupancy_bytes(),
                        site + "fpga.buffer_occupancy_bytes");
    if (sel.wants(SignalFamily::kSlots))
      sc_core::sc_trace(file, m.fpga->slots_in_use(), site + "fpga.slots_in_use");
    if (sel.wants(SignalFamily::kState)) {
      sc_core::sc_trace(file, m.cluster->state(), site + "cluster.state");
      sc_core::sc_trace(file, m.cluster->step_index(), site + "cluster.step_index");
      sc_core::sc_trace(file, m.cluster->round_index(), site + "cluster.round_index");
    }
    if (sel.wants(SignalFamily::kLinks)) {
      sc_core::sc_trace(file, m.access_up->bytes_in_flight(), site + "access_up.bytes_in_flight");
      sc_core::sc_trace(file, m.access_down->bytes_in_flight(),
                        site + "access_down.bytes_in_flight");
    }
  }
  if (!sel.wants(SignalFamily::kLinks)) return;
  for (const auto& d : system.links()) {
    const std::string& from = platform.sites[d.from].code;
    const std::string& to = platform.sites[d.to].code;
    if (!sel.wants_site(from) && !sel.wants_site(to)) continue;
    sc_core::sc_trace(file, d.link->bytes_in_flight(),
                      top + from + ".link_to_" + to + ".bytes_in_flight");
  }
}

WindowedVcd::WindowedVcd(const std::string& base, std::uint64_t from_ps, std::uint64_t to_ps)
    : from_(ps_time(from_ps)), to_(ps_time(to_ps)) {
  inner_ = sc_core::sc_create_vcd_trace_file(base.c_str());
  if (!inner_) throw std::runtime_error("cannot open " + base + ".vcd");
  auto* context = sc_core::sc_get_curr_simcontext();
  context->remove_trace_file(inner_);  // the kernel cycles us; we cycle the writer
  context->add_trace_file(this);
}

WindowedVcd::~WindowedVcd() { close(); }

void WindowedVcd::close() {
  if (!inner_) return;
  // remove_trace_file() of a file the kernel does not list is undefined in SystemC 2.3.4
  // (it erases find()'s end()): hand the writer back before closing it.
  auto* context = sc_core::sc_get_curr_simcontext();
  context->remove_trace_file(this);
  context->add_trace_file(inner_);
  sc_core::sc_close_vcd_trace_file(inner_);
  inner_ = nullptr;
}

void WindowedVcd::cycle(bool delta_cycle) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  if (!inner_ || now < from_ || now > to_) return;
  CycleAccess::call(inner_, delta_cycle);
}

}  // namespace aggnet
