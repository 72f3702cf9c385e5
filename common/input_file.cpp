#include "common/input_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "common/config_error.h"
#include "common/strings.h"

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

namespace {

// The names of the regular files of `dir` but hidden ones, at most the first 10,000 (a
// suggestion is not worth reading a huge directory); none if it cannot be read.
std::vector<std::string> file_names(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir.empty() ? "." : dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name[0] != '.' && it->is_regular_file(ec)) names.push_back(name);
    if (names.size() >= 10000) break;
  }
  return names;
}

}  // namespace

std::string closest_existing_file(const std::string& path,
                                  const std::vector<std::string>& more_dirs) {
  namespace fs = std::filesystem;
  const fs::path given(path);
  const std::string name = given.filename().string();
  std::vector<fs::path> dirs = {given.parent_path()};
  dirs.insert(dirs.end(), more_dirs.begin(), more_dirs.end());
  for (const fs::path& dir : dirs) {
    const auto names = file_names(dir);
    const bool same = std::find(names.begin(), names.end(), name) != names.end();
    const std::string match = same ? name : closest_match(name, names);
    if (!match.empty() && dir / match != given) return (dir / match).string();
  }
  return "";
}

void check_input_exists(const std::string& path, const std::vector<std::string>& more_dirs) {
  std::error_code ec;
  if (std::filesystem::symlink_status(path, ec).type() != std::filesystem::file_type::not_found)
    return;
  const std::string match = closest_existing_file(path, more_dirs);
  throw ConfigError(path, 0, "",
                    "cannot read file: No such file or directory" +
                        (match.empty() ? "" : " (did you mean '" + match + "'?)"));
}

std::string read_input_file(const std::string& path, const std::string& kind) {
  check_input_exists(path);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ConfigError(path, 0, "", "expected " + kind + ", got a directory");
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
