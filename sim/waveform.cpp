#include "sim/waveform.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/config_error.h"
#include "common/strings.h"
#include "modules/core/event_calendar.h"
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

namespace {

// Appends one traced variable: `module` is the SystemC module, `variable` its member.
template <class T>
void add(std::vector<TracedSignal>& out, sc_core::sc_trace_file* file, const std::string& site,
         const sc_core::sc_object& module, const char* variable, const T& object,
         std::string label = {}, bool bytes = false) {
  const std::string name = std::string(module.name()) + "." + variable;
  sc_core::sc_trace(file, object, name);
  TracedSignal s;
  s.site = site;
  s.vcd_name = fmt::format("SystemC.{}[{}:0]", name, sizeof(T) * 8 - 1);
  s.label = label.empty() ? std::string(module.basename()) + "." + variable : std::move(label);
  s.bytes = bytes;
  if constexpr (sizeof(T) == sizeof(std::uint64_t)) s.source = &object;
  out.push_back(std::move(s));
}

}  // namespace

std::vector<TracedSignal> trace_selection(const NetworkSystem& system, sc_core::sc_trace_file* file,
                                          const TraceSelection& sel) {
  const auto& platform = system.platform();
  std::vector<TracedSignal> out;
  for (std::size_t s = 0; s < system.sites().size(); ++s) {
    const std::string& code = platform.sites[s].code;
    if (!sel.wants_site(code)) continue;
    const auto& m = system.sites()[s];
    if (sel.wants(SignalFamily::kBuffer))
      add(out, file, code, *m.fpga, "buffer_occupancy_bytes", m.fpga->buffer().occupancy_bytes(),
          "fpga buffer", true);
    if (sel.wants(SignalFamily::kSlots))
      add(out, file, code, *m.fpga, "slots_in_use", m.fpga->slots_in_use(), "fpga slots");
    if (sel.wants(SignalFamily::kState)) {
      add(out, file, code, *m.cluster, "state", m.cluster->state(),
          "state 0 idle 1 comp 2 comm 3 wait");
      add(out, file, code, *m.cluster, "step_index", m.cluster->step_index(), "step");
      add(out, file, code, *m.cluster, "round_index", m.cluster->round_index(), "round");
    }
    if (!sel.wants(SignalFamily::kLinks)) continue;
    add(out, file, code, *m.access_up, "bytes_in_flight", m.access_up->bytes_in_flight(),
        code + " access up", true);
    add(out, file, code, *m.access_down, "bytes_in_flight", m.access_down->bytes_in_flight(),
        code + " access down", true);
    // Outgoing links, then incoming ones whose sender is not traced (none left without a
    // group when only some sites are traced).
    for (const bool outgoing : {true, false}) {
      for (const auto& d : system.links()) {
        const std::string& from = platform.sites[d.from].code;
        const std::string& to = platform.sites[d.to].code;
        const bool here = outgoing ? d.from == static_cast<int>(s)
                                   : d.to == static_cast<int>(s) && !sel.wants_site(from);
        if (here)
          add(out, file, code, *d.link, "bytes_in_flight", d.link->bytes_in_flight(),
              from + "->" + to, true);
      }
    }
  }
  return out;
}

std::uint64_t system_end_ps(const NetworkSystem& system) {
  std::uint64_t end = 0;
  for (const auto& site : system.sites())
    for (const auto& r : site.cluster->steps()) end = std::max(end, to_ps(r.end));
  return end;
}

namespace {

// Guarantees timesteps at `from` and `to`: the kernel cycles the trace files at every
// timestep, and an idle stretch has none.
class WindowMarker : public sc_core::sc_module {
 public:
  WindowMarker(sc_core::sc_module_name name, std::uint64_t from_ps, std::uint64_t to_ps)
      : sc_module(name), from_ps_(from_ps), to_ps_(to_ps) {
    SC_HAS_PROCESS(WindowMarker);
    SC_THREAD(run);
  }

 private:
  void run() {
    if (from_ps_ > 0) wait(ps_time(from_ps_));
    if (to_ps_ != std::numeric_limits<std::uint64_t>::max() && to_ps_ > from_ps_)
      wait(ps_time(to_ps_ - from_ps_));
  }
  std::uint64_t from_ps_, to_ps_;
};

// SystemC's writer ends the file with the time of closing ("#<ps>"); a window that closed
// earlier ends at `to` instead.
void end_file_at(const std::string& path, std::uint64_t end_ps) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  if (!file) throw std::runtime_error("cannot reopen " + path);
  file.seekg(0, std::ios::end);
  const auto size = static_cast<std::streamoff>(file.tellg());
  const std::streamoff tail_size = std::min<std::streamoff>(size, 64);
  std::string tail(static_cast<std::size_t>(tail_size), '\0');
  file.seekg(size - tail_size);
  file.read(tail.data(), tail_size);
  const auto hash = tail.rfind('#');
  file.close();
  if (hash == std::string::npos || (hash > 0 && tail[hash - 1] != '\n')) return;
  const auto at = size - tail_size + static_cast<std::streamoff>(hash);
  std::filesystem::resize_file(path, static_cast<std::uintmax_t>(at));
  std::ofstream(path, std::ios::app | std::ios::binary) << '#' << end_ps << '\n';
}

