// FpgaAggregator alone: a feeder posts contributions at known instants, recorders stand
// for the access link to the cluster (`out`) and the switch (`to_network`), and a probe
// reads the buffer at chosen instants. Expectations are exact ps from the closed forms
// (docs/simulation-semantics.md, "FPGA aggregator"):
//   service   = ceil(bytes / throughput) per contribution, throughput = datapath/8 x clock
//   start     = max(arrival, pipeline free)
//   departure = end of the last contribution's service + ceil(latency_cycles / clock)
// Default FPGA: 512 bit x 500 MHz = 32 GB/s, so 1 MiB takes 1'048'576 / 32 = 32'768 ns;
// 64 cycles at 500 MHz = 128 ns.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <systemc>
#include <tuple>
#include <utility>
#include <vector>

#include "module_harness.h"
#include "modules/core/chunk.h"
#include "modules/core/event_calendar.h"
#include "modules/core/time.h"
#include "modules/fpga/fpga_aggregator.h"

namespace aggnet {
namespace {

constexpr std::uint64_t kNs = 1000;       // ps per ns
constexpr std::uint64_t kUs = 1'000'000;  // ps per us
constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kService1MiB = 32'768 * kNs;  // 1 MiB at 32 GB/s
constexpr std::uint64_t kLatency = 128 * kNs;         // 64 cycles at 500 MHz

using Feeder = testing::ChunkSource;
using Recorder = testing::ChunkRecorder;
// Checks at instants where everything else there is a matter of delta order sit 1 ps off
// the events they bracket.
using testing::Probe;

/// The aggregator under test with its harness; `prefix` keeps two benches apart.
struct Bench {
  ChunkPool pool;
  Feeder feeder;
  FpgaAggregator fpga;
  Recorder cluster;
  Recorder network;
  Probe probe;
  explicit Bench(const FpgaAggregatorConfig& config, const std::string& prefix = "")
      : feeder((prefix + "feeder").c_str(), pool),
        fpga((prefix + "fpga").c_str(), config, pool),
        cluster((prefix + "cluster").c_str()),
        network((prefix + "network").c_str()),
        probe((prefix + "probe").c_str()) {
    feeder.out.bind(fpga.in);
    fpga.out.bind(cluster.in);
    fpga.to_network.bind(network.in);
  }
};

/// Site 4's aggregator, default pipeline, `slots` slots of `slot_bytes`.
FpgaAggregatorConfig config(std::uint64_t slots, std::uint64_t slot_bytes = kMiB) {
  FpgaAggregatorConfig c;
  c.site = 4;
  c.slot_bytes = slot_bytes;
  c.params.buffer_bytes = slots * slot_bytes;
  return c;
}

ChunkExtension contribution(int step, std::uint32_t chunk, int src, int group_size,
                            std::uint64_t bytes = kMiB) {
  ChunkExtension c;
  c.kind = ChunkKind::kContribution;
  c.src_site = src;
  c.tree_id = 10 + src;
  c.step = step;
  c.group_size = group_size;
  c.chunk = chunk;
  c.payload_bytes = bytes;
  return c;
}

double stat(const FpgaAggregator& f, const std::string& name) {
  for (const auto& s : f.statistics(sc_core::sc_time_stamp()))
    if (s.name == name) return s.value;
  ADD_FAILURE() << "no statistic " << name;
  return -1;
}

TEST(FpgaAggregator, SlotHeldFromFirstContributionUntilTheLastLeavesThePipeline) {
  Bench b(config(4));
  // Triad at site 4: contributions from 1 (at 1 us) and 2 (at 50 us).
  // 1: service [1, 33.768] us; 2: [50, 82.768] us; reduced leaves at 82.768 + 0.128.
  const std::uint64_t t1 = 1 * kUs, t2 = 50 * kUs;
  const std::uint64_t departure = t2 + kService1MiB + kLatency;  // 82'896'000 ps
  b.feeder.posts = {{t1, contribution(0, 0, 1, 3)}, {t2, contribution(0, 0, 2, 3)}};
  std::vector<std::uint64_t> occupancy, in_use;
  auto sample = [&] {
    occupancy.push_back(b.fpga.buffer().occupancy_bytes());
    in_use.push_back(b.fpga.slots_in_use());
  };
  b.probe.checks = {
      {t1 - 1, sample}, {t1 + 1, sample}, {departure - 1, sample}, {departure + 1, sample}};
  sc_core::sc_start();

  EXPECT_EQ(occupancy, (std::vector<std::uint64_t>{0, kMiB, kMiB, 0}));
  EXPECT_EQ(in_use, (std::vector<std::uint64_t>{0, 1, 1, 0}));
  ASSERT_EQ(b.cluster.seen.size(), 1u);
  EXPECT_EQ(b.cluster.seen[0].at_ps, departure);
  const auto& hold = b.fpga.buffer().hold_time_ns();
  EXPECT_EQ(hold.count(), 1u);
  EXPECT_DOUBLE_EQ(hold.max(), static_cast<double>(departure - t1) / kNs);  // 81'896 ns
  EXPECT_EQ(b.fpga.buffer().high_water_bytes(), kMiB);
  EXPECT_EQ(b.fpga.buffer().allocations(), 1u);
  EXPECT_EQ(b.fpga.pipeline_busy(), ps_time(2 * kService1MiB));
  EXPECT_EQ(b.fpga.contributions(), 2u);
  EXPECT_EQ(b.fpga.reduced_chunks(), 1u);
  EXPECT_EQ(b.fpga.slot_stalls(), 0u);
  EXPECT_TRUE(b.network.seen.empty());  // no credits unless asked
}

TEST(FpgaAggregator, ContributionsQueueForTheSerialPipeline) {
  Bench b(config(4));
  // Four contributions at t = 0 (chunks 0 and 1 from sites 1 and 2): the pipeline takes
  // them one at a time in arrival order, each starting when the previous one ends.
  b.feeder.posts = {{0, contribution(0, 0, 1, 3)},
                    {0, contribution(0, 0, 2, 3)},
                    {0, contribution(0, 1, 1, 3)},
                    {0, contribution(0, 1, 2, 3)},
                    // Arrives at 200 us with the pipeline idle since 131.072 us: no wait.
                    {200 * kUs, contribution(0, 2, 1, 2)}};
  sc_core::sc_start();
  ASSERT_EQ(b.cluster.seen.size(), 3u);
  EXPECT_EQ(b.cluster.seen[0].at_ps, 2 * kService1MiB + kLatency);  // 65'664 ns
  EXPECT_EQ(b.cluster.seen[0].chunk.chunk, 0u);
  EXPECT_EQ(b.cluster.seen[1].at_ps, 4 * kService1MiB + kLatency);  // 131'200 ns
  EXPECT_EQ(b.cluster.seen[1].chunk.chunk, 1u);
  // Chunk 2 belongs to a pair (group of 2): one contribution completes it.
  EXPECT_EQ(b.cluster.seen[2].at_ps, 200 * kUs + kService1MiB + kLatency);
  EXPECT_EQ(b.cluster.seen[2].chunk.contributions, 1);
  EXPECT_EQ(b.fpga.buffer().high_water_bytes(), 2 * kMiB);
  // Chunk 1's slot was taken at 0 and freed at 131.2 us.
  EXPECT_DOUBLE_EQ(b.fpga.buffer().hold_time_ns().max(), 131'200.0);
}

TEST(FpgaAggregator, ServiceTimeAndLatencyRoundUpToWholePsPerContribution) {
  // 64 bit x 300 MHz = 2.4 GB/s: 1000 B take 416'666.67 ps -> 416'667 ps each;
  // 7 cycles at 300 MHz = 23'333.33 ps -> 23'334 ps. A group of 4 at t = 10 ns:
  // 10'000 + 3 x 416'667 + 23'334 = 1'283'335 ps (rounding the 3000 B as one block
  // would give 1'283'334).
  FpgaAggregatorConfig c = config(4, 1000);
  c.params.datapath_width_bits = 64;
  c.params.clock_hz = 300'000'000;
  c.params.latency_cycles = 7;
  Bench b(c);
  for (int src : {1, 2, 3}) b.feeder.posts.push_back({10 * kNs, contribution(0, 0, src, 4, 1000)});
  sc_core::sc_start();
  ASSERT_EQ(b.cluster.seen.size(), 1u);
  EXPECT_EQ(b.cluster.seen[0].at_ps, 1'283'335u);
  EXPECT_EQ(b.cluster.seen[0].chunk.contributions, 3);
  EXPECT_EQ(b.fpga.pipeline_busy(), ps_time(3 * 416'667));
}

TEST(FpgaAggregator, ExactlyOneReducedChunkPerStepAndChunk) {
  Bench b(config(16, 1024));
  // Step 0: a triad (2 contributions per chunk); step 1: a group of 4 (3 per chunk).
  // Chunk indices repeat across steps: (step, chunk) is the key. 1 KiB takes 32 ns, so
  // with arrivals 1 us apart the pipeline never queues: a reduced chunk leaves 32 + 128
  // ns after its last contribution.
  const std::vector<std::tuple<int, std::uint32_t, int>> order = {
      {0, 0, 1}, {0, 1, 1}, {1, 0, 3}, {0, 0, 2}, {0, 2, 2}, {1, 1, 0},
      {1, 0, 2}, {0, 1, 2}, {1, 1, 2}, {1, 0, 0}, {0, 2, 1}, {1, 1, 3}};
  std::map<std::pair<int, std::uint32_t>, std::uint64_t> last;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto [step, chunk, src] = order[i];
    const std::uint64_t at = (i + 1) * kUs;
    b.feeder.posts.push_back({at, contribution(step, chunk, src, step == 0 ? 3 : 4, 1024)});
    last[{step, chunk}] = at;
  }
  sc_core::sc_start();
  ASSERT_EQ(b.cluster.seen.size(), 5u);
  std::set<std::pair<int, std::uint32_t>> keys;
  for (const auto& s : b.cluster.seen) {
    const auto key = std::make_pair(s.chunk.step, s.chunk.chunk);
    EXPECT_TRUE(keys.insert(key).second) << "duplicate " << key.first << "/" << key.second;
    EXPECT_EQ(s.at_ps, last.at(key) + 32 * kNs + kLatency);
    EXPECT_EQ(s.chunk.kind, ChunkKind::kReduced);
    EXPECT_EQ(s.chunk.contributions, s.chunk.step == 0 ? 2 : 3);
    EXPECT_EQ(s.chunk.group_size, s.chunk.step == 0 ? 3 : 4);
    EXPECT_EQ(s.chunk.src_site, 4);
    EXPECT_EQ(s.chunk.dst_site, 4);
    EXPECT_EQ(s.chunk.tree_id, -1);
    EXPECT_EQ(s.chunk.payload_bytes, 1024u);
  }
  EXPECT_EQ(keys.size(), 5u);  // (0,0) (0,1) (0,2) (1,0) (1,1)
  EXPECT_EQ(b.fpga.reduced_chunks(), 5u);
  EXPECT_EQ(b.fpga.contributions(), 12u);
  EXPECT_EQ(b.fpga.buffer().allocations(), 5u);
  EXPECT_EQ(b.fpga.buffer().occupancy_bytes(), 0u);
}

TEST(FpgaAggregator, FullBufferStallsNewChunksButAdmitsHeldOnesAndResumesWhenASlotFrees) {
  Bench b(config(2));  // 2 slots of 1 MiB; triad contributions from sites 1 and 2
  b.feeder.posts = {{0, contribution(0, 0, 1, 3)},           // slot A; service [0, 32.768] us
                    {0, contribution(0, 1, 1, 3)},           // slot B; service [32.768, 65.536]
                    {10 * kUs, contribution(0, 2, 1, 3)},    // full: stalls
                    {20 * kUs, contribution(0, 0, 2, 3)},    // holds a slot: passes the stalled one
                    {200 * kUs, contribution(0, 1, 2, 3)},   // service [200, 232.768]
                    {300 * kUs, contribution(0, 2, 2, 3)}};  // service [300, 332.768]
  // Chunk 0: second contribution served [65.536, 98.304] us, leaves at 98.432 us and frees
  // its slot; the stalled chunk 2 is admitted then and served [98.432, 131.2] us.
  const std::uint64_t free0 = 3 * kService1MiB + kLatency;  // 98'432 ns
  const std::uint64_t out1 = 200 * kUs + kService1MiB + kLatency;
  const std::uint64_t out2 = 300 * kUs + kService1MiB + kLatency;
  std::vector<std::size_t> waiting;
  std::vector<std::uint64_t> in_use;
  auto sample = [&] {
    waiting.push_back(b.fpga.waiting_contributions());
    in_use.push_back(b.fpga.slots_in_use());
  };
  b.probe.checks = {{15 * kUs, sample}, {free0 - 1, sample}, {free0 + 1, sample}};
  sc_core::sc_start();

  EXPECT_EQ(waiting, (std::vector<std::size_t>{1, 1, 0}));
  EXPECT_EQ(in_use, (std::vector<std::uint64_t>{2, 2, 2}));
  ASSERT_EQ(b.cluster.seen.size(), 3u);
  EXPECT_EQ(b.cluster.seen[0].at_ps, free0);
  EXPECT_EQ(b.cluster.seen[0].chunk.chunk, 0u);
  EXPECT_EQ(b.cluster.seen[1].at_ps, out1);
  EXPECT_EQ(b.cluster.seen[1].chunk.chunk, 1u);
  EXPECT_EQ(b.cluster.seen[2].at_ps, out2);
  EXPECT_EQ(b.cluster.seen[2].chunk.chunk, 2u);
  EXPECT_EQ(b.fpga.slot_stalls(), 1u);
  EXPECT_EQ(b.fpga.stall_time(), ps_time(free0 - 10 * kUs));  // 88'432 ns
  EXPECT_DOUBLE_EQ(stat(b.fpga, "stall_time_s"), static_cast<double>(free0 - 10 * kUs) * 1e-12);
  EXPECT_EQ(b.fpga.stall_backlog_high_water_bytes(), kMiB);
  EXPECT_EQ(b.fpga.waiting_contributions(), 0u);
  EXPECT_EQ(b.fpga.buffer().high_water_bytes(), 2 * kMiB);
  EXPECT_EQ(b.fpga.buffer().allocations(), 3u);
  // Holds: chunk 0 [0, 98.432], chunk 1 [0, 232.896], chunk 2 [98.432, 332.896] us: a
  // stalled chunk's slot is taken at its admission, not its arrival.
  const auto& hold = b.fpga.buffer().hold_time_ns();
  EXPECT_DOUBLE_EQ(hold.min(), 98'432.0);
  EXPECT_DOUBLE_EQ(hold.max(), 234'464.0);
  EXPECT_DOUBLE_EQ(hold.mean(), (98'432.0 + 232'896.0 + 234'464.0) / 3);
  EXPECT_EQ(b.fpga.reduced_chunks(), 3u);
  EXPECT_EQ(b.fpga.contributions(), 6u);
}

TEST(FpgaAggregator, StalledContributionsOfOneChunkAreAdmittedTogetherWhenTheSlotFrees) {
  Bench b(config(1));  // one slot: chunk 1 waits for chunk 0 to finish entirely
  b.feeder.posts = {{0, contribution(0, 0, 1, 3)},          // [0, 32.768] us
                    {1 * kUs, contribution(0, 1, 1, 3)},    // stalls
                    {2 * kUs, contribution(0, 1, 2, 3)},    // stalls too (no slot yet)
                    {40 * kUs, contribution(0, 0, 2, 3)}};  // [40, 72.768]: frees at 72.896
  const std::uint64_t free0 = 40 * kUs + kService1MiB + kLatency;
  // Both stalled contributions enter at 72.896 us, in arrival order, back to back.
  const std::uint64_t out1 = free0 + 2 * kService1MiB + kLatency;  // 138'560 ns
  sc_core::sc_start();
  ASSERT_EQ(b.cluster.seen.size(), 2u);
  EXPECT_EQ(b.cluster.seen[0].at_ps, free0);
  EXPECT_EQ(b.cluster.seen[1].at_ps, out1);
  EXPECT_EQ(b.cluster.seen[1].chunk.chunk, 1u);
  EXPECT_EQ(b.cluster.seen[1].chunk.contributions, 2);
  EXPECT_EQ(b.fpga.slot_stalls(), 2u);
  EXPECT_EQ(b.fpga.stall_time(), ps_time((free0 - 1 * kUs) + (free0 - 2 * kUs)));
  EXPECT_EQ(b.fpga.stall_backlog_high_water_bytes(), 2 * kMiB);
  EXPECT_EQ(b.fpga.buffer().high_water_bytes(), kMiB);
  EXPECT_EQ(b.fpga.waiting_contributions(), 0u);
}

// A freed slot goes to the earliest waiting contribution, then to the later ones of its
// chunk, past the waiting contributions of other chunks (which wait for the next slot).
TEST(FpgaAggregator, AFreedSlotTakesTheEarliestChunkAndItsLaterContributionsOnly) {
  Bench b(config(1));
  b.feeder.posts = {{0, contribution(0, 0, 1, 3)},          // [0, 32.768] us
                    {1 * kUs, contribution(0, 1, 1, 3)},    // stall
                    {2 * kUs, contribution(0, 2, 1, 3)},    // stall
                    {3 * kUs, contribution(0, 1, 2, 3)},    // stall
                    {4 * kUs, contribution(0, 2, 2, 3)},    // stall
                    {40 * kUs, contribution(0, 0, 2, 3)}};  // [40, 72.768]: frees at 72.896
  const std::uint64_t free0 = 40 * kUs + kService1MiB + kLatency;
  // Chunk 1's two contributions (arrived 1 and 3 us) back to back from free0; chunk 2's
  // (2 and 4 us) when chunk 1's slot frees.
  const std::uint64_t free1 = free0 + 2 * kService1MiB + kLatency;
  const std::uint64_t free2 = free1 + 2 * kService1MiB + kLatency;
  std::vector<std::size_t> waiting;
  auto sample = [&] { waiting.push_back(b.fpga.waiting_contributions()); };
  b.probe.checks = {{free0 - 1, sample}, {free0 + 1, sample}, {free1 + 1, sample}};
  sc_core::sc_start();
  EXPECT_EQ(waiting, (std::vector<std::size_t>{4, 2, 0}));
  ASSERT_EQ(b.cluster.seen.size(), 3u);
  for (std::uint32_t c = 0; c < 3; ++c) {
    EXPECT_EQ(b.cluster.seen[c].chunk.chunk, c);
    EXPECT_EQ(b.cluster.seen[c].chunk.contributions, 2);
  }
  EXPECT_EQ(b.cluster.seen[0].at_ps, free0);
  EXPECT_EQ(b.cluster.seen[1].at_ps, free1);
  EXPECT_EQ(b.cluster.seen[2].at_ps, free2);
  EXPECT_EQ(b.fpga.slot_stalls(), 4u);
  EXPECT_EQ(b.fpga.stall_time(),
            ps_time((free0 - 1 * kUs) + (free0 - 3 * kUs) + (free1 - 2 * kUs) + (free1 - 4 * kUs)));
  EXPECT_EQ(b.fpga.buffer().high_water_bytes(), kMiB);
}

TEST(FpgaAggregator, WithoutAggregationContributionsPassThroughAtOnce) {
  FpgaAggregatorConfig c = config(1);
  c.aggregate = false;
  Bench b(c);
  // A single slot would stall the second chunk if contributions were aggregated.
  b.feeder.posts = {{5 * kUs, contribution(2, 0, 1, 3)},
                    {5 * kUs, contribution(2, 1, 1, 3)},
                    {7 * kUs, contribution(2, 0, 2, 3)}};
  sc_core::sc_start();
  ASSERT_EQ(b.cluster.seen.size(), 3u);
  const std::uint64_t at[] = {5 * kUs, 5 * kUs, 7 * kUs};
  const int src[] = {1, 1, 2};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(b.cluster.seen[i].at_ps, at[i]);
    EXPECT_EQ(b.cluster.seen[i].chunk.kind, ChunkKind::kContribution);
    EXPECT_EQ(b.cluster.seen[i].chunk.src_site, src[i]);
    EXPECT_EQ(b.cluster.seen[i].chunk.contributions, 1);
    EXPECT_EQ(b.cluster.seen[i].chunk.payload_bytes, kMiB);
  }
  EXPECT_EQ(b.fpga.reduced_chunks(), 0u);
  EXPECT_EQ(b.fpga.buffer().allocations(), 0u);
  EXPECT_EQ(b.fpga.buffer().high_water_bytes(), 0u);
  EXPECT_EQ(b.fpga.slot_stalls(), 0u);
  EXPECT_EQ(b.fpga.pipeline_busy(), sc_core::SC_ZERO_TIME);
}

TEST(FpgaAggregator, OtherKindsPassThroughUntouchedWhileAggregating) {
  Bench b(config(1));
  ChunkExtension credit, ring, ready, reduced;
  credit.kind = ChunkKind::kCredit;
  ring.kind = ChunkKind::kRingSegment;
  ready.kind = ChunkKind::kReady;
  reduced.kind = ChunkKind::kReduced;
  ring.payload_bytes = kMiB;
  b.feeder.posts = {{0, contribution(0, 0, 1, 3)},  // takes the only slot
                    {1 * kUs, credit},
                    {2 * kUs, ring},
                    {3 * kUs, ready},
                    {4 * kUs, reduced}};
  sc_core::sc_start();
  ASSERT_EQ(b.cluster.seen.size(), 4u);
  const ChunkKind kinds[] = {ChunkKind::kCredit, ChunkKind::kRingSegment, ChunkKind::kReady,
                             ChunkKind::kReduced};
  for (std::uint64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(b.cluster.seen[i].at_ps, (i + 1) * kUs);
    EXPECT_EQ(b.cluster.seen[i].chunk.kind, kinds[i]);
  }
  EXPECT_EQ(b.fpga.slot_stalls(), 0u);
  EXPECT_EQ(b.fpga.contributions(), 1u);
  EXPECT_EQ(b.fpga.buffer().allocations(), 1u);  // the triad chunk still waits for site 2
}

TEST(FpgaAggregator, CreditModeReturnsOneCreditPerSenderWhenTheSlotFrees) {
  FpgaAggregatorConfig with = config(4);
  with.return_credits = true;
  with.credit_bytes = 100;
  Bench credit(with, "credit_");
  Bench plain(config(4), "plain_");
  // Group of 4 at site 4: senders 7, 2 and 5; chunk 3 of step 1.
  for (Bench* b : {&credit, &plain}) {
    b->feeder.posts = {{1 * kUs, contribution(1, 3, 7, 4)},
                       {2 * kUs, contribution(1, 3, 2, 4)},
                       {3 * kUs, contribution(1, 3, 5, 4)}};
  }
  sc_core::sc_start();
  // Services [1, 33.768], [33.768, 66.536], [66.536, 99.304] us; free at 99.432 us.
  const std::uint64_t free_at = 1 * kUs + 3 * kService1MiB + kLatency;
  ASSERT_EQ(credit.cluster.seen.size(), 1u);
  EXPECT_EQ(credit.cluster.seen[0].at_ps, free_at);
  ASSERT_EQ(credit.network.seen.size(), 3u);
  std::vector<int> to;  // in site order, not in the order the contributions came
  for (const auto& s : credit.network.seen) {
    to.push_back(s.chunk.dst_site);
    EXPECT_EQ(s.at_ps, free_at);
    EXPECT_EQ(s.chunk.kind, ChunkKind::kCredit);
    EXPECT_EQ(s.chunk.src_site, 4);
    EXPECT_EQ(s.chunk.tree_id, -1);  // unicast back to the sender
    EXPECT_EQ(s.chunk.step, 1);
    EXPECT_EQ(s.chunk.chunk, 3u);
    EXPECT_EQ(s.chunk.credits, 1u);
    EXPECT_EQ(s.chunk.payload_bytes, 100u);
  }
  EXPECT_EQ(to, (std::vector<int>{2, 5, 7}));
  // Without credit mode the same run sends nothing to the network.
  ASSERT_EQ(plain.cluster.seen.size(), 1u);
  EXPECT_EQ(plain.cluster.seen[0].at_ps, free_at);
  EXPECT_TRUE(plain.network.seen.empty());
}

// A slot holds the senders of sites below 256 itself and keeps those beyond in side words: they
// are credited, recognised as repeated, counted by the invariant check and forgotten when
// the slot frees, like the others. Group of 4 at site 4, chunk 3 of step 1, twice: senders
// 256, 511, 255 and then (the key taken again, as without loss recovery) 300, 600, 7.
// Contributions to chunk 3 of step 1 (group of 4) from `senders`, 100 us apart from 100 us.
std::vector<Feeder::Post> chunk_3_from(const std::vector<int>& senders) {
  std::vector<Feeder::Post> posts;
  for (std::size_t i = 0; i < senders.size(); ++i)
    posts.push_back({(i + 1) * 100 * kUs, contribution(1, 3, senders[i], 4)});
  return posts;
}

std::vector<int> credited(const Recorder& network, std::size_t from, std::size_t to) {
  std::vector<int> sites;
  for (std::size_t i = from; i < to; ++i) sites.push_back(network.seen[i].chunk.dst_site);
  return sites;
}

TEST(FpgaAggregator, SendersFromSite256OnAreCreditedCheckedAndForgottenLikeTheOthers) {
  FpgaAggregatorConfig with = config(4);
  with.return_credits = true;
  Bench b(with);
  b.feeder.posts = chunk_3_from({256, 511, 255, 300, 600, 7});
  sc_core::sc_start();
  ASSERT_EQ(b.cluster.seen.size(), 2u);
  EXPECT_EQ(b.cluster.seen[1].at_ps, 600 * kUs + kService1MiB + kLatency);
  ASSERT_EQ(b.network.seen.size(), 6u);
  EXPECT_EQ(credited(b.network, 0, 3), (std::vector<int>{255, 256, 511}));
  EXPECT_EQ(credited(b.network, 3, 6), (std::vector<int>{7, 300, 600}));
  EXPECT_EQ(b.fpga.bad_reductions(), 0u);
}

// The same without credits: the slot's senders beyond 255 are forgotten all the same.
TEST(FpgaAggregator, SendersFromSite256OnAreForgottenWithoutCreditsToo) {
  Bench b(config(4));
  b.feeder.posts = chunk_3_from({300, 511, 7, 300, 600, 7});
  sc_core::sc_start();
  ASSERT_EQ(b.cluster.seen.size(), 2u);
  EXPECT_EQ(b.fpga.bad_reductions(), 0u);
  EXPECT_TRUE(b.network.seen.empty());
}

// Two slots hold senders beyond the inline ones when a higher sender widens every slot's
// side words: neither slot loses one. Group of 4 at site 4, step 1: chunk 0 from 300,
// 900 and 5, chunk 1 from 300, 950 and 6, interleaved 100 us apart.
TEST(FpgaAggregator, SendersBeyondTheInlineOnesSurviveAHigherSenderInAnotherSlot) {
  FpgaAggregatorConfig with = config(4);
  with.return_credits = true;
  Bench b(with);
  const std::vector<std::pair<std::uint32_t, int>> order = {{0, 300}, {1, 300}, {0, 900},
                                                            {1, 950}, {0, 5},   {1, 6}};
  for (std::size_t i = 0; i < order.size(); ++i)
    b.feeder.posts.push_back(
        {(i + 1) * 100 * kUs, contribution(1, order[i].first, order[i].second, 4)});
  sc_core::sc_start();
  ASSERT_EQ(b.cluster.seen.size(), 2u);
  ASSERT_EQ(b.network.seen.size(), 6u);
  EXPECT_EQ(credited(b.network, 0, 3), (std::vector<int>{5, 300, 900}));
  EXPECT_EQ(credited(b.network, 3, 6), (std::vector<int>{6, 300, 950}));
  EXPECT_EQ(b.fpga.bad_reductions(), 0u);
}

TEST(FpgaAggregator, ARepeatedContributionFromSite256OnIsRecognised) {
  FpgaAggregatorConfig with = config(4);
  with.reliable = true;
  Bench b(with);
  b.feeder.posts = chunk_3_from({300, 300, 511, 7});
  sc_core::sc_start();
  ASSERT_EQ(b.cluster.seen.size(), 1u);
  EXPECT_EQ(b.cluster.seen[0].chunk.contributions, 3);
  EXPECT_EQ(b.cluster.seen[0].at_ps, 400 * kUs + kService1MiB + kLatency);
  EXPECT_EQ(b.fpga.duplicate_contributions(), 1u);
  EXPECT_EQ(b.fpga.bad_reductions(), 0u);
}

TEST(FpgaAggregator, FunctionalSumsAreExactAndLeaveTheInputsUntouched) {
  Bench b(config(4, 16));  // 16-byte chunks: 4 floats
  using Values = std::vector<float>;
  // Exactly representable values: every sum below is exact in float.
  const std::vector<Values> chunk0 = {{1, 2, 3, 4}, {0.5f, 0.25f, -1, 100}, {1e6f, 0, 7, 0.125f}};
  const std::vector<Values> chunk1 = {{-8, 16, 32, 64}, {1, 1, 1, 1}, {0.75f, 2, -3, 4}};
  std::vector<std::shared_ptr<Values>> inputs;
  std::uint64_t at = 0;
  for (int src = 0; src < 3; ++src) {
    for (std::uint32_t chunk : {0u, 1u}) {
      auto c = contribution(0, chunk, src, 4, 16);
      c.data = std::make_shared<Values>(chunk == 0 ? chunk0[src] : chunk1[src]);
      inputs.push_back(c.data);
      b.feeder.posts.push_back({at += kUs, c});
    }
  }
  sc_core::sc_start();
  ASSERT_EQ(b.cluster.seen.size(), 2u);
  std::map<std::uint32_t, Values> got;
  for (const auto& s : b.cluster.seen) {
    ASSERT_TRUE(s.chunk.data);
    for (const auto& in : inputs) EXPECT_NE(s.chunk.data, in);  // a fresh sum, not an input
    got[s.chunk.chunk] = *s.chunk.data;
  }
  EXPECT_EQ(got[0], (Values{1'000'001.5f, 2.25f, 9, 104.125f}));
  EXPECT_EQ(got[1], (Values{-6.25f, 19, 30, 69}));
  // Multicast copies share their data: the aggregator must not sum into an input.
  for (int src = 0; src < 3; ++src) {
    EXPECT_EQ(*inputs[2 * src], chunk0[src]);
    EXPECT_EQ(*inputs[2 * src + 1], chunk1[src]);
  }
}

TEST(FpgaAggregator, AChunkHandedOverBeforeItsLastBitIsAnError) {
  Bench b(config(4));
  b.feeder.posts = {{0, contribution(0, 0, 1, 3), /*delay_ps=*/1}};
  EXPECT_THROW(sc_core::sc_start(), sc_core::sc_report);
}

// Reduction trees (in-transit aggregation). Tree 7, step 0, a group of 5: site 4 relays
// for children 2 (holding 2 members) and 3 (holding 2 members) towards parent 9.
constexpr int kTree = 7;

ChunkExtension tree_input(int src, int contributions, std::vector<float> values) {
  ChunkExtension c = contribution(0, 0, src, 5);
  c.tree_id = -1;
  c.dst_site = 4;
  c.reduction_tree = kTree;
  c.contributions = contributions;
  c.data = std::make_shared<std::vector<float>>(std::move(values));
  return c;
}

ReductionRole relay_role() {
  ReductionRole r;
  r.parent_site = 9;
  r.children = 2;
  r.subtree_members = 5;  // itself + 2 + 2
  return r;
}

// Own contribution at 10 us: service [10, 42.768] us. Child 2 at 12 us queues behind it:
// [42.768, 75.536] us. Child 3 at 100 us finds the pipeline idle: [100, 132.768] us, and
// the partial sum leaves at 132.768 + 0.128 = 132.896 us = max(arrivals) + service +
// latency. The slot is held from 10 us (first input) to 132.896 us.
constexpr std::uint64_t kOwnAt = 10 * kUs, kChild2At = 12 * kUs, kChild3At = 100 * kUs;
constexpr std::uint64_t kPartialLeaves = kChild3At + kService1MiB + kLatency;  // 132'896'000

struct RelayBench : Bench {
  std::vector<std::uint64_t> in_use;
  explicit RelayBench(const FpgaAggregatorConfig& c) : Bench(c) {
    fpga.set_reduction_role(kTree, relay_role());
    feeder.posts = {{kOwnAt, tree_input(4, 1, {1.0f, 2.0f})},
                    {kChild2At, tree_input(2, 2, {10.0f, 20.0f})},
                    {kChild3At, tree_input(3, 2, {100.5f, 200.25f})}};
    auto sample = [this] { in_use.push_back(fpga.slots_in_use()); };
    probe.checks = {{kOwnAt - 1, sample},
                    {kOwnAt + 1, sample},
                    {kPartialLeaves - 1, sample},
                    {kPartialLeaves + 1, sample}};
  }
};

TEST(FpgaAggregatorTree, RelaySendsOnePartialSumToItsParentAfterItsLastInput) {
  RelayBench b(config(4));
  sc_core::sc_start();
  EXPECT_TRUE(b.cluster.seen.empty());  // a partial sum is not a result
  ASSERT_EQ(b.network.seen.size(), 1u);
  const auto& sum = b.network.seen[0];
  EXPECT_EQ(sum.at_ps, kPartialLeaves);
  EXPECT_EQ(sum.chunk.kind, ChunkKind::kContribution);
  EXPECT_EQ(sum.chunk.src_site, 4);
  EXPECT_EQ(sum.chunk.dst_site, 9);
  EXPECT_EQ(sum.chunk.tree_id, -1);
  EXPECT_EQ(sum.chunk.reduction_tree, kTree);
  EXPECT_EQ(sum.chunk.contributions, 5);
  EXPECT_EQ(sum.chunk.payload_bytes, kMiB);
  // Functional: 1 + 10 + 100.5 and 2 + 20 + 200.25, exact in float.
  ASSERT_TRUE(sum.chunk.data);
  EXPECT_EQ(*sum.chunk.data, (std::vector<float>{111.5f, 222.25f}));
  EXPECT_EQ(b.in_use, (std::vector<std::uint64_t>{0, 1, 1, 0}));
  EXPECT_DOUBLE_EQ(b.fpga.buffer().hold_time_ns().max(),
                   static_cast<double>(kPartialLeaves - kOwnAt) / kNs);  // 122'896 ns
  EXPECT_EQ(b.fpga.pipeline_busy(), ps_time(3 * kService1MiB));
  EXPECT_EQ(b.fpga.tree_sums(), 1u);
  EXPECT_EQ(b.fpga.reduced_chunks(), 0u);
  EXPECT_EQ(b.fpga.bad_reductions(), 0u);
  EXPECT_EQ(b.fpga.slots_held(), 0u);
}

// The broken mechanism: forwarding before the last child's partial sum arrives. The sum
// leaves at the end of child 2's service (75.536 + 0.128 us) holding 3 members, the
// invariant counts it, and child 3's late input holds a slot that never completes.
TEST(FpgaAggregatorTree, ForwardingBeforeTheLastChildIsCaught) {
  FpgaAggregatorConfig c = config(4);
  c.test_hook = TestHook::kEarlyTreeForward;
  RelayBench b(c);
  sc_core::sc_start();
  ASSERT_FALSE(b.network.seen.empty());
  EXPECT_NE(b.network.seen[0].at_ps, kPartialLeaves);
  EXPECT_EQ(b.network.seen[0].at_ps, kOwnAt + 2 * kService1MiB + kLatency);  // 75.664 us
  EXPECT_EQ(b.network.seen[0].chunk.contributions, 3);
  EXPECT_EQ(b.fpga.bad_reductions(), 1u);
  EXPECT_EQ(b.fpga.slots_held(), 1u);
}

TEST(FpgaAggregatorTree, TreeSlotsStallWhenTheBufferIsFull) {
  // One slot: chunk 1's own contribution at 20 us waits until chunk 0's partial sum
  // leaves at 132.896 us, then takes the slot; alone in its tree (a leaf) it leaves one
  // service + latency later: 132.896 + 32.768 + 0.128 = 165.792 us.
  RelayBench b(config(1));
  ReductionRole leaf;
  leaf.parent_site = 9;
  b.fpga.set_reduction_role(kTree + 1, leaf);
  ChunkExtension other = tree_input(4, 1, {1.0f, 1.0f});
  other.reduction_tree = kTree + 1;
  other.chunk = 1;
  b.feeder.posts.insert(b.feeder.posts.begin() + 2, {20 * kUs, other});
  sc_core::sc_start();
  ASSERT_EQ(b.network.seen.size(), 2u);
  EXPECT_EQ(b.network.seen[0].at_ps, kPartialLeaves);
  EXPECT_EQ(b.network.seen[1].at_ps, kPartialLeaves + kService1MiB + kLatency);
  EXPECT_EQ(b.network.seen[1].chunk.contributions, 1);
  EXPECT_EQ(b.fpga.slot_stalls(), 1u);
  EXPECT_EQ(b.fpga.stall_time(), ps_time(kPartialLeaves - 20 * kUs));
  EXPECT_EQ(b.fpga.buffer().high_water_bytes(), kMiB);
}

TEST(FpgaAggregatorTree, RootMulticastsTheCompleteSumAndMembersPassItToTheirCluster) {
  // Root 4 of a group of 3: its own contribution at 0 and child 2's partial sum (2
  // members) at 5 us: [0, 32.768], [32.768, 65.536] us, out at 65.664 us on tree 40.
  FpgaAggregatorConfig c = config(4);
  c.aggregate = false;  // trees aggregate anyway
  Bench b(c);
  ReductionRole root;
  root.children = 1;
  root.subtree_members = 3;
  root.result_tree_id = 40;
  b.fpga.set_reduction_role(kTree, root);
  ChunkExtension own = tree_input(4, 1, {1.0f});
  ChunkExtension child = tree_input(2, 2, {2.0f});
  own.group_size = child.group_size = 3;
  // The root's result coming back through this FPGA (as at every member): passed on.
  ChunkExtension result = own;
  result.kind = ChunkKind::kReduced;
  result.dst_site = -1;
  result.tree_id = 40;
  result.contributions = 3;
  b.feeder.posts = {{0, own}, {5 * kUs, child}, {200 * kUs, result}};
  sc_core::sc_start();
  ASSERT_EQ(b.network.seen.size(), 1u);
  const auto& sum = b.network.seen[0].chunk;
  EXPECT_EQ(b.network.seen[0].at_ps, 2 * kService1MiB + kLatency);  // 65'664'000 ps
  EXPECT_EQ(sum.kind, ChunkKind::kReduced);
  EXPECT_EQ(sum.tree_id, 40);
  EXPECT_EQ(sum.dst_site, -1);
  EXPECT_EQ(sum.src_site, 4);
  EXPECT_EQ(sum.contributions, 3);
  EXPECT_EQ(*sum.data, std::vector<float>{3.0f});
  ASSERT_EQ(b.cluster.seen.size(), 1u);
  EXPECT_EQ(b.cluster.seen[0].at_ps, 200 * kUs);
  EXPECT_EQ(b.cluster.seen[0].chunk.kind, ChunkKind::kReduced);
  EXPECT_EQ(b.fpga.bad_reductions(), 0u);
}

// Children from sites 256 on (a platform of a thousand sites) count as senders like the
// others: the sum holds every member once, no bad reduction.
TEST(FpgaAggregatorTree, ChildrenFromSite256OnAreSendersLikeTheOthers) {
  Bench b(config(4));
  b.fpga.set_reduction_role(kTree, relay_role());
  b.feeder.posts = {{kOwnAt, tree_input(4, 1, {1.0f})},
                    {kChild2At, tree_input(300, 2, {10.0f})},
                    {kChild3At, tree_input(700, 2, {100.0f})}};
  sc_core::sc_start();
  ASSERT_EQ(b.network.seen.size(), 1u);
  EXPECT_EQ(b.network.seen[0].chunk.contributions, 5);
  EXPECT_EQ(*b.network.seen[0].chunk.data, (std::vector<float>{111.0f}));
  EXPECT_EQ(b.fpga.bad_reductions(), 0u);
}

TEST(FpgaAggregatorTree, SumsMissingAMemberAreBadReductions) {
  // The root expects 3 members but the child's partial sum holds 1: counted.
  Bench b(config(4));
  ReductionRole root;
  root.children = 1;
  root.subtree_members = 3;
  root.result_tree_id = 40;
  b.fpga.set_reduction_role(kTree, root);
  ChunkExtension own = tree_input(4, 1, {1.0f});
  ChunkExtension child = tree_input(2, 1, {2.0f});
  own.group_size = child.group_size = 3;
  b.feeder.posts = {{0, own}, {5 * kUs, child}};
  sc_core::sc_start();
  ASSERT_EQ(b.network.seen.size(), 1u);
  EXPECT_EQ(b.fpga.bad_reductions(), 1u);
}

TEST(FpgaAggregatorTree, RolesAreChecked) {
  ChunkPool pool;
  FpgaAggregator fpga("fpga", config(4), pool);
  ReductionRole r;
  EXPECT_THROW(fpga.set_reduction_role(-1, relay_role()), std::invalid_argument);
  EXPECT_THROW(fpga.set_reduction_role(0, r), std::invalid_argument);  // root, no result tree
  r.parent_site = 1;
  r.member = false;
  EXPECT_THROW(fpga.set_reduction_role(0, r), std::invalid_argument);  // no input
  r.member = true;
  r.children = 3;
  EXPECT_THROW(fpga.set_reduction_role(0, r), std::invalid_argument);  // 4 inputs, 1 member
  r.subtree_members = 4;
  EXPECT_NO_THROW(fpga.set_reduction_role(0, r));
}

}  // namespace
}  // namespace aggnet
