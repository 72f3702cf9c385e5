// aggnet's modules are their own TLM-2.0 targets: a tlm::tlm_target_socket bound to the
// module itself, so a chunk's crossing into a module is one virtual call.
// tlm_utils::simple_target_socket costs three indirect calls per crossing and, for a
// socket without b_transport, spawns an adapter thread at the start of simulation (a
// coroutine stack, two memory mappings): the 58,806 links of a 243-site full mesh
// exhausted Linux's vm.max_map_count that way.
#pragma once

#include <systemc>
#include <tlm>

namespace aggnet {

/// A zero-delay hand-over straight to a module's chunk handler. An initiator resolves
/// what its socket is bound to once, at the start of simulation (ChunkSink::of), and
/// then calls one function: going through the socket, the target's interface vtable and
/// its virtual-base thunk touched two more cache lines of a cold module per crossing (at
/// hundreds of sites each a miss). Sockets and binding stay the composition.
class ChunkSink {
 public:
  using Handler = void (*)(void* module, tlm::tlm_generic_payload& trans);
  ChunkSink() = default;
  ChunkSink(Handler handler, void* module) : handler_(handler), module_(module) {}

  /// `M::*F` of `module` as a sink.
  template <class M, void (M::*F)(tlm::tlm_generic_payload&)>
  static ChunkSink of_member(M* module) {
    return {[](void* m, tlm::tlm_generic_payload& trans) { (static_cast<M*>(m)->*F)(trans); },
            module};
  }
  /// The sink of a bound target: its own (an NbTarget), else its nb_transport_fw with
  /// zero delay. With the initiator's module `from`, counted by an open HandOverLog.
  static ChunkSink of(tlm::tlm_fw_transport_if<>* target, const sc_core::sc_object* from = nullptr);

  void operator()(tlm::tlm_generic_payload& trans) const { handler_(module_, trans); }
  bool bound() const { return handler_ != nullptr; }
  bool operator==(const ChunkSink& other) const {
    return handler_ == other.handler_ && module_ == other.module_;
  }

 private:
  Handler handler_ = nullptr;
  void* module_ = nullptr;
};

/// A FIFO link as its sender sees it: when the last transaction handed to it leaves (its
/// last bit on the wire). A sender that is a link's only source learns from it when what
/// it has just handed over departs.
class DepartureClock {
 public:
  virtual sc_core::sc_time last_departure() const = 0;

 protected:
  ~DepartureClock() = default;
};

/// Base of a module that receives chunks by nb_transport_fw only: blocking transport is a
/// fatal error, DMI and debug transport are refused.
class NbTarget : public tlm::tlm_fw_transport_if<> {
 public:
  void b_transport(tlm::tlm_generic_payload&, sc_core::sc_time&) override {
    SC_REPORT_FATAL("aggnet", "blocking transport is not supported: use nb_transport_fw");
  }
  bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }
  unsigned int transport_dbg(tlm::tlm_generic_payload&) override { return 0; }
  /// Where a chunk handed over with zero delay goes: nb_transport_fw unless the module
  /// names its handler. It must do what nb_transport_fw does with zero delay.
  virtual ChunkSink chunk_sink();
};

}  // namespace aggnet
