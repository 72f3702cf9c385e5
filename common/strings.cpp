#include "common/strings.h"

#include <cctype>

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

}  // namespace aggnet
