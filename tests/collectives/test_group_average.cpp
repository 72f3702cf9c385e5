// GroupAverageProgram without SystemC: the round's sends and waits, instant by instant.
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "collectives/group_average.h"

namespace aggnet {
namespace {

// A round's send offsets answer as the std::map they replace: by receiver, whatever the
// order given, the first of a repeated receiver, 0 for a receiver without one.
TEST(SendOffsets, AnswerAsAMapByReceiver) {
  const SendOffsets offsets = {{7, 70}, {2, 20}, {5, 50}, {2, 99}};
  EXPECT_EQ(offsets.to(2), 20u);
  EXPECT_EQ(offsets.to(5), 50u);
  EXPECT_EQ(offsets.to(7), 70u);
  for (int absent : {-1, 0, 3, 6, 8}) EXPECT_EQ(offsets.to(absent), 0u) << absent;
  EXPECT_FALSE(offsets.empty());
  const SendOffsets copy = offsets;
  EXPECT_EQ(copy.to(7), 70u);
  EXPECT_TRUE(SendOffsets{}.empty());
  EXPECT_EQ(SendOffsets{}.to(1), 0u);
}

constexpr std::uint64_t kChunk = 1000;

// Site `site` of group {0, 1, 2}, a gradient of `chunks` chunks.
ProgramContext context(int site, std::uint64_t chunks, ClusterRoundPlan plan) {
  ProgramContext c;
  c.site = site;
  c.gradient_bytes = chunks * kChunk;
  c.chunk_bytes = kChunk;
  c.rounds = {std::move(plan)};
  return c;
}

ClusterRoundPlan plan(std::vector<int> group, std::uint64_t interval_ps) {
  ClusterRoundPlan p;
  p.group = std::move(group);
  p.tree_id = 7;
  p.pacing_interval_ps = interval_ps;
  return p;
}

// The paced emissions (instant, receiver, chunk) in the order the issuer makes them.
std::vector<std::tuple<std::uint64_t, int, std::uint64_t>> drain(PacedSchedule& schedule) {
  std::vector<std::tuple<std::uint64_t, int, std::uint64_t>> sent;
  for (auto* s = schedule.next(); s != nullptr; s = schedule.next()) {
    sent.emplace_back(s->next_ps, s->dst, s->chunk);
    schedule.advance(*s);
  }
  return sent;
}

Arrival result(int step, std::uint32_t chunk, int group_size) {
  Arrival a;
  a.kind = Arrival::Kind::kResult;
  a.src = 0;
  a.step = step;
  a.chunk = chunk;
  a.group_size = group_size;
  a.contributions = group_size - 1;
  return a;
}

// Unicast copies, each at its receiver's send offset after the start (t = 1000): to site 1
// 50 ps later than to site 2, one chunk every 100 ps each, merged in time order.
TEST(GroupAverageProgram, PacedUnicastStreamsStartAtTheirOffsets) {
  ClusterRoundPlan p = plan({0, 1, 2}, 100);
  p.send_offset_ps = {{1, 50}, {2, 0}};
  ProgramContext c = context(0, 3, p);
  c.multicast = false;
  GroupAverageProgram program(c);
  Actions out;
  program.start(0, 1000, out);
  EXPECT_TRUE(out.sends.empty());
  ASSERT_EQ(out.wait.kind, Wait::Kind::kPaced);
  const std::vector<std::tuple<std::uint64_t, int, std::uint64_t>> expected = {
      {1000, 2, 0}, {1050, 1, 0}, {1100, 2, 1}, {1150, 1, 1}, {1200, 2, 2}, {1250, 1, 2}};
  EXPECT_EQ(drain(*out.wait.paced), expected);
  EXPECT_EQ(program.agreed_start_ps(), 1000u);
}

// Multicast: one stream on the tree, at the (common) offset of the members: 30 ps.
TEST(GroupAverageProgram, PacedMulticastIsOneStream) {
  ClusterRoundPlan p = plan({2, 0, 1}, 10);
  p.send_offset_ps = {{2, 30}, {1, 30}};
  GroupAverageProgram program(context(0, 2, p));
  Actions out;
  program.start(0, 0, out);
  const std::vector<std::tuple<std::uint64_t, int, std::uint64_t>> expected = {{30, -1, 0},
                                                                               {40, -1, 1}};
  EXPECT_EQ(drain(*out.wait.paced), expected);
}

// After the streams: one reduced chunk per chunk index completes the round.
TEST(GroupAverageProgram, RoundCompletesWithOneResultPerChunk) {
  GroupAverageProgram program(context(1, 2, plan({0, 1, 2}, 10)));
  Actions out;
  program.start(0, 0, out);
  drain(*out.wait.paced);
  out.clear();
  program.resume(20, false, out);
  ASSERT_EQ(out.wait.kind, Wait::Kind::kAwait);
  const std::uint64_t* complete = out.wait.count;
  EXPECT_EQ(out.wait.target, 2u);
  EXPECT_EQ(out.wait.retry_at_ps, kNever);  // no loss recovery
  Actions events;
  EXPECT_EQ(program.on_arrival(result(0, 1, 3), 500, events), Verdict::kAccepted);
  EXPECT_EQ(*complete, 1u);
  EXPECT_EQ(program.on_arrival(result(0, 1, 3), 510, events), Verdict::kDuplicate);
  EXPECT_EQ(program.on_arrival(result(0, 0, 3), 520, events), Verdict::kAccepted);
  EXPECT_EQ(*complete, 2u);
  out.clear();
  program.resume(520, false, out);
  EXPECT_EQ(out.wait.kind, Wait::Kind::kDone);
  EXPECT_EQ(program.counters().accepted_results, 2u);
  EXPECT_EQ(program.counters().expected_results, 2u);
  EXPECT_EQ(program.counters().duplicates, 1u);
  EXPECT_TRUE(events.sends.empty());  // no acknowledgements without loss recovery
}

// Without aggregation a chunk index is complete once both other members' contributions
// (one contribution each) have been passed on.
TEST(GroupAverageProgram, PassedOnContributionsCountPerSender) {
  GroupAverageProgram program(context(0, 1, plan({0, 1, 2}, 10)));
  Actions out, events;
  Arrival a = result(0, 0, 3);
  a.kind = Arrival::Kind::kPassedOn;
  a.contributions = 1;
  a.src = 1;
  program.on_arrival(a, 5, events);  // before this site started: counted all the same
  program.start(0, 10, out);
  drain(*out.wait.paced);
  out.clear();
  program.resume(10, false, out);
  ASSERT_EQ(out.wait.kind, Wait::Kind::kAwait);
  EXPECT_EQ(*out.wait.count, 0u);
  a.src = 2;
  program.on_arrival(a, 30, events);
  EXPECT_EQ(*out.wait.count, 1u);
}

// Aligned start: site 1 announces itself at t = 100 on its tree, hears site 0 (stamp 300)
// and site 2 (stamp 200): the agreed start is max(100, 300, 200) + 500 = 800.
TEST(GroupAverageProgram, AlignedStartIsLastReadyPlusDelay) {
  ClusterRoundPlan p = plan({0, 1, 2}, 10);
  p.aligned_start = true;
  p.start_delay_ps = 500;
  GroupAverageProgram program(context(1, 1, p));
  Actions out, events;
  program.start(0, 100, out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_EQ(out.sends[0].kind, Send::Kind::kReady);
  EXPECT_EQ(out.sends[0].dst, -1);
  EXPECT_EQ(out.sends[0].tree_id, 7);
  EXPECT_EQ(out.sends[0].stamp_ps, 100u);
  EXPECT_EQ(out.wait.kind, Wait::Kind::kAwait);
  program.on_ready(0, 0, 300, false, events);
  out.clear();
  program.resume(300, false, out);
  EXPECT_EQ(out.wait.kind, Wait::Kind::kAwait);  // site 2 not heard yet
  program.on_ready(2, 0, 200, false, events);
  out.clear();
  program.resume(310, false, out);
  ASSERT_EQ(out.wait.kind, Wait::Kind::kUntil);
  EXPECT_EQ(out.wait.at_ps, 800u);
  out.clear();
  program.resume(800, false, out);
  EXPECT_EQ(out.wait.kind, Wait::Kind::kPaced);
  EXPECT_EQ(out.wait.paced->next()->next_ps, 800u);
  EXPECT_EQ(program.agreed_start_ps(), 800u);
  EXPECT_TRUE(events.sends.empty());
}

// Loss recovery: at the retry time the ready message goes again, unicast, to the members
// not heard from (site 2), one timeout later again; a repeated ready message is answered.
TEST(GroupAverageProgram, ReadyRepeatedToSilentMembers) {
  ClusterRoundPlan p = plan({0, 1, 2}, 10);
  p.aligned_start = true;
  p.retransmit_timeout_ps = 1000;
  ProgramContext c = context(1, 1, p);
  c.reliable = true;
  GroupAverageProgram program(c);
  Actions out, events;
  program.start(0, 100, out);
  EXPECT_EQ(out.wait.retry_at_ps, 1100u);
  program.on_ready(0, 0, 150, false, events);
  EXPECT_TRUE(events.sends.empty());  // first time: no answer
  out.clear();
  program.resume(1100, true, out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_EQ(out.sends[0].dst, 2);
  EXPECT_EQ(out.sends[0].stamp_ps, 100u);
  EXPECT_TRUE(out.sends[0].repeat);
  EXPECT_EQ(out.wait.retry_at_ps, 2100u);
  program.on_ready(0, 0, 150, false, events);  // site 0 repeats: it missed ours
  ASSERT_EQ(events.sends.size(), 1u);
  EXPECT_EQ(events.sends[0].dst, 0);
  EXPECT_TRUE(events.sends[0].reply);
  EXPECT_EQ(program.counters().control_retransmissions, 1u);
  EXPECT_EQ(program.waiting_for({"a", "b", "c"}), "ready messages of step 0 from c");
}

// Credit: grants go out at the start (t = 0), the stream starts at the earliest offset
// (40 ps), and each chunk waits for a credit from every receiver: grant 1, then one more
// per freed slot.
TEST(GroupAverageProgram, CreditClockedChunksFollowCredits) {
  ClusterRoundPlan p = plan({0, 1}, 0);
  p.own_slots = 4;
  p.send_offset_ps = {{1, 40}};
  ProgramContext c = context(0, 3, p);
  c.credit = true;
  GroupAverageProgram program(c);
  Actions out;
  program.start(0, 0, out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_EQ(out.sends[0].kind, Send::Kind::kGrant);
  EXPECT_EQ(out.sends[0].dst, 1);
  EXPECT_EQ(out.sends[0].credits, 4u);
  ASSERT_EQ(out.wait.kind, Wait::Kind::kOffset);
  EXPECT_EQ(out.wait.at_ps, 40u);
  out.clear();
  program.resume(40, false, out);
  EXPECT_TRUE(out.sends.empty());  // no grant from site 1 yet
  EXPECT_EQ(program.first_send_ps(), 40u);
  EXPECT_EQ(program.waiting_for({"a", "b"}), "credits of step 0 from b");
  program.on_grant(1, 0, 1);
  out.clear();
  program.resume(60, false, out);
  ASSERT_EQ(out.sends.size(), 1u);  // chunk 0 on the tree, then out of credit
  EXPECT_EQ(out.sends[0].kind, Send::Kind::kContribution);
  EXPECT_EQ(out.sends[0].dst, -1);
  EXPECT_EQ(out.sends[0].chunk, 0u);
  program.on_credit(1, 0, 2);  // two slots freed: chunks 1 and 2
  out.clear();
  program.resume(90, false, out);
  ASSERT_EQ(out.sends.size(), 2u);
  EXPECT_EQ(out.sends[1].chunk, 2u);
  EXPECT_EQ(out.wait.kind, Wait::Kind::kAwait);
  EXPECT_EQ(out.wait.target, 3u);  // now the results
}

// Loss recovery with credit: until a first result arrives, grants are repeated at every
// retry time; after it, not (with aggregation a result shows every sender had its grant).
TEST(GroupAverageProgram, GrantsRepeatedUntilAFirstResult) {
  ClusterRoundPlan p = plan({0, 1, 2}, 0);
  p.own_slots = 2;
  p.retransmit_timeout_ps = 100;
  ProgramContext c = context(0, 2, p);
  c.credit = true;
  c.reliable = true;
  GroupAverageProgram program(c);
  Actions out, events;
  program.start(0, 0, out);  // grants to 1 and 2; no offset: waiting for credits
  EXPECT_EQ(out.sends.size(), 2u);
  out.clear();
  program.resume(100, true, out);
  EXPECT_EQ(out.sends.size(), 2u);
  EXPECT_TRUE(out.sends[0].repeat);
  EXPECT_EQ(program.counters().control_retransmissions, 2u);
  // The FPGA acknowledged each contribution as it added it: the result asks for nothing.
  program.on_arrival(result(0, 0, 3), 150, events);
  EXPECT_TRUE(events.sends.empty());
  out.clear();
  program.resume(200, true, out);
  EXPECT_TRUE(out.sends.empty());
}

// A result arriving again after the round, for a retransmission, is recognised and its
// requester acknowledged again.
TEST(GroupAverageProgram, ResultAfterTheRoundIsRecognised) {
  ProgramContext c = context(0, 1, plan({0, 1}, 10));
  c.reliable = true;
  GroupAverageProgram program(c);
  Actions out, events;
  program.start(0, 0, out);
  drain(*out.wait.paced);
  program.on_arrival(result(0, 0, 2), 50, events);
  out.clear();
  program.resume(50, false, out);
  EXPECT_EQ(out.wait.kind, Wait::Kind::kDone);
  events.clear();
  Arrival again = result(0, 0, 2);
  again.requester = 1;
  again.retransmission = true;
  EXPECT_EQ(program.on_arrival(again, 90, events), Verdict::kRecognised);
  ASSERT_EQ(events.sends.size(), 1u);
  EXPECT_EQ(events.sends[0].dst, 1);
  EXPECT_EQ(program.counters().recognised_duplicates, 1u);
}

TEST(GroupAverageProgram, SitsOutARoundOfOne) {
  GroupAverageProgram program(context(0, 1, plan({0}, 10)));
  Actions out;
  EXPECT_FALSE(program.communicates(0));
  program.start(0, 0, out);
  EXPECT_EQ(out.wait.kind, Wait::Kind::kDone);
  EXPECT_TRUE(out.sends.empty());
}

}  // namespace
}  // namespace aggnet
