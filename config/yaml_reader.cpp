// Strict YAML reading with file/line/key error messages (see yaml_reader.h).
#include "config/yaml_reader.h"

#include <fmt/format.h>
#include <libfyaml.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

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
  int second_document_line = 0;  ///< 1-based line of a second document's first node, or 0
};

/// A libfyaml parser over a string, freed on scope exit. libfyaml reads a document about
/// seven times faster than yaml-cpp's scanner, which was a tenth of a small run's CPU time
/// (docs/validation.md, "Speed"); the nodes are still yaml-cpp's.
class EventStream {
 public:
  explicit EventStream(const std::string& text) {
    fy_diag_cfg diag_cfg;
    fy_diag_cfg_default(&diag_cfg);
    diag_cfg.fp = nullptr;
    diag_ = fy_diag_create(&diag_cfg);
    fy_diag_set_collect_errors(diag_, true);
    fy_parse_cfg cfg{};
    cfg.flags = static_cast<fy_parse_cfg_flags>(FYPCF_QUIET | FYPCF_COLLECT_DIAG);
    cfg.diag = diag_;
    parser_ = fy_parser_create(&cfg);
    if (!parser_ || fy_parser_set_string(parser_, text.data(), text.size()) != 0)
      throw std::bad_alloc();
    last_line_ = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }
  ~EventStream() {
    if (event_) fy_parser_event_free(parser_, event_);
    if (parser_) fy_parser_destroy(parser_);
    if (diag_) fy_diag_destroy(diag_);
  }
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  /// The next event (valid until the next call); throws YAML::ParserException on an error,
  /// returns nullptr at the end of the stream.
  fy_event* next() {
    if (event_) fy_parser_event_free(parser_, event_);
    event_ = fy_parser_parse(parser_);
    if (!event_ && fy_parser_get_stream_error(parser_)) throw_first_error();
    return event_;
  }

 private:
  [[noreturn]] void throw_first_error() {
    void* iter = nullptr;
    const fy_diag_error* e = fy_diag_errors_iterate(diag_, &iter);
    YAML::Mark mark;
    // libfyaml counts from 1, and puts an error at the end of the input on a line past it.
    mark.line = e ? std::clamp(e->line - 1, 0, last_line_) : 0;
    mark.column = e ? std::max(e->column - 1, 0) : 0;
    throw YAML::ParserException(mark, e && e->msg ? e->msg : "invalid YAML");
  }

  fy_diag* diag_ = nullptr;
  fy_parser* parser_ = nullptr;
  fy_event* event_ = nullptr;
  int last_line_ = 0;  ///< 0-based
};

YAML::Mark to_mark(const fy_mark& m) {
  YAML::Mark mark;
  mark.pos = static_cast<int>(m.input_pos);
  mark.line = m.line;
  mark.column = m.column;
  return mark;
}

/// Where a token starts with its indicator: libfyaml's marks of anchors, aliases and quoted
/// scalars point past their one-byte '&', '*' or quote.
YAML::Mark token_mark(fy_token* token) {
  const fy_mark* at = fy_token_start_mark(token);
  if (!at) return YAML::Mark::null_mark();
  YAML::Mark mark = to_mark(*at);
  const fy_token_type type = fy_token_get_type(token);
  const bool indicator =
      type == FYTT_ANCHOR || type == FYTT_ALIAS ||
      (type == FYTT_SCALAR && (fy_token_scalar_style(token) == FYSS_SINGLE_QUOTED ||
                               fy_token_scalar_style(token) == FYSS_DOUBLE_QUOTED));
  if (indicator && mark.column > 0) {
    --mark.pos;
    --mark.column;
  }
  return mark;
}

/// Where a node starts, as yaml-cpp marks it: at its anchor or tag if it has one.
YAML::Mark event_mark(fy_event* event) {
  YAML::Mark start = YAML::Mark::null_mark();
  for (fy_token* token : {fy_event_get_anchor_token(event), fy_event_get_tag_token(event),
                          fy_event_get_token(event)}) {
    const YAML::Mark at = token ? token_mark(token) : YAML::Mark::null_mark();
    if (!at.is_null() && (start.is_null() || at.pos < start.pos)) start = at;
  }
  return start;
}

std::string text_of(fy_token* token) {
  std::size_t length = 0;
  const char* text = token ? fy_token_get_text(token, &length) : nullptr;
  return text ? std::string(text, length) : std::string();
}

/// A node's tag as yaml-cpp reports it: the resolved tag if one is written, else "?" for a
/// plain scalar or a collection and "!" for a quoted or block scalar.
std::string tag_of(fy_event* event, bool plain) {
  fy_token* tag = fy_event_get_tag_token(event);
  if (!tag) return plain ? "?" : "!";
  return text_of(tag);  // libfyaml resolves the handle: !!str is tag:yaml.org,2002:str
}

