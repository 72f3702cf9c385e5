// `aggnet size-buffers`: the smallest FPGA buffer per site that keeps a schedule's rounds
// within a target fraction of their unconstrained speed (analytic bound, then a parallel
// bisection of `aggnet run` child processes). Logic: sizing/buffer_sizing.h.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "common/atomic_file.h"
#include "common/config_error.h"
#include "config/schedule_io.h"
#include "options/option_values.h"
#include "sim/report.h"
#include "sizing/buffer_sizing.h"
#include "traffic/load_aware.h"

namespace aggnet {
namespace {

using options::OptionValues;

const char* kCaption =
    "aggnet size-buffers: smallest FPGA buffer per site meeting a round-time target";

SizingRequest prepare(const OptionValues& values) {
  SizingRequest r;
  r.options = options::to_run_options(values);
  r.workers = cli::workers(values);
  r.platform = cli::load_platform(values, r.options);
  r.schedule = make_schedule(values.text("schedule"), r.platform,
                             PlanInputs{r.options.gradient_bytes, transaction_bytes(r.options)});
  if (r.schedule.collective != Collective::kGroupAverage &&
      r.schedule.collective != Collective::kReductionTree)
    values.fail("schedule",
                "expected a group schedule or reduction trees (a host-based " +
                    collective_name(r.schedule.collective) + " uses no aggregation slots)",
                values.text("schedule"));
  cli::check_flow_control(values, r.schedule.collective, r.options);
  if (r.options.load_aware_routing) {
    if (r.schedule.collective != Collective::kGroupAverage)
      values.fail("routing", "expected a group-average schedule with load-aware routing",
                  "load-aware");
    r.options.link_metric = plan_load_aware_routing(r.platform, r.schedule, r.options).link_metric;
  }
  cli::check_outputs(values);
  r.target = values.number("target");
  r.heterogeneous = values.flag("heterogeneous");
  r.progress = !values.flag("quiet");  // progress is on stderr
  r.aggnet_exe = cli::self_executable();
  r.run_args = values.run_args();
  return r;
}

}  // namespace

int cmd_size_buffers(int argc, char** argv) {
  return cli::run_command("aggnet size-buffers", options::kSizeBuffers, kCaption, argc, argv,
                          [](const OptionValues& values) {
                            const SizingRequest request = prepare(values);
                            const SizingResult result = size_buffers(request);
                            const std::string& json = values.text("json");
                            const std::string& csv = values.text("csv");
                            // An output on the standard output replaces the table there.
                            if (!values.flag("quiet") && !is_stdout(json) && !is_stdout(csv))
                              std::cout << sizing_table(request, result);
                            if (!json.empty()) {
                              nlohmann::json document = sizing_json(request, result);
                              tidy_numbers(document);
                              write_file_atomically(json, document.dump(2) + "\n");
                            }
                            if (!csv.empty())
                              write_file_atomically(csv, sizing_csv(request, result));
                            return 0;
                          });
}

}  // namespace aggnet
