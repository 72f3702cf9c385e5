#include "collectives/registry.h"

#include <utility>

#include "collectives/group_average.h"
#include "collectives/reduction_tree.h"

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
      return std::make_unique<ReductionTreeProgram>(std::move(context));
  }
  return nullptr;
}

}  // namespace aggnet
