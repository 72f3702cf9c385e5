#include "sim/invariants.h"

#include <fmt/format.h>

#include "sim/builder.h"

namespace aggnet {

namespace {

void note(std::string& violation, const std::string& what) {
  violation += (violation.empty() ? "" : ", ") + what;
}

std::string exactly_once(const NetworkSystem& system) {
  std::string v;
  for (std::size_t i = 0; i < system.sites().size(); ++i) {
    const auto& c = *system.sites()[i].cluster;
    const auto& code = system.platform().sites[i].code;
    if (c.duplicate_results())
      note(v, fmt::format("{} received {} results twice", code, c.duplicate_results()));
    if (c.accepted_results() != c.expected_results())
      note(v, fmt::format("{} accepted {} chunk results, its finished steps need {}", code,
                          c.accepted_results(), c.expected_results()));
  }
  return v;
}

std::string one_per_member(const NetworkSystem& system) {
  std::string v;
  for (std::size_t i = 0; i < system.sites().size(); ++i) {
    const auto bad = system.sites()[i].fpga->bad_reductions();
    if (bad)
      note(v, fmt::format("{}: {} reduced chunks not summing one contribution per member",
                          system.platform().sites[i].code, bad));
  }
  return v;
}

std::string no_leak(const NetworkSystem& system) {
  std::string v;
  for (std::size_t i = 0; i < system.sites().size(); ++i) {
    const auto& f = *system.sites()[i].fpga;
    if (f.slots_held() || f.buffer().occupancy_bytes() || f.waiting_contributions())
      note(v, fmt::format("{}: {} slots held ({} B), {} contributions waiting at the end",
                          system.platform().sites[i].code, f.buffer().slots_in_use(),
                          f.buffer().occupancy_bytes(), f.waiting_contributions()));
  }
  return v;
}

std::string within_capacity(const NetworkSystem& system) {
  std::string v;
  for (std::size_t i = 0; i < system.sites().size(); ++i) {
    const auto& b = system.sites()[i].fpga->buffer();
    if (b.high_water_bytes() > b.capacity_bytes())
      note(v,
           fmt::format("{}: occupancy reached {} B of a {} B buffer",
                       system.platform().sites[i].code, b.high_water_bytes(), b.capacity_bytes()));
  }
  return v;
}

void conserve(std::string& v, const std::string& name, const WanLink& l) {
  if (l.wire_bytes_sent() == l.wire_bytes_delivered() + l.wire_bytes_lost() + l.bytes_in_flight())
    return;
  note(v, fmt::format("{}: sent {} B != delivered {} B + lost {} B + in flight {} B", name,
                      l.wire_bytes_sent(), l.wire_bytes_delivered(), l.wire_bytes_lost(),
                      l.bytes_in_flight()));
}

std::string conservation(const NetworkSystem& system) {
  std::string v;
  const auto& sites = system.platform().sites;
  for (const auto& d : system.links())
    conserve(v,
             sites[static_cast<std::size_t>(d.from)].code + "->" +
                 sites[static_cast<std::size_t>(d.to)].code,
             *d.link);
  for (std::size_t i = 0; i < system.sites().size(); ++i) {
    conserve(v, sites[i].code + " access_up", *system.sites()[i].access_up);
    conserve(v, sites[i].code + " access_down", *system.sites()[i].access_down);
  }
  return v;
}

}  // namespace

std::vector<InvariantResult> check_invariants(const NetworkSystem& system) {
  return {
      {"exactly-once delivery", "every (step, chunk) result reaches every group member once",
       exactly_once(system)},
      {"one contribution per member",
       "every reduced chunk sums exactly one contribution of each other member (reduction "
       "trees: every sum holds each member of its subtree once)",
       one_per_member(system)},
      {"no slot leaked", "no aggregation slot held, no contribution waiting at the end",
       no_leak(system)},
      {"buffer within capacity", "slots in use never above the buffer memory",
       within_capacity(system)},
      {"link conservation", "wire bytes sent = delivered + lost + in flight on every link",
       conservation(system)},
  };
}

std::string violations(const std::vector<InvariantResult>& results) {
  std::string out;
  for (const auto& r : results)
    if (!r.holds())
      out += (out.empty() ? "" : "; ") + ("invariant '" + r.name + "' violated: " + r.violation);
  return out;
}

}  // namespace aggnet
