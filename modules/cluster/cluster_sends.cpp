// What a ComputeCluster sends: every message it makes, built here (through make_message)
// and handed to its access link, and what an acknowledgement or NACK does to its resends.
#include <algorithm>

#include "model/network_math.h"
#include "modules/cluster/compute_cluster.h"
#include "modules/core/messages.h"

namespace aggnet {

using sc_core::sc_time;

// A data transaction's payload; in burst mode also the chunks it carries (the payload is
// one transaction of config_.chunk_bytes, cut into chunks of burst_chunk_bytes).
void ComputeCluster::set_payload(ChunkExtension& chunk, std::uint64_t bytes) const {
  chunk.payload_bytes = bytes;
  if (burst_chunk_bytes_ == 0) return;
  chunk.burst_chunk_bytes = burst_chunk_bytes_;
  chunk.chunks = static_cast<std::uint32_t>(aggnet::num_chunks(bytes, burst_chunk_bytes_));
}

std::uint64_t ComputeCluster::num_chunks(std::uint64_t bytes) const {
  return aggnet::num_chunks(bytes, chunk_bytes_);
}

void ComputeCluster::send_control(const Send& send, ChunkKind kind) {
  auto& trans = make_message(pool_, kind, config_.site, send.dst, send.step, config_.control_bytes);
  auto& m = chunk_of(trans);
  if (kind == ChunkKind::kReady) {
    m.tree_id = send.tree_id;
    m.stamp_ps = send.stamp_ps;
    m.reply = send.reply;
  } else if (kind == ChunkKind::kGrant) {
    m.credits = send.credits;
    m.stamp_ps = now_ps();
  } else {
    m.chunk = send.chunk;
  }
  emit(trans);
}

// A data chunk of this site's, not yet sent.
tlm::tlm_generic_payload& ComputeCluster::data_chunk(ChunkKind kind, int step, int dst,
                                                     std::uint32_t index, std::uint64_t bytes) {
  auto& trans = make_message(pool_, kind, site_, dst, step, bytes);
  auto& chunk = chunk_of(trans);
  chunk.chunk = index;
  set_payload(chunk, bytes);
  return trans;
}

// Chunk i of this site's gradient, once on the multicast tree (dst -1) or as the unicast
// copy for dst (a reduction tree's: to its own FPGA, dst = this site); with loss recovery tracked
// per receiver until acknowledged.
void ComputeCluster::send_contribution(int step, const ClusterRoundPlan& plan, int dst,
                                       std::uint32_t i, int reduction_tree) {
  const std::uint64_t offset = std::uint64_t{i} * config_.chunk_bytes;
  const std::uint64_t bytes = std::min(config_.chunk_bytes, config_.gradient_bytes - offset);
  auto& trans = data_chunk(ChunkKind::kContribution, step, dst, i, bytes);
  auto& chunk = chunk_of(trans);
  chunk.tree_id = dst < 0 ? plan.tree_id : -1;
  chunk.reduction_tree = reduction_tree;
  chunk.group_size = static_cast<int>(plan.group.size());
  if (values_) chunk.data = values_->contribution(offset, bytes);
  emit(trans);
  if (!retransmitter_) return;
  const sc_time timeout = ps_time(plan.retransmit_timeout_ps);
  const sc_time departure = last_departure();
  for (int d : plan.group)
    if (d != config_.site && (dst < 0 || d == dst))
      retransmitter_->track(step, d, i, bytes, timeout, departure);
}

// A contribution's timer expired: the same chunk again, unicast to `dst` (the values are
// recomputed: a site's gradient of a step is a function of site, step and index).
sc_time ComputeCluster::resend(int step, int dst, std::uint32_t i) {
  const std::uint64_t offset = std::uint64_t{i} * config_.chunk_bytes;
  const std::uint64_t bytes = std::min(config_.chunk_bytes, config_.gradient_bytes - offset);
  auto& trans = data_chunk(ChunkKind::kContribution, step, dst, i, bytes);
  auto& chunk = chunk_of(trans);
  chunk.group_size = static_cast<int>(plan_of(step).group.size());
  chunk.retransmission = true;
  if (values_) chunk.data = values_->resent(step, i, offset, bytes);
  emit(trans);
  return last_departure();
}

void ComputeCluster::send_segment(int step, int ring_step, int dst, int segment) {
  const std::uint64_t offset_bytes = ring_split_.offset_bytes(static_cast<std::uint64_t>(segment));
  const std::uint64_t bytes = ring_split_.bytes(static_cast<std::uint64_t>(segment));
  const std::uint64_t n = num_chunks(bytes);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t off = i * chunk_bytes_;
    const std::uint64_t len = std::min(chunk_bytes_, bytes - off);
    auto& trans =
        data_chunk(ChunkKind::kRingSegment, step, dst, static_cast<std::uint32_t>(i), len);
    chunk_of(trans).ring_step = static_cast<std::uint32_t>(ring_step);
    chunk_of(trans).segment = static_cast<std::uint32_t>(segment);
    if (values_) chunk_of(trans).data = values_->ring_slice(step, offset_bytes + off, len);
    emit(trans);
  }
}

// Hands `streams_each` messages of G bytes per receiver to the access link, chunk by chunk
// round-robin over the messages (the flows share the link fairly), and notes when the
// access link has serialized the last one (it carries only this site's sends).
void ComputeCluster::send_streams(int step, int tag, const std::vector<int>& receivers,
                                  int streams_each) {
  const std::uint64_t n = num_chunks(config_.gradient_bytes);
  std::uint64_t serialization_ps = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t bytes =
        std::min(config_.chunk_bytes, config_.gradient_bytes - i * config_.chunk_bytes);
    for (int d : receivers) {
      for (int m = 0; m < streams_each; ++m) {
        auto& trans =
            data_chunk(ChunkKind::kRingSegment, step, d, static_cast<std::uint32_t>(i), bytes);
        chunk_of(trans).ring_step = static_cast<std::uint32_t>(tag);
        chunk_of(trans).segment = static_cast<std::uint32_t>(m);
        const std::uint64_t wire = transaction_wire_bytes(chunk_of(trans), config_.access.mtu_bytes,
                                                          config_.access.header_bytes);
        serialization_ps += aggnet::serialization_ps(wire, config_.access.bandwidth_bps);
        emit(trans);
      }
    }
  }
  transmit_complete_ = EventCalendar::now() + ps_time(serialization_ps);
}

// A NACK (the receiver's FPGA dropped the contribution) puts it in line again at once; an
// acknowledgement may complete what the program waits for.
void ComputeCluster::on_acknowledgement(const ChunkExtension& chunk) {
  if (!retransmitter_) return;
  if (chunk.reply) {
    retransmitter_->nack(chunk.step, chunk.src_site, chunk.chunk, chunk.credits);
  } else if (retransmitter_->ack(chunk.step, chunk.src_site, chunk.chunk, chunk.credits)) {
    ++acknowledged_;
    program_->on_acknowledged(chunk.src_site, chunk.step);
  }
}

}  // namespace aggnet
