// Engine benchmarks, one measurement per process (a SystemC kernel elaborates once):
//   aggnet_bench kernel EVENTS
//       the bare kernel: one SC_METHOD re-notifying a timed event EVENTS times
//   aggnet_bench memory
//       the host's load-to-use latency at working sets from 32 KiB to 64 MiB (a chase of
//       dependent loads through randomly ordered cache lines): the bare kernel fits in the
//       L1 cache, hundreds of sites do not, and what their state costs is this latency
//   aggnet_bench run PLATFORM SCHEDULE GRADIENT BUFFER STEPS [colocated|reference] [noalign]
//                    [burst=K]
//       the engine: builds the NetworkSystem(s) and simulates STEPS steps (STEPS 0: one
//       period); `colocated` adds the co-located reference as `aggnet run` does,
//       `reference` simulates the co-located reference alone (where a run's time goes),
//       `noalign` is --alignment none (the tables' all-to-all rows beyond 27 sites use
//       it), `burst=K` is --burst K (K chunks per transaction)
// Each prints one JSON line with CPU seconds (CLOCK_PROCESS_CPUTIME_ID: the machine is
// shared, wall time is not a measure) and peak RSS; benchmarks/run.sh forms the ratios.
// `run` checks the invariants `aggnet run` checks after the timed part: a run that breaks
// one exits 1 naming it, with no JSON line (a broken run's time is not a measurement).
// With AGGNET_BENCH_PERF_CTL and AGGNET_BENCH_PERF_ACK naming the fifos of
// `perf record -D -1 --control fifo:CTL,ACK`, `run` enables perf's events for sc_start
// alone, so that a profile holds the simulation without the set-up
// (benchmarks/hop_profile.py).
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <systemc>
#include <vector>

#include "common/units.h"
#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "modules/core/huge_pages.h"
#include "sim/builder.h"
#include "sim/invariants.h"
#include "traffic/mixing.h"

namespace {

double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double peak_rss_mib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

struct Ticker : sc_core::sc_module {
  SC_HAS_PROCESS(Ticker);
  Ticker(sc_core::sc_module_name name, long events) : sc_module(name), left(events) {
    SC_METHOD(tick);
    sensitive << ev;
    dont_initialize();
    ev.notify(sc_core::sc_time(1, sc_core::SC_NS));
  }
  void tick() {
    if (--left > 0) ev.notify(sc_core::sc_time(1, sc_core::SC_NS));
  }
  sc_core::sc_event ev;
  long left;
};

int kernel(long events) {
  Ticker t("ticker", events);
  const double c0 = cpu_s();
  sc_core::sc_start();
  const double sim = cpu_s() - c0;
  fmt::print(
      "{{\"bench\": \"kernel\", \"events\": {}, \"sim_cpu_s\": {:.6f}, "
      "\"events_per_cpu_s\": {:.1f}}}\n",
      events, sim, static_cast<double>(events) / sim);
  return 0;
}

// One line per cache line, visited in a random cyclic order: each load's address is the
// previous load's value, so neither the hardware prefetcher nor out-of-order execution
// overlaps them.
struct alignas(64) ChaseLine {
  std::uint32_t next = 0;
};

double chase_ns(std::size_t bytes, std::mt19937_64& rng) {
  const std::size_t lines = bytes / sizeof(ChaseLine);
  std::vector<std::uint32_t> order(lines);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin() + 1, order.end(), rng);
  std::vector<ChaseLine> chase(lines);
  for (std::size_t i = 0; i < lines; ++i) chase[order[i]].next = order[(i + 1) % lines];
  constexpr std::size_t kLoads = 4'000'000;
  std::uint32_t at = 0;
  for (std::size_t i = 0; i < lines; ++i) at = chase[at].next;  // warm the caches and TLB
  const double c0 = cpu_s();
  for (std::size_t i = 0; i < kLoads; ++i) at = chase[at].next;
  const double c1 = cpu_s();
  if (at >= lines) std::abort();  // uses `at`: the loop is not optimised away
  return 1e9 * (c1 - c0) / static_cast<double>(kLoads);
}

