#include "modules/core/chunk.h"

namespace aggnet {

tlm::tlm_extension_base* ChunkExtension::clone() const { return new ChunkExtension(*this); }

void ChunkExtension::copy_from(const tlm::tlm_extension_base& other) {
  *this = static_cast<const ChunkExtension&>(other);
}

ChunkPool::~ChunkPool() = default;  // a payload's destructor frees its extensions

tlm::tlm_generic_payload& ChunkPool::allocate() {
  tlm::tlm_generic_payload* t;
  if (free_.empty()) {
    all_.push_back(std::make_unique<ChunkTransaction>(this));
    all_.back()->chunk = new ChunkExtension;
    all_.back()->set_extension(all_.back()->chunk);  // the payload owns and frees it
    t = all_.back().get();
  } else {
    t = free_.back();
    free_.pop_back();
    chunk_of(*t) = ChunkExtension{};
  }
  t->set_command(tlm::TLM_WRITE_COMMAND);
  t->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  t->acquire();
  return *t;
}

tlm::tlm_generic_payload& ChunkPool::clone(const tlm::tlm_generic_payload& trans) {
  auto& copy = allocate();
  chunk_of(copy) = chunk_of(trans);
  return copy;
}

void ChunkPool::free(tlm::tlm_generic_payload* trans) {
  chunk_of(*trans).data.reset();
  free_.push_back(trans);
}

}  // namespace aggnet
