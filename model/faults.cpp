#include "model/faults.h"

#include <fmt/format.h>

#include <optional>
#include <stdexcept>

#include "common/strings.h"
#include "common/units.h"

namespace aggnet {

namespace {

const char* kSyntax =
    "expected loss:A-B=RATE, down:A-B@T1[-T2], stall:SITE@T1-T2 or slow:SITE=FACTOR "
    "(e.g. down:lon-nyc@150ms-400ms)";

[[noreturn]] void bad(const std::string& spec, const std::string& what) {
  throw FaultSpecError(what, spec);
}

// "A-B" -> {A, B}.
LinkName link_name(const std::string& spec, const std::string& text) {
  const auto dash = text.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == text.size())
    bad(spec, "expected a link as two site codes joined by '-', e.g. lon-nyc");
  return {text.substr(0, dash), text.substr(dash + 1)};
}

std::uint64_t time_of(const std::string& spec, const std::string& text) {
  try {
    return parse_time_ps(text);
  } catch (const UnknownUnitError& e) {  // its message names the unit and the known ones
    bad(spec, e.what());
  } catch (const UnitError&) {
    bad(spec, "expected a time with its unit, e.g. 150ms");
  }
}

double number_of(const std::string& spec, const std::string& text) {
  try {
    return parse_number(text);
  } catch (const UnitError&) {
    bad(spec, "expected a plain number, e.g. 0.01");
  }
}

// "T1-T2" or "T1" (then `open_end`). A time may hold a '-' in its exponent (1e-1s), so
// the window splits at the one dash that leaves a time on each side.
std::pair<std::uint64_t, std::uint64_t> window(const std::string& spec, const std::string& text,
                                               std::uint64_t open_end) {
  std::optional<std::pair<std::uint64_t, std::uint64_t>> found;
  for (auto dash = text.find('-'); dash != std::string::npos; dash = text.find('-', dash + 1)) {
    try {
      const auto from = parse_time_ps(text.substr(0, dash));
      found = {from, parse_time_ps(text.substr(dash + 1))};
      break;
    } catch (const UnitError&) {
    }
  }
  if (!found) return {time_of(spec, text), open_end};
  if (found->second <= found->first) bad(spec, "expected the end of the window after its start");
  return *found;
}

// Splits "name@rest" or "name=rest".
std::pair<std::string, std::string> split_at(const std::string& spec, const std::string& body,
                                             char sep) {
  const auto at = body.find(sep);
  if (at == std::string::npos || at == 0 || at + 1 == body.size()) bad(spec, kSyntax);
  return {body.substr(0, at), body.substr(at + 1)};
}

std::vector<std::string> site_codes(const Platform& platform) {
  std::vector<std::string> codes;
  for (const auto& site : platform.sites) codes.push_back(site.code);
  return codes;
}

void check_site(const Platform& platform, const std::string& code, const std::string& what) {
  if (platform.site_index(code) < 0)
    throw std::invalid_argument(fmt::format("{}: unknown site '{}'{}", what, code,
                                            did_you_mean(code, site_codes(platform))));
}

// An unknown site of a link: the closest link of the platform ("lon-nyk": 'lon-nyc'), else
// the closest site to the unknown code ("Londn": 'lon').
void check_link(const Platform& platform, const LinkName& link, const std::string& what) {
  for (const std::string& code : {link.a, link.b}) {
    if (platform.site_index(code) >= 0) continue;
    std::vector<std::string> links;
    for (const auto& l : platform.links) {
      const std::string &a = platform.sites[static_cast<std::size_t>(l.a)].code,
                        &b = platform.sites[static_cast<std::size_t>(l.b)].code;
      links.insert(links.end(), {a + "-" + b, b + "-" + a});
    }
    std::string hint = did_you_mean(link.a + "-" + link.b, links);
    if (hint.empty()) hint = did_you_mean(code, site_codes(platform));
    throw std::invalid_argument(
        fmt::format("{}: unknown site '{}' in {}-{}{}", what, code, link.a, link.b, hint));
  }
  if (find_link(platform, link) < 0)
    throw std::invalid_argument(
        fmt::format("{}: no WAN link between {} and {} in the platform", what, link.a, link.b));
}

}  // namespace

FaultSpecError::FaultSpecError(const std::string& expected, const std::string& spec)
    : std::invalid_argument(expected + ", got '" + spec + "'"), expected_(expected), spec_(spec) {}

void add_fault_spec(FaultPlan& plan, const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos) bad(spec, kSyntax);
  const std::string kind = spec.substr(0, colon), body = spec.substr(colon + 1);
  if (kind == "loss") {
    const auto [link, rate] = split_at(spec, body, '=');
    const double r = number_of(spec, rate);
    if (r >= 1) bad(spec, "expected a loss rate in [0, 1)");
    plan.link_loss.push_back({link_name(spec, link), r});
  } else if (kind == "down") {
    const auto [link, times] = split_at(spec, body, '@');
    const auto [down, up] = window(spec, times, std::numeric_limits<std::uint64_t>::max());
    plan.outages.push_back({link_name(spec, link), down, up});
  } else if (kind == "stall") {
    const auto [site, times] = split_at(spec, body, '@');
    const auto [from, to] = window(spec, times, 0);
    if (to == 0) bad(spec, "expected a stall window T1-T2");
    plan.stalls.push_back({site, from, to});
  } else if (kind == "slow") {
    const auto [site, factor] = split_at(spec, body, '=');
    const double f = number_of(spec, factor);
    if (f < 1) bad(spec, "expected a slowdown factor >= 1");
    plan.slowdowns.push_back({site, f});
  } else {
    bad(spec, kSyntax);
  }
}

int find_link(const Platform& platform, const LinkName& name) {
  const int a = platform.site_index(name.a), b = platform.site_index(name.b);
  for (std::size_t i = 0; i < platform.links.size(); ++i) {
    const auto& l = platform.links[i];
    if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) return static_cast<int>(i);
  }
  return -1;
}

std::uint64_t slowed_compute_ps(const FaultPlan& plan, const Platform& platform, int site) {
  const std::uint64_t base =
      platform.sites.at(static_cast<std::size_t>(site)).cluster.compute_time_ps;
  double factor = 1;
  for (const auto& s : plan.slowdowns)
    if (platform.site_index(s.site) == site) factor *= s.factor;
  const double slowed = static_cast<double>(base) * factor;
  if (slowed >= 1.8e19)
    throw std::invalid_argument(fmt::format("slow:{}: compute time x {} overflows 64-bit ps",
                                            platform.sites[static_cast<std::size_t>(site)].code,
                                            factor));
  return factor == 1 ? base : static_cast<std::uint64_t>(slowed);
}

void check_faults(const FaultPlan& plan, const Platform& platform) {
  for (const auto& l : plan.link_loss) check_link(platform, l.link, "loss");
  for (const auto& o : plan.outages) check_link(platform, o.link, "down");
  for (const auto& s : plan.stalls) check_site(platform, s.site, "stall");
  for (const auto& s : plan.slowdowns) {
    check_site(platform, s.site, "slow");
    slowed_compute_ps(plan, platform, platform.site_index(s.site));
  }
}

}  // namespace aggnet
