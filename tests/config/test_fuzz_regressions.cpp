// Every input the loaders' fuzzer (scripts/fuzz.sh) ever crashed on, replayed through the
// same harness (fuzz/harness.h): each must now be accepted or rejected with a ConfigError.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/harness.h"

namespace aggnet {
namespace {

namespace fs = std::filesystem;

TEST(FuzzRegressions, EveryCrashingInputIsHandled) {
  const fs::path dir = fs::path(AGGNET_SOURCE_DIR) / "tests/config/fuzz_regressions";
  int replayed = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename() == "README.md") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
    SCOPED_TRACE(entry.path().filename().string());
    EXPECT_NO_THROW(fuzz::run_one(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(),
                                  AGGNET_SOURCE_DIR));
    ++replayed;
  }
  EXPECT_GT(replayed, 0);
}

}  // namespace
}  // namespace aggnet
