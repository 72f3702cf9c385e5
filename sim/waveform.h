// User-selected VCD waveforms of a NetworkSystem (`aggnet run --vcd FILE --trace ...`):
// which sites and signal families, a time window, hierarchical scopes per site and module.
// Documented in docs/waveforms.md.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <systemc>
#include <vector>

namespace aggnet {

class NetworkSystem;

/// Signal families a user can choose (`signals=`).
enum class SignalFamily { kBuffer, kSlots, kLinks, kState };

/// What to trace. Parsed from `--trace` items "sites=lon,tyo" and
/// "signals=buffer,links,slots,state" (items separated by spaces or given as repeated
/// options); an empty `sites` means every site; an empty `signals` every family.
struct TraceSelection {
  std::set<std::string> sites;                                      ///< site codes
  std::set<SignalFamily> signals;                                   ///< families
  std::uint64_t from_ps = 0;                                        ///< window start (inclusive)
  std::uint64_t to_ps = std::numeric_limits<std::uint64_t>::max();  ///< window end (inclusive)
  bool wants(SignalFamily f) const { return signals.empty() || signals.count(f) != 0; }
  bool wants_site(const std::string& code) const { return sites.empty() || sites.count(code) != 0; }
};

/// Parses `--trace` values. Errors: ConfigError("--trace", ...) naming the bad item:
/// an item without '=', an unknown key (expected sites or signals), an unknown family.
/// Site codes are checked against the platform by `check_sites`.
TraceSelection parse_trace_selection(const std::vector<std::string>& items);

/// Errors: ConfigError("--trace", "sites", ...) for a code that is not a platform site.
void check_trace_sites(const TraceSelection& selection, const std::vector<std::string>& codes);

/// One traced variable as the VCD declares it and as a view should show it.
struct TracedSignal {
  std::string site;      ///< the site whose group shows it (a link: its sender if selected)
  std::string vcd_name;  ///< GTKWave's name: "SystemC.wan.lon.fpga.buffer_occupancy_bytes[63:0]"
  std::string label;     ///< short name for a view: "buffer_occupancy_bytes", "lon->tyo"
  bool bytes = false;    ///< a byte count (drawn as an analog trace)
  const std::uint64_t* source = nullptr;  ///< the traced 64-bit variable (null for 32-bit ones)
};

/// Traces the selected signals of `system` into `file` (call during elaboration) and
/// returns them in view order (per site: buffer, slots, state, markers, access links, WAN
/// links). Names are the modules' SystemC names (sim/builder.h) plus the variable, and
/// SystemC 2.3.4's VCD writer turns every dot into a `$scope module` under `SystemC`:
///   <system>.<site>.fpga.buffer_occupancy_bytes, .slots_in_use        (buffer, slots)
///   <system>.<site>.cluster.state (0 idle, 1 compute, 2 communicate, 3 offset wait),
///   .step_index, .round_index                                           (state: markers)
///   <system>.<site>.access_up.bytes_in_flight, .access_down.bytes_in_flight,
///   <system>.<site>.link_to_<dst>.bytes_in_flight (every WAN link from or to a
///   selected site, in the sending site's scope)                        (links)
std::vector<TracedSignal> trace_selection(const NetworkSystem& system, sc_core::sc_trace_file* file,
                                          const TraceSelection& selection);

/// The time the last cluster of `system` finished its last step (call after sc_start).
std::uint64_t system_end_ps(const NetworkSystem& system);

/// Smallest and largest value of a traced 64-bit variable over the recorded timesteps.
struct ValueRange {
  std::uint64_t min = 0, max = 0;
};

/// A VCD trace file that records only inside [from, to]: it takes SystemC's VCD writer
/// out of the kernel's list of trace files and forwards its per-timestep cycle() only
/// inside the window. The writer reads the traced variables itself at every timestep,
/// so every value inside the window is exact. A marker process guarantees timesteps at
/// `from` and `to`, so the first dump ($dumpvars) holds the values at `from`, and close()
/// writes the last timestep (SystemC flushes a timestep only when time advances past it)
/// and ends the file at min(end of simulation, to). Create during elaboration; close()
/// after sc_start returned.
class WindowedVcd : public sc_core::sc_trace_file {
 public:
  /// Opens `base`.vcd; `header_comment` goes into a `$comment` before the declarations.
  /// Errors: std::runtime_error if SystemC cannot open it.
  WindowedVcd(const std::string& base, std::uint64_t from_ps, std::uint64_t to_ps,
              const std::string& header_comment = {});
  ~WindowedVcd() override;
  /// Writes the last timestep, ends the file at min(now, to) and closes it (idempotent).
  /// Errors: std::runtime_error if the file cannot be rewritten.
  void close();
  sc_core::sc_trace_file* inner() { return inner_; }
  /// The recorded range of a 64-bit variable traced through this file ({0, 0} if none).
  ValueRange range(const std::uint64_t* source) const;

