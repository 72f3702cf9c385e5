#include "common/input_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "common/config_error.h"

namespace aggnet {

namespace {

// Length of the UTF-8 sequence starting at `i` (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 if it is not one.
std::size_t utf8_sequence(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) {
    return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u;
  };
  const unsigned c = byte(i);
  if (c < 0x80) return 1;
  const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return byte(k) >= lo && byte(k) <= hi;
  };
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

namespace {

// 1-based line of the first C0 control byte but tab, line feed and carriage return (YAML
// allows none of them; a NUL once reached the outputs inside a name), or 0.
int control_byte_line(const std::string& text, unsigned char& bad) {
  const auto at = std::find_if(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && u != '\t' && u != '\n' && u != '\r') || u == 0x7f;
  });
  if (at == text.end()) return 0;
  bad = static_cast<unsigned char>(*at);
  return 1 + static_cast<int>(std::count(text.begin(), at, '\n'));
}

}  // namespace

int invalid_utf8_line(const std::string& text, unsigned char& bad) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence(text, i);
    if (n == 0) {
      bad = static_cast<unsigned char>(text[i]);
      return 1 +
             static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(i), '\n'));
    }
    i += n;
  }
  return 0;
}

std::string read_input_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ConfigError(path, 0, "", "expected a YAML file, got a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, 0, "", std::string("cannot read file: ") + std::strerror(errno));
  // Block by block up to the limit: a buffer of the limit's size cost every read 64 MiB of
  // zeroed pages.
  std::string text;
  std::vector<char> block(std::size_t{1} << 16);
  while (in && text.size() <= kMaxInputFileBytes) {
    const std::size_t want = std::min(block.size(), kMaxInputFileBytes + 1 - text.size());
    in.read(block.data(), static_cast<std::streamsize>(want));
    if (in.bad()) throw ConfigError(path, 0, "", "cannot read file");
    text.append(block.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (text.size() > kMaxInputFileBytes)
    throw ConfigError(path, 0, "",
                      fmt::format("expected a file of at most {} MiB, got more (a device or an "
                                  "endless stream?)",
                                  kMaxInputFileBytes >> 20));
  unsigned char bad = 0;
  if (const int line = control_byte_line(text, bad))
    throw ConfigError(path, line, "",
                      fmt::format("expected text, got the control byte 0x{:02x}", bad));
  if (const int line = invalid_utf8_line(text, bad))
    throw ConfigError(path, line, "",
                      fmt::format("expected UTF-8 text, got the byte 0x{:02x}", bad));
  return text;
}

}  // namespace aggnet
