// ComputeCluster alone: a recording harness stands in for the whole network. It records
// every chunk the cluster emits (with the instant), answers each contribution with the
// reduced chunk an aggregator would deliver after a fixed delay, injects the other
// members' ready and credit messages at chosen instants, and plays the ring predecessor.
// Expectations are exact ps: compute phase, chunk count and sizes, pacing interval, send
// offsets after the agreed start, credit clocking and ring segment sizes.
#include <gtest/gtest.h>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "module_harness.h"
#include "modules/cluster/compute_cluster.h"
#include "modules/core/chunk.h"
#include "modules/core/event_calendar.h"
#include "modules/core/time.h"

namespace aggnet {
namespace {

constexpr std::uint64_t kUs = 1'000'000;  // ps per us
constexpr std::uint64_t kMs = 1'000'000'000;

/// The network as seen from one cluster (site 0).
struct Network : sc_core::sc_module {
  struct Seen {
    std::uint64_t at_ps;
    ChunkExtension chunk;
  };
  tlm_utils::simple_target_socket<Network> from_cluster{"from_cluster"};
  tlm_utils::simple_initiator_socket<Network> to_cluster{"to_cluster"};

  std::vector<Seen> seen;  ///< everything the cluster emitted
  /// Messages delivered to the cluster at the given instants (other members' ready
  /// messages and credit grants).
  std::vector<std::pair<std::uint64_t, ChunkExtension>> injections;
  /// Group results: one reduced chunk per (step, chunk) this long after the first copy.
  bool reply_results = true;
  std::uint64_t reply_delay_ps = 10 * kUs;
  std::vector<int> group;  ///< members (for functional sums)
  bool corrupt = false;    ///< functional: add 1 to the first value of chunk 0's result
  std::uint64_t chunk_bytes = 0;
  /// Credit mode: each contribution returns one credit from each of these this late.
  std::vector<int> credit_from;
  std::uint64_t credit_return_ps = 0;
  /// Ring: on the first chunk of ring step r, the predecessor's step-r segment arrives
  /// reply_delay_ps later, in ring_replies[r] chunks.
  std::map<std::uint32_t, int> ring_replies;
  int ring_predecessor = -1;

  ChunkPool& pool;
  SC_HAS_PROCESS(Network);
  Network(sc_core::sc_module_name n, ChunkPool& p)
      : sc_module(n), pool(p), peq_(this, &Network::deliver) {
    from_cluster.register_nb_transport_fw(this, &Network::fw);
    SC_THREAD(inject);
  }

