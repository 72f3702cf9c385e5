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

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
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
  // Optimal string alignment: three rows of the distance matrix (i - 2, i - 1, i).
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = lower(a[i - 1]) == lower(b[j - 1]);
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (same ? 0 : 1)});
      const bool swapped = i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
                           lower(a[i - 2]) == lower(b[j - 1]);
      if (swapped) row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, row);
  }
  return previous[b.size()];
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
    // Separators do not count: "all2all" is two edits from "all-to-all".
    d = std::min(d, edit_distance(normalized(word), normalized(c)));
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
