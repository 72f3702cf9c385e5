// The platform's settable values, each declared once as plain data: per YAML section, the
// key, its quantity and the unit users write. The module parameter tables
// (model/params/*.h) take their rows from here, the platform loader and `aggnet params`
// from them, and the sweep front end reads them to know the kind of a `set:PATH` axis
// without the model (sweeps/ does not link it).
#pragma once

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

/// One settable value of a platform section.
struct ParamRow {
  const char* section;  ///< "link", "switch", "fpga", "cluster" (modules); "site", "link",
                        ///< "memory_tier", "platform" (the other fields)
  const char* key;      ///< "bandwidth"
  Quantity quantity;
  const char* unit;  ///< unit users write ("Gbps"); for a count, what it counts ("bit")
};

/// The module parameters, grouped by section in the order of the platform file's
/// `defaults:` (link, switch, fpga, cluster) and, within one, in table order.
const std::vector<ParamRow>& module_param_rows();

/// The rows of module section `section`, in table order; empty for an unknown section.
std::vector<const ParamRow*> section_rows(const std::string& section);

/// The module parameter `key` of `section`, or nullptr.
const ParamRow* find_param_row(const std::string& section, const std::string& key);

/// The value a `--set PATH` override sets: a module parameter row, or a row of the other
/// fields (sites.<code>.lat_deg, links.<a>-<b>.loss, memory_tiers.hbm.cost, name, ...).
/// Site codes and link names are not checked (that needs the platform file).
/// Errors: std::invalid_argument, "unknown key 'bandwith', expected one of: ... (did you
/// mean 'bandwidth'?)" or the shape the path should have.
const ParamRow& override_row(const std::string& path);

}  // namespace aggnet
