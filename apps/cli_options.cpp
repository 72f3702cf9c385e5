#include "config/platform_loader.h"
#include "apps/cli_options.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "common/config_error.h"
#include "common/data_dir.h"
#include "common/units.h"

namespace aggnet::cli {

namespace fs = std::filesystem;

boost::program_options::variables_map parse(
    const std::string& where, int argc, char** argv,
    const boost::program_options::options_description& desc) {
  namespace po = boost::program_options;
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).positional({}).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw ConfigError(where, 0, "", e.what());
  }
  return vm;
}

std::string default_platform_path() {
  const fs::path local = "platforms/nine_city.yaml";
  if (fs::exists(local)) return local.string();
  const std::string shipped = data_dir();
  return shipped.empty() ? local.string() : (fs::path(shipped) / local).string();
}

std::uint64_t size_option(const std::string& where, const std::string& key,
                          const std::string& value) {
  try {
    const auto bytes = parse_bytes(value);
    if (bytes == 0) throw UnitError("expected a positive size like '64MiB'");
    return bytes;
  } catch (const UnitError& e) {
    throw ConfigError(where, 0, "--" + key, e.what(), value);
  }
}

std::uint64_t time_option(const std::string& where, const std::string& key,
                          const std::string& value) {
  try {
    return parse_time_ps(value);
  } catch (const UnitError& e) {
    throw ConfigError(where, 0, "--" + key, e.what(), value);
  }
}

bool switch_option(const std::string& where, const std::string& key, const std::string& value) {
  if (value == "on" || value == "true") return true;
  if (value == "off" || value == "false") return false;
  throw ConfigError(where, 0, "--" + key, "expected on or off", value);
}

std::vector<Override> overrides(const std::string& where, const std::vector<std::string>& sets) {
  std::vector<Override> out;
  for (const auto& s : sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError(where, 0, "--set", "expected PATH=VALUE", s);
    out.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  return out;
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

RoundStart round_start_option(const std::string& where, const std::string& round_start,
                              const std::string& alignment, bool pacing) {
  RoundStart r;
  if (round_start == "auto") {
    r.aligned_start = pacing;
  } else if (round_start == "aligned" || round_start == "immediate") {
    r.aligned_start = round_start == "aligned";
  } else {
    throw ConfigError(where, 0, "--round-start", "expected auto, aligned or immediate",
                      round_start);
  }
  if (alignment == "auto" || alignment == "arrival" || alignment == "none") {
    r.alignment = alignment == "none"      ? SendAlignment::kNone
                  : alignment == "arrival" ? SendAlignment::kArrival
                                           : SendAlignment::kAuto;
  } else {
    throw ConfigError(where, 0, "--alignment", "expected auto, arrival or none", alignment);
  }
  if (alignment == "arrival" && !r.aligned_start)
    throw ConfigError(where, 0, "--alignment",
                      "arrival alignment needs an aligned round start (--round-start aligned)",
                      alignment);
  return r;
}

}  // namespace aggnet::cli
