// Fault injection for one run (issue 11): random loss per link, links going down and back
// up, stalled and slow sites, and the knobs of loss recovery (retransmission timeout,
// watchdog). Plain data: `--loss`, `--fault SPEC` (repeatable), `--retransmit-timeout` and
// `--watchdog` set it; the SystemC builder resolves the site codes and installs it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/params/cluster.h"
#include "model/platform.h"

namespace aggnet {

/// A WAN link named by its two site codes (both directions).
struct LinkName {
  std::string a, b;
};

/// `loss:A-B=RATE`: each transaction on link A-B (either direction) is lost with RATE.
struct LinkLoss {
  LinkName link;
  double rate = 0;
};

/// `down:A-B@T1[-T2]`: link A-B goes down at T1 (both directions) and back up at T2.
struct LinkOutage {
  LinkName link;
  std::uint64_t down_ps = 0;
  std::uint64_t up_ps = std::numeric_limits<std::uint64_t>::max();  ///< max: never
};

/// `stall:SITE@T1-T2`: the site's host stops sending and receiving (its access links
/// hold every transaction) from T1 to T2.
struct SiteStall {
  std::string site;
  std::uint64_t from_ps = 0, to_ps = 0;
};

/// `slow:SITE=FACTOR`: the site's compute phase takes FACTOR times as long.
struct SiteSlowdown {
  std::string site;
  double factor = 1;
};

/// Test-only hooks that break one mechanism on purpose, so tests can check that the run's
/// invariants catch it (sim/invariants.h). Never set from the command line.
enum class TestHook {
  kNone,
  kDoubleAdd,         ///< an aggregator adds the first contribution of every slot twice
  kLeakSlot,          ///< an aggregator never frees the slot of the first chunk it reduces
  kOvercommit,        ///< an aggregator takes slots beyond its buffer's capacity
  kMiscountLoss,      ///< links do not count the bytes they lose
  kDoubleDeliver,     ///< an aggregator hands every reduced chunk to its cluster twice
  kEarlyTreeForward,  ///< a reduction-tree FPGA forwards its sum one input early
};

struct FaultPlan {
  double wan_loss_rate = 0;  ///< `--loss`: every WAN link, each direction
  std::vector<LinkLoss> link_loss;
  std::vector<LinkOutage> outages;
  std::vector<SiteStall> stalls;
  std::vector<SiteSlowdown> slowdowns;
  /// Sender retransmission timeout; 0: per group from its latencies (control plane).
  std::uint64_t retransmit_timeout_ps = 0;
  /// Retransmission timeouts double per expiry of a contribution up to this multiple of
  /// the first (Retransmitter::kMaxBackoff); 1: a fixed timeout (tests compare the two).
  std::uint64_t retransmit_backoff_max = 8;
  /// A run whose sites make no progress for this long stops with a diagnosis; 0: auto.
  std::uint64_t watchdog_ps = 0;
  TestHook test_hook = TestHook::kNone;

  /// Whether anything can be lost (loss recovery is then on).
  bool lossy() const {
    const bool link_lossy = std::any_of(link_loss.begin(), link_loss.end(),
                                        [](const LinkLoss& l) { return l.rate > 0; });
    return wan_loss_rate > 0 || link_lossy || !outages.empty();
  }
  bool any() const { return lossy() || !stalls.empty() || !slowdowns.empty(); }
};

/// Loss recovery (acknowledgements, timeouts, retransmission) runs when something can be
/// lost: a lossy plan, or `drop` flow control (a full buffer drops contributions).
inline bool loss_recovery(const FaultPlan& plan, FlowControl flow_control) {
  return plan.lossy() || flow_control == FlowControl::kDrop;
}

/// `site`'s compute phase under the plan's slowdowns (platform value x factor).
/// Errors: std::invalid_argument if it no longer fits in 64-bit ps.
std::uint64_t slowed_compute_ps(const FaultPlan& plan, const Platform& platform, int site);

/// A fault spec add_fault_spec cannot read: what was expected and the spec, apart, so that
/// a caller words it as its other option errors ("--fault: <expected>, got '<spec>'");
/// what(): "<expected>, got '<spec>'".
class FaultSpecError : public std::invalid_argument {
 public:
  FaultSpecError(const std::string& expected, const std::string& spec);
  const std::string& expected() const { return expected_; }
  const std::string& spec() const { return spec_; }

 private:
  std::string expected_, spec_;
};

/// Adds one `--fault` spec (`loss:A-B=RATE`, `down:A-B@T1[-T2]`, `stall:SITE@T1-T2`,
/// `slow:SITE=FACTOR`; times with units, e.g. 150ms). Errors: FaultSpecError with what was
/// expected.
void add_fault_spec(FaultPlan& plan, const std::string& spec);

/// Checks the plan against a platform: every site code known, every link present, times
/// ordered. Errors: std::invalid_argument naming the spec; an unknown site code with the
/// closest link or site of the platform (" (did you mean 'lon-nyc'?)", common/strings.h).
void check_faults(const FaultPlan& plan, const Platform& platform);

/// Index into platform.links of the link between the named sites, or -1.
int find_link(const Platform& platform, const LinkName& name);

}  // namespace aggnet
