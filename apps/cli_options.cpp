#include "apps/cli_options.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <stdexcept>
#include <thread>

#include "common/atomic_file.h"
#include "common/config_error.h"
#include "common/data_dir.h"
#include "common/input_file.h"
#include "common/strings.h"
#include "common/units.h"

namespace aggnet::cli {

namespace fs = std::filesystem;
namespace po = boost::program_options;
using options::Form;
using options::OptionSpec;
using options::OptionValues;

namespace {

po::value_semantic* semantic(const OptionSpec& spec) {
  if (spec.form == Form::kFlag) return po::bool_switch();
  if (spec.repeatable) return po::value<std::vector<std::string>>()->composing();
  auto* value = po::value<std::string>();
  // A shipped file shows as its name in the data directory (the user's own copy in the
  // working directory wins), not as wherever this executable found it.
  if (spec.has_default()) value->default_value(options::default_value(spec), spec.fallback);
  return value;
}

std::string po_name(const OptionSpec& spec) {
  return spec.short_name ? spec.name + "," + spec.short_name : spec.name;
}

// One row's values from the parsed command line; nothing when absent without a default.
void read_row(const OptionSpec& spec, const po::variables_map& vm, OptionValues& out) {
  if (!vm.count(spec.name)) return;
  const auto& v = vm[spec.name];
  if (spec.form == Form::kFlag) {
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

// The long names `desc` accepts, without the dashes.
std::vector<std::string> long_names(const po::options_description& desc) {
  std::vector<std::string> names;
  for (const auto& option : desc.options()) names.push_back(option->long_name());
  return names;
}

}  // namespace

ConfigError option_error(const std::string& where, const po::error& e,
                         const po::options_description& desc) {
  if (const auto* unknown = dynamic_cast<const po::unknown_option*>(&e)) {
    const std::string given = unknown->get_option_name();
    std::string bare = given;
    bare.erase(0, bare.find_first_not_of('-'));
    bare = bare.substr(0, bare.find('='));
    const std::string match = closest_match(bare, long_names(desc));
    return ConfigError(where, 0, given,
                       "unknown option" + (match.empty() ? std::string(", see --help")
                                                         : " (did you mean '--" + match + "'?)"));
  }
  if (const auto* named = dynamic_cast<const po::error_with_option_name*>(&e)) {
    const std::string option = named->get_option_name();
    if (const auto* syntax = dynamic_cast<const po::invalid_command_line_syntax*>(&e)) {
      if (syntax->kind() == po::invalid_syntax::extra_parameter)
        return ConfigError(where, 0, option, "expected no value (it is a flag)");
      if (syntax->kind() == po::invalid_syntax::missing_parameter)
        return ConfigError(where, 0, option, "expected a value after it");
    }
    if (dynamic_cast<const po::multiple_occurrences*>(&e))
      return ConfigError(where, 0, option, "expected the option once");
    return ConfigError(where, 0, option, e.what());
  }
  if (dynamic_cast<const po::too_many_positional_options_error*>(&e))
    return ConfigError(where, 0, "", "expected only options, each starting with --");
  return ConfigError(where, 0, "", e.what());
}

namespace {

// --jobs is the old name of --workers (`aggnet schedule`): accepted with a note.
std::vector<std::string> renamed_options(const std::string& where, int argc, char** argv,
                                         const po::options_description& desc) {
  std::vector<std::string> args(argv, argv + argc);
  if (!desc.find_nothrow("workers", false)) return args;
  for (auto& arg : args) {
    if (arg != "--jobs" && arg.rfind("--jobs=", 0) != 0) continue;
    std::cerr << where << ": --jobs is deprecated, use --workers\n";
    arg.replace(0, 6, "--workers");
  }
  return args;
}

// Words of `text` in lines of at most `width` characters (a longer word gets its own line,
// never split).
std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines(1);
  for (const auto& word : split(text, ' ', EmptyFields::kSkip)) {
    if (!lines.back().empty() && lines.back().size() + 1 + word.size() > width)
      lines.emplace_back();
    lines.back() += (lines.back().empty() ? "" : " ") + word;
  }
  return lines;
}

}  // namespace

// Whether `arg` holds a Boost message token "%name%" (name: a-z and '_'); by hand, as
// compiling a std::regex costs more than the rest of a short run's option parsing.
bool has_placeholder(const std::string& arg) {
  const auto name_char = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  for (auto open = arg.find('%'); open != std::string::npos; open = arg.find('%', open + 1)) {
    std::size_t end = open + 1;
    while (end < arg.size() && name_char(arg[end])) ++end;
    if (end > open + 1 && end < arg.size() && arg[end] == '%') return true;
  }
  return false;
}

po::variables_map parse(const std::string& where, int argc, char** argv,
                        const po::options_description& desc) {
  po::variables_map vm;
  const std::vector<std::string> args = renamed_options(where, argc, argv, desc);
  // Boost 1.74 substitutes "%canonical_option%"-style placeholders in its messages until
  // none is left, so an argument holding one loops forever (found by scripts/fuzz.sh).
  for (std::size_t i = 1; i < args.size(); ++i)
    if (has_placeholder(args[i]))
      throw ConfigError(where, 0, "", "expected arguments without '%name%' placeholders", args[i]);
  try {
    po::store(po::command_line_parser(std::vector<std::string>(args.begin() + 1, args.end()))
                  .options(desc)
                  .positional({})
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw option_error(where, e, desc);
  }
  return vm;
}

void print_help(std::ostream& out, const std::string& caption,
                const po::options_description& desc) {
  constexpr std::size_t kNameWidth = 34, kWidth = 100;
  if (!caption.empty())
    for (const auto& line : wrap(caption + ":", kWidth)) out << line << "\n";
  for (const auto& option : desc.options()) {
    std::string name = "  " + option->format_name();
    const std::string parameter = option->format_parameter();
    if (!parameter.empty()) name += " " + parameter;
    const auto lines = wrap(option->description(), kWidth - kNameWidth);
    if (name.size() + 1 > kNameWidth) {
      out << name << "\n";
      name.clear();
    }
    for (const auto& line : lines) {
      out << name << std::string(kNameWidth - name.size(), ' ') << line << "\n";
      name.clear();
    }
  }
}

int workers(const OptionValues& values) {
  const auto n = values.integer("workers");
  return n > 0 ? static_cast<int>(n)
               : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
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
    print_help(std::cout, caption, desc);
    return std::nullopt;
  }
  OptionValues values(where, command);
  for (const OptionSpec* spec : options::options_of(command)) read_row(*spec, vm, values);
  return values;
}

Platform load_platform(const OptionValues& values, const RunOptions& run) {
  const std::string& file = values.text("platform");
  if (const std::string shipped = data_dir(); !shipped.empty())
    check_input_exists(file, {(fs::path(shipped) / "platforms").string()});
  Platform platform = aggnet::load_platform(file, overrides(values));
  for (auto& site : platform.sites) site.fpga.buffer_bytes = fpga_buffer_bytes(run, site.fpga);
  return platform;
}

void check_flow_control(const OptionValues& values, Collective collective, const RunOptions& run) {
  if (run.flow_control == FlowControl::kDrop && collective != Collective::kGroupAverage)
    values.fail("flow-control", "expected a group-average schedule with drop flow control");
  if (run.flow_control == FlowControl::kCredit && collective == Collective::kReductionTree)
    values.fail("flow-control",
                "expected pacing with reduction trees (each tree paces at its plan's interval; "
                "credits are not modelled on trees)",
                "credit");
}

void check_buffers(const OptionValues& values, const Platform& platform, const RunOptions& run,
                   Collective collective) {
  const bool sums = collective == Collective::kReductionTree ||
                    (collective == Collective::kGroupAverage && run.aggregation);
  if (!sums) return;
  for (const auto& site : platform.sites) {
    if (site.fpga.buffer_bytes >= transaction_bytes(run)) continue;
    const std::string expected =
        run.burst_chunks > 1
            ? "expected a buffer of at least one burst (--burst x --chunk = " +
                  format_bytes(transaction_bytes(run)) + ")"
            : "expected a buffer of at least one chunk (" + format_bytes(run.chunk_bytes) + ")";
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

fs::path file_identity(const std::string& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  const fs::path canonical = fs::weakly_canonical(ec ? fs::path(path) : absolute, ec);
  return ec ? absolute.lexically_normal() : canonical;
}

void check_not_an_input(const std::string& where, const std::string& key, const std::string& output,
                        const std::vector<std::pair<std::string, std::string>>& inputs) {
  if (output.empty() || is_stdout(output)) return;
  const fs::path id = file_identity(output);
  for (const auto& [input, what] : inputs)
    if (!input.empty() && file_identity(input) == id)
      throw ConfigError(where, 0, "--" + key, "expected a file other than " + what, output);
}

// Every output option: a writable regular file or none, no two naming one file, and none
// naming a file the command reads (the platform, a schedule file).
void check_outputs(const OptionValues& values) {
  std::map<fs::path, std::string> seen;  // output file -> its option
  std::vector<std::pair<std::string, std::string>> inputs;
  for (const OptionSpec* spec : options::options_of(values.command()))
    if ((spec->form == Form::kPath || spec->form == Form::kSchedule) && values.has(spec->name) &&
        fs::is_regular_file(values.text(spec->name)))
      inputs.emplace_back(values.text(spec->name), "the --" + spec->name + " input");
  for (const OptionSpec* spec : options::options_of(values.command())) {
    if (spec->form != Form::kOutput) continue;
    const std::string& path = values.text(spec->name);
    check_output_path(values.where(), spec->name, path);
    if (path.empty()) continue;
    check_not_an_input(values.where(), spec->name, path, inputs);
    const auto [it, fresh] =
        seen.emplace(is_stdout(path) ? fs::path(path) : file_identity(path), spec->name);
    if (!fresh)
      throw ConfigError(values.where(), 0, "--" + spec->name,
                        "expected a file other than --" + it->second + "'s", path);
  }
}

void check_output_path(const std::string& where, const std::string& key, const std::string& path) {
  if (path.empty() || is_stdout(path)) return;
  const fs::path parent = fs::path(path).parent_path();
  const fs::path dir = parent.empty() ? fs::path(".") : parent;
  if (!fs::is_directory(dir))
    throw ConfigError(where, 0, "--" + key, "expected a file in an existing directory", path);
  if (fs::is_directory(path))
    throw ConfigError(where, 0, "--" + key, "expected a file name, not a directory", path);
  // Outputs go to regular files only: a link would write elsewhere, and a device or a FIFO
  // cannot be written whole or not at all (and a FIFO blocks until a reader comes).
  std::error_code ec;
  const fs::file_status own = fs::symlink_status(path, ec);
  if (fs::is_symlink(own))
    throw ConfigError(where, 0, "--" + key,
                      "expected a regular file or a new one, not a symbolic link", path);
  if (fs::exists(own) && !fs::is_regular_file(own))
    throw ConfigError(where, 0, "--" + key, "expected a regular file or a new one", path);
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

int guarded(const char* where, const std::function<int()>& body) {
  try {
    return body();
  } catch (const ConfigError& e) {
    std::cerr << error_line(where, e) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << where << ": " << e.what() << "\n";
    return 1;
  }
}

int run_command(const char* where, options::Command command, const std::string& caption, int argc,
                char** argv, const std::function<int(OptionValues)>& body) {
  return guarded(where, [&] {
    auto values = read(where, command, caption, argc, argv);
    return values ? body(std::move(*values)) : 0;
  });
}

}  // namespace aggnet::cli
