// `aggnet params`: every module parameter, generated from the parameter tables in code.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <iostream>

#include "apps/commands.h"
#include "modules/core/param_info.h"

namespace aggnet {

int cmd_params(int argc, char** argv) {
  namespace po = boost::program_options;
  po::options_description desc("aggnet params: list module parameters");
  std::string format;
  desc.add_options()("help,h", "show this help")(
      "format", po::value(&format)->default_value("table"), "table | markdown");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "aggnet params: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  for (const auto& module : all_module_params()) {
    if (format == "markdown") {
      std::cout << fmt::format(
          "## {}\n\n{}\n\n| key | unit | default | description |\n|---|---|---|---|\n",
          module.module, module.description);
      for (const auto& p : module.params)
        std::cout << fmt::format("| `{}` | {} | `{}` | {} |\n", p.key, p.unit, p.default_value,
                                 p.description);
      std::cout << "\n";
    } else {
      std::cout << module.module << ": " << module.description << "\n";
      for (const auto& p : module.params)
        std::cout << fmt::format("  {:<16} {:<6} {:<12} {}\n", p.key, p.unit, p.default_value,
                                 p.description);
    }
  }
  return 0;
}

}  // namespace aggnet
