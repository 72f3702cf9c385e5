// Platform data: site lookup and the co-located variant.
#include "model/platform.h"

namespace aggnet {

// ---------------------------------------------------------------------------------
// Platform
// ---------------------------------------------------------------------------------

int Platform::site_index(const std::string& code) const {
  for (std::size_t i = 0; i < sites.size(); ++i) {
    if (sites[i].code == code) return static_cast<int>(i);
  }
  return -1;
}

Platform Platform::colocated_variant() const {
  std::vector<std::pair<int, int>> pairs;
  for (std::size_t i = 0; i < sites.size(); ++i)
    for (std::size_t j = i + 1; j < sites.size(); ++j)
      pairs.emplace_back(static_cast<int>(i), static_cast<int>(j));
  return colocated_variant(pairs);
}

Platform Platform::colocated_variant(const std::vector<std::pair<int, int>>& pairs) const {
  Platform p;
  p.name = name + " (colocated)";
  p.file = file;
  p.sites = sites;
  p.colocated = colocated;
  const std::size_t n = sites.size();
  for (const auto& [i, j] : pairs) {
    LinkSpec l;
    l.a = i;
    l.b = j;
    l.params = colocated.link;
    l.source = "co-located reference: data-centre link (colocated.link)";
    // Position of (i, j) in the full mesh's row-major order of pairs i < j.
    const std::size_t row = static_cast<std::size_t>(i);
    l.seed_index =
        static_cast<int>(row * (2 * n - row - 1) / 2 + static_cast<std::size_t>(j - i - 1));
    p.links.push_back(l);
  }
  return p;
}

}  // namespace aggnet
