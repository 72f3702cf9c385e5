// MulticastSwitch alone between two posting initiators and three recording egress ports:
// unicast routes (also changed during the run), the multicast group table (the chunk on every
// listed port, a reference each, nowhere else), and the switch latency added to the posted
// last-bit instant, exactly.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "module_harness.h"
#include "modules/core/chunk.h"
#include "modules/core/event_calendar.h"
#include "modules/core/time.h"
#include "modules/network/multicast_switch.h"

namespace aggnet {
namespace {

constexpr std::uint64_t kUs = 1'000'000;  // ps per microsecond

using Source = testing::ChunkSource;
using Port = testing::ChunkRecorder;

/// Two ingress sources, three egress ports (numbered 0, 1, 2 in binding order) unless
/// told otherwise.
struct Bench {
  ChunkPool pool;
  Source a{"a", pool}, b{"b", pool};
  MulticastSwitch sw;
  std::vector<std::unique_ptr<Port>> ports;
  explicit Bench(std::uint64_t latency_ps, int num_ports = 3) : sw("sw", SwitchParams{latency_ps}) {
    a.out.bind(sw.in);
    b.out.bind(sw.in);
    for (int i = 0; i < num_ports; ++i) {
      ports.push_back(std::make_unique<Port>(("port" + std::to_string(i)).c_str()));
      sw.out.bind(ports.back()->in);
    }
  }
  /// The chunk indices each port received, in order.
  std::vector<std::vector<std::uint32_t>> chunks_by_port() const {
    std::vector<std::vector<std::uint32_t>> all;
    for (const auto& port : ports) {
      all.emplace_back();
      for (const auto& seen : port->seen) all.back().push_back(seen.chunk.chunk);
    }
    return all;
  }
};

/// `call` throws an error whose message contains `text` (from sc_start, SystemC reports
/// the switch's std::invalid_argument as an sc_report).
template <typename Call>
void expect_error(Call call, const std::string& text) {
  try {
    call();
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

ChunkExtension unicast(int dst, std::uint32_t chunk) {
  ChunkExtension c;
  c.src_site = 9;
  c.dst_site = dst;
  c.chunk = chunk;
  c.payload_bytes = 1 << 20;
  return c;
}

ChunkExtension multicast(int tree, std::uint32_t chunk) {
  ChunkExtension c;
  c.src_site = 9;
  c.tree_id = tree;
  c.step = 3;
  c.group_size = 4;
  c.chunk = chunk;
  c.payload_bytes = 4096;
  c.data = std::make_shared<std::vector<float>>(std::vector<float>{1.5f, 2.5f});
  return c;
}

TEST(MulticastSwitch, UnicastLeavesOnItsRoutedPortAfterLastBitPlusLatency) {
  Bench bench(3 * kUs);
  bench.sw.set_unicast_route(5, 2);
  bench.sw.set_unicast_route(6, 0);
  // Posted at 10 us with 5 us to the last bit: leaves at 10 + 5 + 3 = 18 us.
  bench.a.posts = {{10 * kUs, unicast(5, 0), 5 * kUs}, {10 * kUs, unicast(6, 1)}};
  // From the other ingress, with no delay: 20 + 3 = 23 us.
  bench.b.posts = {{20 * kUs, unicast(5, 2)}};
  sc_core::sc_start();
  const auto& p0 = bench.ports[0]->seen;
  const auto& p1 = bench.ports[1]->seen;
  const auto& p2 = bench.ports[2]->seen;
  ASSERT_EQ(p0.size(), 1u);
  EXPECT_EQ(p0[0].at_ps, 13 * kUs);  // 10 + 0 + 3
  EXPECT_EQ(p0[0].chunk.chunk, 1u);
  EXPECT_TRUE(p1.empty());
  ASSERT_EQ(p2.size(), 2u);
  EXPECT_EQ(p2[0].at_ps, 18 * kUs);
  EXPECT_EQ(p2[0].chunk.chunk, 0u);
  EXPECT_EQ(p2[0].chunk.dst_site, 5);
  EXPECT_EQ(p2[0].chunk.payload_bytes, 1u << 20);
  EXPECT_EQ(p2[1].at_ps, 23 * kUs);
  EXPECT_EQ(p2[1].chunk.chunk, 2u);
  EXPECT_EQ(bench.sw.forwarded(), 3u);
  EXPECT_EQ(bench.sw.replicated(), 0u);
}

TEST(MulticastSwitch, MulticastSendsOneReferencePerListedPortAndNoneElsewhere) {
  Bench bench(2 * kUs);
  bench.sw.set_multicast_group(17, {2, 0});
  bench.sw.set_multicast_group(18, {1});
  // Tree 17 at 1 us (+4 us to the last bit) -> ports 2 and 0 at 1 + 4 + 2 = 7 us;
  // tree 18 at 1 us -> port 1 alone at 3 us.
  bench.a.posts = {{1 * kUs, multicast(17, 0), 4 * kUs}, {1 * kUs, multicast(18, 1)}};
  sc_core::sc_start();
  const auto& p0 = bench.ports[0]->seen;
  const auto& p1 = bench.ports[1]->seen;
  const auto& p2 = bench.ports[2]->seen;
  ASSERT_EQ(p0.size(), 1u);
  ASSERT_EQ(p1.size(), 1u);
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_EQ(p0[0].at_ps, 7 * kUs);
  EXPECT_EQ(p2[0].at_ps, 7 * kUs);
  EXPECT_EQ(p1[0].at_ps, 3 * kUs);
  EXPECT_EQ(p1[0].chunk.tree_id, 18);
  // Tree 17's chunk leaves on both ports as one transaction, a reference each. Its list is
  // {2, 0}: port 0 gets it first, with both references taken (had port 2's been taken
  // after, port 0's release would have returned the transaction to the pool, its data
  // reset: checked below), then port 2 with the last one. No reference is left over.
  EXPECT_EQ(p0[0].trans, p2[0].trans);
  EXPECT_EQ(p0[0].references, 2);
  EXPECT_EQ(p2[0].references, 1);
  EXPECT_EQ(bench.pool.in_use(), 0u);
  for (const auto* s : {&p0[0], &p2[0]}) {
    EXPECT_EQ(s->chunk.tree_id, 17);
    EXPECT_EQ(s->chunk.src_site, 9);
    EXPECT_EQ(s->chunk.step, 3);
    EXPECT_EQ(s->chunk.group_size, 4);
    EXPECT_EQ(s->chunk.chunk, 0u);
    EXPECT_EQ(s->chunk.payload_bytes, 4096u);
  }
  ASSERT_TRUE(p0[0].chunk.data);
  EXPECT_EQ(p0[0].chunk.data, p2[0].chunk.data);
  EXPECT_EQ(*p0[0].chunk.data, (std::vector<float>{1.5f, 2.5f}));
  EXPECT_EQ(bench.sw.forwarded(), 2u);   // chunks received
  EXPECT_EQ(bench.sw.replicated(), 1u);  // extra copies: tree 17's second port
  EXPECT_EQ(bench.sw.multicast_ports(17), (std::vector<int>{2, 0}));
}

TEST(MulticastSwitch, ChunksDoNotQueueInTheSwitch) {
  // The switch has no occupancy: three chunks whose last bits arrive together all leave
  // latency later, in arrival order, on every port of their tree.
  Bench bench(1 * kUs);
  bench.sw.set_multicast_group(4, {0, 1, 2});
  bench.a.posts = {{0, multicast(4, 0)}, {0, multicast(4, 1)}, {0, multicast(4, 2)}};
  sc_core::sc_start();
  for (const auto& port : bench.ports) {
    ASSERT_EQ(port->seen.size(), 3u);
    for (std::uint32_t i = 0; i < 3; ++i) {
      EXPECT_EQ(port->seen[i].at_ps, 1 * kUs);
      EXPECT_EQ(port->seen[i].chunk.chunk, i);
    }
  }
  EXPECT_EQ(bench.sw.forwarded(), 3u);
  EXPECT_EQ(bench.sw.replicated(), 6u);
}

TEST(MulticastSwitch, ZeroLatencyForwardsAtThePostedInstant) {
  Bench bench(0);
  bench.sw.set_unicast_route(1, 1);
  // No delay, no latency: out at once; a posted delay alone is still honoured.
  bench.a.posts = {{5 * kUs, unicast(1, 0)}, {6 * kUs, unicast(1, 1), 2 * kUs}};
  sc_core::sc_start();
  const auto& p1 = bench.ports[1]->seen;
  ASSERT_EQ(p1.size(), 2u);
  EXPECT_EQ(p1[0].at_ps, 5 * kUs);
  EXPECT_EQ(p1[1].at_ps, 8 * kUs);
}

TEST(MulticastSwitch, TableEntriesAreReplacedAndAnEmptyPortListIsRejected) {
  MulticastSwitch sw("sw", SwitchParams{});
  EXPECT_TRUE(sw.multicast_ports(3).empty());
  sw.set_multicast_group(3, {1, 2});
  sw.set_multicast_group(3, {0});
  EXPECT_EQ(sw.multicast_ports(3), (std::vector<int>{0}));
  EXPECT_THROW(sw.set_multicast_group(4, {}), std::invalid_argument);
  EXPECT_TRUE(sw.multicast_ports(4).empty());
}

// Trees with the same port list share it: re-setting or clearing one leaves the others.
TEST(MulticastSwitch, TreesSharingAPortListKeepItWhenOneOfThemChanges) {
  MulticastSwitch sw("sw", SwitchParams{});
  for (int tree : {0, 1, 2}) sw.set_multicast_group(tree, {1, 2});
  sw.set_multicast_group(3, {2, 1});  // another order is another list (chunks leave in it)
  sw.set_multicast_group(1, {0});
  sw.clear_multicast_group(2);
  EXPECT_EQ(sw.multicast_ports(0), (std::vector<int>{1, 2}));
  EXPECT_EQ(sw.multicast_ports(1), (std::vector<int>{0}));
  EXPECT_TRUE(sw.multicast_ports(2).empty());
  EXPECT_EQ(sw.multicast_ports(3), (std::vector<int>{2, 1}));
  sw.set_multicast_group(2, {1, 2});
  EXPECT_EQ(sw.multicast_ports(2), (std::vector<int>{1, 2}));
}

// A route holds its first three ports' sinks itself and the rest apart; a tree re-set
// with more ports than before gets them all, and the other trees keep theirs.
TEST(MulticastSwitch, TreesWithMorePortsThanTheEntryHoldsReachEveryPortOnce) {
  Bench bench(0, 7);
  bench.sw.set_multicast_group(8, {6, 5, 4, 3, 2, 1});
  bench.sw.set_multicast_group(9, {0, 1, 2, 3, 4, 5, 6});
  bench.sw.set_multicast_group(10, {3, 4, 5, 6, 0});
  bench.sw.set_multicast_group(8, {1, 2, 3, 4, 5, 6, 0});  // grows past its room
  bench.sw.set_multicast_group(10, {6});                   // shrinks to the entry
  EXPECT_EQ(bench.sw.multicast_ports(8), (std::vector<int>{1, 2, 3, 4, 5, 6, 0}));
  EXPECT_EQ(bench.sw.multicast_ports(9), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(bench.sw.multicast_ports(10), (std::vector<int>{6}));
  // Before the kernel runs: an exception after its threads have run confuses ASan's view
  // of the stack (the coroutines' stacks), a false report.
  EXPECT_THROW(bench.sw.set_multicast_group(11, {0, 70000}), std::invalid_argument);
  EXPECT_THROW(bench.sw.set_multicast_group(11, {-1}), std::invalid_argument);
  bench.a.posts = {{0, multicast(8, 0)}, {0, multicast(9, 1)}, {0, multicast(10, 2)}};
  sc_core::sc_start();
  const auto chunks = bench.chunks_by_port();
  for (std::size_t p = 0; p < bench.ports.size(); ++p) {
    const std::vector<std::uint32_t> expected =
        p == 6 ? std::vector<std::uint32_t>{0, 1, 2} : std::vector<std::uint32_t>{0, 1};
    EXPECT_EQ(chunks[p], expected) << "port " << p;
  }
  EXPECT_EQ(bench.sw.replicated(), 6u + 6u);
}

// A switch's tree table holds a list index in 2 bytes; indices from 65,535 on are kept
// apart. 70,000 trees with lists of their own (tree t: the base-3 digits of t as ports):
// every tree, below and beyond that, keeps its own list, cleared and replaced alike, and a
// chunk of the last tree leaves once per listed port.
std::vector<int> digits_base3(int tree) {
  std::vector<int> ports;
  for (int i = 0; i < 11; ++i, tree /= 3) ports.push_back(tree % 3);
  return ports;
}

TEST(MulticastSwitch, TreesBeyondTheNarrowTableKeepTheirOwnLists) {
  Bench bench(0);
  constexpr int kTrees = 70'000;
  for (int tree = 0; tree < kTrees; ++tree) bench.sw.set_multicast_group(tree, digits_base3(tree));
  for (int tree : {0, 1, 65'533, 65'534, 65'535, 65'536, kTrees - 1})
    EXPECT_EQ(bench.sw.multicast_ports(tree), digits_base3(tree)) << "tree " << tree;
  bench.sw.clear_multicast_group(65'600);
  EXPECT_TRUE(bench.sw.multicast_ports(65'600).empty());
  bench.sw.set_multicast_group(65'601, digits_base3(3));  // now a narrow list
  EXPECT_EQ(bench.sw.multicast_ports(65'601), digits_base3(3));
  bench.sw.set_multicast_group(2, digits_base3(66'000));  // now a wide one
  EXPECT_EQ(bench.sw.multicast_ports(2), digits_base3(66'000));
  bench.a.posts = {{0, multicast(kTrees - 1, 7)}};
  sc_core::sc_start();
  std::vector<std::size_t> expected(3, 0);
  for (int port : digits_base3(kTrees - 1)) ++expected[static_cast<std::size_t>(port)];
  for (std::size_t p = 0; p < 3; ++p) EXPECT_EQ(bench.ports[p]->seen.size(), expected[p]);
}

// A multicast list naming a port the switch does not have is found when the ports are
// bound, with the switch and the port named (not an out-of-range read per chunk).
TEST(MulticastSwitch, AMulticastListWithAPortTheSwitchLacksIsAnErrorAtTheStart) {
  Bench bench(0);
  bench.sw.set_multicast_group(3, {0, 7});
  bench.sw.set_multicast_group(3, {1});  // replaced before the start: no tree uses it
  bench.sw.set_multicast_group(4, {0, 5});
  expect_error([] { sc_core::sc_start(); },
               "sw: multicast group 4 leaves on port 5, but the switch has 3 ports");
}

// A link failure can cut a destination off (sim/faults.cpp removes its route): such a
// chunk, or one of a tree this switch has left, is dropped and counted, not forwarded.
TEST(MulticastSwitch, AChunkWithoutARouteIsDroppedAndCounted) {
  Bench bench(0);
  bench.sw.set_unicast_route(1, 0);
  bench.sw.set_unicast_route(2, 1);
  bench.sw.set_unicast_route(2, -1);  // removed
  bench.sw.set_multicast_group(5, {0, 2});
  bench.sw.clear_multicast_group(5);
  bench.a.posts = {{0, unicast(2, 0)}, {0, multicast(5, 1)}, {0, unicast(1, 2)}};
  sc_core::sc_start();
  EXPECT_EQ(bench.sw.unroutable(), 2u);
  EXPECT_EQ(bench.ports[0]->seen.size(), 1u);  // only the routable chunk
  EXPECT_TRUE(bench.ports[1]->seen.empty());
  EXPECT_TRUE(bench.ports[2]->seen.empty());
}

// The switch keeps the last two destinations' sinks at hand: three destinations mixed
// so that each is found there, replaced and looked up again; every chunk leaves on its
// destination's port (destination 5 + p on port p), in the order it came.
TEST(MulticastSwitch, ThreeDestinationsMixedEachLeaveOnTheirOwnPort) {
  Bench bench(0);
  bench.sw.set_unicast_route(5, 0);
  bench.sw.set_unicast_route(6, 1);
  bench.sw.set_unicast_route(7, 2);
  const std::vector<int> dsts = {5, 6, 5, 7, 6, 7, 5, 5, 7, 6};
  for (std::uint32_t i = 0; i < dsts.size(); ++i)
    bench.a.posts.push_back({(10 + i) * kUs, unicast(dsts[i], i)});
  sc_core::sc_start();
  const std::vector<std::vector<std::uint32_t>> expected = {{0, 2, 6, 7}, {1, 4, 9}, {3, 5, 8}};
  for (int port = 0; port < 3; ++port) {
    const auto& seen = bench.ports[port]->seen;
    std::vector<std::uint32_t> chunks;
    for (const auto& s : seen) chunks.push_back(s.chunk.chunk);
    EXPECT_EQ(chunks, expected[port]) << "port " << port;
  }
}

// Rerouting (sim/faults.cpp) changes routes while chunks flow: a route set, moved or
// removed after the start of simulation takes effect for the next chunk.
struct Rerouter : sc_core::sc_module {
  MulticastSwitch& sw;
  SC_HAS_PROCESS(Rerouter);
  Rerouter(sc_core::sc_module_name n, MulticastSwitch& s) : sc_module(n), sw(s) { SC_THREAD(run); }
  void run() {
    wait(ps_time(15 * kUs));
    sw.set_unicast_route(5, 0);  // moved
    sw.set_unicast_route(7, 1);  // a destination the switch had no route for
    wait(ps_time(10 * kUs));
    sw.set_unicast_route(5, -1);  // removed
  }
};

TEST(MulticastSwitch, RoutesChangedDuringTheRunApplyToTheNextChunk) {
  Bench bench(0);
  bench.sw.set_unicast_route(5, 2);
  Rerouter rerouter("rerouter", bench.sw);
  bench.a.posts = {{10 * kUs, unicast(5, 0)},
                   {20 * kUs, unicast(5, 1)},
                   {20 * kUs, unicast(7, 2)},
                   {30 * kUs, unicast(5, 3)}};
  sc_core::sc_start();
  const auto& p0 = bench.ports[0]->seen;
  const auto& p1 = bench.ports[1]->seen;
  const auto& p2 = bench.ports[2]->seen;
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_EQ(p2[0].chunk.chunk, 0u);
  ASSERT_EQ(p0.size(), 1u);
  EXPECT_EQ(p0[0].chunk.chunk, 1u);
  EXPECT_EQ(p0[0].at_ps, 20 * kUs);
  ASSERT_EQ(p1.size(), 1u);
  EXPECT_EQ(p1[0].chunk.chunk, 2u);
  EXPECT_EQ(bench.sw.unroutable(), 1u);  // chunk 3: its route was removed
  EXPECT_EQ(bench.sw.forwarded(), 4u);
}

// Reroutes trees at 15 us of the run: `reroute` calls the switch's set-up.
struct TreeRerouter : sc_core::sc_module {
  MulticastSwitch& sw;
  std::function<void(MulticastSwitch&)> reroute;
  SC_HAS_PROCESS(TreeRerouter);
  TreeRerouter(sc_core::sc_module_name n, MulticastSwitch& s,
               std::function<void(MulticastSwitch&)> r)
      : sc_module(n), sw(s), reroute(std::move(r)) {
    SC_THREAD(run);
  }
  void run() {
    wait(ps_time(15 * kUs));
    reroute(sw);
  }
};

// Rerouting a tree during the run: a list new to the switch (resolved then, spilling past
// the route's inline sinks), a list it has already, and a tree cleared.
TEST(MulticastSwitch, TreesReroutedDuringTheRunApplyToTheNextChunk) {
  Bench bench(0, 6);
  bench.sw.set_multicast_group(3, {0});
  bench.sw.set_multicast_group(5, {1, 2});
  TreeRerouter rerouter("rerouter", bench.sw, [](MulticastSwitch& sw) {
    sw.set_multicast_group(3, {5, 4, 3, 2, 1});
    sw.set_multicast_group(4, {0});
    sw.clear_multicast_group(5);
  });
  bench.a.posts = {{10 * kUs, multicast(3, 0)},
                   {10 * kUs, multicast(5, 1)},
                   {20 * kUs, multicast(3, 2)},
                   {20 * kUs, multicast(4, 3)},
                   {20 * kUs, multicast(5, 4)}};
  sc_core::sc_start();
  const std::vector<std::vector<std::uint32_t>> expected = {{0, 3}, {1, 2}, {1, 2}, {2}, {2}, {2}};
  EXPECT_EQ(bench.chunks_by_port(), expected);
  EXPECT_EQ(bench.sw.unroutable(), 1u);  // chunk 4: its tree was cleared
  EXPECT_EQ(bench.sw.replicated(), 1u + 4u);
}

// Trees 0 to `trees` - 1 on port 2 (the list that becomes the default one) and tree
// `trees` on ports 0 and 1.
void set_default_list_trees(MulticastSwitch& sw, int trees) {
  for (int tree = 0; tree < trees; ++tree) sw.set_multicast_group(tree, {2});
  sw.set_multicast_group(trees, {0, 1});
}

// Most trees on one list (the switch's default one, read from a bit per tree) and one
// tree on another, rerouted during the run: a default tree to another list, the other tree
// to the default list, a default tree cleared and a tree new to the switch on the default
// list; the trees not rerouted keep theirs.
TEST(MulticastSwitch, TreesOnTheDefaultListAndOffItAreReroutedAlike) {
  Bench bench(0);
  set_default_list_trees(bench.sw, 70);
  TreeRerouter rerouter("rerouter", bench.sw, [](MulticastSwitch& sw) {
    sw.set_multicast_group(5, {0});
    sw.set_multicast_group(70, {2});
    sw.clear_multicast_group(65);
    sw.set_multicast_group(130, {2});
  });
  bench.a.posts = {{10 * kUs, multicast(5, 0)},  {10 * kUs, multicast(70, 1)},
                   {20 * kUs, multicast(5, 2)},  {20 * kUs, multicast(70, 3)},
                   {20 * kUs, multicast(65, 4)}, {20 * kUs, multicast(130, 5)},
                   {20 * kUs, multicast(6, 6)}};
  sc_core::sc_start();
  const std::vector<std::vector<std::uint32_t>> expected = {{1, 2}, {1}, {0, 3, 5, 6}};
  EXPECT_EQ(bench.chunks_by_port(), expected);
  EXPECT_EQ(bench.sw.unroutable(), 1u);  // chunk 4: its tree was cleared
  EXPECT_EQ(bench.sw.replicated(), 1u);
  EXPECT_EQ(bench.sw.multicast_ports(70), (std::vector<int>{2}));
}

// Every tree finds its list from the switch's compact entries (4 bits a tree up to 16
// lists, 8 beyond): 300 trees over the lists given, a few on none, the first list the
// default one, and again after one is rerouted during the run (the entries dropped).
void expect_lists_by_tree(int num_ports, const std::vector<std::vector<int>>& lists) {
  Bench bench(0, num_ports);
  const auto list_of = [&lists](int tree) -> const std::vector<int>* {
    if (tree % 11 == 5) return nullptr;
    if (tree % 2 == 0) return &lists[0];
    return &lists[static_cast<std::size_t>(tree * 7) % (lists.size() - 1) + 1];
  };
  constexpr int kTrees = 300;
  for (int tree = 0; tree < kTrees; ++tree)
    if (const auto* ports = list_of(tree)) bench.sw.set_multicast_group(tree, *ports);
  TreeRerouter rerouter("rerouter", bench.sw,
                        [](MulticastSwitch& sw) { sw.set_multicast_group(131, {0}); });
  std::vector<std::vector<std::uint32_t>> expected(static_cast<std::size_t>(num_ports));
  std::uint64_t unroutable = 0;
  const std::vector<int> rerouted = {0};
  for (int round = 0; round < 2; ++round) {
    for (int tree = 0; tree < kTrees; ++tree) {
      const auto chunk = static_cast<std::uint32_t>(round * kTrees + tree);
      bench.a.posts.push_back(
          {(10 + 10 * static_cast<std::uint64_t>(round)) * kUs, multicast(tree, chunk)});
      const auto* ports = round == 1 && tree == 131 ? &rerouted : list_of(tree);
      if (ports == nullptr) {
        ++unroutable;
        continue;
      }
      for (int port : *ports) expected[static_cast<std::size_t>(port)].push_back(chunk);
    }
  }
  sc_core::sc_start();
  auto got = bench.chunks_by_port();
  for (auto& port : got) std::sort(port.begin(), port.end());
  for (auto& port : expected) std::sort(port.begin(), port.end());
  EXPECT_EQ(got, expected);
  EXPECT_EQ(bench.sw.unroutable(), unroutable);
}

TEST(MulticastSwitch, TreesFindTheirListsInFourBitEntries) {
  expect_lists_by_tree(3, {{0}, {1}, {2}, {0, 1}, {1, 2}, {2, 0}, {0, 1, 2}});
}

TEST(MulticastSwitch, TreesFindTheirListsInByteEntries) {
  std::vector<std::vector<int>> lists;  // 31 lists: every non-empty subset of 5 ports
  for (int bits = 1; bits < 32; ++bits) {
    lists.emplace_back();
    for (int port = 0; port < 5; ++port)
      if (bits >> port & 1) lists.back().push_back(port);
  }
  expect_lists_by_tree(5, lists);
}

// Trees moved onto the default list and off it during the run, all below 1,024 (the
// default set's copy in the switch's own lines is what the forward reads).
TEST(MulticastSwitch, TreesMovedOnAndOffTheDefaultListBelowTheInlineLimit) {
  Bench bench(0);
  set_default_list_trees(bench.sw, 1000);
  TreeRerouter rerouter("rerouter", bench.sw, [](MulticastSwitch& sw) {
    sw.set_multicast_group(3, {0});
    sw.set_multicast_group(1000, {2});
  });
  bench.a.posts = {{10 * kUs, multicast(3, 0)},
                   {10 * kUs, multicast(1000, 1)},
                   {20 * kUs, multicast(3, 2)},
                   {20 * kUs, multicast(1000, 3)}};
  sc_core::sc_start();
  const std::vector<std::vector<std::uint32_t>> expected = {{1, 2}, {1}, {0, 3}};
  EXPECT_EQ(bench.chunks_by_port(), expected);
}

// The default set of the first 1,024 trees is kept in the switch's own lines (a copy of
// the table's): trees on the default list and off it forward alike before and after the
// table outgrows that copy during the run, and a tree moved off the default list below
// 1,024 leaves it in both.
TEST(MulticastSwitch, TheDefaultSetHoldsAcrossTheInlineLimit) {
  Bench bench(0);
  set_default_list_trees(bench.sw, 1000);
  TreeRerouter rerouter("rerouter", bench.sw, [](MulticastSwitch& sw) {
    sw.set_multicast_group(3, {0});
    sw.set_multicast_group(1500, {2});
    sw.set_multicast_group(1023, {1});
  });
  bench.a.posts = {{10 * kUs, multicast(3, 0)},    {10 * kUs, multicast(999, 1)},
                   {10 * kUs, multicast(1000, 2)}, {20 * kUs, multicast(3, 3)},
                   {20 * kUs, multicast(999, 4)},  {20 * kUs, multicast(1000, 5)},
                   {20 * kUs, multicast(1500, 6)}, {20 * kUs, multicast(1023, 7)}};
  sc_core::sc_start();
  const std::vector<std::vector<std::uint32_t>> expected = {{2, 3, 5}, {2, 5, 7}, {0, 1, 4, 6}};
  EXPECT_EQ(bench.chunks_by_port(), expected);
}

// During the run (rerouting after a failure) a list naming a port the switch lacks is
// refused before anything changes: the tree keeps its list for the next chunk. The call
// is made between two sc_start calls, outside any process.
TEST(MulticastSwitch, AListWithAMissingPortDuringTheRunIsRefusedAndChangesNothing) {
#if defined(__SANITIZE_ADDRESS__)
  // Even outside any process, a throw after SystemC's coroutines have run gives ASan a
  // false stack-buffer-overflow report (google/sanitizers#189). The Release suite runs it.
  GTEST_SKIP() << "a throw after the kernel's threads ran misleads ASan";
#endif
  Bench bench(0);
  bench.sw.set_multicast_group(3, {0, 1});
  bench.a.posts = {{10 * kUs, multicast(3, 0)}, {30 * kUs, multicast(3, 1)}};
  sc_core::sc_start(ps_time(20 * kUs));
  expect_error(
      [&] {
        bench.sw.set_multicast_group(3, {2, 5});
      },
      "sw: multicast group 3 leaves on port 5, but the switch has 3 ports");
  sc_core::sc_start();
  const std::vector<std::vector<std::uint32_t>> expected = {{0, 1}, {0, 1}, {}};
  EXPECT_EQ(bench.chunks_by_port(), expected);
}

// Unicast routes as multicast lists: a port the switch lacks is an error at the start,
// and during the run it is refused before anything changes (the old route carries on).
TEST(MulticastSwitch, AUnicastRouteWithAPortTheSwitchLacksIsAnErrorAtTheStart) {
  Bench bench(0);
  bench.sw.set_unicast_route(4, 6);
  expect_error([] { sc_core::sc_start(); },
               "sw: the route to site 4 leaves on port 6, but the switch has 3 ports");
}

TEST(MulticastSwitch, AUnicastRouteWithAMissingPortDuringTheRunIsRefusedAndChangesNothing) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "a throw after the kernel's threads ran misleads ASan (see above)";
#endif
  Bench bench(0);
  bench.sw.set_unicast_route(5, 1);
  bench.a.posts = {{10 * kUs, unicast(5, 0)}, {30 * kUs, unicast(5, 1)}};
  sc_core::sc_start(ps_time(20 * kUs));
  expect_error([&] { bench.sw.set_unicast_route(5, 3); },
               "sw: the route to site 5 leaves on port 3, but the switch has 3 ports");
  sc_core::sc_start();
  const std::vector<std::vector<std::uint32_t>> expected = {{}, {0, 1}, {}};
  EXPECT_EQ(bench.chunks_by_port(), expected);
  EXPECT_EQ(bench.sw.unroutable(), 0u);
}

}  // namespace
}  // namespace aggnet