// SystemC's writer ends the file with "#<time of closing>" even when its last timestep,
// written just before, has that time: the same timestamp twice. Drop the repeat.
void drop_repeated_end(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot reopen " + path);
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::streamoff>(in.tellg());
  const std::streamoff tail_size = std::min<std::streamoff>(size, 1 << 16);
  std::string tail(static_cast<std::size_t>(tail_size), '\0');
  in.seekg(size - tail_size);
  in.read(tail.data(), tail_size);
  in.close();
  const auto last = tail.rfind("\n#");
  if (last == std::string::npos || tail.back() != '\n') return;
  const auto before = tail.rfind("\n#", last - 1);
  if (before == std::string::npos) return;
  const std::string end_stamp = tail.substr(last + 1, tail.size() - last - 2);
  const std::string previous = tail.substr(before + 1, tail.find('\n', before + 1) - before - 1);
  if (end_stamp != previous) return;
  // Keep the text up to the last timestep's values (and the blank line SystemC puts there).
  std::filesystem::resize_file(
      path, static_cast<std::uintmax_t>(size - tail_size + static_cast<std::streamoff>(last) + 1));
}

// SystemC dumps the first recorded timestep's values ($dumpvars) with no time and a
// comment naming it, so viewers draw them from time 0. Overwrite that comment, in place
// and at equal length, with "#<from>" and a shorter comment.
void stamp_initial_values(const std::string& path, std::uint64_t from_ps) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  if (!file) throw std::runtime_error("cannot reopen " + path);
  std::string head(1 << 20, '\0');  // the declarations of every traced signal fit
  file.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(file.gcount()));
  const auto dump = head.find("$dumpvars");
  const auto begin = head.rfind("$comment", dump);
  if (dump == std::string::npos || begin == std::string::npos) return;
  const auto end = head.find("$end\n", begin);
  if (end == std::string::npos || end > dump || head.find("initial values", begin) > end) return;
  const std::size_t length = end + 5 - begin;
  const std::string stamp = fmt::format("#{}\n$comment\n", from_ps);
  const std::string tail = "\n$end\n";
  const std::string text = "initial values at the window's start";
  if (stamp.size() + tail.size() + 1 > length) return;
  std::string block = stamp + text.substr(0, length - stamp.size() - tail.size());
  block.resize(length - tail.size(), ' ');
  file.clear();
  file.seekp(static_cast<std::streamoff>(begin));
  file << block << tail;
}

}  // namespace

WindowedVcd::WindowedVcd(const std::string& base, std::uint64_t from_ps, std::uint64_t to_ps,
                         const std::string& header_comment)
    : path_(base + ".vcd"), from_(ps_time(from_ps)), to_(ps_time(to_ps)) {
  inner_ = sc_core::sc_create_vcd_trace_file(base.c_str());
  if (!inner_) throw std::runtime_error("cannot open " + path_);
  auto* context = sc_core::sc_get_curr_simcontext();
  context->remove_trace_file(inner_);  // the kernel cycles us; we cycle the writer
  context->add_trace_file(this);
  if (!header_comment.empty()) inner_->write_comment(header_comment);
  EventCalendar::current().forbid_run_ahead();  // values must change at kernel timesteps
  marker_ = std::make_unique<WindowMarker>("aggnet_trace_window", from_ps, to_ps);
}

WindowedVcd::~WindowedVcd() {
  try {
    close();
  } catch (const std::exception&) {  // a destructor must not throw; close() reported it
  }
}

void WindowedVcd::close() {
  if (!inner_) return;
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  // The kernel flushes a timestep when time advances past it: the last one never is.
  if (now >= from_ && now <= to_) forward(false);
  // remove_trace_file() of a file the kernel does not list is undefined in SystemC 2.3.4
  // (it erases find()'s end()): hand the writer back before closing it.
  auto* context = sc_core::sc_get_curr_simcontext();
  context->remove_trace_file(this);
  context->add_trace_file(inner_);
  sc_core::sc_close_vcd_trace_file(inner_);
  inner_ = nullptr;
  if (from_ > sc_core::SC_ZERO_TIME && now >= from_) stamp_initial_values(path_, to_ps(from_));
  if (now > to_) end_file_at(path_, to_ps(to_));
  drop_repeated_end(path_);
}

ValueRange WindowedVcd::range(const std::uint64_t* source) const {
  for (const auto& w : watched_)
    if (w.source == static_cast<const void*>(source)) return w.range;
  return {};
}

void WindowedVcd::cycle(bool delta_cycle) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  if (!inner_ || now < from_ || now > to_) return;
  forward(delta_cycle);
}

void WindowedVcd::forward(bool delta_cycle) {
  CycleAccess::call(inner_, delta_cycle);
  for (auto& w : watched_) {
    const std::uint64_t v = w.value();
    w.range.min = w.seen ? std::min(w.range.min, v) : v;
    w.range.max = w.seen ? std::max(w.range.max, v) : v;
    w.seen = true;
  }
}

}  // namespace aggnet
