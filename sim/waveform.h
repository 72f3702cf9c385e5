// User-selected VCD waveforms of a NetworkSystem (`aggnet run --vcd FILE --trace ...`):
// which sites and signal families, a time window, hierarchical scopes per site and module.
// Documented in docs/waveforms.md.
#pragma once

#include <cstdint>
#include <limits>
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

/// Traces the selected signals of `system` into `file` (call during elaboration). Names
/// are dotted, and SystemC 2.3.4's VCD writer turns every dot into a `$scope module`:
///   <system>.<site>.fpga.buffer_occupancy_bytes, .slots_in_use        (buffer, slots)
///   <system>.<site>.cluster.state (0 idle, 1 compute, 2 communicate),
///   .step_index, .round_index                                           (state: markers)
///   <system>.<site>.access_up.bytes_in_flight, .access_down.bytes_in_flight,
///   <system>.<site>.link_to_<dst>.bytes_in_flight (every WAN link from or to a
///   selected site, in the sending site's scope)                        (links)
void trace_selection(const NetworkSystem& system, sc_core::sc_trace_file* file,
                     const TraceSelection& selection);

/// A VCD trace file that records only inside [from, to]: it takes SystemC's VCD writer
/// out of the kernel's list of trace files and forwards its per-timestep cycle() only
/// inside the window. The writer reads the traced variables itself at every timestep,
/// so every value inside the window is exact; the first timestep in the window dumps
/// every signal's current value. A WindowMarker process guarantees timesteps at `from`
/// and `to`. Create during elaboration; close() after sc_start returned.
class WindowedVcd : public sc_core::sc_trace_file {
 public:
  /// Opens `base`.vcd. Errors: std::runtime_error if SystemC cannot open it.
  WindowedVcd(const std::string& base, std::uint64_t from_ps, std::uint64_t to_ps);
  ~WindowedVcd() override;
  /// Flushes and closes the VCD file (idempotent).
  void close();
  sc_core::sc_trace_file* inner() { return inner_; }

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
  AGGNET_FWD_B(unsigned long)
  AGGNET_FWD_B(char)
  AGGNET_FWD_B(short)
  AGGNET_FWD_B(int)
  AGGNET_FWD_B(long)
  AGGNET_FWD_B(sc_dt::int64)
  AGGNET_FWD_B(sc_dt::uint64)
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
  sc_core::sc_trace_file* inner_ = nullptr;
  sc_core::sc_time from_, to_;
};

}  // namespace aggnet
