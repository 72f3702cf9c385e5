// aggnet: command-line entry point. `aggnet <command> [options]`; see `aggnet --help`.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <systemc>
#include <vector>

#include "apps/commands.h"
#include "common/strings.h"
#include "modules/core/huge_pages.h"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

const Command kCommands[] = {
    {"run", aggnet::cmd_run, "simulate a platform running a schedule (the main job)"},
    {"schedule", aggnet::cmd_schedule, "rank schedules by time to consensus; --verify"},
    {"sweep", aggnet::cmd_sweep, "run a design-space sweep (local workers or Slurm)"},
    {"size-buffers", aggnet::cmd_size_buffers, "smallest FPGA buffer per site for a target"},
    {"params", aggnet::cmd_params, "list every module parameter with unit and default"},
    {"compare", aggnet::cmd_compare, "run JSONs side by side: inputs and numbers that differ"},
    {"platform", aggnet::cmd_platform, "a platform's sites, links, routes and multicast trees"},
};

void usage(std::ostream& out) {
  out << "usage: aggnet <command> [options]   (aggnet <command> --help for its options)\n\n"
         "commands:\n";
  for (const auto& c : kCommands)
    out << "  " << c.name << std::string(14 - std::strlen(c.name), ' ') << c.summary << "\n";
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? std::cerr : std::cout);
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::cout << "aggnet " << AGGNET_VERSION << "\n";
    return 0;
  }
  for (const auto& c : kCommands) {
    if (std::strcmp(argv[1], c.name) == 0) return c.run(argc - 1, argv + 1);
  }
  std::vector<std::string> names;
  for (const auto& c : kCommands) names.emplace_back(c.name);
  std::cerr << "aggnet: " << argv[1] << ": unknown command" << aggnet::did_you_mean(argv[1], names)
            << "\n";
  usage(std::cerr);
  return 2;
}

namespace {

// The commands print through std::cout; what could not be written (a full disk, a closed
// descriptor) must not end in status 0.
int with_stdout_checked(int status) {
  std::cout.flush();
  if (std::cout && std::fflush(stdout) == 0) return status;
  std::cerr << "aggnet: cannot write the standard output\n";
  return status == 0 ? 1 : status;
}

}  // namespace

// Our own main: the kernel prints its banner before sc_main runs, and it would be mixed
// into tables on stdout.
int main(int argc, char* argv[]) {
  aggnet::reserve_heap_on_huge_pages(std::size_t{1} << 30);
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  const int status = with_stdout_checked(sc_core::sc_elab_and_sim(argc, argv));
#ifdef AGGNET_FAST_EXIT
  // Every output is written and closed by now; what exit() would add is tearing down the
  // libraries' static objects (SystemC's, yaml-cpp's) in memory the kernel frees anyway,
  // about 2 % of the CPU time of a short run. Not with the sanitizers (their leak check
  // runs at exit; apps/CMakeLists.txt).
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(status);
#endif
  return status;
}
