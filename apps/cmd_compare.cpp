// `aggnet compare A.json B.json ...`: run reports (aggnet run --json) side by side: which
// inputs differ (options as resolved, platform, schedule) and which numbers differ, each
// against the first run, absolute and relative.
#include <fmt/format.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "common/atomic_file.h"
#include "common/config_error.h"
#include "common/input_file.h"

namespace aggnet {
namespace {

namespace po = boost::program_options;
using nlohmann::json;

const char* kWhere = "aggnet compare";
const char* kUsage =
    "usage: aggnet compare A.json B.json [C.json ...] [--all] [--json FILE]\n"
    "Run reports of `aggnet run --json` side by side: the inputs that differ, then the\n"
    "numbers that differ, each against the first run (B - A and (B - A) / A); one line\n"
    "when nothing differs (exit status 0 either way).\n";

struct Run {
  std::string file, label;
  json report;
};

// One value per run at a path ("summary.time_to_eps_s"); null where a run lacks it.
struct Row {
  std::string path;
  std::vector<json> values;
};

const char* kRunJson = "expected a run JSON written by aggnet run --json";

// What a report's member must be; the readable name of each for errors.
enum class Kind { kObject, kArray, kString, kNumber };

bool is(const json& value, Kind kind) {
  switch (kind) {
    case Kind::kObject:
      return value.is_object();
    case Kind::kArray:
      return value.is_array();
    case Kind::kString:
      return value.is_string();
    case Kind::kNumber:
      return value.is_number();
  }
  return false;
}

std::string name(Kind kind) {
  static const char* const names[] = {"an object", "a list", "a string", "a number"};
  return names[static_cast<int>(kind)];
}

// A value as an error shows it: its JSON text, cut short.
std::string shown(const json& value) {
  const std::string text = value.dump();
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

[[noreturn]] void bad_value(const std::string& file, const std::string& path, Kind kind,
                            const json& got) {
  throw ConfigError(file, 0, path, "expected " + name(kind) + ", got " + shown(got));
}

// `object[key]` (at `path`), checked to be `kind`; nullptr when absent and not `required`.
const json* member(const std::string& file, const json& object, const std::string& path,
                   const std::string& key, Kind kind, bool required) {
  const std::string at = path.empty() ? key : path + "." + key;
  if (!object.contains(key)) {
    if (!required) return nullptr;
    throw ConfigError(file, 0, at, "expected " + name(kind) + ", but the key is missing");
  }
  if (!is(object[key], kind)) bad_value(file, at, kind, object[key]);
  return &object[key];
}

// An optional object of numbers (the summary, the co-located reference's summary).
void check_numbers(const std::string& file, const json& report, const std::string& key,
                   bool required) {
  const json* numbers = member(file, report, "", key, Kind::kObject, required);
  if (!numbers) return;
  // null: a number the run could not give (memory_cost_usd when no tier holds the buffer).
  for (const auto& [name, value] : numbers->items())
    if (!value.is_number() && !value.is_null())
      bad_value(file, key + "." + name, Kind::kNumber, value);
}

// An optional list of objects (steps, sites, links), each with the text `names` that
// compare names it by.
void check_list(const std::string& file, const json& report, const std::string& key,
                const std::vector<std::string>& names) {
  const json* list = member(file, report, "", key, Kind::kArray, false);
  for (std::size_t i = 0; list && i < list->size(); ++i) {
    const std::string at = fmt::format("{}[{}]", key, i);
    if (!(*list)[i].is_object()) bad_value(file, at, Kind::kObject, (*list)[i]);
    for (const auto& n : names) member(file, (*list)[i], at, n, Kind::kString, true);
  }
}

// Everything compare reads of a report, of the kind it expects.
void check_report(const std::string& file, const json& report) {
  if (!report.is_object() || (!report.contains("summary") && !report.contains("options")))
    throw ConfigError(file, 0, "", kRunJson);
  check_numbers(file, report, "summary", true);
  check_numbers(file, report, "colocated", false);
  const json* options = member(file, report, "", "options", Kind::kObject, true);
  member(file, *options, "options", "given", Kind::kObject, true);
  member(file, *options, "options", "resolved", Kind::kObject, true);
  member(file, report, "", "platform", Kind::kString, true);
  member(file, report, "", "schedule", Kind::kString, true);
  member(file, report, "", "platform_file", Kind::kString, false);
  check_list(file, report, "steps", {});
  check_list(file, report, "sites", {"site"});
  check_list(file, report, "links", {"from", "to", "kind"});
}

// The line of byte `offset` of `text` (1-based).
int line_of(const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 +
         static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n'));
}

json read_report(const std::string& file) {
  const std::string text = read_input_file(file, "a run JSON file (aggnet run --json)");
  json report;
  try {
    report = json::parse(text);
  } catch (const json::out_of_range& e) {  // a number past a double's range
    // e.what(): "[json.exception.out_of_range.406] number overflow parsing '1e999'".
    const std::string what = e.what();
    const auto end = what.find("] ");
    throw ConfigError(file, 0, "",
                      std::string(kRunJson) + ", got " +
                          (end == std::string::npos ? what : what.substr(end + 2)));
  } catch (const json::parse_error& e) {
    // e.what(): "[json.exception.parse_error.101] parse error at line 1, column 5: <why>".
    const std::string what = e.what();
    const auto column = what.find(", column ");
    const auto why = what.find(": ", column == std::string::npos ? 0 : column);
    throw ConfigError(file, line_of(text, e.byte == 0 ? 0 : e.byte - 1), "",
                      std::string(kRunJson) + ", got malformed JSON" +
                          (why == std::string::npos ? "" : " (" + what.substr(why + 2) + ")"));
  }
  check_report(file, report);
  return report;
}

// Every leaf of `value` by path ("sites[2].high_water_bytes"); arrays of objects named by
// their site or link where they have one, so runs of other platforms still line up.
void flatten(const json& value, const std::string& path, std::map<std::string, json>& out) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items())
      flatten(child, path.empty() ? key : path + "." + key, out);
  } else if (value.is_array() && !value.empty() && value[0].is_object()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      const json& item = value[i];
      std::string name = std::to_string(i);
      if (item.contains("site") && item["site"].is_string()) name = item["site"];
      if (item.contains("from") && item.contains("to") && item.contains("kind"))
        name = fmt::format("{}->{} {}", item["from"].get<std::string>(),
                           item["to"].get<std::string>(), item["kind"].get<std::string>());
      flatten(item, path + "[" + name + "]", out);
    }
  } else {
    out[path] = value;
  }
}

