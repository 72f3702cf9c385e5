#include "modules/core/chunk.h"

#include <cstddef>

namespace aggnet {

tlm::tlm_extension_base* ChunkExtension::clone() const { return new ChunkExtension(*this); }

void ChunkExtension::copy_from(const tlm::tlm_extension_base& other) {
  *this = static_cast<const ChunkExtension&>(other);
}

// ChunkPool::Block's layout puts the payload's last fields (memory manager, reference
// count) on the extension's first line: true of SystemC 2.3.4's payload.
static_assert(sizeof(tlm::tlm_generic_payload) % 64 == 8,
              "ChunkPool::Block: the TLM payload's size changed; revisit its layout");

// The extension starts 16 bytes into a cache line (ChunkPool::Block): at 112 bytes it
// ends with the next line, and a hop touches those two.
static_assert(sizeof(ChunkExtension) <= 112, "ChunkExtension: a hop would touch a third line");

// Set once: no aggnet module changes a transaction's command or response status, so
// taking one from the pool leaves the payload's first two cache lines alone.
ChunkTransaction::ChunkTransaction(tlm::tlm_mm_interface* mm) : tlm::tlm_generic_payload(mm) {
  set_command(tlm::TLM_WRITE_COMMAND);
  set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  set_extension(&chunk);
}

// The payload's destructor frees the extensions it holds: this one is not on the heap.
ChunkTransaction::~ChunkTransaction() { clear_extension(&chunk); }

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
    all_.push_back(std::make_unique<Block>(this));
    t = &all_.back()->trans;
    if (limit_blocks_ != 0 && all_.size() == limit_blocks_ + 1 && exceeded_) exceeded_();
  } else {
    t = free_.back();
    free_.pop_back();
    // A host emits a segment's chunks in a row.
    if (!free_.empty()) prefetch_chunk(free_.back(), /*write=*/true);
  }
  t->acquire();
  return *t;
}

void ChunkPool::free(tlm::tlm_generic_payload* trans) {
  chunk_of(*trans).data.reset();
  free_.push_back(trans);
}

}  // namespace aggnet
