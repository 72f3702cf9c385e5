#include "common/strings.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace aggnet {

std::vector<std::string> split(std::string_view text, char sep, EmptyFields empty) {
  std::vector<std::string> fields;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find(sep, begin);
    const std::string_view field =
        text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
    if (empty == EmptyFields::kKeep || !field.empty()) fields.emplace_back(field);
    if (end == std::string_view::npos) return fields;
    begin = end + 1;
  }
}

std::string trim(std::string_view text) {
  std::size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  return std::string(text.substr(b, e - b));
}

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string normalized(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '-' && c != '_') out += lower(c);
  }
  return out;
}

bool starts_with_ci(std::string_view text, std::string_view prefix) {
  if (prefix.size() > text.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (lower(text[i]) != lower(prefix[i])) return false;
  }
  return true;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.empty()) return "";
  const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  std::size_t best = std::numeric_limits<std::size_t>::max();
  const std::string* match = nullptr;
  for (const std::string& c : candidates) {
    if (c.empty() || c == word) continue;
    std::size_t d = edit_distance(word, c);
    // A prefix either way or a different separator is a near miss whatever its length.
    const bool prefix =
        (c.size() >= 2 && starts_with_ci(word, c)) || (word.size() >= 2 && starts_with_ci(c, word));
    if (normalized(word) == normalized(c)) d = 0;
    if (d > limit && !prefix) continue;
    if (d < best) {
      best = d;
      match = &c;
    }
  }
  return match ? *match : "";
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string m = closest_match(word, candidates);
  return m.empty() ? "" : " (did you mean '" + m + "'?)";
}

}  // namespace aggnet