int memory() {
  std::mt19937_64 rng(1);
  std::string sizes;
  for (std::size_t kib = 32; kib <= 64 * 1024; kib *= 2) {
    if (!sizes.empty()) sizes += ", ";
    sizes += fmt::format("\"{}\": {:.1f}", kib, chase_ns(kib * 1024, rng));
  }
  // sim_cpu_s: the least-of-N helpers of run.sh pick rows by it.
  fmt::print("{{\"bench\": \"memory\", \"sim_cpu_s\": {:.6f}, \"load_ns_by_kib\": {{{}}}}}\n",
             cpu_s(), sizes);
  return 0;
}

// WAN chunk-hops: chunks carried by the WAN links (access links not counted).
std::uint64_t wan_hops(const aggnet::NetworkSystem& s) {
  std::uint64_t h = 0;
  for (const auto& l : s.links()) h += l.link->chunks();
  return h;
}

// Control messages (ready, grant, credit, ack) carried by the WAN links: work per run
// that the hop rate does not count (it grows with the group size, not the gradient).
std::uint64_t wan_control_hops(const aggnet::NetworkSystem& s) {
  std::uint64_t h = 0;
  for (const auto& l : s.links()) h += l.link->control_messages();
  return h;
}

// Step 0's span: the last site's result complete - the first site's ready time (the
// round time of a one-group step; burst rows compare it across K).
double step0_span_s(const aggnet::NetworkSystem& s) {
  sc_core::sc_time first = sc_core::sc_max_time(), last = sc_core::SC_ZERO_TIME;
  for (const auto& site : s.sites()) {
    const auto& steps = site.cluster->steps();
    if (steps.empty() || !steps[0].communicated) continue;
    first = std::min(first, steps[0].send_start);
    last = std::max(last, steps[0].end);
  }
  return last > first ? (last - first).to_seconds() : 0.0;
}

// perf's control fifos, if the environment names them: enable() and disable() return once
// perf has acknowledged the command.
class PerfControl {
 public:
  PerfControl() {
    const char* ctl = std::getenv("AGGNET_BENCH_PERF_CTL");
    const char* ack = std::getenv("AGGNET_BENCH_PERF_ACK");
    if (ctl == nullptr || ack == nullptr) return;
    ctl_ = open(ctl, O_WRONLY | O_CLOEXEC);
    ack_ = open(ack, O_RDONLY | O_CLOEXEC);
    if (ctl_ < 0 || ack_ < 0) throw std::runtime_error("cannot open perf's control fifos");
  }
  PerfControl(const PerfControl&) = delete;
  PerfControl& operator=(const PerfControl&) = delete;
  ~PerfControl() {
    if (ctl_ >= 0) close(ctl_);
    if (ack_ >= 0) close(ack_);
  }
  void enable() { command("enable\n"); }
  void disable() { command("disable\n"); }

