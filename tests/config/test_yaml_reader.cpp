// The strict YAML reader: line numbers, unknown keys, types and units.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "common/config_error.h"
#include "common/units.h"
#include "config/yaml_reader.h"

namespace aggnet {
namespace {

const ModuleParamInfo kTable{"Demo",
                             "demo",
                             "demo table",
                             {{"delay", Quantity::kTime, "ms", "", kAnyValue, "0ms"},
                              {"rate", Quantity::kRate, "Gbps", "", kPositive, "1Gbps"},
                              {"size", Quantity::kBytes, "B", "", kAnyValue, "1B"},
                              {"width", Quantity::kCount, "bit", "", Check{true, 8}, "8"},
                              {"clock", Quantity::kFrequency, "MHz", "", kAnyValue, "1MHz"}},
                             {}};

const ParamInfo& param(const std::string& key) { return *find_param(kTable, key); }

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
      "  clock: 1.5GHz\n",
      "f.yaml");
  YamlMap m(n["top"], "f.yaml", "top");
  m.allow_keys(param_keys(kTable));
  EXPECT_EQ(m.param(param("delay")), 33'300'000'000ull);
  EXPECT_EQ(m.param(param("rate")), 100'000'000'000ull);
  EXPECT_EQ(m.param(param("size")), 1536ull);
  EXPECT_EQ(m.param(param("width")), 512ull);
  EXPECT_EQ(m.param(param("clock")), 1'500'000'000ull);
}

TEST(YamlReader, ParamsAreChecked) {
  const YAML::Node n = parse_yaml("top:\n  rate: 0Gbps\n  width: 12\n", "f.yaml");
  const YamlMap m(n["top"], "f.yaml", "top");
  try {
    m.param(param("rate"));
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "f.yaml:2: top.rate: expected a positive rate like '1Gbps', got '0Gbps'");
  }
  try {
    m.param(param("width"));
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "f.yaml:3: top.width: expected a positive multiple of 8 bits like '8', got '12'");
  }
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
    EXPECT_NE(std::string(e.what()).find("delay, rate, size, width, clock"), std::string::npos)
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
  try {
    YamlMap(n["a"], "f.yaml", "a").param(param("delay"));
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.key(), "a.delay");
    EXPECT_NE(std::string(e.what()).find("got '10 parsecs'"), std::string::npos) << e.what();
  }
  try {
    YamlMap(n["b"], "f.yaml", "b").param(param("rate"));
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
    YamlMap(n["top"], "f.yaml", "top").param(param("delay"));
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "--set: top.delay: expected a time like '33.3ms' or '2us', got 'oops'");
  }
}

TEST(YamlReader, CountAcceptsItsUnitOnly) {
  const ParamInfo& width = param("width");
  EXPECT_EQ(parse_param_value(width, "64"), 64ull);
  EXPECT_EQ(parse_param_value(width, "64 bits"), 64ull);
  EXPECT_EQ(parse_param_value(width, "2e7"), 20'000'000ull);
  EXPECT_EQ(parse_param_value(width, "1.5e3bit"), 1500ull);
  EXPECT_THROW(parse_param_value(width, "64B"), UnitError);
  EXPECT_THROW(parse_param_value(width, "-8"), UnitError);
  EXPECT_THROW(parse_param_value(width, "1.5"), UnitError);
  EXPECT_THROW(parse_param_value(width, "1e-3"), UnitError);
  try {
    parse_param_value(width, "1e20");
    FAIL() << "no exception";
  } catch (const UnitError& e) {
    EXPECT_STREQ(e.what(), "expected a whole number like '64' or '64bit' (value too large)");
  }
}

// Every node of `a` and `b` in the same shape, with the same values, tags and marks.
void expect_same_tree(const YAML::Node& a, const YAML::Node& b, const std::string& where) {
  ASSERT_EQ(a.Type(), b.Type()) << where;
  EXPECT_EQ(a.Tag(), b.Tag()) << where;
  EXPECT_EQ(a.Mark().pos, b.Mark().pos) << where;
  EXPECT_EQ(a.Mark().line, b.Mark().line) << where;
  EXPECT_EQ(a.Mark().column, b.Mark().column) << where;
  if (a.IsScalar()) {
    EXPECT_EQ(a.Scalar(), b.Scalar()) << where;
  }
  if (!a.IsSequence() && !a.IsMap()) return;
  ASSERT_EQ(a.size(), b.size()) << where;
  auto ia = a.begin();
  for (auto ib = b.begin(); ib != b.end(); ++ia, ++ib) {
    if (a.IsSequence()) {
      expect_same_tree(*ia, *ib, where + "[]");
    } else {
      expect_same_tree(ia->first, ib->first, where + ".key");
      expect_same_tree(ia->second, ib->second, where + "." + ia->first.as<std::string>("?"));
    }
  }
}

