// aggnet's modules speak nb_transport only. A tlm_utils::simple_target_socket without a
// b_transport spawns an adapter thread per socket at the start of simulation (a coroutine
// stack, two memory mappings): 58,806 links of a 243-site full mesh exceed Linux's
// vm.max_map_count, and every run pays for the stacks at start-up.
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <systemc>
#include <tlm>

namespace aggnet {

/// Base of a module whose target sockets refuse blocking transport.
class NbTransportOnly {
 public:
  void refuse_b_transport(tlm::tlm_generic_payload&, sc_core::sc_time&) {
    SC_REPORT_FATAL("aggnet", "blocking transport is not supported: use nb_transport_fw");
  }
};

/// Registers the refusal on `socket` of `module` (a NbTransportOnly).
template <typename Module>
void refuse_blocking_transport(tlm_utils::simple_target_socket<Module>& socket, Module* module) {
  socket.register_b_transport(module, &Module::refuse_b_transport);
}

}  // namespace aggnet
