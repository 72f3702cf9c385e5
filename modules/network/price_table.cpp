#include "modules/network/price_table.h"

#include "common/units.h"
#include "modules/core/time.h"

namespace aggnet {

void PriceTable::reprice(Price& entry, const ChunkExtension& chunk) const {
  entry.payload_bytes = chunk.payload_bytes;
  entry.wire_bytes = transaction_wire_bytes(chunk, mtu_bytes_, header_bytes_);
  entry.serialization = ps_time(serialization_ps(entry.wire_bytes, bandwidth_bps_));
}

std::shared_ptr<PriceTable> PriceTables::of(const WanLinkParams& params) {
  auto& table = tables_[{params.bandwidth_bps, params.mtu_bytes, params.header_bytes}];
  if (!table) table = std::make_shared<PriceTable>(params);
  return table;
}

}  // namespace aggnet