TEST(YamlReader, ParsesTheDocumentOnceLikeYamlLoad) {
  const std::string docs[] = {
      "",
      "# only a comment\n",
      "a: 1\nb: [x, {c: d}, ~]\nc:\n  - !tag e\n  - f: g\n    h: 'i'\n",
      "base: &b {x: 1, y: [2, 3]}\nuse: *b\nagain: *b\n",
      "? [k1, k2]\n: complex key\nempty:\nnull_value: null\n",
      "---\nlist:\n  - 1\n  - - 2\n    - 3\n...\n",
      "a: 1\na: 2\n",  // duplicate keys stay (allow_keys reports them)
      "q: \"double\"\nr: 'single'\ns: |\n  block\n  text\nt: >\n  folded\n",
      "k:\n- 1\n- &one 2\n- *one\nflow: [a: b, {c: [d, e]}, \"f\"]\n",
      "n: !!str 5\nm: !!map {x: ~}\ns: !!seq [Null, NULL, null]\nl: !local &x [1]\n",
  };
  std::vector<std::string> texts(std::begin(docs), std::end(docs));
  for (const char* file : {"/platforms/nine_city.yaml", "/platforms/nine_city_full_mesh.yaml",
                           "/sweeps/crossover.yaml", "/tests/workflow/data/star4.yaml"}) {
    std::ifstream in(std::string(AGGNET_SOURCE_DIR) + file);
    texts.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    ASSERT_GT(texts.back().size(), 100u) << file;
  }
  for (const auto& text : texts) {
    const YAML::Node ours = parse_yaml(text, "t.yaml");
    expect_same_tree(YAML::Load(text), ours, "'" + text + "'");
  }
  const YAML::Node aliased = parse_yaml(docs[3], "t.yaml");
  EXPECT_TRUE(aliased["use"].is(aliased["base"]));  // an alias is the anchored node
}

// Inputs on which libfyaml 0.7.12 (tried as a faster parser, docs/validation.md "Speed")
// returned other values without an error: a parser must read them as the YAML spec does.
TEST(YamlReader, ReadsTheCornersAnotherParserGotWrong) {
  const YAML::Node empty_block =
      parse_yaml("defaults:\n  link:\n    mtu: |\n    header: 80B\n", "t.yaml");
  EXPECT_EQ(empty_block["defaults"]["link"]["mtu"].as<std::string>(), "");
  EXPECT_EQ(empty_block["defaults"]["link"]["header"].as<std::string>(), "80B");
  EXPECT_EQ(parse_yaml("name: |\n", "t.yaml")["name"].as<std::string>(), "");
  // An escaped space, then a line break: the space stays, the break folds to a space.
  EXPECT_EQ(parse_yaml("name: \"a\\ \n  b\"\n", "t.yaml")["name"].as<std::string>(), "a  b");
  // A flow collection closed at its key's column (common style, though YAML 1.2 wants it
  // indented).
  const YAML::Node flow = parse_yaml("rounds: [\n  [[nyc, chi]]\n]\n", "t.yaml");
  ASSERT_TRUE(flow["rounds"].IsSequence());
  EXPECT_EQ(flow["rounds"][0][0][1].as<std::string>(), "chi");
  // A NUL byte does not end the document: what follows it is still read.
  const YAML::Node nul =
      parse_yaml(std::string("name: x\nrounds: []\n") + '\0' + "  extra: 1\n", "t.yaml");
  EXPECT_EQ(nul.size(), 3u);
}

TEST(YamlReader, RefusesASecondDocumentAndStrayIndicators) {
  const auto line_of_error = [](const std::string& text) {
    try {
      parse_yaml(text, "t.yaml");
    } catch (const ConfigError& e) {
      return e.line();
    }
    return -1;
  };
  EXPECT_EQ(line_of_error("a: 1\n---\nb: 2\n"), 3);
  EXPECT_EQ(line_of_error("a: 1\n...\n---\n\nb: 2\n"), 5);
  EXPECT_EQ(line_of_error(",?"), 1);  // yaml-cpp does not advance: refused, no hang
  EXPECT_EQ(line_of_error("a: 1\n...\n"), -1);
  EXPECT_EQ(line_of_error("--- a\n"), -1);
}

}  // namespace
}  // namespace aggnet
