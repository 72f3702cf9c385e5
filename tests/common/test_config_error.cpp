#include <gtest/gtest.h>

#include "common/config_error.h"

namespace aggnet {
namespace {

TEST(ConfigError, OneLineWithFileLineKey) {
  const ConfigError e("p.yaml", 12, "defaults.link.bandwidth", "expected a positive rate");
  EXPECT_STREQ(e.what(), "p.yaml:12: defaults.link.bandwidth: expected a positive rate");
  EXPECT_EQ(e.file(), "p.yaml");
  EXPECT_EQ(e.line(), 12);
  EXPECT_EQ(e.key(), "defaults.link.bandwidth");
}

TEST(ConfigError, GotValue) {
  const ConfigError e("p.yaml", 3, "links.nyc-lon.delay", "expected a time", "40");
  EXPECT_STREQ(e.what(), "p.yaml:3: links.nyc-lon.delay: expected a time, got '40'");
}

TEST(ConfigError, OverrideHasNoLine) {
  const ConfigError e("--set", 0, "defaults.link.bandwdth", "unknown key");
  EXPECT_STREQ(e.what(), "--set: defaults.link.bandwdth: unknown key");
  EXPECT_EQ(e.line(), 0);
}

TEST(ConfigError, EmptyKeyAndNewlinesStayOneLine) {
  const ConfigError e("p.yaml", 4, "", "malformed YAML: bad\nthing");
  EXPECT_STREQ(e.what(), "p.yaml:4: malformed YAML: bad thing");
}

}  // namespace
}  // namespace aggnet
