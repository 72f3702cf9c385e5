// The platform's rows and the `--set` path grammar over them (config/platform_loader.cpp
// applies the same paths to the YAML tree).
#include "common/param_rows.h"

#include <algorithm>
#include <stdexcept>

#include "common/strings.h"
#include "common/units.h"

namespace aggnet {
namespace {

using Q = Quantity;

// clang-format off
const std::vector<QuantityInfo> kQuantities = {
    {Q::kText, "value", "text", "", "expected a value", nullptr, 1, {}},
    {Q::kBytes, "size", "bytes", "_bytes", "expected a size like '64MiB' or '2048B'", parse_bytes, 1,
     {{1ULL << 40, "TiB"}, {1ULL << 30, "GiB"}, {1ULL << 20, "MiB"}, {1ULL << 10, "KiB"}, {1, "B"}}},
    {Q::kRate, "rate", "rate_bps", "_bps", "expected a rate like '100Gbps'", parse_rate_bps, 1,
     {{1000000000000ULL, "Tbps"}, {1000000000ULL, "Gbps"}, {1000000ULL, "Mbps"}, {1000ULL, "kbps"},
      {1, "bps"}}},
    {Q::kTime, "time", "time_s", "_s", "expected a time like '33.3ms'", parse_time_ps, 1e-12,
     {{1000000000000ULL, "s"}, {1000000000ULL, "ms"}, {1000000ULL, "us"}, {1000ULL, "ns"},
      {1, "ps"}}},
    {Q::kFrequency, "frequency", "frequency_hz", "_hz", "expected a frequency like '300MHz'",
     parse_frequency_hz, 1, {{1000000000ULL, "GHz"}, {1000000ULL, "MHz"}, {1000ULL, "kHz"}, {1, "Hz"}}},
    {Q::kCount, "count", "number", "_value", "expected a number", nullptr, 1, {}},
    {Q::kNumber, "number", "number", "_value", "expected a number", nullptr, 1, {}},
};
// clang-format on

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
/// The keys beside the module parameters (the loader binds each to its field).
constexpr bool kNamesEntry = true;
const std::vector<ParamRow> kOtherRows = {
    {"platform", "name", Q::kText, ""},
    {"platform", "description", Q::kText, ""},
    {"site", "code", Q::kText, "", kNamesEntry},
    {"site", "name", Q::kText, ""},
    {"site", "continent", Q::kText, ""},
    {"site", "lat_deg", Q::kNumber, "deg"},
    {"site", "lng_deg", Q::kNumber, "deg"},
    {"link_entry", "a", Q::kText, "", kNamesEntry},
    {"link_entry", "b", Q::kText, "", kNamesEntry},
    {"link_entry", "source", Q::kText, ""},
    {"link_fault", "loss", Q::kText, ""},  // a loss rate, as --fault loss:A-B=RATE
    {"link_fault", "down", Q::kText, ""},  // T1[-T2] windows, as --fault down:A-B@T1[-T2]
    {"memory_tier", "capacity", Q::kBytes, "MiB"},
    {"memory_tier", "bandwidth", Q::kRate, "GB/s"},
    {"memory_tier", "cost", Q::kNumber, "USD/GiB"},
    {"memory_tier", "energy", Q::kNumber, "pJ/bit"},
};
// clang-format on

/// The sections of a platform file after its own fields.
const std::vector<std::string> kPlatformSections = {"defaults", "colocated", "sites", "links",
                                                    "memory_tiers"};
const std::vector<std::string> kSiteSections = {"fpga", "switch", "cluster"};
const std::vector<std::string> kDefaultsSections = {"link", "switch", "fpga", "cluster"};

[[noreturn]] void fail(const std::string& expected) { throw std::invalid_argument(expected); }

std::vector<const ParamRow*> settable(const std::vector<const ParamRow*>& rows) {
  std::vector<const ParamRow*> out;
  for (const ParamRow* r : rows)
    if (!r->names_entry) out.push_back(r);
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
  if (parts.size() == 3) return pick(settable(section_rows("site")), parts[2]);
  if (parts.size() != 4)
    fail("expected sites.<code>.<field> or sites.<code>.<" + join(kSiteSections, "|") + ">.<key>");
  require_section(parts[2], kSiteSections);
  return pick(section_rows(parts[2]), parts[3]);
}

const ParamRow& link_row(const std::vector<std::string>& parts) {
  if (parts.size() != 3) fail("expected links.<a>-<b>.<key>");
  std::vector<const ParamRow*> rows = section_rows("link");
  for (const char* section : {"link_entry", "link_fault"})
    for (const ParamRow* r : settable(section_rows(section))) rows.push_back(r);
  return pick(rows, parts[2]);
}

}  // namespace

const QuantityInfo& quantity_info(Quantity q) {
  for (const QuantityInfo& info : kQuantities)
    if (info.quantity == q) return info;
  throw std::logic_error("no QuantityInfo row for a Quantity");
}

std::string quantity_name(Quantity q) { return quantity_info(q).name; }

const std::vector<ParamRow>& module_param_rows() { return kModuleRows; }

const std::vector<ParamRow>& platform_field_rows() { return kOtherRows; }

std::vector<const ParamRow*> section_rows(const std::string& section) {
  std::vector<const ParamRow*> out;
  for (const std::vector<ParamRow>* rows : {&kModuleRows, &kOtherRows})
    for (const ParamRow& r : *rows)
      if (section == r.section) out.push_back(&r);
  return out;
}

std::vector<std::string> section_keys(const std::string& section, bool settable_only) {
  std::vector<std::string> keys;
  for (const ParamRow* r : section_rows(section))
    if (!(settable_only && r->names_entry)) keys.emplace_back(r->key);
  return keys;
}

const std::vector<std::string>& platform_top_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out = section_keys("platform");
    out.insert(out.end(), kPlatformSections.begin(), kPlatformSections.end());
    return out;
  }();
  return keys;
}

const ParamRow* find_param_row(const std::string& section, const std::string& key) {
  for (const ParamRow& r : kModuleRows)
    if (section == r.section && key == r.key) return &r;
  return nullptr;
}

const ParamRow& override_row(const std::string& path) {
  const std::vector<std::string> parts = split(path, '.');
  const std::string& top = parts[0];
  if (parts.size() == 1) return pick(section_rows("platform"), top);
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
    return pick(section_rows("memory_tier"), parts[2]);
  }
  const std::vector<std::string>& tops = platform_top_keys();
  fail("unknown key '" + top + "', expected one of: " + join(tops) + did_you_mean(top, tops));
}

}  // namespace aggnet
