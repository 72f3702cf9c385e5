#include "collectives/program.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "model/network_math.h"

namespace aggnet {

SendOffsets::SendOffsets(std::vector<Entry> entries) {
  const auto by_receiver = [](const Entry& a, const Entry& b) { return a.first < b.first; };
  if (!std::is_sorted(entries.begin(), entries.end(), by_receiver))  // a map's rows are
    std::stable_sort(entries.begin(), entries.end(), by_receiver);
  const auto same = [](const Entry& a, const Entry& b) { return a.first == b.first; };
  entries.erase(std::unique(entries.begin(), entries.end(), same), entries.end());
  entries_ = std::make_shared<const std::vector<Entry>>(std::move(entries));
}

std::uint64_t SendOffsets::to(int receiver) const {
  if (!entries_) return 0;
  const auto it = std::lower_bound(entries_->begin(), entries_->end(), receiver,
                                   [](const Entry& e, int r) { return e.first < r; });
  return it == entries_->end() || it->first != receiver ? 0 : it->second;
}

std::uint64_t ProgramContext::chunks() const { return num_chunks(gradient_bytes, chunk_bytes); }

}  // namespace aggnet
