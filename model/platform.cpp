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
  Platform p;
  p.name = name + " (colocated)";
  p.file = file;
  p.sites = sites;
  p.colocated = colocated;
  for (std::size_t i = 0; i < sites.size(); ++i) {
    for (std::size_t j = i + 1; j < sites.size(); ++j) {
      LinkSpec l;
      l.a = static_cast<int>(i);
      l.b = static_cast<int>(j);
      l.params = colocated.link;
      l.source = "co-located reference: data-centre link (colocated.link)";
      p.links.push_back(l);
    }
  }
  return p;
}

}  // namespace aggnet
