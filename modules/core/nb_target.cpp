#include "modules/core/nb_target.h"

#include "modules/core/hand_over_log.h"

namespace aggnet {

namespace {

void through_interface(void* target, tlm::tlm_generic_payload& trans) {
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
  static_cast<tlm::tlm_fw_transport_if<>*>(target)->nb_transport_fw(trans, phase, zero);
}

}  // namespace

ChunkSink ChunkSink::of(tlm::tlm_fw_transport_if<>* target, const sc_core::sc_object* from) {
  auto* own = dynamic_cast<NbTarget*>(target);
  const ChunkSink sink = own != nullptr ? own->chunk_sink() : ChunkSink{&through_interface, target};
  return from != nullptr ? HandOverLog::tap(*from, target, sink) : sink;
}

ChunkSink NbTarget::chunk_sink() {
  return {&through_interface, static_cast<tlm::tlm_fw_transport_if<>*>(this)};
}

}  // namespace aggnet
