// Platform data: site lookup and the co-located variant.
#include "model/platform.h"

#include <algorithm>
#include <cstdint>

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
  p.colocated = colocated;
  for (const Site& s : sites)
    if (!s.switch_only) p.sites.push_back(s);
  const std::size_t n = p.sites.size();
  Site fabric;
  fabric.code = kFabricCode;
  fabric.name = "data-centre fabric switch";
  fabric.switch_only = true;
  fabric.sw.latency_ps = 0;
  p.sites.push_back(fabric);
  WanLinkParams port = colocated.link;
  port.delay_ps = colocated.link.delay_ps / 2;
  const std::uint64_t ports = std::max<std::uint64_t>(n - 1, 1), bps = colocated.link.bandwidth_bps;
  port.bandwidth_bps = bps > UINT64_MAX / ports ? UINT64_MAX : bps * ports;
  for (std::size_t i = 0; i < n; ++i) {
    LinkSpec l;
    l.a = static_cast<int>(i);
    l.b = static_cast<int>(n);
    l.params = port;
    l.source = "co-located reference: a site's port on the data-centre fabric (colocated.link)";
    p.links.push_back(l);
  }
  return p;
}

}  // namespace aggnet