 private:
  tlm::tlm_sync_enum fw(tlm::tlm_generic_payload& t, tlm::tlm_phase&, sc_core::sc_time& delay) {
    EXPECT_EQ(delay, sc_core::SC_ZERO_TIME);
    const ChunkExtension c = chunk_of(t);
    t.release();
    seen.push_back({to_ps(EventCalendar::now()), c});
    if (c.kind == ChunkKind::kContribution) {
      if (reply_results && replied_.insert({c.step, c.chunk}).second) reply(c);
      for (int d : credit_from) {
        ChunkExtension credit;
        credit.kind = ChunkKind::kCredit;
        credit.src_site = d;
        credit.dst_site = 0;
        credit.step = c.step;
        credit.credits = ++freed_[{c.step, d}];  // cumulative: slots freed so far
        post(credit, credit_return_ps);
      }
    } else if (c.kind == ChunkKind::kRingSegment &&
               ring_started_.insert({c.step, c.ring_step}).second) {
      for (int i = 0; i < ring_replies.at(c.ring_step); ++i) {
        ChunkExtension r;
        r.kind = ChunkKind::kRingSegment;
        r.src_site = ring_predecessor;
        r.dst_site = 0;
        r.step = c.step;
        r.ring_step = c.ring_step;
        r.chunk = static_cast<std::uint32_t>(i);
        post(r, reply_delay_ps);
      }
    }
    return tlm::TLM_COMPLETED;
  }
  void reply(const ChunkExtension& c) {
    ChunkExtension r = c;
    r.kind = ChunkKind::kReduced;
    r.src_site = 0;
    r.dst_site = 0;
    r.tree_id = -1;
    r.contributions = c.group_size - 1;
    if (c.data) {
      auto sum = std::make_shared<std::vector<float>>(c.payload_bytes / 4, 0.0f);
      for (std::size_t k = 0; k < sum->size(); ++k) {
        for (int s : group)
          if (s != 0)
            (*sum)[k] += ComputeCluster::gradient_value(s, c.step, c.chunk * chunk_bytes / 4 + k);
      }
      if (corrupt && c.chunk == 0) (*sum)[0] += 1;
      r.data = sum;
    }
    post(r, reply_delay_ps);
  }
  void post(const ChunkExtension& c, std::uint64_t delay_ps) {
    auto& t = pool.allocate();
    chunk_of(t) = c;
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    peq_.notify(t, phase, EventCalendar::kernel_delay(ps_time(delay_ps)));
  }
  void deliver(tlm::tlm_generic_payload& t, const tlm::tlm_phase&) { send(t); }
  void send(tlm::tlm_generic_payload& t) {
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
    to_cluster->nb_transport_fw(t, phase, zero);
  }
  void inject() {
    for (const auto& [at, c] : injections) {
      wait(ps_time(at) - sc_core::sc_time_stamp());
      auto& t = pool.allocate();
      chunk_of(t) = c;
      send(t);
    }
  }
  tlm_utils::peq_with_cb_and_phase<Network> peq_;
  std::set<std::pair<int, std::uint32_t>> replied_;
  std::map<std::pair<int, int>, std::uint32_t> freed_;  // (step, receiver) -> credits sent
  std::set<std::pair<int, std::uint32_t>> ring_started_;
};

using testing::Probe;

struct Bench {
  ChunkPool pool;
  ComputeCluster cluster;
  Network net;
  Probe probe;
  Bench(const ComputeClusterConfig& config, const std::string& prefix = "")
      : cluster((prefix + "cluster").c_str(), config, pool),
        net((prefix + "net").c_str(), pool),
        probe((prefix + "probe").c_str()) {
    cluster.out.bind(net.from_cluster);
    net.to_cluster.bind(cluster.in);
    net.chunk_bytes = config.chunk_bytes;
    if (!config.rounds.empty()) net.group = config.rounds[0].group;
  }
  /// The cluster's emissions of one kind, in order.
  std::vector<Network::Seen> emitted(ChunkKind kind) const {
    std::vector<Network::Seen> out;
    for (const auto& s : net.seen)
      if (s.chunk.kind == kind) out.push_back(s);
    return out;
  }
};

ClusterRoundPlan plan(std::vector<int> group, std::uint64_t interval_ps) {
  ClusterRoundPlan p;
  p.group = std::move(group);
  p.tree_id = 5;
  p.pacing_interval_ps = interval_ps;
  return p;
}

ComputeClusterConfig config(std::uint64_t compute_ps, std::uint64_t gradient, std::uint64_t chunk,
                            std::vector<ClusterRoundPlan> rounds, int steps = 1) {
  ComputeClusterConfig c;
  c.site = 0;
  c.params.compute_time_ps = compute_ps;
  c.gradient_bytes = gradient;
  c.chunk_bytes = chunk;
  c.steps = steps;
  c.rounds = std::move(rounds);
  return c;
}

TEST(ComputeCluster, ComputePhaseThenPacedSendsAndTheNextStepStartsWhenTheResultIsComplete) {
  // Period of two rounds: a pair {0, 1}, then 0 alone (sits out). Three steps, 3 ms
  // compute, 3 chunks 1 us apart, results 10 us after each chunk.
  Bench b(config(3 * kMs, 3 * 4096, 4096, {plan({0, 1}, 1 * kUs), plan({0}, 0)}, 3));
  std::vector<int> states;
  auto sample = [&] { states.push_back(b.cluster.state()); };
  b.probe.checks = {{1 * kMs, sample}, {3 * kMs + 5 * kUs, sample}};
  sc_core::sc_start();
  ASSERT_TRUE(b.cluster.finished());
  const auto& r = b.cluster.steps();
  ASSERT_EQ(r.size(), 3u);
  // Step 0: compute [0, 3 ms]; chunks at 3 ms + {0, 1, 2} us; results at +10 us each.
  const std::uint64_t end0 = 3 * kMs + 2 * kUs + 10 * kUs;
  EXPECT_EQ(r[0].round, 0);
  EXPECT_TRUE(r[0].communicated);
  EXPECT_EQ(r[0].start, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(r[0].send_start, ps_time(3 * kMs));
  EXPECT_EQ(r[0].agreed_start, ps_time(3 * kMs));
  EXPECT_EQ(r[0].first_send, ps_time(3 * kMs));
  EXPECT_EQ(r[0].first_result, ps_time(3 * kMs + 10 * kUs));
  EXPECT_EQ(r[0].last_result, ps_time(end0));
  EXPECT_EQ(r[0].end, ps_time(end0));
  // Step 1 sits out: compute only.
  EXPECT_EQ(r[1].round, 1);
  EXPECT_FALSE(r[1].communicated);
  EXPECT_EQ(r[1].start, ps_time(end0));
  EXPECT_EQ(r[1].send_start, ps_time(end0 + 3 * kMs));
  EXPECT_EQ(r[1].end, ps_time(end0 + 3 * kMs));
  // Step 2: round 0 again.
  const std::uint64_t start2 = end0 + 6 * kMs;
  EXPECT_EQ(r[2].round, 0);
  EXPECT_EQ(r[2].start, ps_time(end0 + 3 * kMs));
  EXPECT_EQ(r[2].send_start, ps_time(start2));
  EXPECT_EQ(r[2].end, ps_time(start2 + 12 * kUs));

  const auto sent = b.emitted(ChunkKind::kContribution);
  ASSERT_EQ(sent.size(), 6u);
  for (std::uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(sent[i].at_ps, 3 * kMs + i * kUs);
    EXPECT_EQ(sent[i].chunk.step, 0);
    EXPECT_EQ(sent[3 + i].at_ps, start2 + i * kUs);
    EXPECT_EQ(sent[3 + i].chunk.step, 2);
  }
  EXPECT_EQ(b.net.seen.size(), 6u);             // no ready messages without an aligned start
  EXPECT_EQ(states, (std::vector<int>{1, 2}));  // computing; communicating
  EXPECT_EQ(b.cluster.state(), 0);
  EXPECT_EQ(b.cluster.duplicate_results(), 0u);
}

TEST(ComputeCluster, ChunkCountAndSizesWithAShortLastChunk) {
  // 10'340 B in 4 KiB chunks: ceil(10'340 / 4096) = 3 chunks of 4096, 4096 and 2148 B.
  Bench odd(config(0, 10'340, 4096, {plan({0, 1, 2}, 1 * kUs)}), "odd_");
  // 8 KiB: exactly 2 chunks, no empty third one.
  Bench even(config(0, 8192, 4096, {plan({0, 1, 2}, 1 * kUs)}), "even_");
  sc_core::sc_start();
  const auto sent = odd.emitted(ChunkKind::kContribution);
  ASSERT_EQ(sent.size(), 3u);
  const std::uint64_t bytes[] = {4096, 4096, 2148};
  for (std::uint32_t i = 0; i < 3; ++i) {
    const auto& c = sent[i].chunk;
    EXPECT_EQ(c.payload_bytes, bytes[i]) << i;
    EXPECT_EQ(c.chunk, i);
    EXPECT_EQ(c.src_site, 0);
    EXPECT_EQ(c.dst_site, -1);  // multicast: the tree carries it
    EXPECT_EQ(c.tree_id, 5);
    EXPECT_EQ(c.group_size, 3);
    EXPECT_EQ(c.contributions, 1);
    EXPECT_EQ(c.step, 0);
    EXPECT_FALSE(c.data);  // timing mode
  }
  const auto sent_even = even.emitted(ChunkKind::kContribution);
  ASSERT_EQ(sent_even.size(), 2u);
  EXPECT_EQ(sent_even[0].chunk.payload_bytes, 4096u);
  EXPECT_EQ(sent_even[1].chunk.payload_bytes, 4096u);
  EXPECT_TRUE(odd.cluster.finished());
  EXPECT_TRUE(even.cluster.finished());
}

TEST(ComputeCluster, PacedChunksLeaveExactlyOneIntervalApart) {
  Bench b(config(1 * kMs, 5 * 1024, 1024, {plan({0, 1}, 7'777)}));
  sc_core::sc_start();
  const auto sent = b.emitted(ChunkKind::kContribution);
  ASSERT_EQ(sent.size(), 5u);
  for (std::uint64_t i = 0; i < 5; ++i) EXPECT_EQ(sent[i].at_ps, 1 * kMs + i * 7'777) << i;
}

ChunkExtension ready_from(int site, std::uint64_t stamp_ps) {
  ChunkExtension c;
  c.kind = ChunkKind::kReady;
  c.src_site = site;
  c.dst_site = 0;
  c.stamp_ps = stamp_ps;
  return c;
}

TEST(ComputeCluster, AlignedStartFirstChunkLeavesAtAgreedStartPlusItsOffset) {
  // Triad, multicast. Site 0 is ready at 1 ms; 2 was ready at 2 ms (heard at 2.5 ms),
  // 1 at 3.5 ms (heard at 4 ms). Agreed start = latest ready 3.5 ms + start delay 2 ms
  // = 5.5 ms; the offset 250 us puts the first chunk at 5.75 ms.
  ClusterRoundPlan p = plan({0, 1, 2}, 100 * kUs);
  p.aligned_start = true;
  p.start_delay_ps = 2 * kMs;
  p.send_offset_ps = {{1, 250 * kUs}, {2, 250 * kUs}};
  Bench b(config(1 * kMs, 3 * 4096, 4096, {p}));
  b.net.injections = {{2500 * kUs, ready_from(2, 2 * kMs)}, {4 * kMs, ready_from(1, 3500 * kUs)}};
  std::vector<int> states;
  auto sample = [&] { states.push_back(b.cluster.state()); };
  // Computing; waiting for the ready messages (communicating); waiting for the offset;
  // between chunks 0 and 1 (communicating again).
  b.probe.checks = {
      {500 * kUs, sample}, {3 * kMs, sample}, {5600 * kUs, sample}, {5800 * kUs, sample}};
  sc_core::sc_start();
  const auto& r = b.cluster.steps().at(0);
  EXPECT_EQ(r.send_start, ps_time(1 * kMs));
  EXPECT_EQ(r.agreed_start, ps_time(5500 * kUs));
  EXPECT_EQ(r.first_send, ps_time(5750 * kUs));
  const auto sent = b.emitted(ChunkKind::kContribution);
  ASSERT_EQ(sent.size(), 3u);
  for (std::uint64_t i = 0; i < 3; ++i) EXPECT_EQ(sent[i].at_ps, 5750 * kUs + i * 100 * kUs);
  // Its own ready message: one, on its multicast tree, at its ready time, stamped with it.
  const auto ready = b.emitted(ChunkKind::kReady);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].at_ps, 1 * kMs);
  EXPECT_EQ(ready[0].chunk.stamp_ps, 1 * kMs);
  EXPECT_EQ(ready[0].chunk.src_site, 0);
  EXPECT_EQ(ready[0].chunk.dst_site, -1);
  EXPECT_EQ(ready[0].chunk.tree_id, 5);
  EXPECT_EQ(ready[0].chunk.payload_bytes, 64u);
  EXPECT_EQ(states, (std::vector<int>{1, 2, 3, 2}));
  double offset_wait = -1;
  for (const auto& s : b.cluster.statistics())
    if (s.name == "offset_wait_s") offset_wait = s.value;
  EXPECT_DOUBLE_EQ(offset_wait, 250e-6);
}

TEST(ComputeCluster, AlignedStartWithoutMulticastSendsAReadyMessageToEachMember) {
  ClusterRoundPlan p = plan({0, 1, 2}, 100 * kUs);
  p.aligned_start = true;
  p.start_delay_ps = 2 * kMs;
  ComputeClusterConfig c = config(1 * kMs, 4096, 4096, {p});
  c.multicast = false;
  Bench b(c);
  b.net.injections = {{1500 * kUs, ready_from(2, 1 * kMs)}, {1500 * kUs, ready_from(1, 1 * kMs)}};
  sc_core::sc_start();
  const auto ready = b.emitted(ChunkKind::kReady);
  ASSERT_EQ(ready.size(), 2u);
  std::set<int> to;
  for (const auto& s : ready) {
    to.insert(s.chunk.dst_site);
    EXPECT_EQ(s.chunk.tree_id, -1);
    EXPECT_EQ(s.at_ps, 1 * kMs);
    EXPECT_EQ(s.chunk.stamp_ps, 1 * kMs);
  }
  EXPECT_EQ(to, (std::set<int>{1, 2}));
  EXPECT_EQ(b.cluster.steps().at(0).agreed_start, ps_time(3 * kMs));
}

TEST(ComputeCluster, AlignedStartCountsFromItsOwnReadyWhenItIsTheLast) {
  // The others were ready at 0.2 ms (heard at 0.4 ms); site 0 is ready last at 1 ms:
  // agreed start = 1 ms + 2 ms. No offsets: the first chunk leaves then.
  ClusterRoundPlan p = plan({0, 1, 2}, 100 * kUs);
  p.aligned_start = true;
  p.start_delay_ps = 2 * kMs;
  Bench b(config(1 * kMs, 4096, 4096, {p}));
  b.net.injections = {{400 * kUs, ready_from(1, 200 * kUs)}, {400 * kUs, ready_from(2, 200 * kUs)}};
  sc_core::sc_start();
  const auto& r = b.cluster.steps().at(0);
  EXPECT_EQ(r.agreed_start, ps_time(3 * kMs));
  EXPECT_EQ(r.first_send, ps_time(3 * kMs));
  ASSERT_EQ(b.emitted(ChunkKind::kContribution).size(), 1u);
  EXPECT_EQ(b.emitted(ChunkKind::kContribution)[0].at_ps, 3 * kMs);
}

// VCD state 3 means "waiting for its send offset" (docs/waveforms.md, compute_cluster.h);
// once the first chunk has left, the gaps between paced chunks are communication (2).
// (Found reading 3 in every pacing gap: wait_until() set state 3 for any wait.)
TEST(ComputeCluster, StateIsCommunicatingBetweenPacedChunksAfterTheOffset) {
  // No offsets, no aligned start: chunks at 1.0, 1.1, 1.2 ms.
  Bench b(config(1 * kMs, 3 * 4096, 4096, {plan({0, 1}, 100 * kUs)}));
  std::vector<int> states;
  auto sample = [&] { states.push_back(b.cluster.state()); };
  b.probe.checks = {{1050 * kUs, sample}, {1150 * kUs, sample}};
  sc_core::sc_start();
  EXPECT_EQ(b.cluster.steps().at(0).first_send, ps_time(1 * kMs));
  EXPECT_EQ(states, (std::vector<int>{2, 2}));
}

TEST(ComputeCluster, WithoutMulticastEachReceiverGetsItsOwnStreamAtItsOwnOffset) {
  // Triad without multicast: a stream to 1 from T + 300 us and one to 2 from T + 100 us,
  // each a chunk every 500 us (T = 1 ms, no aligned start). Merged in time order:
  // 2@1.1, 1@1.3, 2@1.6, 1@1.8, 2@2.1, 1@2.3 ms.
  ClusterRoundPlan p = plan({0, 1, 2}, 500 * kUs);
  p.send_offset_ps = {{1, 300 * kUs}, {2, 100 * kUs}};
  ComputeClusterConfig c = config(1 * kMs, 3 * 4096, 4096, {p});
  c.multicast = false;
  Bench b(c);
  sc_core::sc_start();
  const auto sent = b.emitted(ChunkKind::kContribution);
  ASSERT_EQ(sent.size(), 6u);
  const std::uint64_t at_us[] = {1100, 1300, 1600, 1800, 2100, 2300};
  const int dst[] = {2, 1, 2, 1, 2, 1};
  const std::uint32_t chunk[] = {0, 0, 1, 1, 2, 2};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(sent[i].at_ps, at_us[i] * kUs) << i;
    EXPECT_EQ(sent[i].chunk.dst_site, dst[i]) << i;
    EXPECT_EQ(sent[i].chunk.tree_id, -1) << i;  // unicast copy
    EXPECT_EQ(sent[i].chunk.chunk, chunk[i]) << i;
  }
  const auto& r = b.cluster.steps().at(0);
  EXPECT_EQ(r.agreed_start, ps_time(1 * kMs));
  EXPECT_EQ(r.first_send, ps_time(1100 * kUs));  // the earliest stream
  EXPECT_TRUE(b.cluster.finished());
}

ChunkExtension grant_from(int site, std::uint32_t credits) {
  ChunkExtension c;
  c.kind = ChunkKind::kGrant;
  c.src_site = site;
  c.dst_site = 0;
  c.credits = credits;
  return c;
}

TEST(ComputeCluster, CreditModeSendsOnlyWithACreditFromEveryReceiver) {
  // Triad, credit flow control, 4 chunks, ready at 1 ms. Site 0 grants its 5 slots to 1
  // and 2 at once; 2 grants 3 credits (heard at 1.4 ms), 1 grants 2 (heard at 1.5 ms):
  // chunks 0 and 1 leave at 1.5 ms and spend 1's window. Each chunk returns a credit from
  // both receivers 50 us later, so chunks 2 and 3 leave at 1.55 ms.
  ClusterRoundPlan p = plan({0, 1, 2}, 0);
  p.own_slots = 5;
  ComputeClusterConfig c = config(1 * kMs, 4 * 4096, 4096, {p});
  c.credit = true;
  Bench b(c);
  b.net.injections = {{1400 * kUs, grant_from(2, 3)}, {1500 * kUs, grant_from(1, 2)}};
  b.net.credit_from = {1, 2};
  b.net.credit_return_ps = 50 * kUs;
  sc_core::sc_start();
  const auto grants = b.emitted(ChunkKind::kGrant);
  ASSERT_EQ(grants.size(), 2u);
  std::set<int> to;
  for (const auto& s : grants) {
    to.insert(s.chunk.dst_site);
    EXPECT_EQ(s.at_ps, 1 * kMs);
    EXPECT_EQ(s.chunk.credits, 5u);
    EXPECT_EQ(s.chunk.src_site, 0);
    EXPECT_EQ(s.chunk.step, 0);
  }
  EXPECT_EQ(to, (std::set<int>{1, 2}));
  const auto sent = b.emitted(ChunkKind::kContribution);
  ASSERT_EQ(sent.size(), 4u);
  const std::uint64_t at_us[] = {1500, 1500, 1550, 1550};
  for (std::uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(sent[i].at_ps, at_us[i] * kUs) << i;
    EXPECT_EQ(sent[i].chunk.chunk, i);
  }
  EXPECT_EQ(b.cluster.steps().at(0).end, ps_time(1550 * kUs + 10 * kUs));
  EXPECT_TRUE(b.cluster.finished());
}

TEST(ComputeCluster, ARingOfMoreThan512SitesKeepsItsStepsApart) {
  // 520 sites: 1,038 ring steps of one 4-byte chunk each, the predecessor answering each
  // 10 us after site 0 sends it. A chunk of the next training step's ring step 0 arrives
  // early (at 1 ms + 5 us): it must wait for that step, not count for ring step 1,024 of
  // this one, which therefore still leaves 10 us after ring step 1,023's.
  const int n = 520;
  ComputeClusterConfig c = config(1 * kMs, 4 * n, 4, {}, 2);
  c.ring = true;
  for (int s = 0; s < n; ++s) c.order.push_back(s);
  Bench b(c);
  for (std::uint32_t r = 0; r < 2 * (n - 1); ++r) b.net.ring_replies[r] = 1;
  b.net.ring_predecessor = n - 1;
  ChunkExtension early;
  early.kind = ChunkKind::kRingSegment;
  early.src_site = n - 1;
  early.dst_site = 0;
  early.step = 1;
  early.ring_step = 0;
  early.segment = n - 1;
  early.payload_bytes = 4;
  b.net.injections = {{1 * kMs + 5 * kUs, early}};
  sc_core::sc_start();
  ASSERT_TRUE(b.cluster.finished());
  std::map<std::uint32_t, std::uint64_t> step0_sent_ps;
  for (const auto& e : b.emitted(ChunkKind::kRingSegment))
    if (e.chunk.step == 0) step0_sent_ps[e.chunk.ring_step] = e.at_ps;
  ASSERT_EQ(step0_sent_ps.size(), 2u * (n - 1));
  for (std::uint32_t r : {1023u, 1024u, 1025u})
    EXPECT_EQ(step0_sent_ps.at(r), 1 * kMs + r * 10 * kUs) << r;
}

TEST(ComputeCluster, RingSegmentSizesAndStepSynchronousSends) {
  // Ring 0 -> 1 -> 2 -> 0 seen from site 0, G = 44 B = 11 floats: segments of 4, 4 and 3
  // floats = 16, 16 and 12 B, in 12 B chunks (16 B = 12 + 4, 12 B = 12).
  // Reduce-scatter: step 0 sends segment 0, receives 2; step 1 sends 2, receives 1.
  // All-gather: step 2 sends 1, receives 0; step 3 sends 0, receives 2.
  // Site 2 (the predecessor) answers each step 10 us later with the chunks of the
  // segment 0 expects: 1, 2, 2, 1.
  ComputeClusterConfig c = config(1 * kMs, 44, 12, {});
  c.ring = true;
  c.order = {0, 1, 2};
  Bench b(c);
  b.net.ring_replies = {{0, 1}, {1, 2}, {2, 2}, {3, 1}};
  b.net.ring_predecessor = 2;
  sc_core::sc_start();
  ASSERT_TRUE(b.cluster.finished());
  const auto sent = b.emitted(ChunkKind::kRingSegment);
  struct Expected {
    std::uint32_t ring_step, segment, chunk;
    std::uint64_t bytes;
  };
  const std::vector<Expected> expected = {{0, 0, 0, 12}, {0, 0, 1, 4}, {1, 2, 0, 12},
                                          {2, 1, 0, 12}, {2, 1, 1, 4}, {3, 0, 0, 12},
                                          {3, 0, 1, 4}};
  ASSERT_EQ(sent.size(), expected.size());
  for (std::size_t i = 0; i < sent.size(); ++i) {
    const auto& e = expected[i];
    const auto& s = sent[i];
    EXPECT_EQ(s.chunk.ring_step, e.ring_step) << i;
    EXPECT_EQ(s.chunk.segment, e.segment) << i;
    EXPECT_EQ(s.chunk.chunk, e.chunk) << i;
    EXPECT_EQ(s.chunk.payload_bytes, e.bytes) << i;
    EXPECT_EQ(s.chunk.dst_site, 1) << i;  // the successor
    EXPECT_EQ(s.chunk.src_site, 0) << i;
    // Step r leaves once step r - 1's segment is in: at 1 ms + r x 10 us.
    EXPECT_EQ(s.at_ps, 1 * kMs + e.ring_step * 10 * kUs) << i;
  }
  const auto& r = b.cluster.steps().at(0);
  EXPECT_TRUE(r.communicated);
  EXPECT_EQ(r.end, ps_time(1 * kMs + 4 * 10 * kUs));
  EXPECT_EQ(r.first_result, ps_time(1 * kMs + 10 * kUs));
  EXPECT_EQ(r.last_result, ps_time(1 * kMs + 40 * kUs));
}

TEST(ComputeCluster, FunctionalResultIsTheGroupAverageAndAWrongSumIsCaught) {
  // Triad, 8 floats in two 16 B chunks. The harness returns the exact sum of sites 1 and
  // 2's values; a second bench returns chunk 0 off by one.
  ComputeClusterConfig c = config(0, 32, 16, {plan({0, 1, 2}, 1 * kUs)});
  c.functional = true;
  Bench good(c, "good_");
  Bench bad(c, "bad_");
  bad.net.corrupt = true;
  sc_core::sc_start();
  // What it sent: its own gradient, chunk by chunk.
  const auto sent = good.emitted(ChunkKind::kContribution);
  ASSERT_EQ(sent.size(), 2u);
  for (std::uint32_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(sent[i].chunk.data);
    ASSERT_EQ(sent[i].chunk.data->size(), 4u);
    for (std::uint64_t k = 0; k < 4; ++k)
      EXPECT_EQ((*sent[i].chunk.data)[k], ComputeCluster::gradient_value(0, 0, 4 * i + k));
  }
  EXPECT_EQ(good.cluster.functional_checks(), 2u);
  EXPECT_EQ(good.cluster.functional_mismatches(), 0u);
  const auto& result = good.cluster.result();
  ASSERT_EQ(result.size(), 8u);
  for (std::uint64_t j = 0; j < 8; ++j) {
    // Small integers: the sum is exact, then one rounding of the division.
    const float sum = ComputeCluster::gradient_value(0, 0, j) +
                      ComputeCluster::gradient_value(1, 0, j) +
                      ComputeCluster::gradient_value(2, 0, j);
    EXPECT_FLOAT_EQ(result[j], sum / 3.0f) << j;
  }
  EXPECT_EQ(bad.cluster.functional_checks(), 2u);
  EXPECT_EQ(bad.cluster.functional_mismatches(), 1u);
}

}  // namespace
}  // namespace aggnet
