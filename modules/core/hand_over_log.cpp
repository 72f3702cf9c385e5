#include "modules/core/hand_over_log.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace aggnet {

HandOverLog* HandOverLog::open_ = nullptr;

const char* chunk_kind_name(ChunkKind kind) {
  switch (kind) {
    case ChunkKind::kContribution:
      return "contribution";
    case ChunkKind::kReduced:
      return "reduced";
    case ChunkKind::kCredit:
      return "credit";
    case ChunkKind::kRingSegment:
      return "ring_segment";
    case ChunkKind::kReady:
      return "ready";
    case ChunkKind::kGrant:
      return "grant";
    case ChunkKind::kAck:
      return "ack";
  }
  return "?";
}

HandOverLog::HandOverLog() {
  if (open_ != nullptr) throw std::logic_error("HandOverLog: another log is open");
  open_ = this;
}

HandOverLog::~HandOverLog() { open_ = nullptr; }

ChunkSink HandOverLog::tap(const sc_core::sc_object& from, tlm::tlm_fw_transport_if<>* target,
                           ChunkSink next) {
  if (open_ == nullptr) return next;
  const auto* to = dynamic_cast<const sc_core::sc_object*>(target);
  Edge& edge = open_->edges_.emplace_back();
  edge.from = from.name();
  edge.to = to != nullptr ? to->name() : "(a target outside the model)";
  edge.next = next;
  edge.log = open_;
  return {&HandOverLog::pass, &edge};
}

void HandOverLog::pass(void* e, tlm::tlm_generic_payload& trans) {
  Edge& edge = *static_cast<Edge*>(e);
  const auto kind = static_cast<std::size_t>(chunk_of(trans).kind);
  if (edge.chunks[kind]++ == 0) edge.first[kind] = ++edge.log->firsts_;
  edge.next(trans);
}

std::string journey_text(const HandOverLog& log) {
  std::string text;
  for (std::size_t k = 0; k < kChunkKinds; ++k) {
    std::vector<const HandOverLog::Edge*> used;
    for (const auto& edge : log.edges())
      if (edge.chunks[k] > 0) used.push_back(&edge);
    if (used.empty()) continue;
    std::sort(used.begin(), used.end(),
              [k](const auto* a, const auto* b) { return a->first[k] < b->first[k]; });
    text += std::string(chunk_kind_name(static_cast<ChunkKind>(k))) + ":\n";
    for (const auto* edge : used)
      text += "  " + edge->from + " -> " + edge->to + ": " + std::to_string(edge->chunks[k]) + "\n";
  }
  std::string idle;
  for (const auto& edge : log.edges())
    if (std::all_of(edge.chunks.begin(), edge.chunks.end(), [](auto n) { return n == 0; }))
      idle += "  " + edge.from + " -> " + edge.to + "\n";
  if (!idle.empty()) text += "bound, carried nothing:\n" + idle;
  return text;
}

}  // namespace aggnet
