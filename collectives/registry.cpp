#include "collectives/registry.h"

#include <utility>

#include "collectives/group_average.h"

namespace aggnet {

std::unique_ptr<CollectiveProgram> make_program(Collective collective, bool ring,
                                                ProgramContext context,
                                                RingProgram::Steps ring_steps) {
  if (ring) return std::make_unique<RingProgram>(std::move(context), ring_steps);
  switch (collective) {
    case Collective::kGroupAverage:
      return std::make_unique<GroupAverageProgram>(std::move(context));
    case Collective::kPointToPoint:
    case Collective::kParameterServer:
    case Collective::kUnicastAllToAll:
      return std::make_unique<TransferProgram>(std::move(context), collective);
    case Collective::kRing:
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      return std::make_unique<RingProgram>(std::move(context), ring_steps);
    case Collective::kReductionTree:
      break;  // its program is being built (issue 33)
  }
  return nullptr;
}

}  // namespace aggnet
