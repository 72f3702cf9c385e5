// The module tests' shared ends of a module under test: a source that hands it chunks of
// given sizes at given instants, and a sink that records when they arrive.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <systemc>
#include <utility>
#include <vector>

#include "modules/core/chunk.h"
#include "modules/core/event_calendar.h"

namespace aggnet::testing {

/// Hands chunks of the given sizes (`sends`: instant, payload bytes) to its socket, each
/// with the TLM timing annotation `annotation` (posted-AT: the last bit is there then).
struct ByteSource : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<ByteSource> out{"out"};
  std::vector<std::pair<sc_core::sc_time, std::uint64_t>> sends;
  sc_core::sc_time annotation = sc_core::SC_ZERO_TIME;
  ChunkPool pool;
  SC_HAS_PROCESS(ByteSource);
  explicit ByteSource(sc_core::sc_module_name n) : sc_module(n) { SC_THREAD(run); }
  void run() {
    for (const auto& [at, bytes] : sends) {
      wait(at - sc_core::sc_time_stamp());
      auto& trans = pool.allocate();
      chunk_of(trans).payload_bytes = bytes;
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_core::sc_time delay = annotation;
      out->nb_transport_fw(trans, phase, delay);
    }
  }
};

/// Records the arrival instant (as the modules see the time) of every chunk, and frees it.
struct ArrivalSink : sc_core::sc_module {
  tlm_utils::simple_target_socket<ArrivalSink> in{"in"};
  std::vector<sc_core::sc_time> arrivals;
  explicit ArrivalSink(sc_core::sc_module_name n) : sc_module(n) {
    in.register_nb_transport_fw(this, &ArrivalSink::fw);
  }
  tlm::tlm_sync_enum fw(tlm::tlm_generic_payload& t, tlm::tlm_phase&, sc_core::sc_time&) {
    arrivals.push_back(EventCalendar::now());
    t.release();
    return tlm::TLM_COMPLETED;
  }
};

}  // namespace aggnet::testing
