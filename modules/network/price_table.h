// What a data transaction costs on a link: its wire bytes (headers per MTU-sized packet)
// and serialization time at the line rate, memoised per payload size for the links of
// one kind. Both need a 128-bit division and a run has a few distinct payload sizes; one
// table shared by every link of a kind stays in the L1 cache, where a memo in each link
// was a line of its own per crossing (a 243-site ring touches about 1,100 links).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <systemc>
#include <tuple>

#include "model/params/network.h"
#include "modules/core/chunk.h"

namespace aggnet {

class PriceTable {
 public:
  struct Price {
    std::uint64_t payload_bytes = ~std::uint64_t{0};
    std::uint64_t wire_bytes = 0;
    sc_core::sc_time serialization;
  };

  explicit PriceTable(const WanLinkParams& params)
      : bandwidth_bps_(params.bandwidth_bps),
        mtu_bytes_(params.mtu_bytes),
        header_bytes_(params.header_bytes) {}

  /// The price of data `chunk` (keyed by its payload alone: the links sharing a table
  /// belong to one network, whose bursts all have the same chunk size, so the payload fixes
  /// the chunk count). May exceed what a FIFO item can hold: the link checks.
  const Price& data(const ChunkExtension& chunk) {
    Price& entry = entries_[slot(chunk.payload_bytes)];
    if (entry.payload_bytes != chunk.payload_bytes) reprice(entry, chunk);
    return entry;
  }
  /// The price of a control message (a run's are all one size).
  const Price& control(const ChunkExtension& chunk) {
    if (control_.payload_bytes != chunk.payload_bytes) reprice(control_, chunk);
    return control_;
  }
  /// Whether links of `params` may share this table.
  bool prices(const WanLinkParams& params) const {
    return params.bandwidth_bps == bandwidth_bps_ && params.mtu_bytes == mtu_bytes_ &&
           params.header_bytes == header_bytes_;
  }

 private:
  static constexpr std::size_t kEntries = 8;
  // A ring's payloads are its full chunks and its segments' last, shorter ones.
  static std::size_t slot(std::uint64_t payload_bytes) {
    return static_cast<std::size_t>(payload_bytes ^ (payload_bytes >> 9) ^ (payload_bytes >> 21)) %
           kEntries;
  }
  void reprice(Price& entry, const ChunkExtension& chunk) const;

  std::uint64_t bandwidth_bps_, mtu_bytes_, header_bytes_;
  std::array<Price, kEntries> entries_{};
  Price control_;
};

/// The price tables of one network, one per kind of link (rate, MTU, header).
class PriceTables {
 public:
  std::shared_ptr<PriceTable> of(const WanLinkParams& params);

 private:
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>, std::shared_ptr<PriceTable>>
      tables_;
};

}  // namespace aggnet
