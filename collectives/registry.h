// Which program runs a collective: the one table a new collective is added to.
#pragma once

#include <memory>

#include "collectives/host_programs.h"
#include "collectives/program.h"
#include "model/schedule.h"

namespace aggnet {

/// The program of `collective` at one site. `ring`: the ring family (kRing, kReduceScatter,
/// kAllGather), whose ring steps and rule are `ring_steps`.
std::unique_ptr<CollectiveProgram> make_program(Collective collective, bool ring,
                                                ProgramContext context,
                                                RingProgram::Steps ring_steps);

}  // namespace aggnet
