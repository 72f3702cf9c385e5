// The one place messages are made: every module that sends a control message (ready,
// grant, credit, ack) or a data chunk of its own starts it with make_message, then sets
// what else its kind carries (chunk index, credits, stamp, tree) on chunk_of(trans).
#pragma once

#include <cstdint>
#include <tlm>

#include "modules/core/chunk.h"

namespace aggnet {

/// A pool transaction of `kind` from `src_site` to `dst_site` (-1 with a tree_id: to every
/// member of the sender's multicast tree) in `step`, carrying `payload_bytes` (its size on
/// the wire before headers); its other fields keep the ChunkExtension defaults. Reference
/// count 1: the caller sends it.
inline tlm::tlm_generic_payload& make_message(ChunkPool& pool, ChunkKind kind, int src_site,
                                              int dst_site, int step, std::uint64_t payload_bytes) {
  auto& trans = pool.allocate();
  auto& c = chunk_of(trans);
  c.kind = kind;
  c.src_site = src_site;
  c.dst_site = dst_site;
  c.step = step;
  c.payload_bytes = payload_bytes;
  return trans;
}

}  // namespace aggnet
