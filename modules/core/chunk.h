// The payload every aggnet module exchanges: a tlm_generic_payload carrying a
// ChunkExtension with the chunk's metadata, allocated from a ChunkPool.
//
// Transport convention (aggnet "posted" AT protocol): an initiator calls
// nb_transport_fw(trans, BEGIN_REQ, delay) where now + delay is the instant the chunk's
// last bit is available to the target; the target returns TLM_COMPLETED at once and
// takes over the reference it was handed (it forwards it or calls release()). A transaction
// may be held by several modules at once, each with a reference (a multicast chunk on
// every branch of its tree): once sent, its metadata is read and never written, and a
// module that needs other metadata sends a new transaction (ChunkPool::clone). There is no
// backward path: flow control is modelled explicitly (pacing rates, credit messages),
// as on the real network.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <tlm>
#include <utility>
#include <vector>

#include "common/units.h"

namespace aggnet {

enum class ChunkKind : std::uint8_t {
  kContribution,  ///< one site's gradient chunk on its way to the group's aggregators
  kReduced,       ///< an aggregator's sum, on its way to the local cluster
  kCredit,        ///< a freed aggregation slot returned to a sender (credit flow control)
  kRingSegment,   ///< a host-based ring all-reduce chunk (no in-network help)
  kReady,         ///< a member announces it is ready to start a round (aligned start)
  kGrant,         ///< a receiver grants a sender its credit window when it enters a round
  kAck,           ///< a receiver's cluster acknowledges a chunk's result (loss recovery)
};

/// Control messages (ready, grant, credit, ack) carry no gradient data: links count them
/// apart from the payload (`control_bytes`, `control_messages`).
inline bool is_control(ChunkKind kind) {
  // One bit test, no branch: a link sees data kinds interleaved unpredictably.
  constexpr unsigned kControlKinds = 1u << static_cast<unsigned>(ChunkKind::kCredit) |
                                     1u << static_cast<unsigned>(ChunkKind::kReady) |
                                     1u << static_cast<unsigned>(ChunkKind::kGrant) |
                                     1u << static_cast<unsigned>(ChunkKind::kAck);
  return (kControlKinds >> static_cast<unsigned>(kind)) & 1u;
}

/// Chunk metadata. `data` is empty in timing mode; in functional mode it holds the
/// chunk's float values (payload_bytes / 4 of them), shared with the clones made from it.
// The fields up to src_site share a cache line with the payload's reference count
// (ChunkPool::Block): what every link crossing and switch reads is there, so that a hop
// touches one line of the transaction; the rest is read where a chunk ends its journey.
struct ChunkExtension : tlm::tlm_extension<ChunkExtension> {
  ChunkKind kind = ChunkKind::kContribution;
  bool retransmission = false;  ///< a copy re-sent after a timeout (loss recovery)
  bool reply = false;           ///< kReady: an answer to a repeated one; kAck: negative (dropped)
  int dst_site = -1;            ///< unicast destination, -1 for multicast
  int tree_id = -1;             ///< multicast group table key, -1 for unicast
  /// Burst mode: chunks carried by this transaction (`chunk` then indexes the burst; all
  /// but the last are `burst_chunk_bytes` long). 1: one chunk (burst_chunk_bytes unused).
  std::uint32_t chunks = 1;
  std::uint64_t payload_bytes = 0;  ///< bytes of gradient data (before headers)
  int step = 0;                     ///< training step (the round index of the run)
  int src_site = -1;                ///< sender (the reducing FPGA's site for kReduced)
  int group_size = 0;               ///< members of the sender's group in this round
  int contributions = 1;            ///< contributions summed into this chunk
  std::uint32_t chunk = 0;          ///< chunk index within the gradient (or ring segment)
  std::uint32_t ring_step = 0;      ///< ring all-reduce step (kRingSegment)
  std::uint32_t segment = 0;        ///< ring segment the chunk belongs to (kRingSegment)
  /// Reduction-tree round (in-transit aggregation, FpgaAggregator::set_reduction_role):
  /// a kContribution with a key >= 0 is a member's contribution or a relay's partial sum
  /// (`contributions` members summed), a kReduced one the root's result; -1: none.
  int reduction_tree = -1;
  std::uint64_t burst_chunk_bytes = 0;
  /// kGrant: window; kCredit: slots freed so far (cumulative); kAck from a `drop` FPGA:
  /// its admission window's end (the first chunk index it takes no new slot for)
  std::uint32_t credits = 1;
  int requester = -1;          ///< kReduced re-sent for a retransmission: the sender to acknowledge
  std::uint64_t stamp_ps = 0;  ///< kReady: the sender's ready time (synchronised clocks)
  std::shared_ptr<std::vector<float>> data;

