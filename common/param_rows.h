// Every key of a platform file, declared once as plain data: per YAML section, the key,
// its quantity and the unit users write. The module parameter tables (model/params/*.h)
// take their rows from here; the platform loader takes the keys it accepts (and lists in
// its did-you-mean errors) from the rows, `aggnet params` writes the other keys' table
// into docs/modules/README.md, and the sweep front end reads them to know the kind of a
// `set:PATH` axis without the model (sweeps/ does not link it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aggnet {

/// What a value is, with its unit: one enum for module parameters, run options and sweep
/// axes. Decides how a value is parsed (common/units.h), its base unit and, in a sweep,
/// the axis' numeric column.
enum class Quantity {
  kText,       ///< no numeric value (names, schedules, on/off, fault windows)
  kBytes,      ///< a size, base unit bytes ("64MiB")
  kRate,       ///< a rate, base unit bit/s ("100Gbps")
  kTime,       ///< a time, base unit ps (a sweep's column: s) ("33.3ms")
  kFrequency,  ///< a frequency, base unit Hz ("300MHz")
  kCount,      ///< a whole number, its unit names what it counts ("512bit")
  kNumber,     ///< a plain decimal number
};

/// What the program knows of one Quantity, in one table (common/param_rows.cpp) instead
/// of a switch per use.
struct QuantityInfo {
  /// A unit of the ladder a value is written in, largest first ("MiB" is 2^20 bytes).
  struct Unit {
    std::uint64_t scale;  ///< in the base unit
    const char* name;
  };
  Quantity quantity;
  const char* name;    ///< as `aggnet params` and errors write it: "size" ("value" for text)
  const char* stored;  ///< a sweep axis' kind in the results database: "bytes", "rate_bps"
  const char* column;  ///< suffix of a sweep axis' numeric column ("_bytes"; none for text)
  const char* like;    ///< what a sweep value must look like: "expected a rate like '100Gbps'"
  /// Text to the base unit (bytes, bit/s, ps, Hz); nullptr for counts, numbers and text.
  std::uint64_t (*parse)(const std::string&);
  double column_scale;      ///< a sweep column's unit per base unit (time: s per ps, 1e-12)
  std::vector<Unit> units;  ///< the units a sweep writes generated values in; empty: plain
};

/// The row of `q`.
const QuantityInfo& quantity_info(Quantity q);

/// "time", "size", "rate", "frequency", "count", "number"; "value" for text.
std::string quantity_name(Quantity q);

/// One key of a platform section.
struct ParamRow {
  const char* section;  ///< "link", "switch", "fpga", "cluster" (modules); "platform",
                        ///< "site", "link_entry", "link_fault", "memory_tier" (the others)
  const char* key;      ///< "bandwidth"
  Quantity quantity;
  const char* unit;  ///< unit users write ("Gbps"); for a count, what it counts ("bit")
  /// Names its list entry (a site's `code`, a link's `a` and `b`): read from the file,
  /// never set by `--set`, whose path names the entry by it.
  bool names_entry = false;
};

/// The module parameters, grouped by section in the order of the platform file's
/// `defaults:` (link, switch, fpga, cluster) and, within one, in table order.
const std::vector<ParamRow>& module_param_rows();

/// The rows of the platform file beside the module parameters: its own fields
/// (`platform`), a site's, a link entry's (`link_entry`, then its faults `link_fault`
/// after the link parameters), a memory tier's.
const std::vector<ParamRow>& platform_field_rows();

/// The rows of section `section` (a module's or another), in table order; empty for an
/// unknown section.
std::vector<const ParamRow*> section_rows(const std::string& section);

/// The keys of section `section`'s rows, in table order; with `settable_only`, those a
/// `--set` path may end in (not the ones naming the entry).
std::vector<std::string> section_keys(const std::string& section, bool settable_only = false);

/// The keys at the top of a platform file: its own fields, then its sections (name,
/// description, defaults, colocated, sites, links, memory_tiers).
const std::vector<std::string>& platform_top_keys();

/// The module parameter `key` of `section`, or nullptr.
const ParamRow* find_param_row(const std::string& section, const std::string& key);

/// The value a `--set PATH` override sets: a module parameter row, or a row of the other
/// fields (sites.<code>.lat_deg, links.<a>-<b>.loss, memory_tiers.hbm.cost, name, ...).
/// Site codes and link names are not checked (that needs the platform file).
/// Errors: std::invalid_argument, "unknown key 'bandwith', expected one of: ... (did you
/// mean 'bandwidth'?)" or the shape the path should have.
const ParamRow& override_row(const std::string& path);

}  // namespace aggnet