// A row compare compares holds numbers (or nothing) only: a run with text or a list where
// another has a number is the corrupt one.
void check_numeric(const std::vector<Run>& runs, const Row& row) {
  const auto number = std::find_if(row.values.begin(), row.values.end(),
                                   [](const json& v) { return v.is_number(); });
  if (number == row.values.end()) return;
  for (std::size_t r = 0; r < runs.size(); ++r)
    if (!row.values[r].is_number() && !row.values[r].is_null())
      throw ConfigError(runs[r].file, 0, row.path,
                        "expected a number (as in " + runs[number - row.values.begin()].file +
                            "), got " + shown(row.values[r]));
}

// The paths under `roots` whose values are not the same in every run, in path order.
// `engine_only`: leave out summary.events, the SystemC kernel's cycles (a waveform, which
// turns the event calendar's running ahead off, changes them and no simulated result).
std::vector<Row> differing(const std::vector<Run>& runs, const std::vector<std::string>& roots,
                           bool numbers_only, bool engine_only = false) {
  std::vector<std::map<std::string, json>> flat(runs.size());
  std::map<std::string, bool> paths;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (const auto& root : roots) {
      if (!runs[r].report.contains(root)) continue;
      flatten(runs[r].report[root], root, flat[r]);
    }
    for (const auto& [path, value] : flat[r]) paths[path] = true;
  }
  std::vector<Row> rows;
  for (const auto& [path, unused] : paths) {
    Row row{path, {}};
    bool same = true, numeric = true;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const auto it = flat[r].find(path);
      row.values.push_back(it == flat[r].end() ? json() : it->second);
      numeric = numeric && (row.values.back().is_number() || row.values.back().is_null());
      same = same && row.values.back() == row.values.front();
    }
    if (numbers_only) check_numeric(runs, row);
    if (!same && (!numbers_only || numeric) && !(engine_only && path == "summary.events"))
      rows.push_back(std::move(row));
  }
  return rows;
}

