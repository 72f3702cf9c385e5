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

/// Base of a module that receives chunks by nb_transport_fw only: blocking transport is a
/// fatal error, DMI and debug transport are refused.
class NbTarget : public tlm::tlm_fw_transport_if<> {
 public:
  void b_transport(tlm::tlm_generic_payload&, sc_core::sc_time&) override {
    SC_REPORT_FATAL("aggnet", "blocking transport is not supported: use nb_transport_fw");
  }
  bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }
  unsigned int transport_dbg(tlm::tlm_generic_payload&) override { return 0; }
};

}  // namespace aggnet
