// Burst mode (--burst K) against single-chunk transactions, both simulated side by side in
// one kernel: on the closed-form cases (one-way transfer, uniform ring) every run must equal
// the store-and-forward closed form of its transactions, so the burst's timing error is
// the closed-form difference to the picosecond; and a burst run must conserve what the
// exact one carries (chunks, payload and wire bytes, reductions, functional sums).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <utility>

#include "common/units.h"
#include "config/platform_loader.h"
#include "config/schedule_io.h"
#include "model/network_math.h"
#include "modules/core/time.h"
#include "sim/builder.h"
#include "sim/invariants.h"
#include "test_platforms.h"

namespace aggnet {
namespace {

using testing::kMs;
using testing::make_platform;

struct Twins {
  std::unique_ptr<NetworkSystem> exact, burst;
};

// The same run with single-chunk transactions and with bursts of k, in one elaboration.
Twins run_twins(const Platform& p, const Schedule& s, RunOptions o, std::uint64_t k) {
  Twins t;
  t.exact = std::make_unique<NetworkSystem>("exact", p, s, o);
  o.burst_chunks = k;
  t.burst = std::make_unique<NetworkSystem>("burst", p, s, o);
  sc_core::sc_start();
  return t;
}

// Payload of each transaction of a message of `bytes` cut into chunks of c, k per
// transaction (the last chunk and the last burst possibly short), and its wire bytes on
// `link`: every chunk with its own packet headers.
std::vector<std::uint64_t> transaction_wire(std::uint64_t bytes, std::uint64_t c, std::uint64_t k,
                                            const WanLinkParams& link) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t off = 0; off < bytes; off += c) {
    const std::uint64_t w = wire_bytes(std::min(c, bytes - off), link.mtu_bytes, link.header_bytes);
    if ((off / c) % k == 0) {
      out.push_back(w);
    } else {
      out.back() += w;
    }
  }
  return out;
}

// Last bit of the last of M transactions through links 1..H in series, store-and-forward,
// all handed to link 1 at 0, on an idle path, without the constant propagation and switch
// latencies (a tandem of FIFO servers: the longest monotone path through the (item, link)
// grid). With all transactions of serialization s_k but the last (t_k <= s_k) it enters
// the last transaction's row at some link j:
//   max_j  sum_{k<=j} s_k + (M - 2) max_{k<=j} s_k + sum_{k>=j} t_k      (M >= 2)
//   sum_k t_k                                                            (M = 1)
std::uint64_t pipeline_ps(const std::vector<WanLinkParams>& path, std::uint64_t bytes,
                          std::uint64_t c, std::uint64_t k) {
  const std::uint64_t m = (bytes + c * k - 1) / (c * k);
  std::vector<std::uint64_t> s, t;
  for (const auto& link : path) {
    const std::vector<std::uint64_t> items = transaction_wire(bytes, c, k, link);
    s.push_back(serialization_ps(items[0], link.bandwidth_bps));
    t.push_back(serialization_ps(items[m - 1], link.bandwidth_bps));
  }
  std::uint64_t tail = 0;
  for (auto x : t) tail += x;
  if (m == 1) return tail;
  std::uint64_t best = 0, head = 0, top = 0;
  for (std::size_t j = 0; j < path.size(); ++j) {
    head += s[j];
    top = std::max(top, s[j]);
    best = std::max(best, head + (m - 2) * top + tail);
    tail -= t[j];
  }
  return best;
}

// Serialization of one whole chunk of c per link: s_k.
std::vector<std::uint64_t> chunk_ser(const std::vector<WanLinkParams>& path, std::uint64_t c) {
  std::vector<std::uint64_t> s;
  for (const auto& l : path) s.push_back(chunk_serialization_ps(l, c));
  return s;
}

// The derived error of full bursts (N a multiple of K): per message, the K - 1 extra chunk
// serializations on every link but the bottleneck, (K - 1)(sum_k s_k - max_k s_k).
std::uint64_t full_burst_error_ps(const std::vector<std::uint64_t>& s, std::uint64_t k) {
  std::uint64_t sum = 0;
  for (auto x : s) sum += x;
  return (k - 1) * (sum - *std::max_element(s.begin(), s.end()));
}

