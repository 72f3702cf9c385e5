// The one place control messages (ready, grant, credit, ack) are made: every module that
// sends one fills a ControlMessage and hands it to make_control.
#pragma once

#include <cstdint>
#include <tlm>

#include "modules/core/chunk.h"

namespace aggnet {

/// A control message's fields; those not named keep the ChunkExtension defaults.
struct ControlMessage {
  ChunkKind kind = ChunkKind::kAck;
  int src_site = -1;
  int dst_site = -1;  ///< -1 with a tree_id: to every member of the sender's multicast tree
  int tree_id = -1;
  int step = 0;
  std::uint32_t chunk = 0;
  std::uint32_t credits = 1;   ///< kGrant: window; kCredit: slots freed so far; kAck: window end
  std::uint64_t stamp_ps = 0;  ///< kReady: the sender's ready time
  bool reply = false;          ///< kReady: an answer to a repeated one; kAck: negative
  std::uint64_t bytes = 64;    ///< its size on the wire (before headers)
};

/// A pool transaction carrying `message` (reference count 1: the caller sends it).
inline tlm::tlm_generic_payload& make_control(ChunkPool& pool, const ControlMessage& message) {
  auto& trans = pool.allocate();
  auto& c = chunk_of(trans);
  c.kind = message.kind;
  c.src_site = message.src_site;
  c.dst_site = message.dst_site;
  c.tree_id = message.tree_id;
  c.step = message.step;
  c.chunk = message.chunk;
  c.credits = message.credits;
  c.stamp_ps = message.stamp_ps;
  c.reply = message.reply;
  c.payload_bytes = message.bytes;
  return trans;
}

}  // namespace aggnet