  tlm::tlm_extension_base* clone() const override;
  void copy_from(const tlm::tlm_extension_base& other) override;
};

/// A pool transaction: the payload with its ChunkExtension in place (also set as the
/// payload's extension). get_extension is an out-of-line lookup and the modules read a
/// chunk's metadata about ten times per hop.
struct ChunkTransaction : tlm::tlm_generic_payload {
  explicit ChunkTransaction(tlm::tlm_mm_interface* mm);
  ~ChunkTransaction() override;
  ChunkExtension chunk;
};

/// Fetches what a hop reads of a transaction (its extension, which starts on the line of
/// the payload's reference count): it has been idle, propagating, and is likely cold.
inline void prefetch_chunk(const tlm::tlm_generic_payload* trans, bool write = false) {
  const char* p =
      reinterpret_cast<const char*>(&static_cast<const ChunkTransaction*>(trans)->chunk);
  if (write) {
    __builtin_prefetch(p, 1);
    __builtin_prefetch(p + sizeof(ChunkExtension) - 1, 1);
  } else {
    __builtin_prefetch(p);
    __builtin_prefetch(p + sizeof(ChunkExtension) - 1);
  }
}

/// Memory manager for chunk transactions (tlm_mm_interface). Transactions return to
/// a free list when their reference count drops to zero, so a run allocates only the
/// peak number of chunks in flight.
class ChunkPool : public tlm::tlm_mm_interface {
 public:
  ChunkPool() = default;
  ChunkPool(const ChunkPool&) = delete;
  ChunkPool& operator=(const ChunkPool&) = delete;
  ~ChunkPool() override;

  /// A transaction with reference count 1 and a reset ChunkExtension.
  tlm::tlm_generic_payload& allocate();
  /// A copy of `trans`'s extension (data shared, not copied) in a new transaction.
  tlm::tlm_generic_payload& clone(const tlm::tlm_generic_payload& trans);
  void free(tlm::tlm_generic_payload* trans) override;
  std::size_t allocated() const { return all_.size(); }
  /// Transactions held now (some reference not yet released).
  std::size_t in_use() const { return all_.size() - free_.size(); }
  /// Calls `exceeded`, once, when the pool's transactions first take more than
  /// `limit_bytes` (a guard against runs whose chunks pile up without bound).
  void set_limit(std::uint64_t limit_bytes, std::function<void()> exceeded) {
    limit_blocks_ = limit_bytes / sizeof(Block);
    exceeded_ = std::move(exceeded);
  }

 private:
  tlm::tlm_generic_payload& take();

  // A transaction 8 bytes past a cache-line boundary: the payload's memory manager and
  // reference count (its last fields, which acquire and release touch), the extension's
  // vtable and its first 40 bytes share one line, the rest of the extension fills the next,
  // and a hop touches those two lines of the four.
  struct alignas(64) Block {
    explicit Block(tlm::tlm_mm_interface* mm) : trans(mm) {}
    std::uint64_t unused = 0;
    ChunkTransaction trans;
  };
  std::vector<std::unique_ptr<Block>> all_;
  std::vector<tlm::tlm_generic_payload*> free_;
  std::size_t limit_blocks_ = 0;  // 0: none
  std::function<void()> exceeded_;
};

/// Wire bytes of a transaction: each chunk of a burst keeps its own packet headers, so a
/// burst puts exactly the bytes of its chunks sent one by one on the wire.
inline std::uint64_t transaction_wire_bytes(const ChunkExtension& c, std::uint64_t mtu_bytes,
                                            std::uint64_t header_bytes) {
  if (c.chunks <= 1) return wire_bytes(c.payload_bytes, mtu_bytes, header_bytes);
  const std::uint64_t full = c.chunks - 1;
  return full * wire_bytes(c.burst_chunk_bytes, mtu_bytes, header_bytes) +
         wire_bytes(c.payload_bytes - full * c.burst_chunk_bytes, mtu_bytes, header_bytes);
}

/// The extension of an aggnet transaction. Precondition: `trans` comes from a ChunkPool
/// (every transaction in aggnet does).
inline ChunkExtension& chunk_of(tlm::tlm_generic_payload& trans) {
  return static_cast<ChunkTransaction&>(trans).chunk;
}
inline const ChunkExtension& chunk_of(const tlm::tlm_generic_payload& trans) {
  return static_cast<const ChunkTransaction&>(trans).chunk;
}

}  // namespace aggnet