 private:
  void command(const std::string& text) {
    if (ctl_ < 0) return;
    char reply[16];
    if (write(ctl_, text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
        read(ack_, reply, sizeof reply) <= 0)
      throw std::runtime_error("perf did not acknowledge '" + text.substr(0, text.size() - 1) +
                               "'");
  }
  int ctl_ = -1, ack_ = -1;
};

// Which networks a run simulates.
enum class Networks { kWan, kWanAndReference, kReference };

// The systems `networks` names, the WAN's first (the step's span is its).
std::vector<std::unique_ptr<aggnet::NetworkSystem>> make_systems(const aggnet::Platform& platform,
                                                                 const aggnet::Schedule& schedule,
                                                                 const aggnet::RunOptions& o,
                                                                 Networks networks) {
  std::vector<std::unique_ptr<aggnet::NetworkSystem>> systems;
  if (networks != Networks::kReference)
    systems.push_back(std::make_unique<aggnet::NetworkSystem>("wan", platform, schedule, o));
  if (networks != Networks::kWan) {
    const aggnet::ColocatedReference c = aggnet::colocated_reference(platform, schedule, o);
    systems.push_back(
        std::make_unique<aggnet::NetworkSystem>("colocated", c.platform, c.schedule, o));
  }
  return systems;
}

int run(const std::string& platform_file, const std::string& schedule_name,
        const std::string& gradient, const std::string& buffer, int steps, Networks networks,
        bool align, std::uint64_t burst) {
  const double c0 = cpu_s();
  const aggnet::Platform platform = aggnet::load_platform(platform_file);
  aggnet::RunOptions o;
  o.gradient_bytes = aggnet::parse_bytes(gradient);
  // reduction-forest: the forest planned for this gradient (the default chunk).
  const aggnet::Schedule schedule = aggnet::make_schedule(
      schedule_name, platform, aggnet::PlanInputs{o.gradient_bytes, o.chunk_bytes});
  // As `aggnet run`: a forest of reduction trees runs without the co-located reference.
  if (schedule.collective == aggnet::Collective::kReductionTree) {
    if (networks == Networks::kReference)
      throw std::invalid_argument("a reduction forest has no co-located reference");
    networks = Networks::kWan;
  }
  o.buffer_bytes = aggnet::parse_bytes(buffer);
  o.steps = steps;
  o.burst_chunks = burst;
  if (!align) o.alignment = aggnet::SendAlignment::kNone;
  const double c_plan = cpu_s();
  // As `aggnet run` plans its steps: the rounds to eps-consensus from the mixing matrices.
  const long rounds =
      aggnet::rounds_to_eps(schedule, static_cast<int>(platform.sites.size()), o.eps);
  const double c1 = cpu_s();
  const auto systems = make_systems(platform, schedule, o, networks);
  PerfControl perf;
  perf.enable();
  const double c2 = cpu_s();
  sc_core::sc_start();
  const double c3 = cpu_s();
  perf.disable();
  std::uint64_t hops = 0, control_hops = 0;
  for (const auto& system : systems) {
    const std::string broken = aggnet::violations(aggnet::check_invariants(*system));
    if (!broken.empty()) {
      std::cerr << "aggnet_bench run: " << broken << "\n";
      return 1;
    }
    hops += wan_hops(*system);
    control_hops += wan_control_hops(*system);
  }
  fmt::print(
      "{{\"bench\": \"run\", \"platform\": \"{}\", \"sites\": {}, \"schedule\": \"{}\", "
      "\"gradient\": \"{}\", \"steps\": {}, \"burst\": {}, \"wan\": {}, \"colocated\": {}, "
      "\"rounds_to_eps\": {}, "
      "\"load_cpu_s\": {:.6f}, \"plan_cpu_s\": {:.6f}, \"build_cpu_s\": {:.6f}, "
      "\"setup_cpu_s\": {:.6f}, \"sim_cpu_s\": {:.6f}, \"hops\": {}, \"control_hops\": {}, "
      "\"hops_per_cpu_s\": {:.1f}, \"sim_time_s\": {:.9f}, \"step0_span_s\": {:.12f}, "
      "\"peak_rss_mib\": {:.1f}}}\n",
      platform_file, platform.sites.size(), schedule_name, gradient, steps, burst,
      networks != Networks::kReference ? "true" : "false",
      networks != Networks::kWan ? "true" : "false", rounds, c_plan - c0, c1 - c_plan, c2 - c1,
      c2 - c0, c3 - c2, hops, control_hops, static_cast<double>(hops) / (c3 - c2),
      sc_core::sc_time_stamp().to_seconds(), step0_span_s(*systems.front()), peak_rss_mib());
  return 0;
}

}  // namespace

int sc_main(int argc, char** argv) {
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "kernel" && argc == 3) return kernel(std::atol(argv[2]));
    if (mode == "memory" && argc == 2) return memory();
    if (mode == "run" && argc >= 7) {
      Networks networks = Networks::kWan;
      bool align = true;
      std::uint64_t burst = 1;
      for (int i = 7; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag.rfind("burst=", 0) == 0) {
          burst = std::stoull(flag.substr(6));
        } else if (flag == "colocated" || flag == "reference") {
          networks = flag == "colocated" ? Networks::kWanAndReference : Networks::kReference;
        } else if (flag == "noalign") {
          align = false;
        } else {
          throw std::invalid_argument("flag " + flag);
        }
      }
      return run(argv[2], argv[3], argv[4], argv[5], std::atoi(argv[6]), networks, align, burst);
    }
  } catch (const std::exception& e) {
    std::cerr << "aggnet_bench: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "usage: aggnet_bench kernel EVENTS\n"
               "       aggnet_bench memory\n"
               "       aggnet_bench run PLATFORM SCHEDULE GRADIENT BUFFER STEPS "
               "[colocated|reference] [noalign] [burst=K]\n";
  return 2;
}

// Our own main: no kernel banner in the JSON lines.
int main(int argc, char* argv[]) {
  aggnet::reserve_heap_on_huge_pages(std::size_t{1} << 30);
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
