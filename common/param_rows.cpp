// The platform's rows and the `--set` path grammar over them (config/platform_loader.cpp
// applies the same paths to the YAML tree).
#include "common/param_rows.h"

#include <algorithm>
#include <stdexcept>

#include "common/strings.h"

namespace aggnet {
namespace {

using Q = Quantity;

// clang-format off
const std::vector<ParamRow> kModuleRows = {
    {"link", "delay", Q::kTime, "ms"},
    {"link", "bandwidth", Q::kRate, "Gbps"},
    {"link", "mtu", Q::kBytes, "B"},
    {"link", "header", Q::kBytes, "B"},
    {"link", "jitter", Q::kTime, "ms"},
    {"switch", "latency", Q::kTime, "ns"},
    {"fpga", "datapath_width", Q::kCount, "bit"},
    {"fpga", "clock", Q::kFrequency, "MHz"},
    {"fpga", "latency_cycles", Q::kCount, "cycle"},
    {"fpga", "buffer", Q::kBytes, "MiB"},
    {"cluster", "compute_time", Q::kTime, "s"},
    {"cluster", "access_bandwidth", Q::kRate, "Gbps"},
    {"cluster", "access_delay", Q::kTime, "us"},
};
/// The fields beside the module parameters that a `--set` may name.
const std::vector<ParamRow> kOtherRows = {
    {"platform", "name", Q::kText, ""},
    {"platform", "description", Q::kText, ""},
    {"site", "name", Q::kText, ""},
    {"site", "continent", Q::kText, ""},
    {"site", "lat_deg", Q::kNumber, "deg"},
    {"site", "lng_deg", Q::kNumber, "deg"},
    {"link_entry", "source", Q::kText, ""},
    {"link_entry", "loss", Q::kText, ""},  // a fault: loss rate, as --fault loss:A-B=RATE
    {"link_entry", "down", Q::kText, ""},  // a fault: T1[-T2] windows
    {"memory_tier", "capacity", Q::kBytes, "MiB"},
    {"memory_tier", "bandwidth", Q::kRate, "GB/s"},
    {"memory_tier", "cost", Q::kNumber, "USD/GiB"},
    {"memory_tier", "energy", Q::kNumber, "pJ/bit"},
};
// clang-format on

const std::vector<std::string> kSiteSections = {"fpga", "switch", "cluster"};
const std::vector<std::string> kDefaultsSections = {"link", "switch", "fpga", "cluster"};

[[noreturn]] void fail(const std::string& expected) { throw std::invalid_argument(expected); }

std::vector<const ParamRow*> rows_of(const std::vector<ParamRow>& rows,
                                     const std::string& section) {
  std::vector<const ParamRow*> out;
  for (const ParamRow& r : rows)
    if (section == r.section) out.push_back(&r);
  return out;
}

/// The row `key` among `rows`. Errors: the loader's "unknown key" with a did-you-mean.
const ParamRow& pick(const std::vector<const ParamRow*>& rows, const std::string& key) {
  std::vector<std::string> keys;
  for (const ParamRow* r : rows) {
    if (key == r->key) return *r;
    keys.emplace_back(r->key);
  }
  fail("unknown key '" + key + "', expected one of: " + join(keys) + did_you_mean(key, keys));
}

void require_section(const std::string& section, const std::vector<std::string>& sections) {
  if (std::find(sections.begin(), sections.end(), section) == sections.end())
    fail("unknown key '" + section + "', expected one of: " + join(sections) +
         did_you_mean(section, sections));
}

const ParamRow& site_row(const std::vector<std::string>& parts) {
  if (parts.size() == 3) return pick(rows_of(kOtherRows, "site"), parts[2]);
  if (parts.size() != 4)
    fail("expected sites.<code>.<field> or sites.<code>.<" + join(kSiteSections, "|") + ">.<key>");
  require_section(parts[2], kSiteSections);
  return pick(section_rows(parts[2]), parts[3]);
}

const ParamRow& link_row(const std::vector<std::string>& parts) {
  if (parts.size() != 3) fail("expected links.<a>-<b>.<key>");
  std::vector<const ParamRow*> rows = section_rows("link");
  for (const ParamRow* r : rows_of(kOtherRows, "link_entry")) rows.push_back(r);
  return pick(rows, parts[2]);
}

}  // namespace

const std::vector<ParamRow>& module_param_rows() { return kModuleRows; }

std::vector<const ParamRow*> section_rows(const std::string& section) {
  return rows_of(kModuleRows, section);
}

const ParamRow* find_param_row(const std::string& section, const std::string& key) {
  for (const ParamRow& r : kModuleRows)
    if (section == r.section && key == r.key) return &r;
  return nullptr;
}

const ParamRow& override_row(const std::string& path) {
  const std::vector<std::string> parts = split(path, '.');
  const std::string& top = parts[0];
  if (parts.size() == 1) return pick(rows_of(kOtherRows, "platform"), top);
  if (top == "defaults" || top == "colocated") {
    if (parts.size() != 3) fail("expected " + top + ".<section>.<key>");
    require_section(parts[1],
                    top == "defaults" ? kDefaultsSections : std::vector<std::string>{"link"});
    return pick(section_rows(parts[1]), parts[2]);
  }
  if (top == "sites") return site_row(parts);
  if (top == "links") return link_row(parts);
  if (top == "memory_tiers") {
    if (parts.size() != 3) fail("expected memory_tiers.<tier>.<key>");
    return pick(rows_of(kOtherRows, "memory_tier"), parts[2]);
  }
  const std::vector<std::string> tops = {"name",  "description", "defaults",    "colocated",
                                         "sites", "links",       "memory_tiers"};
  fail("unknown key '" + top + "', expected one of: " + join(tops) + did_you_mean(top, tops));
}

}  // namespace aggnet
