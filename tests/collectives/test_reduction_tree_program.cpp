// ReductionTreeProgram without SystemC: one paced stream per tree of the forest (its chunk
// range, interval and offset, to the site's own FPGA, marked with the tree), the aligned
// start's ready messages, and one result per chunk index holding every member.
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "collectives/reduction_tree.h"

namespace aggnet {
namespace {

constexpr std::uint64_t kChunk = 1000;

// Site 1 of members {0, 1, 2}, a gradient of 3 chunks: tree 0 has chunks 0-1 at 10 ps
// intervals from offset 5, tree 1 chunk 2 from offset 0.
ProgramContext context(bool aligned) {
  ProgramContext c;
  c.site = 1;
  c.gradient_bytes = 3 * kChunk;
  c.chunk_bytes = kChunk;
  ClusterRoundPlan p;
  p.group = {0, 1, 2};
  p.aligned_start = aligned;
  p.start_delay_ps = 50;
  c.rounds = {p};
  c.trees = {TreeStream{0, 0, 2, 10, 5}, TreeStream{1, 2, 3, 0, 0}};
  return c;
}

// (instant, dst, chunk, tree) in emission order.
std::vector<std::tuple<std::uint64_t, int, std::uint64_t, int>> drain(PacedSchedule& schedule) {
  std::vector<std::tuple<std::uint64_t, int, std::uint64_t, int>> sent;
  for (auto* s = schedule.next(); s != nullptr; s = schedule.next()) {
    sent.emplace_back(s->next_ps, s->dst, s->chunk, s->reduction_tree);
    schedule.advance(*s);
  }
  return sent;
}

Arrival result(std::uint32_t chunk, int contributions) {
  Arrival a;
  a.kind = Arrival::Kind::kResult;
  a.src = 2;
  a.chunk = chunk;
  a.group_size = 3;
  a.contributions = contributions;
  return a;
}

TEST(ReductionTreeProgram, EachTreeIsOneStreamToTheOwnFpgaAtItsOffsetAndInterval) {
  ReductionTreeProgram program(context(false));
  Actions out;
  program.start(0, 100, out);
  EXPECT_TRUE(out.sends.empty());
  ASSERT_EQ(out.wait.kind, Wait::Kind::kPaced);
  const std::vector<std::tuple<std::uint64_t, int, std::uint64_t, int>> expected = {
      {100, 1, 2, 1}, {105, 1, 0, 0}, {115, 1, 1, 0}};
  EXPECT_EQ(drain(*out.wait.paced), expected);
  EXPECT_EQ(program.agreed_start_ps(), 100u);
  EXPECT_EQ(program.first_send_ps(), 100u);
}

TEST(ReductionTreeProgram, TheRoundEndsWhenEveryChunkHoldsEveryMember) {
  ReductionTreeProgram program(context(false));
  Actions out;
  program.start(0, 0, out);
  drain(*out.wait.paced);
  out.clear();
  program.resume(200, false, out);
  ASSERT_EQ(out.wait.kind, Wait::Kind::kAwait);
  const std::uint64_t* complete = out.wait.count;
  EXPECT_EQ(out.wait.target, 3u);
  EXPECT_NE(program.waiting_for({"a", "b", "c"}), "");
  Actions none;
  EXPECT_EQ(program.on_arrival(result(0, 3), 210, none), Verdict::kAccepted);
  EXPECT_EQ(program.on_arrival(result(2, 3), 220, none), Verdict::kAccepted);
  EXPECT_EQ(*complete, 2u);
  EXPECT_EQ(program.on_arrival(result(2, 3), 225, none), Verdict::kDuplicate);
  EXPECT_EQ(program.on_arrival(result(1, 3), 230, none), Verdict::kAccepted);
  EXPECT_EQ(*complete, 3u);
  out.clear();
  program.resume(230, false, out);
  EXPECT_EQ(out.wait.kind, Wait::Kind::kDone);
  EXPECT_EQ(program.counters().accepted_results, 3u);
  EXPECT_EQ(program.counters().expected_results, 3u);
  EXPECT_EQ(program.counters().duplicates, 1u);
  EXPECT_EQ(program.waiting_for({"a", "b", "c"}), "");
}

// Aligned start: a ready message to each other member; the streams start at the last
// ready stamp (120) + the start delay (50), each at its offset after that.
TEST(ReductionTreeProgram, AlignedStartWaitsForEveryReadyMessage) {
  ReductionTreeProgram program(context(true));
  Actions out;
  program.start(0, 100, out);
  ASSERT_EQ(out.sends.size(), 2u);
  EXPECT_EQ(out.sends[0].kind, Send::Kind::kReady);
  EXPECT_EQ(out.sends[0].dst, 0);
  EXPECT_EQ(out.sends[1].dst, 2);
  EXPECT_EQ(out.sends[1].stamp_ps, 100u);
  EXPECT_EQ(out.wait.kind, Wait::Kind::kAwait);
  EXPECT_EQ(program.waiting_for({"a", "b", "c"}), "ready messages of step 0 from a,c");
  Actions none;
  program.on_ready(0, 0, 90, false, none);
  out.clear();
  program.resume(130, false, out);
  EXPECT_EQ(out.wait.kind, Wait::Kind::kAwait);
  program.on_ready(2, 0, 120, false, none);
  out.clear();
  program.resume(140, false, out);
  ASSERT_EQ(out.wait.kind, Wait::Kind::kUntil);
  EXPECT_EQ(out.wait.at_ps, 170u);
  out.clear();
  program.resume(170, false, out);
  ASSERT_EQ(out.wait.kind, Wait::Kind::kPaced);
  const std::vector<std::tuple<std::uint64_t, int, std::uint64_t, int>> expected = {
      {170, 1, 2, 1}, {175, 1, 0, 0}, {185, 1, 1, 0}};
  EXPECT_EQ(drain(*out.wait.paced), expected);
  EXPECT_EQ(program.agreed_start_ps(), 170u);
}

}  // namespace
}  // namespace aggnet
