// Small platforms built in code for closed-form tests.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "model/routing.h"
#include "model/schedule.h"

namespace aggnet::testing {

/// Sites named by `codes`, joined by `links` (a, b, one-way delay in ps), every link at
/// `bandwidth_bps`. Compute time 0 so every site starts communicating at t = 0.
inline Platform make_platform(const std::vector<std::string>& codes,
                              const std::vector<std::tuple<int, int, std::uint64_t>>& links,
                              std::uint64_t bandwidth_bps) {
  Platform p;
  p.name = "test";
  for (const auto& code : codes) {
    Site s;
    s.code = code;
    s.name = code;
    s.cluster.compute_time_ps = 0;
    p.sites.push_back(s);
  }
  for (const auto& [a, b, delay_ps] : links) {
    LinkSpec l;
    l.a = a;
    l.b = b;
    l.params.delay_ps = delay_ps;
    l.params.bandwidth_bps = bandwidth_bps;
    p.links.push_back(l);
  }
  return p;
}

/// One round with one group of `members`.
inline Schedule one_group(const std::vector<int>& members) {
  Schedule s;
  s.name = "one-group";
  s.rounds.push_back(Round{{Group{members}}});
  return s;
}

constexpr std::uint64_t kMs = 1'000'000'000ull;  // ps per millisecond

}  // namespace aggnet::testing
