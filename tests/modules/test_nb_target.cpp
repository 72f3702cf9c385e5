// ChunkSink: what an initiator calls for a zero-delay hand-over once it has resolved its
// bound target. A module's own handler when it names one, else its nb_transport_fw with
// zero delay and BEGIN_REQ, exactly as a call through the socket would be.
#include <gtest/gtest.h>

#include <systemc>
#include <tlm>
#include <vector>

#include "modules/core/nb_target.h"

namespace aggnet {
namespace {

using Seen = std::vector<const tlm::tlm_generic_payload*>;

// A hand-over through nb_transport_fw: as a socket call at the instant itself would be.
tlm::tlm_sync_enum note(Seen& seen, tlm::tlm_generic_payload& trans, const tlm::tlm_phase& phase,
                        const sc_core::sc_time& delay) {
  EXPECT_EQ(phase, tlm::BEGIN_REQ);
  EXPECT_EQ(delay, sc_core::SC_ZERO_TIME);
  seen.push_back(&trans);
  return tlm::TLM_COMPLETED;
}

// Records what reaches it and by which way.
struct Recorder : NbTarget {
  Seen through_fw, through_handler;
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override {
    return note(through_fw, trans, phase, delay);
  }
};

struct WithHandler : Recorder {
  ChunkSink chunk_sink() override {
    return ChunkSink::of_member<WithHandler, &WithHandler::take>(this);
  }
  void take(tlm::tlm_generic_payload& trans) { through_handler.push_back(&trans); }
};

// A target that is not an NbTarget (another library's module, a test's probe).
struct Foreign : tlm::tlm_fw_transport_if<> {
  Seen seen;
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override {
    return note(seen, trans, phase, delay);
  }
  void b_transport(tlm::tlm_generic_payload&, sc_core::sc_time&) override {}
  bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }
  unsigned int transport_dbg(tlm::tlm_generic_payload&) override { return 0; }
};

TEST(ChunkSink, AModuleThatNamesItsHandlerIsCalledThere) {
  WithHandler module;
  tlm::tlm_generic_payload a, b;
  const ChunkSink sink = ChunkSink::of(&module);
  sink(a);
  sink(b);
  EXPECT_EQ(module.through_handler, (Seen{&a, &b}));
  EXPECT_TRUE(module.through_fw.empty());
}

TEST(ChunkSink, AnNbTargetWithoutAHandlerGetsNbTransportAtZeroDelay) {
  Recorder module;
  tlm::tlm_generic_payload a;
  ChunkSink::of (&module)(a);
  EXPECT_EQ(module.through_fw, (Seen{&a}));
}

TEST(ChunkSink, AForeignTargetGetsNbTransportAtZeroDelay) {
  Foreign target;
  tlm::tlm_generic_payload a;
  ChunkSink::of (&target)(a);
  EXPECT_EQ(target.seen, (Seen{&a}));
}

}  // namespace
}  // namespace aggnet