std::string cell(const json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) return fmt::format("{:.6g}", value.get<double>());
  return value.dump();
}

// `x` to 12 significant digits: a difference of two decimals without the float noise of
// the subtraction (0.47052 - 0.526925 is -0.056405, not -0.05640499999999997).
double significant(double x) { return std::strtod(fmt::format("{:.12g}", x).c_str(), nullptr); }

// b - a of two whole numbers, exact over the whole range of both (counts are unsigned
// 64-bit), as a double only where it fits no 64-bit integer.
json whole_difference(const json& a, const json& b) {
  __extension__ using Wide = __int128;
  const auto wide = [](const json& v) {
    return v.is_number_unsigned() ? Wide(v.get<std::uint64_t>()) : Wide(v.get<std::int64_t>());
  };
  const Wide d = wide(b) - wide(a);
  if (d >= 0 && d <= Wide(std::numeric_limits<std::uint64_t>::max()))
    return json(static_cast<std::uint64_t>(d));
  if (d < 0 && d >= Wide(std::numeric_limits<std::int64_t>::min()))
    return json(static_cast<std::int64_t>(d));
  return json(static_cast<double>(d));
}

// B - A and (B - A) / A of a row, per run after the first; null where not numbers (or A is
// 0). Whole numbers (counts) give a whole difference.
std::pair<json, json> differences(const Row& row, std::size_t r) {
  const json& a = row.values.front();
  const json& b = row.values[r];
  if (!a.is_number() || !b.is_number()) return {json(), json()};
  const double x = a.get<double>(), y = b.get<double>();
  const json diff = a.is_number_integer() && b.is_number_integer() ? whole_difference(a, b)
                                                                   : json(significant(y - x));
  return {diff, x != 0 ? json(significant((y - x) / x)) : json()};
}

// "a.json, b.json and c.json".
std::string file_list(const std::vector<Run>& runs) {
  std::string out;
  for (std::size_t r = 0; r < runs.size(); ++r)
    out += (r == 0 ? "" : r + 1 == runs.size() ? " and " : ", ") + runs[r].file;
  return out;
}

// The runs side by side: a section per kind of difference, none for a kind without any;
// one line when nothing compared differs (`all`: every number was, else the summary's).
std::string table(const std::vector<Run>& runs, const std::vector<Row>& inputs,
                  const std::vector<Row>& numbers, bool all) {
  if (inputs.empty() && numbers.empty())
    return fmt::format("Runs {} are identical ({})\n", file_list(runs),
                       all ? "inputs and every number"
                           : "inputs and summary numbers; --all compares every number");
  std::string out = "Runs\n";
  for (const auto& run : runs)
    out += fmt::format("  {}  {}: {} on {}\n", run.label, run.file,
                       run.report.value("schedule", "?"), run.report.value("platform", "?"));
  std::size_t width = 20;
  for (const auto& row : inputs) width = std::max(width, row.path.size());
  for (const auto& row : numbers) width = std::max(width, row.path.size());
  auto header = [&](const std::string& title, bool diffs) {
    out += "\n" + title + "\n" + fmt::format("  {:<{}}", "", width);
    for (const auto& run : runs) out += fmt::format(" {:>14}", run.label);
    for (std::size_t r = 1; diffs && r < runs.size(); ++r)
      out += fmt::format(" {:>14} {:>9}", runs[r].label + "-" + runs[0].label, "rel.");
    out += "\n";
  };
  if (!inputs.empty()) header("Inputs that differ", false);
  for (const auto& row : inputs) {
    out += fmt::format("  {:<{}}", row.path, width);
    for (const auto& v : row.values) out += fmt::format(" {:>14}", cell(v));
    out += "\n";
  }
  if (!numbers.empty()) header("Numbers that differ", true);
  for (const auto& row : numbers) {
    out += fmt::format("  {:<{}}", row.path, width);
    for (const auto& v : row.values) out += fmt::format(" {:>14}", cell(v));
    for (std::size_t r = 1; r < runs.size(); ++r) {
      const auto [diff, rel] = differences(row, r);
      out += fmt::format(" {:>14} {:>9}",
                         diff.is_null() ? "-" : fmt::format("{:+.6g}", diff.get<double>()),
                         rel.is_null() ? "-" : fmt::format("{:+.2f}%", rel.get<double>() * 100));
    }
    out += "\n";
  }
  return out;
}

