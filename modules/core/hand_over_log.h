// Which module hands a chunk of each kind to which (`aggnet run --journey`): the binds
// the builder made, as the chunks of a run used them. While a log is open, every sink an
// initiator resolves (ChunkSink::of with its sender) counts what passes through it before
// handing it on, so the journey read from a run is the composition itself, not a
// description of it kept beside the builder.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <systemc>
#include <tlm>

#include "modules/core/chunk.h"
#include "modules/core/nb_target.h"

namespace aggnet {

inline constexpr std::size_t kChunkKinds = static_cast<std::size_t>(ChunkKind::kAck) + 1;

/// The kind's name as the journey page prints it ("contribution", "ring_segment", ...).
const char* chunk_kind_name(ChunkKind kind);

class HandOverLog {
 public:
  /// One bound initiator-to-target pair, as the module names give it.
  struct Edge {
    std::string from, to;
    std::array<std::uint64_t, kChunkKinds> chunks{};  ///< [kind] hand-overs
    /// [kind] order of the first hand-over of that kind among all of the log's (1, 2, ...;
    /// 0: none), so a kind's edges read in the order its chunks first took them.
    std::array<std::uint64_t, kChunkKinds> first{};
    ChunkSink next;
    HandOverLog* log = nullptr;
  };

  /// Opens the log: the sinks resolved from now on (at the start of simulation) report
  /// here. One log at a time; it must outlive the simulation that uses its sinks.
  HandOverLog();
  ~HandOverLog();
  HandOverLog(const HandOverLog&) = delete;
  HandOverLog& operator=(const HandOverLog&) = delete;

  /// `next` (the sink of `target`, bound to `from`'s initiator socket), counted if a log
  /// is open; else `next` itself.
  static ChunkSink tap(const sc_core::sc_object& from, tlm::tlm_fw_transport_if<>* target,
                       ChunkSink next);

  const std::deque<Edge>& edges() const { return edges_; }

 private:
  static void pass(void* edge, tlm::tlm_generic_payload& trans);

  std::deque<Edge> edges_;  // stable addresses: the sinks point at them
  std::uint64_t firsts_ = 0;
  static HandOverLog* open_;
};

/// The journey page: per chunk kind, the hand-overs its chunks made in the order they
/// first made them ("from -> to: count"), then the binds that carried nothing.
std::string journey_text(const HandOverLog& log);

}  // namespace aggnet
