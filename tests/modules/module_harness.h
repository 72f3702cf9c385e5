// The module tests' shared ends of a module under test: sources that hand it chunks (of
// given sizes, or whole chunk descriptions) at given instants, and sinks that record when
// they arrive (and what).
#pragma once

#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <functional>
#include <systemc>
#include <utility>
#include <vector>

#include "modules/core/chunk.h"
#include "modules/core/event_calendar.h"
#include "modules/core/time.h"

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

/// Posts whole chunks (posted-AT: the last bit is there at the post's instant + its delay)
/// from the pool of the system under test; every post is accepted at once.
struct ChunkSource : sc_core::sc_module {
  struct Post {
    std::uint64_t at_ps;
    ChunkExtension chunk;
    std::uint64_t delay_ps = 0;  ///< the posted delay: the last bit reaches the target then
  };
  tlm_utils::simple_initiator_socket<ChunkSource> out{"out"};
  std::vector<Post> posts;
  ChunkPool& pool;
  SC_HAS_PROCESS(ChunkSource);
  ChunkSource(sc_core::sc_module_name n, ChunkPool& p) : sc_module(n), pool(p) { SC_THREAD(run); }
  void run() {
    for (const auto& p : posts) {
      if (ps_time(p.at_ps) > sc_core::sc_time_stamp())
        wait(ps_time(p.at_ps) - sc_core::sc_time_stamp());
      auto& trans = pool.allocate();
      chunk_of(trans) = p.chunk;
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_core::sc_time delay = ps_time(p.delay_ps);
      EXPECT_EQ(out->nb_transport_fw(trans, phase, delay), tlm::TLM_COMPLETED);
    }
  }
};

/// Records every chunk handed to it with the instant (as the modules see the time), the
/// transaction and its reference count on arrival, and frees it. Modules hand over at the
/// instant itself (no annotated delay).
struct ChunkRecorder : sc_core::sc_module {
  struct Seen {
    std::uint64_t at_ps;
    ChunkExtension chunk;
    const tlm::tlm_generic_payload* trans;
    int references;
  };
  tlm_utils::simple_target_socket<ChunkRecorder> in{"in"};
  std::vector<Seen> seen;
  explicit ChunkRecorder(sc_core::sc_module_name n) : sc_module(n) {
    in.register_nb_transport_fw(this, &ChunkRecorder::fw);
  }
  tlm::tlm_sync_enum fw(tlm::tlm_generic_payload& t, tlm::tlm_phase&, sc_core::sc_time& delay) {
    EXPECT_EQ(delay, sc_core::SC_ZERO_TIME);
    seen.push_back({to_ps(EventCalendar::now()), chunk_of(t), &t, t.get_ref_count()});
    t.release();
    return tlm::TLM_COMPLETED;
  }
};

/// A kernel thread that runs each check at its instant (ps), or `body` instead if set.
struct Probe : sc_core::sc_module {
  std::vector<std::pair<std::uint64_t, std::function<void()>>> checks;
  std::function<void()> body;
  SC_HAS_PROCESS(Probe);
  explicit Probe(sc_core::sc_module_name n) : sc_module(n) { SC_THREAD(run); }
  void run() {
    if (body) return body();
    for (const auto& [at, check] : checks) {
      wait(ps_time(at) - sc_core::sc_time_stamp());
      check();
    }
  }
};

}  // namespace aggnet::testing
