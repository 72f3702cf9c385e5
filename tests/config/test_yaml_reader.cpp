// The strict YAML reader: line numbers, unknown keys, types and units.
#include <gtest/gtest.h>

#include <map>

#include "common/config_error.h"
#include "common/units.h"
#include "config/yaml_reader.h"

namespace aggnet {
namespace {

const ModuleParamInfo kTable{"Demo",
                             "demo table",
                             {{"delay", Quantity::kTime, "ms", "0ms", ""},
                              {"rate", Quantity::kRate, "Gbps", "1Gbps", ""},
                              {"size", Quantity::kBytes, "B", "1B", ""},
                              {"width", Quantity::kCount, "bit", "8", ""},
                              {"share", Quantity::kNumber, "", "0.5", ""},
                              {"on", Quantity::kBool, "", "false", ""}}};

TEST(YamlReader, MalformedYamlNamesFileAndLine) {
  try {
    parse_yaml("a: 1\nb: 2\nc: d: e\n", "bad.yaml");
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "bad.yaml");
    EXPECT_EQ(e.line(), 3);  // the second ':' on line 3
    EXPECT_NE(std::string(e.what()).find("bad.yaml:3: malformed YAML"), std::string::npos)
        << e.what();
  }
}

TEST(YamlReader, MissingFile) {
  try {
    load_yaml_file("/nonexistent/dir/x.yaml");
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "/nonexistent/dir/x.yaml");
    EXPECT_NE(std::string(e.what()).find("cannot read"), std::string::npos);
  }
}

TEST(YamlReader, ReadsParamsPerQuantity) {
  const YAML::Node n = parse_yaml(
      "top:\n  delay: 33.3ms\n  rate: 12.5GB/s\n  size: 1.5KiB\n  width: 512bit\n"
      "  share: 0.25\n  on: yes\n",
      "f.yaml");
  YamlMap m(n["top"], "f.yaml", "top");
  m.allow_keys(param_keys(kTable));
  std::map<std::string, ParamValue> got;
  std::map<std::string, int> lines;
  m.read_params(kTable, [&](const ParamInfo& p, const ParamValue& v, const YAML::Node& at) {
    got[p.key] = v;
    lines[p.key] = yaml_line(at);
  });
  EXPECT_EQ(got["delay"].u, 33'300'000'000ull);
  EXPECT_EQ(got["rate"].u, 100'000'000'000ull);
  EXPECT_EQ(got["size"].u, 1536ull);
  EXPECT_EQ(got["width"].u, 512ull);
  EXPECT_DOUBLE_EQ(got["share"].d, 0.25);
  EXPECT_TRUE(got["on"].b);
  EXPECT_EQ(lines["delay"], 2);
  EXPECT_EQ(lines["on"], 7);
}

TEST(YamlReader, UnknownKeyListsAllowed) {
  const YAML::Node n = parse_yaml("top:\n  delay: 1ms\n  rat: 1Gbps\n", "f.yaml");
  YamlMap m(n["top"], "f.yaml", "top");
  try {
    m.allow_keys(param_keys(kTable));
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.key(), "top.rat");
    EXPECT_NE(std::string(e.what()).find("delay, rate, size, width, share, on"), std::string::npos)
        << e.what();
  }
}

TEST(YamlReader, DuplicateKey) {
  const YAML::Node n = parse_yaml("top:\n  delay: 1ms\n  delay: 2ms\n", "f.yaml");
  YamlMap m(n["top"], "f.yaml", "top");
  try {
    m.allow_keys(param_keys(kTable));
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(std::string(e.what()).find("duplicate"), std::string::npos) << e.what();
  }
}

TEST(YamlReader, BadUnitAndWrongType) {
  const YAML::Node n =
      parse_yaml("a:\n  delay: 10 parsecs\nb:\n  rate: [1, 2]\nc: just text\n", "f.yaml");
  auto ignore = [](const ParamInfo&, const ParamValue&, const YAML::Node&) {};
  try {
    YamlMap(n["a"], "f.yaml", "a").read_params(kTable, ignore);
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.key(), "a.delay");
    EXPECT_NE(std::string(e.what()).find("got '10 parsecs'"), std::string::npos) << e.what();
  }
  try {
    YamlMap(n["b"], "f.yaml", "b").read_params(kTable, ignore);
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 4);
    EXPECT_EQ(e.key(), "b.rate");
  }
  try {
    YamlMap(n["c"], "f.yaml", "c");
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 5);
    EXPECT_NE(std::string(e.what()).find("expected a mapping"), std::string::npos);
  }
}

TEST(YamlReader, NodesWithoutPositionAreOverrides) {
  YAML::Node n = parse_yaml("top:\n  delay: 1ms\n", "f.yaml");
  n["top"]["delay"] = YAML::Node("oops");
  try {
    YamlMap(n["top"], "f.yaml", "top")
        .read_params(kTable, [](const ParamInfo&, const ParamValue&, const YAML::Node&) {});
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "--set: top.delay: expected a time like '33.3ms' or '2us', got 'oops'");
  }
}

TEST(YamlReader, CountAcceptsItsUnitOnly) {
  const ParamInfo width{"width", Quantity::kCount, "bit", "8", ""};
  EXPECT_EQ(parse_param_value(width, "64").u, 64ull);
  EXPECT_EQ(parse_param_value(width, "64 bits").u, 64ull);
  EXPECT_THROW(parse_param_value(width, "64B"), UnitError);
  EXPECT_THROW(parse_param_value(width, "-8"), UnitError);
  EXPECT_THROW(parse_param_value(width, "1.5"), UnitError);
}

}  // namespace
}  // namespace aggnet