bool is_null_text(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

/// Feeds one document's node events to a handler as yaml-cpp's parser would. An empty value
/// (`key:`) has no token: it is marked where the token before it ends (yaml-cpp marks it at
/// the next token, often a line below).
class DocumentFeeder {
 public:
  explicit DocumentFeeder(FirstMark& handler) : handler_(handler) {}

  /// Feeds the stream's next document; false once the stream has ended instead.
  bool feed(EventStream& stream) {
    for (fy_event* event = stream.next(); event; event = stream.next()) {
      const YAML::Mark start = event_mark(event);
      mark_ = start.is_null() ? last_end_ : start;
      if (const fy_mark* end = fy_event_end_mark(event)) last_end_ = to_mark(*end);
      switch (event->type) {
        case FYET_STREAM_END:
          return false;
        case FYET_DOCUMENT_END:
          return true;
        case FYET_ALIAS:
          alias(event);
          break;
        case FYET_SCALAR:
          scalar(event);
          break;
        case FYET_SEQUENCE_START:
        case FYET_MAPPING_START:
          collection(event);
          break;
        case FYET_SEQUENCE_END:
          handler_.OnSequenceEnd();
          break;
        case FYET_MAPPING_END:
          handler_.OnMapEnd();
          break;
        default:  // the stream's and the document's start
          break;
      }
    }
    return false;
  }

 private:
  YAML::anchor_t anchor_of(fy_event* event) {
    fy_token* token = fy_event_get_anchor_token(event);
    if (!token) return YAML::NullAnchor;
    anchors_[text_of(token)] = next_anchor_;
    return next_anchor_++;
  }

  void alias(fy_event* event) {
    const auto found = anchors_.find(text_of(event->alias.anchor));
    if (found == anchors_.end()) throw YAML::ParserException(mark_, YAML::ErrorMsg::UNKNOWN_ANCHOR);
    handler_.OnAlias(mark_, found->second);
  }

  void scalar(fy_event* event) {
    const bool plain = fy_token_scalar_style(event->scalar.value) == FYSS_PLAIN;
    const std::string tag = tag_of(event, plain);
    const std::string value = text_of(event->scalar.value);
    if (plain && tag == "?" && is_null_text(value))
      handler_.OnNull(mark_, anchor_of(event));
    else
      handler_.OnScalar(mark_, tag, anchor_of(event), value);
  }

  void collection(fy_event* event) {
    if (event->type == FYET_SEQUENCE_START) {
      fy_token* start = event->sequence_start.sequence_start;
      const bool flow = start && fy_token_get_type(start) == FYTT_FLOW_SEQUENCE_START;
      handler_.OnSequenceStart(mark_, tag_of(event, true), anchor_of(event), style(flow));
    } else {
      fy_token* start = event->mapping_start.mapping_start;  // none for `[k: v]`
      const bool flow = !start || fy_token_get_type(start) == FYTT_FLOW_MAPPING_START;
      handler_.OnMapStart(mark_, tag_of(event, true), anchor_of(event), style(flow));
    }
  }

  static YAML::EmitterStyle::value style(bool flow) {
    return flow ? YAML::EmitterStyle::Flow : YAML::EmitterStyle::Block;
  }

  FirstMark& handler_;
  std::map<std::string, YAML::anchor_t> anchors_;  // an anchor's name -> its latest number
  YAML::anchor_t next_anchor_ = 1;                 // yaml-cpp numbers anchors 1, 2, ...
  YAML::Mark mark_;                                // of the event being fed
  YAML::Mark last_end_;
};

/// The first document of `text`, and the line of a second one (an error for the caller).
Parsed parse_documents(const std::string& text) {
  EventStream stream(text);
  DocumentBuilder first;
  FirstMark second;
  Parsed parsed;
  const bool more = DocumentFeeder(first).feed(stream);
  parsed.root = first.root();
  if (!more || !DocumentFeeder(second).feed(stream)) return parsed;
  parsed.second_document_line = second.mark.is_null() ? 1 : second.mark.line + 1;
  return parsed;
}

/// The 0-based offset of the first byte of `text` that does not start or continue a
/// well-formed UTF-8 sequence (RFC 3629: no overlongs, surrogates or code points past
/// U+10FFFF), or npos.
std::size_t first_invalid_utf8(const std::string& text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char b = byte(i);
    std::size_t length = 1;
    unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
    if (b < 0x80) {
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      length = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      length = 3;
      lo = b == 0xE0 ? 0xA0 : 0x80;
      hi = b == 0xED ? 0x9F : 0xBF;
    } else if (b >= 0xF0 && b <= 0xF4) {
      length = 4;
      lo = b == 0xF0 ? 0x90 : 0x80;
      hi = b == 0xF4 ? 0x8F : 0xBF;
    } else {
      return i;
    }
    if (i + length > text.size()) return i;
    for (std::size_t k = 1; k < length; ++k) {
      const unsigned char c = byte(i + k);
      if (k == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) return i;
    }
    i += length;
  }
  return std::string::npos;
}

}  // namespace

YAML::Node parse_yaml(const std::string& text, const std::string& file) {
  // libfyaml 0.7 can loop forever on a malformed byte in a directive (scripts/fuzz.sh).
  if (const std::size_t bad = first_invalid_utf8(text); bad != std::string::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + bad, '\n');
    throw ConfigError(file, static_cast<int>(line), "",
                      fmt::format("malformed YAML: expected UTF-8 text, got the byte 0x{:02X}",
                                  static_cast<unsigned char>(text[bad])));
  }
  Parsed parsed;
  try {
    parsed = parse_documents(text);
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    throw ConfigError(file, line, "", "malformed YAML: " + e.msg);
  }
  const int second = parsed.second_document_line;
  if (second > 0) {
    throw ConfigError(file, second, "",
                      "expected one YAML document, found a second one after '---' (it would be "
                      "ignored)");
  }
  return parsed.root;
}

YAML::Node load_yaml_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ConfigError(path, 0, "", "expected a YAML file, got a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, 0, "", "cannot read file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_yaml(text.str(), path);
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
    const bool repeated = std::any_of(entries_.begin(), e, [&](const Entry& before) {
      return before.key.IsScalar() && before.name == k;
    });
    if (repeated) throw_at(key, file_, key_path(k), "duplicate key");
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
