// WanLink against closed forms (exact sc_time): one chunk, back-to-back chunks,
// propagation overlapping, header overhead.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <systemc>
#include <vector>

#include "module_harness.h"
#include "modules/core/chunk.h"
#include "modules/core/event_calendar.h"
#include "modules/core/time.h"
#include "modules/network/price_table.h"
#include "modules/network/wan_link.h"

namespace aggnet {
namespace {

using sc_core::sc_time;

using Source = testing::ByteSource;
using Sink = testing::ArrivalSink;

struct Bench {
  Source source{"source"};
  WanLink link;
  Sink sink{"sink"};
  explicit Bench(const WanLinkParams& p, bool jitter = false) : link("link", p, jitter, 7) {
    source.out.bind(link.in);
    link.out.bind(sink.in);
  }
};

WanLinkParams ten_ms_10g() {
  WanLinkParams p;
  p.delay_ps = 10'000'000'000;       // 10 ms
  p.bandwidth_bps = 10'000'000'000;  // 10 Gbps
  p.mtu_bytes = 2048;
  p.header_bytes = 80;
  return p;
}

// 1 MiB = 1'048'576 B in ceil(1'048'576 / 1968) = 533 packets: wire = 1'048'576 + 533 * 80
// = 1'091'216 B = 8'729'728 bit; at 10 Gbps (100 ps/bit) 872'972'800 ps.
constexpr std::uint64_t kSerialization1MiB = 872'972'800;

std::size_t threads_under(const sc_core::sc_object& object) {
  std::size_t n = std::string(object.kind()) == "sc_thread_process" ? 1 : 0;
  for (const auto* child : object.get_child_objects()) n += threads_under(*child);
  return n;
}

// tlm_utils spawns a b2nb adapter thread (a coroutine stack, two memory mappings) for a
// target socket without b_transport: one per link would exhaust vm.max_map_count on a
// 243-site full mesh (58,806 links) and costs every run's start-up.
TEST(WanLink, HasNoThreadOfItsOwn) {
  Bench b(ten_ms_10g());
  b.source.sends = {{ps_time(1), 1 << 20}};  // its thread is still waiting after time 0
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // adapter threads are spawned at start
  EXPECT_EQ(threads_under(b.link), 0u);
  EXPECT_EQ(threads_under(b.source), 1u);  // the counting sees a waiting thread
}

TEST(WanLink, AnAnnotatedHandOverStartsAfterItsAnnotation) {
  Bench b(ten_ms_10g());
  b.source.annotation = ps_time(1'000'000'000);  // 1 ms
  b.source.sends = {{sc_core::SC_ZERO_TIME, 1 << 20}, {sc_core::SC_ZERO_TIME, 1 << 20}};
  sc_core::sc_start();
  ASSERT_EQ(b.sink.arrivals.size(), 2u);
  EXPECT_EQ(b.sink.arrivals[0], ps_time(1'000'000'000 + kSerialization1MiB + 10'000'000'000));
  EXPECT_EQ(b.sink.arrivals[1], ps_time(1'000'000'000 + 2 * kSerialization1MiB + 10'000'000'000));
}

TEST(WanLink, OneChunkArrivesAfterSerializationPlusPropagation) {
  Bench b(ten_ms_10g());
  b.source.sends = {{sc_core::SC_ZERO_TIME, 1 << 20}};
  sc_core::sc_start();
  ASSERT_EQ(b.sink.arrivals.size(), 1u);
  EXPECT_EQ(b.sink.arrivals[0], ps_time(10'000'000'000 + kSerialization1MiB));
  EXPECT_EQ(b.link.busy_time(), ps_time(kSerialization1MiB));
  EXPECT_EQ(b.link.wire_bytes_sent(), 1'091'216u);
}

TEST(WanLink, BackToBackChunksQueueFifo) {
  Bench b(ten_ms_10g());
  constexpr int n = 7;
  for (int i = 0; i < n; ++i) b.source.sends.push_back({sc_core::SC_ZERO_TIME, 1 << 20});
  sc_core::sc_start();
  ASSERT_EQ(b.sink.arrivals.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(b.sink.arrivals[i], ps_time(10'000'000'000 + (i + 1) * kSerialization1MiB));
  }
  // The i-th chunk waited i serializations; the mean wait is 3 of them.
  EXPECT_NEAR(b.link.queueing_delay_ns().mean(), 3 * kSerialization1MiB / 1000.0, 1e-3);
  // Waits of 0, 872,972.8 ns (in [2^19, 2^20): bucket 20), 1.75 ms (21), 2.62 and 3.49 ms
  // (22), 4.36 and 5.24 ms (23).
  std::vector<std::uint64_t> buckets(24, 0);
  buckets[0] = 1;
  buckets[20] = buckets[21] = 1;
  buckets[22] = buckets[23] = 2;
  EXPECT_EQ(b.link.queueing_delay_ns().buckets(), buckets);
}

// Wire bytes with MTU 2048 and 80-byte headers: ceil(p / 1968) packets; at 10 Gbps a wire
// byte takes 800 ps.
std::uint64_t wire_2048_80(std::uint64_t payload) { return payload + (payload + 1967) / 1968 * 80; }

ChunkExtension data_chunk(std::uint64_t payload) {
  ChunkExtension c;
  c.payload_bytes = payload;
  return c;
}

// Payloads that share the table's entries evict one another and are priced again.
TEST(PriceTable, EveryPayloadIsPricedRightWhateverItEvicts) {
  PriceTable table(ten_ms_10g());
  std::vector<std::uint64_t> payloads{1 << 20};
  for (std::uint64_t p = 1; p <= 100'000; p += 997) payloads.push_back(p);
  for (int round = 0; round < 2; ++round) {
    for (const std::uint64_t p : payloads) {
      const auto& price = table.data(data_chunk(p));
      ASSERT_EQ(price.payload_bytes, p);
      ASSERT_EQ(price.wire_bytes, wire_2048_80(p)) << p;
      ASSERT_EQ(price.serialization, ps_time(800 * wire_2048_80(p))) << p;
    }
  }
  EXPECT_EQ(table.data(data_chunk(1 << 20)).serialization, ps_time(kSerialization1MiB));
  EXPECT_EQ(table.control(data_chunk(64)).wire_bytes, 144u);
  EXPECT_EQ(table.data(data_chunk(1 << 20)).wire_bytes, 1'091'216u);  // the control entry apart
}

TEST(PriceTable, ANetworkHasOneTablePerKindOfLink) {
  PriceTables tables;
  WanLinkParams other_delay = ten_ms_10g();
  other_delay.delay_ps = 1;  // the delay is not part of a price
  WanLinkParams other_mtu = ten_ms_10g();
  other_mtu.mtu_bytes = 9000;
  EXPECT_EQ(tables.of(ten_ms_10g()), tables.of(other_delay));
  EXPECT_NE(tables.of(ten_ms_10g()), tables.of(other_mtu));
  EXPECT_TRUE(tables.of(other_mtu)->prices(other_mtu));
  EXPECT_FALSE(tables.of(other_mtu)->prices(ten_ms_10g()));
}

// wan_link.h lays a crossing's state out in three aligned lines (a declaration of several
// fields under one alignas once spread a line over three).
TEST(WanLink, ACrossingsStateIsThreeCacheLines) {
  WanLink link("link", ten_ms_10g());
  EXPECT_EQ(link.hot_state_lines(), 3);
}

// A link's arrivals name the link their delivery went on to (the calendar fetches its hot
// state ahead); a delivery to something else names nothing.
TEST(WanLink, ItsArrivalsHintAtTheLinkItsDeliveryWentOnTo) {
  Source source{"source"};
  WanLink first("first", ten_ms_10g()), second("second", ten_ms_10g());
  Sink sink{"sink"};
  source.out.bind(first.in);
  first.out.bind(second.in);
  second.out.bind(sink.in);
  source.sends = {{sc_core::SC_ZERO_TIME, 1 << 20}};
  sc_core::sc_start();
  ASSERT_EQ(sink.arrivals.size(), 1u);
  EXPECT_EQ(first.arrival_hint(), second.hot_state());
  EXPECT_EQ(second.arrival_hint(), nullptr);
}

TEST(WanLink, APriceTableOfAnotherKindIsRefused) {
  WanLinkParams other = ten_ms_10g();
  other.bandwidth_bps = 100'000'000'000;
  auto table = std::make_shared<PriceTable>(other);
  try {
    WanLink link("link", ten_ms_10g(), false, 1, table);
    FAIL() << "a table of another kind was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("price table"), std::string::npos) << e.what();
  }
}

TEST(WanLink, PropagationIsNotOccupancy) {
  Bench b(ten_ms_10g());
  // 1 ms apart: each chunk's serialization (0.87 ms) ends before the next one starts,
  // so both propagate at once and neither waits.
  b.source.sends = {{sc_core::SC_ZERO_TIME, 1 << 20}, {ps_time(1'000'000'000), 1 << 20}};
  sc_core::sc_start();
  ASSERT_EQ(b.sink.arrivals.size(), 2u);
  EXPECT_EQ(b.sink.arrivals[1], ps_time(1'000'000'000 + 10'000'000'000 + kSerialization1MiB));
  EXPECT_EQ(b.link.queueing_delay_ns().max(), 0.0);
}

TEST(WanLink, HeaderOverheadPerPacket) {
  Bench b(ten_ms_10g());
  // 100 B fit one packet: 180 B on the wire = 1440 bit = 144'000 ps at 10 Gbps;
  // 1968 B exactly fill one packet, 1969 B need two.
  b.source.sends = {
      {sc_core::SC_ZERO_TIME, 100}, {ps_time(1'000'000'000), 1968}, {ps_time(2'000'000'000), 1969}};
  sc_core::sc_start();
  ASSERT_EQ(b.sink.arrivals.size(), 3u);
  EXPECT_EQ(b.sink.arrivals[0], ps_time(10'000'000'000 + 144'000));
  EXPECT_EQ(b.sink.arrivals[1], ps_time(11'000'000'000 + 2048 * 800));
  EXPECT_EQ(b.sink.arrivals[2], ps_time(12'000'000'000 + (1969 + 160) * 800));
}

TEST(WanLink, JitterDelaysButNeverReorders) {
  WanLinkParams p = ten_ms_10g();
  p.jitter_ps = 1'000'000'000;  // std-dev 1 ms of extra one-way delay
  Bench b(p, /*jitter=*/true);
  constexpr int n = 5000;
  constexpr std::uint64_t gap_ps = 100'000'000;  // 100 B every 100 us: only jitter moves them
  for (int i = 0; i < n; ++i) b.source.sends.push_back({ps_time(i * gap_ps), 100});
  sc_core::sc_start();
  ASSERT_EQ(b.sink.arrivals.size(), static_cast<std::size_t>(n));
  double extra_ms = 0;
  for (int i = 0; i < n; ++i) {
    if (i > 0) {
      ASSERT_GE(b.sink.arrivals[i], b.sink.arrivals[i - 1]);
    }
    const sc_time floor = ps_time(i * gap_ps + 10'000'000'000 + 144'000);
    ASSERT_GE(b.sink.arrivals[i], floor);
    extra_ms += (b.sink.arrivals[i] - floor).to_seconds() * 1e3 / n;
  }
  // 50 epochs of 10 ms, each |N(0, 1 ms)|: mean sqrt(2/pi) = 0.798 ms, standard error
  // 0.085 ms; the no-reordering clamp adds a little where a later epoch draws less.
  EXPECT_GT(extra_ms, 0.55);
  EXPECT_LT(extra_ms, 1.15);
}

// Hands 20 chunks of 1 MiB over at 0 and one at 2 ms; the link fails at 1 ms (one chunk
// serialized, none arrived) and is up again at 1.5 ms. Returns the arrivals.
struct FailAndRecover {
  std::uint64_t in_flight_after_down = 1, lost_after_down = 0;
  std::vector<sc_time> arrivals;
};
constexpr std::uint64_t kRecoverSendPs = 2'000'000'000;

FailAndRecover fail_with_a_backlog(Bench& b) {
  for (int i = 0; i < 20; ++i) b.source.sends.push_back({sc_core::SC_ZERO_TIME, 1 << 20});
  b.source.sends.push_back({ps_time(kRecoverSendPs), 1 << 20});
  FailAndRecover seen;
  struct Fault : sc_core::sc_module {
    WanLink* link;
    FailAndRecover* seen;
    SC_HAS_PROCESS(Fault);
    Fault(sc_core::sc_module_name n, WanLink* l, FailAndRecover* s)
        : sc_module(n), link(l), seen(s) {
      SC_THREAD(run);
    }
    void run() {
      wait(ps_time(1'000'000'000));
      link->set_down();
      seen->in_flight_after_down = link->bytes_in_flight();
      seen->lost_after_down = link->lost_messages();
      wait(ps_time(500'000'000));
      link->set_up();
    }
  } fault("fault", &b.link, &seen);
  sc_core::sc_start();
  seen.arrivals = b.sink.arrivals;
  return seen;
}

// A link that fails loses everything on it at that instant; one handed a chunk after it is
// up again serves it at once, ahead of the instants the lost backlog would have arrived at
// (it used to queue it behind them and throw "arrivals out of time order").
TEST(WanLink, ALinkThatFailsWithABacklogServesTheNextChunkAtOnceWhenUp) {
  Bench b(ten_ms_10g());
  const FailAndRecover seen = fail_with_a_backlog(b);
  EXPECT_EQ(seen.in_flight_after_down, 0u);
  EXPECT_EQ(seen.lost_after_down, 20u);
  ASSERT_EQ(seen.arrivals.size(), 1u);
  EXPECT_EQ(seen.arrivals[0], ps_time(kRecoverSendPs + kSerialization1MiB + 10'000'000'000));
  EXPECT_EQ(b.link.wire_bytes_sent(), 21 * 1'091'216u);
  EXPECT_EQ(b.link.wire_bytes_lost(), 20 * 1'091'216u);
  EXPECT_EQ(b.link.wire_bytes_delivered(), 1'091'216u);
}

// With jitter the no-reordering clamp forgets the lost backlog too: its last chunk would
// have arrived at 10 ms + 20 serializations = 27.5 ms.
TEST(WanLink, WithJitterTheNextChunkDoesNotWaitForTheLostBacklog) {
  WanLinkParams p = ten_ms_10g();
  p.jitter_ps = 1'000'000'000;  // |N(0, 1 ms)|
  Bench b(p, /*jitter=*/true);
  const FailAndRecover seen = fail_with_a_backlog(b);
  ASSERT_EQ(seen.arrivals.size(), 1u);
  EXPECT_GE(seen.arrivals[0], ps_time(kRecoverSendPs + kSerialization1MiB + 10'000'000'000));
  EXPECT_LT(seen.arrivals[0], ps_time(20'000'000'000));  // 8 standard deviations of jitter
}

TEST(WanLink, NoJitterWhenDisabled) {
  WanLinkParams p = ten_ms_10g();
  p.jitter_ps = 1'000'000'000;
  Bench b(p, /*jitter=*/false);
  b.source.sends = {{sc_core::SC_ZERO_TIME, 100}};
  sc_core::sc_start();
  EXPECT_EQ(b.sink.arrivals.at(0), ps_time(10'000'000'000 + 144'000));
}

// A multicast chunk is one transaction on several links at once (MulticastSwitch): what
// a link needs of its crossing (wire bytes, fate) is its own. The same 1 MiB transaction
// on a 2048/80 link (1,091,216 wire bytes, delivered) and a 9000/40 link (118 packets:
// 1,053,296 wire bytes), which fails while it propagates.
struct TwoLinks : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<TwoLinks> to_a{"to_a"}, to_b{"to_b"};
  ChunkPool pool;
  WanLink a, b;
  Sink sink_a{"sink_a"}, sink_b{"sink_b"};
  SC_HAS_PROCESS(TwoLinks);
  TwoLinks(sc_core::sc_module_name n, const WanLinkParams& pa, const WanLinkParams& pb)
      : sc_module(n), a("a", pa), b("b", pb) {
    to_a.bind(a.in);
    to_b.bind(b.in);
    a.out.bind(sink_a.in);
    b.out.bind(sink_b.in);
    SC_THREAD(run);
  }
  void run() {
    auto& trans = pool.allocate();
    chunk_of(trans).payload_bytes = 1 << 20;
    trans.acquire();  // a reference for each link
    for (auto* socket : {&to_a, &to_b}) {
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_time delay = sc_core::SC_ZERO_TIME;
      (*socket)->nb_transport_fw(trans, phase, delay);
    }
    wait(ps_time(5'000'000'000));  // both propagating
    b.set_down();
  }
};

TEST(WanLink, ATransactionOnTwoLinksAtOnceKeepsEachCrossingApart) {
  WanLinkParams pb = ten_ms_10g();
  pb.mtu_bytes = 9000;
  pb.header_bytes = 40;
  TwoLinks links("links", ten_ms_10g(), pb);
  sc_core::sc_start();
  EXPECT_EQ(links.sink_a.arrivals.size(), 1u);
  EXPECT_TRUE(links.sink_b.arrivals.empty());
  EXPECT_EQ(links.a.wire_bytes_delivered(), 1'091'216u);
  EXPECT_EQ(links.a.wire_bytes_lost(), 0u);
  EXPECT_EQ(links.b.wire_bytes_sent(), 1'053'296u);
  EXPECT_EQ(links.b.wire_bytes_lost(), 1'053'296u);
  EXPECT_EQ(links.b.wire_bytes_delivered(), 0u);
  EXPECT_EQ(links.a.bytes_in_flight(), 0u);
  EXPECT_EQ(links.b.bytes_in_flight(), 0u);
  EXPECT_EQ(links.pool.in_use(), 0u);  // both references released
}

}  // namespace
}  // namespace aggnet
