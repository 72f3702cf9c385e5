#include "modules/core/chunk.h"

#include <cstddef>

namespace aggnet {

tlm::tlm_extension_base* ChunkExtension::clone() const { return new ChunkExtension(*this); }

void ChunkExtension::copy_from(const tlm::tlm_extension_base& other) {
  *this = static_cast<const ChunkExtension&>(other);
}

namespace {

// A pool transaction and its extension in one allocation (adjacent cache lines): the first
// access to a chunk that has been propagating on a long link is a cache miss, one not two.
struct alignas(64) PooledChunk : ChunkTransaction {
  explicit PooledChunk(tlm::tlm_mm_interface* mm) : ChunkTransaction(mm) {
    chunk = &extension;
    set_extension(chunk);
  }
  // The payload's destructor frees the extensions it holds: this one is not on the heap.
  ~PooledChunk() override { clear_extension(chunk); }
  ChunkExtension extension;
};

// A free transaction has been idle and is likely out of cache.
void prefetch(const tlm::tlm_generic_payload* trans) {
  const char* p = reinterpret_cast<const char*>(trans);
  for (std::size_t at = 0; at < sizeof(PooledChunk); at += 64) __builtin_prefetch(p + at, 1);
}

}  // namespace

ChunkPool::~ChunkPool() = default;

tlm::tlm_generic_payload& ChunkPool::allocate() {
  auto& t = take();
  chunk_of(t) = ChunkExtension{};
  return t;
}

tlm::tlm_generic_payload& ChunkPool::clone(const tlm::tlm_generic_payload& trans) {
  auto& copy = take();
  chunk_of(copy) = chunk_of(trans);
  return copy;
}

// A transaction with reference count 1; its extension keeps whatever it last held.
tlm::tlm_generic_payload& ChunkPool::take() {
  tlm::tlm_generic_payload* t;
  if (free_.empty()) {
    all_.push_back(std::make_unique<PooledChunk>(this));
    t = all_.back().get();
  } else {
    t = free_.back();
    free_.pop_back();
    if (!free_.empty()) prefetch(free_.back());  // a host emits a segment's chunks in a row
  }
  t->set_command(tlm::TLM_WRITE_COMMAND);
  t->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  t->acquire();
  return *t;
}

void ChunkPool::free(tlm::tlm_generic_payload* trans) {
  chunk_of(*trans).data.reset();
  free_.push_back(trans);
}

}  // namespace aggnet
