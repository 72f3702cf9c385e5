#include "modules/cluster/ring_progress.h"

#include <algorithm>

#include "modules/core/event_calendar.h"

namespace aggnet {

void RingProgress::mark(int site, int step, int ring_step) {
  sites_[{step, ring_step}].push_back(site);
  EventCalendar::notify_now(changed_);
}

bool RingProgress::received(int site, int step, int ring_step) const {
  const auto it = sites_.find({step, ring_step});
  return it != sites_.end() &&
         std::find(it->second.begin(), it->second.end(), site) != it->second.end();
}

int RingProgress::count(int step, int ring_step) const {
  const auto it = sites_.find({step, ring_step});
  return it == sites_.end() ? 0 : static_cast<int>(it->second.size());
}

void RingProgress::wait_until(int site, int step, int ring_step, int n) const {
  if (site >= 0) {
    while (!received(site, step, ring_step)) sc_core::wait(changed_);
  } else {
    while (count(step, ring_step) < n) sc_core::wait(changed_);
  }
}

}  // namespace aggnet
