// The host-based programs without SystemC: which segment a ring site sends after which
// arrival, under each step rule; the transfers' sends and waits.
#include <gtest/gtest.h>

#include <vector>

#include "collectives/host_programs.h"

namespace aggnet {
namespace {

// Ring {0, 1, 2}: a gradient of 3 floats, one float (one chunk of 4 bytes) per segment.
ProgramContext ring_context(int site) {
  ProgramContext c;
  c.site = site;
  c.gradient_bytes = 12;
  c.chunk_bytes = 4;
  c.order = {0, 1, 2};
  return c;
}

Arrival ring_chunk(int step, int ring_step, int segment) {
  Arrival a;
  a.kind = Arrival::Kind::kHostChunk;
  a.step = step;
  a.tag = ring_step;
  a.segment = segment;
  return a;
}

std::vector<int> segments(const Actions& out) {
  std::vector<int> sent;
  for (const Send& s : out.sends)
    if (s.kind == Send::Kind::kSegment) sent.push_back(s.segment);
  return sent;
}

// Position 1 of 3: reduce-scatter sends segments (1 - r) mod 3 = 1, 0 and receives
// (0 - r) mod 3 = 0, 2; the all-gather then sends its reduced segment 2, then 1.
TEST(RingProgram, SegmentRule) {
  EXPECT_EQ(RingProgram::send_segment(1, 0, 3), 1);
  EXPECT_EQ(RingProgram::receive_segment(1, 0, 3), 0);
  EXPECT_EQ(RingProgram::send_segment(1, 1, 3), 0);
  EXPECT_EQ(RingProgram::receive_segment(1, 1, 3), 2);
  EXPECT_EQ(RingProgram::send_segment(1, 2, 3), 2);
  EXPECT_EQ(RingProgram::receive_segment(1, 2, 3), 1);
  EXPECT_EQ(RingProgram::send_segment(1, 3, 3), 1);
  EXPECT_EQ(RingProgram::receive_segment(1, 3, 3), 0);
}

// Receive rule: each ring step's segment leaves when the previous step's chunks are in; a
// chunk that arrives early (ring step 2's before ring step 1's) is kept, and the arrival
// that completes step 1 sends steps 2's and 3's segments at once.
TEST(RingProgram, ReceiveRuleSendsOnArrival) {
  RingProgram program(ring_context(1), {});
  Actions out, events;
  program.start(0, 0, out);
  EXPECT_EQ(segments(out), std::vector<int>{1});
  EXPECT_EQ(out.sends[0].dst, 2);  // the successor
  ASSERT_EQ(out.wait.kind, Wait::Kind::kAwait);
  const std::uint64_t* finished = out.wait.count;
  program.on_arrival(ring_chunk(0, 0, 0), 10, events);
  EXPECT_EQ(segments(events), std::vector<int>{0});
  events.clear();
  program.on_arrival(ring_chunk(0, 2, 1), 20, events);  // early
  EXPECT_TRUE(events.sends.empty());
  program.on_arrival(ring_chunk(0, 1, 2), 30, events);
  EXPECT_EQ(segments(events), (std::vector<int>{2, 1}));
  EXPECT_EQ(*finished, 0u);
  events.clear();
  program.on_arrival(ring_chunk(0, 3, 0), 40, events);
  EXPECT_TRUE(events.sends.empty());
  EXPECT_EQ(*finished, 1u);
  out.clear();
  program.resume(40, false, out);
  EXPECT_EQ(out.wait.kind, Wait::Kind::kDone);
}

// Two chunks per segment (6 floats, chunks of 4 bytes): a ring step's chunks that came
// before it was the current one (ring step 1's during ring step 0, and step 1's first
// chunk during step 0) count when it starts, so one more completes it.
TEST(RingProgram, ReceiveRuleCountsChunksThatCameBeforeTheirRingStepOrStep) {
  ProgramContext context = ring_context(1);
  context.gradient_bytes = 24;
  RingProgram program(context, {});
  Actions out, events;
  program.start(0, 0, out);
  EXPECT_EQ(segments(out), std::vector<int>{1});
  const std::uint64_t* finished = out.wait.count;
  program.on_arrival(ring_chunk(0, 1, 2), 10, events);  // ring step 1's, early
  program.on_arrival(ring_chunk(0, 0, 0), 20, events);
  program.on_arrival(ring_chunk(1, 0, 0), 30, events);  // step 1's, early
  EXPECT_TRUE(events.sends.empty());
  program.on_arrival(ring_chunk(0, 0, 0), 40, events);  // ring step 0 complete
  EXPECT_EQ(segments(events), std::vector<int>{0});
  events.clear();
  program.on_arrival(ring_chunk(0, 1, 2), 50, events);  // ring step 1 complete
  EXPECT_EQ(segments(events), std::vector<int>{2});
  events.clear();
  for (int ring_step : {2, 3}) {
    const int segment = RingProgram::receive_segment(1, ring_step, 3);
    program.on_arrival(ring_chunk(0, ring_step, segment), 60, events);
    EXPECT_TRUE(events.sends.empty());
    program.on_arrival(ring_chunk(0, ring_step, segment), 70, events);
    // Ring step 2 complete: ring step 3's segment leaves; 3 complete: nothing more.
    EXPECT_EQ(segments(events), ring_step == 2 ? std::vector<int>{1} : std::vector<int>{});
    events.clear();
  }
  EXPECT_EQ(*finished, 1u);
  out.clear();
  program.resume(70, false, out);
  EXPECT_EQ(out.wait.kind, Wait::Kind::kDone);
  out.clear();
  program.start(1, 80, out);
  EXPECT_EQ(segments(out), std::vector<int>{1});
  events.clear();
  program.on_arrival(ring_chunk(1, 0, 0), 90, events);  // the second of two
  EXPECT_EQ(segments(events), std::vector<int>{0});
}

// sendrecv: after ring step r's chunks, wait until the successor (site 2) has this site's
// step-r segment; barrier: until every site has its step-r segment (site -1).
TEST(RingProgram, SendRecvAndBarrierWaitForTheRule) {
  for (const auto rule : {RingStepRule::kSendRecv, RingStepRule::kBarrier}) {
    RingProgram program(ring_context(1), {0, -1, rule, true});
    Actions out, events;
    program.start(0, 0, out);
    EXPECT_EQ(segments(out), std::vector<int>{1});
    ASSERT_EQ(out.wait.kind, Wait::Kind::kAwait);
    program.on_arrival(ring_chunk(0, 0, 0), 10, events);
    ASSERT_EQ(events.sends.size(), 1u);  // the segment is marked received, nothing sent
    EXPECT_EQ(events.sends[0].kind, Send::Kind::kMarkRingStep);
    EXPECT_EQ(events.sends[0].tag, 0);
    out.clear();
    program.resume(10, false, out);
    ASSERT_EQ(out.wait.kind, Wait::Kind::kRingRule);
    EXPECT_EQ(out.wait.site, rule == RingStepRule::kSendRecv ? 2 : -1);
    EXPECT_EQ(out.wait.ring_step, 0);
    out.clear();
    program.resume(15, false, out);  // the rule holds: ring step 1
    EXPECT_EQ(segments(out), std::vector<int>{0});
  }
}

// Reduce-scatter only (ring steps 0 and 1), a site outside the ring does nothing.
TEST(RingProgram, ReduceScatterStopsAfterNMinusOneSteps) {
  RingProgram program(ring_context(0), {0, 2, RingStepRule::kReceive, false});
  Actions out, events;
  program.start(0, 0, out);
  EXPECT_EQ(segments(out), std::vector<int>{0});
  program.on_arrival(ring_chunk(0, 0, 2), 10, events);
  EXPECT_EQ(segments(events), std::vector<int>{2});
  program.on_arrival(ring_chunk(0, 1, 1), 20, events);
  EXPECT_EQ(segments(events), std::vector<int>{2});  // nothing more
  EXPECT_EQ(*out.wait.count, 1u);
  ProgramContext outside = ring_context(5);
  RingProgram absent(outside, {});
  out.clear();
  absent.start(0, 0, out);
  EXPECT_EQ(out.wait.kind, Wait::Kind::kDone);
  EXPECT_TRUE(out.sends.empty());
}

ProgramContext transfer_context(int site, std::vector<int> order) {
  ProgramContext c;
  c.site = site;
  c.gradient_bytes = 3000;
  c.chunk_bytes = 1000;
  c.order = std::move(order);
  return c;
}

// Point-to-point [0 -> 1], 2 messages of 3 chunks: the sender hands both to its link and
// waits for them to leave it; the receiver waits for 6 chunks.
TEST(TransferProgram, PointToPoint) {
  ProgramContext c = transfer_context(0, {});
  ClusterRoundPlan p;
  p.group = {0, 1};
  c.rounds = {p};
  c.messages = 2;
  TransferProgram sender(c, Collective::kPointToPoint);
  Actions out;
  sender.start(0, 0, out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_EQ(out.sends[0].kind, Send::Kind::kStreams);
  EXPECT_EQ(out.sends[0].streams, 2);
  EXPECT_EQ(out.receivers, std::vector<int>{1});
  EXPECT_EQ(out.wait.kind, Wait::Kind::kTransmitted);
  EXPECT_TRUE(out.wait.even_if_now);
  c.site = 1;
  TransferProgram receiver(c, Collective::kPointToPoint);
  out.clear();
  receiver.start(0, 0, out);
  EXPECT_TRUE(out.sends.empty());
  ASSERT_EQ(out.wait.kind, Wait::Kind::kAwait);
  EXPECT_EQ(out.wait.target, 6u);
}

// Parameter server 2 with workers 0 and 1: the server waits for 2 x 3 chunks (tag 0), then
// sends to both workers (tag 1); a worker sends to the server and waits for 3 chunks.
TEST(TransferProgram, ParameterServer) {
  TransferProgram server(transfer_context(2, {2, 0, 1}), Collective::kParameterServer);
  Actions out, events;
  server.start(0, 0, out);
  EXPECT_TRUE(out.sends.empty());
  ASSERT_EQ(out.wait.kind, Wait::Kind::kAwait);
  EXPECT_EQ(out.wait.target, 6u);
  Arrival a;
  a.kind = Arrival::Kind::kHostChunk;
  for (int k = 0; k < 6; ++k) server.on_arrival(a, 10, events);
  EXPECT_EQ(*out.wait.count, 6u);
  out.clear();
  server.resume(10, false, out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_EQ(out.sends[0].tag, 1);
  EXPECT_EQ(out.receivers, (std::vector<int>{0, 1}));
  EXPECT_EQ(out.wait.kind, Wait::Kind::kTransmitted);
  TransferProgram worker(transfer_context(1, {2, 0, 1}), Collective::kParameterServer);
  out.clear();
  worker.start(0, 0, out);
  EXPECT_EQ(out.receivers, std::vector<int>{2});
  EXPECT_EQ(out.wait.target, 3u);
}

// Unicast all-to-all, member 2 of {0, 1, 2, 3}: receivers from its successor on (3, 0, 1);
// done once 3 x 3 chunks are in and its sends have left (no delta wait if already so).
TEST(TransferProgram, UnicastAllToAllStartsAtTheSuccessor) {
  TransferProgram program(transfer_context(2, {0, 1, 2, 3}), Collective::kUnicastAllToAll);
  Actions out;
  program.start(0, 0, out);
  EXPECT_EQ(out.receivers, (std::vector<int>{3, 0, 1}));
  EXPECT_EQ(out.wait.target, 9u);
  out.clear();
  program.resume(50, false, out);
  EXPECT_EQ(out.wait.kind, Wait::Kind::kTransmitted);
  EXPECT_FALSE(out.wait.even_if_now);
}

}  // namespace
}  // namespace aggnet
