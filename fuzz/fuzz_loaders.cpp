// libFuzzer entry point over fuzz/harness.h (scripts/fuzz.sh builds and runs it).
#include <cstddef>
#include <cstdint>

#include "fuzz/harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  aggnet::fuzz::run_one(data, size, AGGNET_SOURCE_DIR);
  return 0;
}
