// A pool transaction's layout (ChunkPool::Block, ChunkExtension): what every link crossing
// and switch reads of a chunk is on the cache line that holds the payload's reference
// count (its last field, written by acquire and release), so that a hop touches one line
// of a transaction that has been idle, propagating, and is likely cold.
#include <gtest/gtest.h>

#include <cstdint>
#include <tlm>

#include "modules/core/chunk.h"

namespace aggnet {
namespace {

std::uintptr_t line_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p) / 64; }

template <typename T>
void expect_on_line(const T& field, std::uintptr_t line, const char* name) {
  EXPECT_EQ(line_of(&field), line) << name << " starts on another line";
  EXPECT_EQ(line_of(reinterpret_cast<const char*>(&field) + sizeof(T) - 1), line)
      << name << " ends on another line";
}

TEST(ChunkPool, WhatAHopReadsSharesTheReferenceCountsLine) {
  ChunkPool pool;
  for (int i = 0; i < 3; ++i) {  // blocks from the pool's start and from its growth
    tlm::tlm_generic_payload& trans = pool.allocate();
    const ChunkExtension& c = chunk_of(trans);
    const std::uintptr_t line =
        line_of(reinterpret_cast<const char*>(&trans) + sizeof(tlm::tlm_generic_payload) - 1);
    expect_on_line(c.kind, line, "kind");
    expect_on_line(c.dst_site, line, "dst_site");
    expect_on_line(c.tree_id, line, "tree_id");
    expect_on_line(c.chunks, line, "chunks");
    expect_on_line(c.payload_bytes, line, "payload_bytes");
  }
}

}  // namespace
}  // namespace aggnet
