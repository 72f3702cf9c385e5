#include "modules/network/fanout_log.h"

#include <stdexcept>
#include <string>

namespace aggnet {

FanoutLog::FanoutLog(std::uint32_t ports)
    : entries_(16),
      mask_(15),
      ports_(ports),
      words_((ports + 63) / 64),
      direct_(words_, ~std::uint64_t{0}) {}

std::uint32_t FanoutLog::add_members(const std::vector<std::uint32_t>& ports) {
  const auto set = static_cast<std::uint32_t>(member_bits_.size() / (words_ == 0 ? 1 : words_));
  member_bits_.resize(member_bits_.size() + words_, 0);
  for (std::uint32_t port : ports) {
    if (port >= ports_)
      throw std::invalid_argument("FanoutLog: port " + std::to_string(port) + " of " +
                                  std::to_string(ports_));
    member_bits_[set * words_ + port / 64] |= std::uint64_t{1} << (port % 64);
  }
  return set;
}

std::uint64_t FanoutLog::append(tlm::tlm_generic_payload& trans, const sc_core::sc_time& at,
                                std::uint32_t members, std::uint32_t count) {
  if (end_ - head_ == entries_.size()) grow();
  Entry& e = entries_[end_ & mask_];
  e.trans = &trans;
  e.at = at;
  e.members = members;
  e.remaining = count;
  return end_++;
}

std::uint64_t FanoutLog::next_for(std::uint32_t port, std::uint64_t from) const {
  for (std::uint64_t seq = from < head_ ? head_ : from; seq < end_; ++seq) {
    if (member(entry(seq).members, port)) return seq;
  }
  return end_;
}

void FanoutLog::taken(std::uint64_t seq) {
  --entries_[seq & mask_].remaining;
  while (head_ < end_ && entries_[head_ & mask_].remaining == 0) ++head_;
}

// Entries keep their sequence numbers: each moves to seq & (the new mask).
void FanoutLog::grow() {
  std::vector<Entry> bigger(2 * entries_.size());
  const std::uint64_t mask = bigger.size() - 1;
  for (std::uint64_t seq = head_; seq < end_; ++seq) bigger[seq & mask] = entries_[seq & mask_];
  entries_ = std::move(bigger);
  mask_ = mask;
}

}  // namespace aggnet
