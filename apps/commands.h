// Subcommands of the `aggnet` command-line tool. Each returns the process exit status:
// 0 success, 1 a run that completed but failed a check, 2 bad input (ConfigError).
#pragma once

namespace aggnet {

int cmd_run(int argc, char** argv);           // apps/cmd_run.cpp
int cmd_schedule(int argc, char** argv);      // apps/cmd_schedule.cpp
int cmd_sweep(int argc, char** argv);         // apps/cmd_sweep.cpp
int cmd_size_buffers(int argc, char** argv);  // apps/cmd_size_buffers.cpp
int cmd_params(int argc, char** argv);        // apps/cmd_params.cpp
int cmd_compare(int argc, char** argv);       // apps/cmd_compare.cpp
int cmd_platform(int argc, char** argv);      // apps/cmd_platform.cpp

}  // namespace aggnet
