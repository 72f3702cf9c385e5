// Option parsing shared by the aggnet subcommands, derived from the one option table
// (options/run_option_table.h). Every error is a ConfigError whose "file" is the command
// (e.g. "aggnet run") and whose key is the option ("--buffer"), so the user sees one line:
// `aggnet run: --buffer: expected ..., got '...'`.
#pragma once

#include <boost/program_options.hpp>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "common/config_error.h"
#include "config/platform_loader.h"
#include "model/run_options.h"
#include "model/schedule.h"
#include "options/option_values.h"

namespace aggnet::cli {

/// Parses argv against `desc`; stray positional words are errors.
/// Errors: ConfigError(where) with program_options' message.
boost::program_options::variables_map parse(
    const std::string& where, int argc, char** argv,
    const boost::program_options::options_description& desc);

/// A program_options error as one line naming the option, with a did-you-mean for an
/// unknown one: "aggnet run: --buffers: unknown option (did you mean '--buffer'?)".
ConfigError option_error(const std::string& where, const boost::program_options::error& e,
                         const boost::program_options::options_description& desc);

/// `caption` and `desc` as --help text: each option with its value and default, the description
/// wrapped at word boundaries (never inside a word) within 100 columns.
void print_help(std::ostream& out, const std::string& caption,
                const boost::program_options::options_description& desc);

/// --workers: simulations in parallel; 0 means one per CPU.
int workers(const options::OptionValues& values);

/// --help plus the table's options `command` takes, in table order, with their defaults.
boost::program_options::options_description describe(options::Command command,
                                                     const std::string& caption);

/// Parses argv for `command` (describe(command, caption)) into checked values; prints
/// the help and returns nothing for --help. Errors: ConfigError(where, --option).
std::optional<options::OptionValues> read(const std::string& where, options::Command command,
                                          const std::string& caption, int argc, char** argv);

/// The platform of --platform with the --set overrides, and --buffer (when given) at
/// every site. Errors: ConfigError (the file's, or where's for a bad --set); a missing
/// file's names the closest file of its directory or of the shipped platforms.
Platform load_platform(const options::OptionValues& values, const RunOptions& run);

/// Wherever the FPGA sums (a group-average schedule with aggregation on; a reduction tree's
/// relays always), every site's buffer must hold one aggregation slot (one transaction);
/// other collectives pass through an FPGA that holds none.
/// Errors: ConfigError naming --buffer when given, else the platform file's key.
void check_buffers(const options::OptionValues& values, const Platform& platform,
                   const RunOptions& run, Collective collective = Collective::kGroupAverage);

/// Flow control the schedule's collective models: drop only with group averages, credit
/// not with reduction trees. Errors: ConfigError naming --flow-control.
void check_flow_control(const options::OptionValues& values, Collective collective,
                        const RunOptions& run);

/// Every output file option given (table kind kOutput) passes check_output_path.
void check_outputs(const options::OptionValues& values);

/// An output path whose directory exists and is writable, naming a regular file or none
/// (not a link, a device or a FIFO), checked before any work, so a bad path loses nothing.
/// Empty paths and "-" (the standard output) pass. Errors: ConfigError(where, --key).
void check_output_path(const std::string& where, const std::string& key, const std::string& path);

/// What names one file however it is spelt ("x", "./x", "/abs/x", "d/../x"), existing or
/// not: the absolute path with its existing part's links resolved.
std::filesystem::path file_identity(const std::string& path);

/// Refuses an output that names one of `inputs` (files the command reads): ConfigError
/// (where, --key), "expected a file other than <what>".
void check_not_an_input(const std::string& where, const std::string& key, const std::string& output,
                        const std::vector<std::pair<std::string, std::string>>& inputs);

/// This executable's path (/proc/self/exe), for commands that run `aggnet run` children.
/// Errors: std::runtime_error.
std::string self_executable();

/// Runs a command's body: a ConfigError becomes its one-line message (error_line) and exit
/// status 2, any other exception "WHERE: what" and status 1.
int guarded(const char* where, const std::function<int()>& body);

/// A table command's whole run, guarded: its options read (read(where, command, caption)),
/// then `body` with them; --help prints the help and returns 0 without running `body`.
int run_command(const char* where, options::Command command, const std::string& caption, int argc,
                char** argv, const std::function<int(options::OptionValues)>& body);

}  // namespace aggnet::cli