// Line a - b - c: a 10 Gbps trunk, then a faster 40 Gbps link, so the bottleneck is in the
// middle of the path (access up 400 Gbps, a-b, b-c, access down).
Platform line() {
  Platform p = make_platform({"a", "b", "c"}, {{0, 1, 5 * kMs}, {1, 2, 7 * kMs}}, 10'000'000'000);
  p.links[1].params.bandwidth_bps = 40'000'000'000;
  for (auto& s : p.sites) s.sw.latency_ps = 1'000'000;  // 1 us
  return p;
}

std::vector<WanLinkParams> line_path(const Platform& p) {
  return {access_link(p.sites[0]), p.links[0].params, p.links[1].params, access_link(p.sites[2])};
}

// Propagation and switch latency of a -> c: the same for every transaction.
std::uint64_t line_constant_ps(const Platform& p) {
  std::uint64_t total = 3 * p.sites[0].sw.latency_ps;  // a's, b's and c's switch
  for (const auto& l : line_path(p)) total += l.delay_ps;
  return total;
}

Schedule transfer(int from, int to) {
  Schedule s;
  s.name = "p2p";
  s.collective = Collective::kPointToPoint;
  s.rounds.push_back(Round{{Group{{from, to}}}});
  return s;
}

sc_core::sc_time receiver_time(const NetworkSystem& sys, int site) {
  const auto& r = sys.sites()[site].cluster->steps().at(0);
  return r.end - r.send_start;
}

// Runs the line transfer with and without bursts of k; each receiver time must equal its
// closed form. Returns both runs and their closed-form times (ps).
struct TransferTwins {
  Twins twins;
  std::uint64_t exact_ps = 0;
  std::uint64_t burst_ps = 0;
};

TransferTwins transfer_times_match_closed_form(const Platform& p, const RunOptions& o,
                                               std::uint64_t k) {
  auto twins = run_twins(p, transfer(0, 2), o, k);
  const auto path = line_path(p);
  const std::uint64_t exact =
      line_constant_ps(p) + pipeline_ps(path, o.gradient_bytes, o.chunk_bytes, 1);
  const std::uint64_t burst =
      line_constant_ps(p) + pipeline_ps(path, o.gradient_bytes, o.chunk_bytes, k);
  EXPECT_EQ(receiver_time(*twins.exact, 2), ps_time(exact));
  EXPECT_EQ(receiver_time(*twins.burst, 2), ps_time(burst));
  return {std::move(twins), exact, burst};
}

// 16 chunks of 1 MB (not a whole number of 1968-byte packet payloads: a burst's packet
// headers differ from those of one chunk of K x c), bursts of 4: the error is the formula.
TEST(BurstTiming, TransferWithFullBurstsErrsByTheClosedForm) {
  const Platform p = line();
  RunOptions o;
  o.chunk_bytes = 1'000'000;
  o.gradient_bytes = 16 * o.chunk_bytes;
  const std::uint64_t k = 4;
  const auto path = line_path(p);
  const auto run = transfer_times_match_closed_form(p, o, k);
  const std::uint64_t exact = run.exact_ps;
  const std::uint64_t burst = run.burst_ps;
  // The formula up to the rounding of each serialization to a whole ps: a burst's
  // ceil(K x) differs from K ceil(x) by less than K ps, on H links and M - 1 repeats.
  const std::uint64_t error = burst - exact;
  const std::uint64_t formula = full_burst_error_ps(chunk_ser(path, o.chunk_bytes), k);
  const std::uint64_t rounding = (path.size() + 16 / k - 1) * (k - 1);
  EXPECT_LE(error, formula);
  EXPECT_GE(error + rounding, formula);
  EXPECT_GT(formula, 0u);
}

// 17 chunks, the last 300 kB, in bursts of 5 (5, 5, 5, 2): a partial last burst. The error
// is the closed-form difference and, here too, at most the full-burst formula.
TEST(BurstTiming, TransferWithAPartialLastBurstErrsByTheClosedForm) {
  const Platform p = line();
  RunOptions o;
  o.chunk_bytes = 1'000'000;
  o.gradient_bytes = 16 * o.chunk_bytes + 300'000;
  const std::uint64_t k = 5;
  const auto path = line_path(p);
  const auto run = transfer_times_match_closed_form(p, o, k);
  const std::uint64_t exact = run.exact_ps;
  const std::uint64_t burst = run.burst_ps;
  const auto& twins = run.twins;
  EXPECT_GT(burst, exact);
  EXPECT_LE(burst - exact, full_burst_error_ps(chunk_ser(path, o.chunk_bytes), k));
  // The sender's transmit-complete time is exact: its access link carries the same wire
  // bytes back to back either way (up to the rounding of 4 bursts instead of 17 chunks).
  const auto& s_exact = twins.exact->sites()[0].cluster->steps().at(0);
  const auto& s_burst = twins.burst->sites()[0].cluster->steps().at(0);
  const auto sent = [](const StepRecord& r) { return to_ps(r.transmit_complete - r.send_start); };
  EXPECT_LE(sent(s_burst), sent(s_exact));
  EXPECT_LT(sent(s_exact) - sent(s_burst), 17u);
}

// Uniform ring of 4 sites, 5 ms links at 10 Gbps, G = 16 MiB: each of the 6 ring steps moves
// one 4 MiB segment (4 chunks; bursts of 3: 3 + 1) over access up, WAN, access down, and
// the next step starts when it has arrived: T = 6 x (one segment's latency).
TEST(BurstTiming, RingAllReduceErrsBySixSegmentErrors) {
  Platform p = make_platform({"a", "b", "c", "d"},
                             {{0, 1, 5 * kMs}, {1, 2, 5 * kMs}, {2, 3, 5 * kMs}, {3, 0, 5 * kMs}},
                             10'000'000'000);
  RunOptions o;
  o.gradient_bytes = 16 << 20;
  o.chunk_bytes = 1 << 20;
  Schedule ring;
  ring.name = "ring";
  ring.collective = Collective::kRing;
  ring.rounds.push_back(Round{{Group{{0, 1, 2, 3}}}});
  const std::uint64_t k = 3;
  const auto twins = run_twins(p, ring, o, k);
  const std::vector<WanLinkParams> path = {access_link(p.sites[0]), p.links[0].params,
                                           access_link(p.sites[1])};
  const std::uint64_t segment = o.gradient_bytes / 4;
  const std::uint64_t constant = 2 * p.sites[0].cluster.access_delay_ps + 5 * kMs;
  const std::uint64_t exact = 6 * (constant + pipeline_ps(path, segment, o.chunk_bytes, 1));
  const std::uint64_t burst = 6 * (constant + pipeline_ps(path, segment, o.chunk_bytes, k));
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(receiver_time(*twins.exact, d), ps_time(exact)) << d;
    EXPECT_EQ(receiver_time(*twins.burst, d), ps_time(burst)) << d;
  }
  EXPECT_GT(burst, exact);
  EXPECT_LE(burst - exact, 6 * full_burst_error_ps(chunk_ser(path, o.chunk_bytes), k));
}

// A group of two through the FPGAs, paced: each member releases its transactions every
// pacing interval D from the agreed start (no offsets for two), and a transaction that never
// queues (D above every stage's service) completes one path latency later: access up,
// WAN link, the receiver's FPGA pipeline (its bytes at the pipeline's throughput, then its
// latency), access down. So the result is complete at (M - 1) D + L(last), and full bursts
// err by (K - 1)(sum_k s_k - D) (the pipeline fill less one interval saved at the end).
std::uint64_t pair_latency_ps(const Platform& p, std::uint64_t bytes, std::uint64_t c,
                              std::uint64_t k) {
  const auto& fpga = p.sites[1].fpga;
  std::uint64_t total =
      fpga.latency_ps() + serialization_ps(bytes, fpga.throughput_bytes_per_s() * 8);
  for (const auto& link : {access_link(p.sites[0]), p.links[0].params, access_link(p.sites[1])})
    total += link.delay_ps +
             serialization_ps(transaction_wire(bytes, c, k, link).back(), link.bandwidth_bps);
  return total;
}

TEST(BurstTiming, PacedPairThroughTheFpgasErrsByTheClosedForm) {
  const Platform p = make_platform({"a", "b"}, {{0, 1, 10 * kMs}}, 100'000'000'000);
  RunOptions o;
  o.chunk_bytes = 1'000'000;
  o.gradient_bytes = 16 * o.chunk_bytes;
  o.alignment = SendAlignment::kNone;
  const std::uint64_t k = 4;
  const auto twins = run_twins(p, testing::one_group({0, 1}), o, k);
  const auto interval = [](const NetworkSystem& sys) {
    return sys.round_plans()[0].groups[0].pacing_interval_ps;
  };
  const std::uint64_t d1 = interval(*twins.exact), dk = interval(*twins.burst);
  const std::uint64_t exact = 15 * d1 + pair_latency_ps(p, o.chunk_bytes, o.chunk_bytes, 1);
  const std::uint64_t burst = 3 * dk + pair_latency_ps(p, k * o.chunk_bytes, o.chunk_bytes, k);
  for (int site = 0; site < 2; ++site) {
    const auto& e = twins.exact->sites()[site].cluster->steps().at(0);
    const auto& b = twins.burst->sites()[site].cluster->steps().at(0);
    EXPECT_EQ(e.end - e.agreed_start, ps_time(exact)) << site;
    EXPECT_EQ(b.end - b.agreed_start, ps_time(burst)) << site;
  }
  // The formula, with the stages' services s_k (FPGA included) of one chunk: the burst's
  // interval is K D up to the header count of K x chunk in the control plane's rate and
  // the ps rounding of each service.
  std::uint64_t services = pair_latency_ps(p, o.chunk_bytes, o.chunk_bytes, 1);
  for (const auto& link : {access_link(p.sites[0]), p.links[0].params, access_link(p.sites[1])})
    services -= link.delay_ps;
  services -= p.sites[1].fpga.latency_ps();
  const auto formula = static_cast<std::int64_t>((k - 1) * (services - d1));
  const auto error = static_cast<std::int64_t>(burst) - static_cast<std::int64_t>(exact);
  const auto interval_shift =
      3 * (static_cast<std::int64_t>(dk) - static_cast<std::int64_t>(k * d1));
  EXPECT_LE(std::llabs(error - formula - interval_shift), static_cast<long long>(4 * k));
  EXPECT_GT(formula, 0);
}

std::uint64_t sum_links(const NetworkSystem& sys, std::uint64_t (WanLink::*counter)() const) {
  std::uint64_t total = 0;
  for (const auto& d : sys.links()) total += (*d.link.*counter)();
  for (const auto& s : sys.sites())
    total += (*s.access_up.*counter)() + (*s.access_down.*counter)();
  return total;
}

// Triads on nine cities, functional, 17 chunks of 64 KiB (the last 20 KiB) in bursts of 4
// (4, 4, 4, 4, 1): every link carries the same chunks, payload and wire bytes (each chunk
// keeps its packet headers), every FPGA reduces the same chunks from the same
// contributions, and every site ends with the same averaged gradient, exactly.
TEST(BurstConservation, TriadsCarryTheSameChunksBytesAndSums) {
  const Platform p = load_platform(std::string(AGGNET_SOURCE_DIR) + "/platforms/nine_city.yaml");
  RunOptions o;
  o.chunk_bytes = 64 << 10;
  o.gradient_bytes = 16 * o.chunk_bytes + (20 << 10);
  o.functional = true;
  o.steps = 2;
  const auto twins = run_twins(p, make_schedule("triads", p), o, 4);
  const NetworkSystem& e = *twins.exact;
  const NetworkSystem& b = *twins.burst;
  EXPECT_EQ(sum_links(b, &WanLink::chunks), sum_links(e, &WanLink::chunks));
  EXPECT_EQ(sum_links(b, &WanLink::payload_bytes), sum_links(e, &WanLink::payload_bytes));
  EXPECT_EQ(sum_links(b, &WanLink::wire_bytes_sent), sum_links(e, &WanLink::wire_bytes_sent));
  EXPECT_EQ(sum_links(b, &WanLink::control_messages), sum_links(e, &WanLink::control_messages));
  for (std::size_t i = 0; i < e.links().size(); ++i) {
    EXPECT_EQ(b.links()[i].link->chunks(), e.links()[i].link->chunks()) << i;
    EXPECT_EQ(b.links()[i].link->wire_bytes_sent(), e.links()[i].link->wire_bytes_sent()) << i;
  }
  for (std::size_t s = 0; s < e.sites().size(); ++s) {
    const auto& se = e.sites()[s];
    const auto& sb = b.sites()[s];
    EXPECT_EQ(se.fpga->reduced_chunks(), 2u * 17u);  // two steps, one reduced chunk each
    EXPECT_EQ(sb.fpga->reduced_chunks(), se.fpga->reduced_chunks());
    EXPECT_EQ(sb.fpga->buffer().slot_bytes(), 4 * se.fpga->buffer().slot_bytes());  // K slots
    EXPECT_EQ(sb.fpga->contributions(), se.fpga->contributions());
    EXPECT_EQ(sb.cluster->functional_checks(), se.cluster->functional_checks());
    EXPECT_EQ(sb.cluster->functional_mismatches(), 0u);
    EXPECT_EQ(se.cluster->functional_mismatches(), 0u);
    EXPECT_EQ(sb.cluster->result(), se.cluster->result());
    EXPECT_EQ(sb.cluster->result().size(), o.gradient_bytes / 4);
  }
  EXPECT_EQ(violations(check_invariants(b)), "");
  EXPECT_EQ(violations(check_invariants(e)), "");
}

}  // namespace
}  // namespace aggnet