json rows_json(const std::vector<Run>& runs, const std::vector<Row>& rows, bool diffs) {
  json out = json::array();
  for (const auto& row : rows) {
    json item = {{"key", row.path}, {"values", row.values}};
    if (diffs) {
      item["difference"] = json::array({json()});
      item["relative"] = json::array({json()});
      for (std::size_t r = 1; r < runs.size(); ++r) {
        const auto [diff, rel] = differences(row, r);
        item["difference"].push_back(diff);
        item["relative"].push_back(rel);
      }
    }
    out.push_back(std::move(item));
  }
  return out;
}

int compare(const po::variables_map& vm) {
  const auto files =
      vm.count("runs") ? vm["runs"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (files.size() < 2)
    throw ConfigError(kWhere, 0, "", "expected at least two run JSON files (aggnet run --json)");
  const std::string out = vm.count("json") ? vm["json"].as<std::string>() : "";
  cli::check_output_path(kWhere, "json", out);
  std::vector<std::pair<std::string, std::string>> read;
  for (const auto& file : files) read.emplace_back(file, "the input " + file);
  cli::check_not_an_input(kWhere, "json", out, read);
  std::vector<Run> runs;
  for (std::size_t i = 0; i < files.size(); ++i)
    runs.push_back(
        {files[i],
         i < 26 ? std::string(1, static_cast<char>('A' + i)) : "R" + std::to_string(i + 1),
         read_report(files[i])});
  const auto inputs = differing(runs, {"platform", "platform_file", "schedule", "options"}, false);
  const bool all = vm.count("all") != 0;
  const auto numbers =
      differing(runs,
                all ? std::vector<std::string>{"summary", "colocated", "steps", "sites", "links"}
                    : std::vector<std::string>{"summary"},
                true, !all);
  if (!is_stdout(out)) std::cout << table(runs, inputs, numbers, all);
  if (out.empty()) return 0;
  json document = {{"runs", json::array()},
                   {"inputs", rows_json(runs, inputs, false)},
                   {"numbers", rows_json(runs, numbers, true)}};
  for (const auto& run : runs)
    document["runs"].push_back({{"label", run.label}, {"file", run.file}});
  write_file_atomically(out, document.dump(2) + "\n");
  return 0;
}

}  // namespace

int cmd_compare(int argc, char** argv) {
  po::options_description desc("aggnet compare options");
  // clang-format off
  desc.add_options()
    ("help,h", "show this help")
    ("runs", po::value<std::vector<std::string>>(), "run JSON files (aggnet run --json)")
    ("all", "every number that differs (steps, sites, links), not only the summary")
    ("json", po::value<std::string>(), "write the comparison as JSON to FILE (- for stdout)");
  // clang-format on
  po::positional_options_description pos;
  pos.add("runs", -1);
  return cli::guarded(kWhere, [&] {
    po::variables_map vm;
    try {
      po::store(po::command_line_parser(argc, argv).options(desc).positional(pos).run(), vm);
      po::notify(vm);
    } catch (const po::error& e) {
      throw cli::option_error(kWhere, e, desc);
    }
    if (vm.count("help")) {
      std::cout << kUsage << "\n";
      cli::print_help(std::cout, "aggnet compare options", desc);
      return 0;
    }
    return compare(vm);
  });
}

}  // namespace aggnet
