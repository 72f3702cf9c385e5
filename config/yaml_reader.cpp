// Strict YAML reading with file/line/key error messages (see yaml_reader.h).
#include "config/yaml_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "common/input_file.h"
#include "common/strings.h"
#include "common/units.h"

namespace aggnet {

namespace {

/// Records where a document's first node starts; parses without building nodes.
class FirstMark : public YAML::EventHandler {
 public:
  YAML::Mark mark = YAML::Mark::null_mark();
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { note(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { note(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    note(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    note(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    note(m);
  }
  void OnMapEnd() override {}

 protected:
  void note(const YAML::Mark& m) {
    if (mark.is_null()) mark = m;
  }
};

struct RootTag {};

}  // namespace
}  // namespace aggnet

// yaml-cpp builds a document's nodes in a class of its sources (NodeBuilder), and only a
// friend of YAML::Node can wrap the built root: every specialization of as_if is one.
template <>
struct YAML::as_if<aggnet::RootTag, void> {
  static Node wrap(detail::node& root, const detail::shared_memory_holder& memory) {
    return Node(root, memory);
  }
};

namespace aggnet {
namespace {

/// Builds a document's nodes like YAML::Load (yaml-cpp 0.7's NodeBuilder: the same nodes,
/// marks, tags, styles and anchors) and records where its first node starts, so that one
/// parser reads the document and then looks for a second one.
class DocumentBuilder : public FirstMark {
 public:
  DocumentBuilder() { anchors_.push_back(nullptr); }  // anchors start at 1

  YAML::Node root() const {
    return root_ ? YAML::as_if<RootTag, void>::wrap(*root_, memory_) : YAML::Node();
  }

  void OnNull(const YAML::Mark& m, YAML::anchor_t anchor) override {
    push(m, anchor).set_null();
    pop();
  }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t anchor) override {
    note(m);
    push(*anchors_.at(anchor));
    pop();
  }
  void OnScalar(const YAML::Mark& m, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    auto& node = push(m, anchor);
    node.set_scalar(value);
    node.set_tag(tag);
    pop();
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    auto& node = push(m, anchor);
    node.set_tag(tag);
    node.set_type(YAML::NodeType::Sequence);
    node.set_style(style);
  }
  void OnSequenceEnd() override { pop(); }
  void OnMapStart(const YAML::Mark& m, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    auto& node = push(m, anchor);
    node.set_type(YAML::NodeType::Map);
    node.set_tag(tag);
    node.set_style(style);
    ++map_depth_;
  }
  void OnMapEnd() override {
    --map_depth_;
    pop();
  }

 private:
  YAML::detail::node& push(const YAML::Mark& m, YAML::anchor_t anchor) {
    note(m);
    auto& node = memory_->create_node();
    node.set_mark(m);
    if (anchor) anchors_.push_back(&node);  // yaml-cpp numbers anchors 1, 2, ... in order
    push(node);
    return node;
  }
  void push(YAML::detail::node& node) {
    const bool needs_key = !stack_.empty() && stack_.back()->type() == YAML::NodeType::Map &&
                           keys_.size() < map_depth_;
    stack_.push_back(&node);
    if (needs_key) keys_.emplace_back(&node, false);
  }
  // Completes the node on top: the root, an element, a key (kept for its value) or a value.
  void pop() {
    YAML::detail::node& node = *stack_.back();
    stack_.pop_back();
    if (stack_.empty()) {
      root_ = &node;
      return;
    }
    YAML::detail::node& collection = *stack_.back();
    if (collection.type() == YAML::NodeType::Sequence) {
      collection.push_back(node, memory_);
    } else if (keys_.back().second) {
      collection.insert(*keys_.back().first, node, memory_);
      keys_.pop_back();
    } else {
      keys_.back().second = true;
    }
  }

  YAML::detail::shared_memory_holder memory_ = std::make_shared<YAML::detail::memory_holder>();
  YAML::detail::node* root_ = nullptr;
  std::vector<YAML::detail::node*> stack_;
  std::vector<YAML::detail::node*> anchors_;
  std::vector<std::pair<YAML::detail::node*, bool>> keys_;  // a map's key, value seen
  std::size_t map_depth_ = 0;
};

struct Parsed {
  YAML::Node root;
  int second_document_line = 0;  ///< see parse_documents
};

/// The first document of `text`, and the 1-based line of a second document (0 when
/// there is one at most, or minus the line where the parser stopped advancing).
/// Stops after two documents: yaml-cpp 0.7's LoadAll loops forever on inputs such as
/// ",?" (jbeder/yaml-cpp#1040, fixed upstream by #1319), found by scripts/fuzz.sh.
Parsed parse_documents(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentBuilder first;
  FirstMark second;
  Parsed parsed;
  if (!parser.HandleNextDocument(first)) return parsed;
  parsed.root = first.root();
  if (!parser.HandleNextDocument(second)) return parsed;
  if (!first.mark.is_null() && !second.mark.is_null() && second.mark.pos <= first.mark.pos)
    parsed.second_document_line = -(first.mark.line + 1);  // the parser did not advance
  else
    parsed.second_document_line = second.mark.is_null() ? 1 : second.mark.line + 1;
  return parsed;
}

// YAML indents with spaces only: a tab at the start of the line yaml-cpp stopped at (or
// the one before it) is named, since its own message does not say so.
std::string tab_hint(const std::string& text, int line) {
  std::istringstream in(text);
  std::string current;
  for (int l = 1; l <= line && std::getline(in, current); ++l) {
    if (l < line - 1) continue;
    const std::size_t indent = current.find_first_not_of(' ');
    if (indent != std::string::npos && current[indent] == '\t')
      return " (line " + std::to_string(l) + " is indented with a tab: YAML indents with spaces)";
  }
  return "";
}

}  // namespace

YAML::Node parse_yaml(const std::string& text, const std::string& file) {
  Parsed parsed;
  try {
    parsed = parse_documents(text);
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    throw ConfigError(file, line, "", "malformed YAML: " + e.msg + tab_hint(text, line));
  }
  const int second = parsed.second_document_line;
  if (second < 0) {
    throw ConfigError(file, -second, "",
                      "malformed YAML: expected a value, got a stray ',' or flow indicator outside "
                      "[...] or {...}");
  }
  if (second > 0) {
    throw ConfigError(file, second, "",
                      "expected one YAML document, found a second one after '---' (it would be "
                      "ignored)");
  }
  return parsed.root;
}

YAML::Node load_yaml_file(const std::string& path) {
  return parse_yaml(read_input_file(path), path);
}

bool yaml_has_position(const YAML::Node& node) {
  return node.IsDefined() && !node.Mark().is_null();
}

int yaml_line(const YAML::Node& node) { return yaml_has_position(node) ? node.Mark().line + 1 : 0; }

void throw_at(const YAML::Node& node, const std::string& file, const std::string& key,
              const std::string& expected, const std::string& got) {
  const bool from_file = yaml_has_position(node);
  const std::string where = from_file ? file : std::string(kOverrideFile);
  const int line = from_file ? yaml_line(node) : 0;
  if (got.empty()) throw ConfigError(where, line, key, expected);
  throw ConfigError(where, line, key, expected, got);
}

YamlMap::YamlMap(const YAML::Node& node, std::string file, std::string path)
    : node_(node), file_(std::move(file)), path_(std::move(path)) {
  if (!node.IsDefined()) {
    throw ConfigError(file_, 0, path_, "internal error: reading a missing mapping");
  }
  if (!node.IsNull() && !node.IsMap()) {
    throw_at(node, file_, path_.empty() ? "(top level)" : path_,
             "expected a mapping of 'key: value' entries");
  }
  if (!node.IsMap()) return;
  entries_.reserve(node.size());
  for (auto it = node.begin(); it != node.end(); ++it) {
    const bool scalar = it->first.IsScalar();
    entries_.push_back({it->first, it->second, scalar ? it->first.Scalar() : std::string()});
  }
}

const YamlMap::Entry* YamlMap::find(const std::string& key) const {
  for (const auto& e : entries_)
    if (e.key.IsScalar() && e.name == key) return &e;
  return nullptr;
}

void YamlMap::allow_keys(const std::vector<std::string>& allowed) {
  const auto list = [&] {
    std::string out;
    for (const auto& k : allowed) out += (out.empty() ? "" : ", ") + k;
    return out;
  };
  for (auto e = entries_.begin(); e != entries_.end(); ++e) {
    const YAML::Node& key = e->key;
    if (!key.IsScalar()) {
      throw_at(key, file_, path_.empty() ? "(top level)" : path_,
               "expected a plain key (one of: " + list() + "), got a " +
                   (key.IsSequence() ? "list"
                    : key.IsMap()    ? "mapping"
                                     : "null"));
    }
    const std::string& k = e->name;
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      throw_at(key, file_, key_path(k),
               "unknown key, expected one of: " + list() + did_you_mean(k, allowed));
    }
    const auto first = std::find_if(entries_.begin(), e, [&](const Entry& before) {
      return before.key.IsScalar() && before.name == k;
    });
    if (first != e)
      throw_at(key, file_, key_path(k),
               fmt::format("duplicate key (first given on line {})", first->key.Mark().line + 1));
  }
}

bool YamlMap::has(const std::string& key) const { return static_cast<bool>(optional(key)); }

YAML::Node YamlMap::optional(const std::string& key) const {
  const Entry* e = find(key);
  return e ? e->value : YAML::Node(YAML::NodeType::Undefined);
}

YAML::Node YamlMap::key_node(const std::string& key) const {
  const Entry* e = find(key);
  return e ? e->key : YAML::Node(YAML::NodeType::Undefined);
}

YAML::Node YamlMap::required(const std::string& key) const {
  YAML::Node v = optional(key);
  if (!v) throw_at(node_, file_, key_path(key), "missing required key");
  return v;
}

std::string YamlMap::scalar(const std::string& key) const {
  const YAML::Node v = required(key);
  if (!v.IsScalar()) throw_at(v, file_, key_path(key), "expected a single value");
  return v.Scalar();
}

std::string YamlMap::scalar_or(const std::string& key, const std::string& fallback) const {
  const YAML::Node v = optional(key);
  if (!v) return fallback;
  if (!v.IsScalar()) throw_at(v, file_, key_path(key), "expected a single value");
  return v.Scalar();
}

double YamlMap::number_or(const std::string& key, double fallback, double lo, double hi) const {
  const YAML::Node v = optional(key);
  if (!v) return fallback;
  const auto expected = [&] { return fmt::format("expected a number in [{}, {}]", lo, hi); };
  if (!v.IsScalar()) throw_at(v, file_, key_path(key), expected());
  const std::string text = trim(v.Scalar());
  double x = 0;
  try {
    const bool neg = !text.empty() && text[0] == '-';
    x = parse_number(neg ? text.substr(1) : text);
    if (neg) x = -x;
  } catch (const UnitError&) {
    throw_at(v, file_, key_path(key), expected(), v.Scalar());
  }
  if (x < lo || x > hi) throw_at(v, file_, key_path(key), expected(), v.Scalar());
  return x;
}

std::uint64_t YamlMap::param(const ParamInfo& p) const {
  const YAML::Node v = required(p.key);
  if (!v.IsScalar()) {
    throw_at(v, file_, key_path(p.key), "expected a single " + quantity_name(p.quantity));
  }
  std::uint64_t value = 0;
  try {
    value = parse_param_value(p, v.Scalar());
  } catch (const UnitError& e) {
    throw_at(v, file_, key_path(p.key), e.what(), v.Scalar());
  }
  const std::string bad = check_violation(p, value);
  if (!bad.empty()) throw_at(v, file_, key_path(p.key), bad, v.Scalar());
  return value;
}

std::string YamlMap::key_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

}  // namespace aggnet
