#include "apps/cli_options.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "common/config_error.h"
#include "common/units.h"

namespace aggnet::cli {

namespace fs = std::filesystem;
namespace po = boost::program_options;
using options::Kind;
using options::OptionSpec;
using options::OptionValues;

namespace {

po::value_semantic* semantic(const OptionSpec& spec) {
  if (spec.kind == Kind::kFlag) return po::bool_switch();
  if (spec.repeatable) return po::value<std::vector<std::string>>()->composing();
  auto* value = po::value<std::string>();
  if (spec.has_default()) value->default_value(options::default_value(spec));
  return value;
}

std::string po_name(const OptionSpec& spec) {
  return spec.short_name ? spec.name + "," + spec.short_name : spec.name;
}

// One row's values from the parsed command line; nothing when absent without a default.
void read_row(const OptionSpec& spec, const po::variables_map& vm, OptionValues& out) {
  if (!vm.count(spec.name)) return;
  const auto& v = vm[spec.name];
  if (spec.kind == Kind::kFlag) {
    const bool set = v.as<bool>();
    out.set(spec.name, {set ? "true" : "false"}, set);
  } else if (spec.repeatable) {
    out.set(spec.name, v.as<std::vector<std::string>>(), true);
  } else {
    out.set(spec.name, {v.as<std::string>()}, !v.defaulted());
  }
}

std::vector<Override> overrides(const OptionValues& values) {
  std::vector<Override> out;
  for (const auto& s : values.list("set")) {
    const auto eq = s.find('=');  // checked: PATH=VALUE
    out.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  return out;
}

}  // namespace

po::variables_map parse(const std::string& where, int argc, char** argv,
                        const po::options_description& desc) {
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).positional({}).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw ConfigError(where, 0, "", e.what());
  }
  return vm;
}

po::options_description describe(options::Command command, const std::string& caption) {
  po::options_description d(caption);
  d.add_options()("help,h", "show this help");
  for (const OptionSpec* spec : options::options_of(command))
    d.add_options()(po_name(*spec).c_str(), semantic(*spec), spec->help.c_str());
  return d;
}

std::optional<OptionValues> read(const std::string& where, options::Command command,
                                 const std::string& caption, int argc, char** argv) {
  const auto desc = describe(command, caption);
  const po::variables_map vm = parse(where, argc, argv, desc);
  if (vm.count("help")) {
    std::cout << desc;
    return std::nullopt;
  }
  OptionValues values(where, command);
  for (const OptionSpec* spec : options::options_of(command)) read_row(*spec, vm, values);
  return values;
}

Platform load_platform(const OptionValues& values, const RunOptions& run) {
  Platform platform = aggnet::load_platform(values.text("platform"), overrides(values));
  if (run.buffer_bytes)
    for (auto& site : platform.sites) site.fpga.buffer_bytes = run.buffer_bytes;
  return platform;
}

void check_buffers(const OptionValues& values, const Platform& platform, const RunOptions& run) {
  if (!run.aggregation) return;
  for (const auto& site : platform.sites) {
    if (site.fpga.buffer_bytes >= run.chunk_bytes) continue;
    const std::string expected =
        "expected a buffer of at least one chunk (" + format_bytes(run.chunk_bytes) + ")";
    if (values.given("buffer")) values.fail("buffer", expected, values.text("buffer"));
    const std::string got = format_bytes(site.fpga.buffer_bytes);
    for (const std::string& key :
         {"sites." + site.code + ".fpga.buffer", std::string("defaults.fpga.buffer")}) {
      auto it = platform.key_lines.find(key);
      if (it != platform.key_lines.end())
        throw ConfigError(platform.file, it->second, key, expected, got);
    }
    throw ConfigError(platform.file, 0, "fpga.buffer (module default)", expected, got);
  }
}

void check_outputs(const OptionValues& values) {
  for (const OptionSpec* spec : options::options_of(values.command()))
    if (spec->kind == Kind::kOutput)
      check_output_path(values.where(), spec->name, values.text(spec->name));
}

void check_output_path(const std::string& where, const std::string& key, const std::string& path) {
  if (path.empty()) return;
  const fs::path parent = fs::path(path).parent_path();
  const fs::path dir = parent.empty() ? fs::path(".") : parent;
  if (!fs::is_directory(dir))
    throw ConfigError(where, 0, "--" + key, "expected a file in an existing directory", path);
  if (fs::is_directory(path))
    throw ConfigError(where, 0, "--" + key, "expected a file name, not a directory", path);
  // Creating a probe file is the only test that covers root, read-only mounts and sysfs.
  const fs::path probe = dir / (".aggnet-probe-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
  if (fd < 0)
    throw ConfigError(where, 0, "--" + key, "expected a file in a writable directory", path);
  ::close(fd);
  ::unlink(probe.c_str());
}

std::string self_executable() {
  std::error_code ec;
  const auto p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the aggnet executable (/proc/self/exe)");
  return p.string();
}

}  // namespace aggnet::cli