  // sc_trace_file interface: every trace() forwards to the VCD writer.
#define AGGNET_FWD_A(tp) \
  void trace(const tp& object, const std::string& name) override { inner_->trace(object, name); }
#define AGGNET_FWD_B(tp)                                                      \
  void trace(const tp& object, const std::string& name, int width) override { \
    inner_->trace(object, name, width);                                       \
  }
  AGGNET_FWD_A(sc_core::sc_event)
  AGGNET_FWD_A(sc_core::sc_time)
  AGGNET_FWD_A(bool)
  AGGNET_FWD_A(sc_dt::sc_bit)
  AGGNET_FWD_A(sc_dt::sc_logic)
  AGGNET_FWD_B(unsigned char)
  AGGNET_FWD_B(unsigned short)
  AGGNET_FWD_B(unsigned int)
  void trace(const unsigned long& object, const std::string& name, int width) override {
    watch(&object);
    inner_->trace(object, name, width);
  }
  AGGNET_FWD_B(char)
  AGGNET_FWD_B(short)
  AGGNET_FWD_B(int)
  AGGNET_FWD_B(long)
  AGGNET_FWD_B(sc_dt::int64)
  void trace(const sc_dt::uint64& object, const std::string& name, int width) override {
    watch(&object);
    inner_->trace(object, name, width);
  }
  AGGNET_FWD_A(float)
  AGGNET_FWD_A(double)
  AGGNET_FWD_A(sc_dt::sc_int_base)
  AGGNET_FWD_A(sc_dt::sc_uint_base)
  AGGNET_FWD_A(sc_dt::sc_signed)
  AGGNET_FWD_A(sc_dt::sc_unsigned)
  AGGNET_FWD_A(sc_dt::sc_fxval)
  AGGNET_FWD_A(sc_dt::sc_fxval_fast)
  AGGNET_FWD_A(sc_dt::sc_fxnum)
  AGGNET_FWD_A(sc_dt::sc_fxnum_fast)
  AGGNET_FWD_A(sc_dt::sc_bv_base)
  AGGNET_FWD_A(sc_dt::sc_lv_base)
#undef AGGNET_FWD_A
#undef AGGNET_FWD_B
  void trace(const unsigned int& object, const std::string& name,
             const char** enum_literals) override {
    inner_->trace(object, name, enum_literals);
  }
  void write_comment(const std::string& comment) override { inner_->write_comment(comment); }
  void set_time_unit(double v, sc_core::sc_time_unit tu) override { inner_->set_time_unit(v, tu); }

 protected:
  void cycle(bool delta_cycle) override;

 private:
  struct Watched {
    const void* source;
    bool long_long;  ///< unsigned long long, else unsigned long
    ValueRange range;
    bool seen;
    std::uint64_t value() const {
      return long_long ? *static_cast<const unsigned long long*>(source)
                       : *static_cast<const unsigned long*>(source);
    }
  };
  void watch(const unsigned long* object) { watched_.push_back({object, false, {}, false}); }
  void watch(const unsigned long long* object) { watched_.push_back({object, true, {}, false}); }
  void forward(bool delta_cycle);
  std::string path_;
  sc_core::sc_trace_file* inner_ = nullptr;
  sc_core::sc_time from_, to_;
  std::unique_ptr<sc_core::sc_module> marker_;
  std::vector<Watched> watched_;
};

}  // namespace aggnet
