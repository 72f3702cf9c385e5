#include "collectives/program.h"

#include "model/network_math.h"

namespace aggnet {

std::uint64_t ProgramContext::chunks() const { return num_chunks(gradient_bytes, chunk_bytes); }

}  // namespace aggnet
