#include "options/option_values.h"

#include <limits>
#include <stdexcept>

#include "common/config_error.h"
#include "common/units.h"

namespace aggnet::options {
namespace {

// Every chunk is a transaction: millions per site and round would take hours and GBs.
constexpr std::uint64_t kMaxChunks = 1ull << 22;
// Functional mode holds every site's data in memory.
constexpr std::uint64_t kMaxFunctionalGradient = 64ull << 20;

void check_alignment(const OptionValues& v, const RunOptions& o) {
  if (o.alignment == SendAlignment::kArrival && !o.aligned_start)
    v.fail("alignment", "arrival alignment needs an aligned round start (--round-start aligned)",
           v.text("alignment"));
}

// The limit is on transactions: a burst (--burst) is one.
void check_chunks(const OptionValues& v, const RunOptions& o) {
  if (o.chunk_bytes > std::numeric_limits<std::uint64_t>::max() / o.burst_chunks)
    v.fail("burst", "expected --burst x --chunk below 16 EiB", v.text("burst"));
  const std::uint64_t transaction = transaction_bytes(o);
  if ((o.gradient_bytes + transaction - 1) / transaction > kMaxChunks)
    v.fail("chunk",
           "expected at most 4194304 chunks per gradient (a larger --chunk or --burst, or a "
           "smaller --gradient)",
           v.text("chunk"));
}

void check_functional(const OptionValues& v, const RunOptions& o) {
  if (!o.functional) return;
  if (o.gradient_bytes > kMaxFunctionalGradient)
    v.fail("functional",
           "expected --gradient of at most 64MiB (functional mode holds every site's data in "
           "memory)",
           v.text("gradient"));
  if (o.gradient_bytes % 4 || o.chunk_bytes % 4)
    v.fail("functional", "expected --gradient and --chunk to be whole numbers of floats (4 bytes)");
}

}  // namespace

OptionValues::OptionValues(std::string where, Command command)
    : where_(std::move(where)), command_(command) {}

void OptionValues::set(const std::string& name, const std::vector<std::string>& values,
                       bool given) {
  const OptionSpec* spec = find_option(name);
  if (!spec || !spec->takes(command_)) throw std::logic_error(where_ + " does not take --" + name);
  for (const auto& value : values) {
    try {
      check_value(*spec, value);
    } catch (const OptionError& e) {
      fail(name, e.what(), value);
    }
  }
  entries_[name] = {values, given};
}

const OptionValues::Entry* OptionValues::entry(const std::string& name) const {
  const auto it = entries_.find(name);
  return it == entries_.end() || it->second.values.empty() ? nullptr : &it->second;
}

bool OptionValues::has(const std::string& name) const { return entry(name) != nullptr; }

bool OptionValues::given(const std::string& name) const {
  const Entry* e = entry(name);
  return e && e->given;
}

const std::string& OptionValues::text(const std::string& name) const {
  static const std::string none;
  const Entry* e = entry(name);
  return e ? e->values.back() : none;
}

const std::vector<std::string>& OptionValues::list(const std::string& name) const {
  static const std::vector<std::string> none;
  const auto it = entries_.find(name);
  return it == entries_.end() ? none : it->second.values;
}

bool OptionValues::flag(const std::string& name) const { return text(name) == "true"; }

std::uint64_t OptionValues::bytes(const std::string& name) const {
  return has(name) ? parse_bytes(text(name)) : 0;
}

double OptionValues::number(const std::string& name) const {
  return has(name) ? parse_number(text(name)) : 0;
}

std::uint64_t OptionValues::integer(const std::string& name) const {
  return has(name) ? std::stoull(text(name)) : 0;
}

std::uint64_t OptionValues::time_ps(const std::string& name) const {
  return has(name) ? parse_time_ps(text(name)) : 0;
}

void OptionValues::fail(const std::string& name, const std::string& expected,
                        const std::string& got) const {
  if (got.empty()) throw ConfigError(where_, 0, "--" + name, expected);
  throw ConfigError(where_, 0, "--" + name, expected, got);
}

std::vector<std::string> OptionValues::run_args(const std::set<std::string>& skip) const {
  std::vector<std::string> args;
  for (const OptionSpec* spec : options_of(command_)) {
    if (!spec->takes(kSweep) || skip.count(spec->name)) continue;
    if (spec->form == Form::kFlag) {
      if (flag(spec->name)) args.push_back("--" + spec->name);
      continue;
    }
    for (const auto& value : list(spec->name)) args.insert(args.end(), {"--" + spec->name, value});
  }
  return args;
}

RunOptions to_run_options(const OptionValues& values) {
  RunOptions o;
  for (const auto& spec : run_option_table())
    if (spec.apply && values.has(spec.name)) spec.apply(o, values.text(spec.name));
  check_alignment(values, o);
  check_chunks(values, o);
  check_functional(values, o);
  return o;
}

}  // namespace aggnet::options
