// Output files that appear whole or not at all.
#pragma once

#include <string>

namespace aggnet {

/// Writes `content` to `path` through a temporary file in the same directory and a
/// rename, so a crash or an error never leaves a half-written file at `path`.
/// Errors: std::runtime_error naming the path if it cannot be written.
void write_file_atomically(const std::string& path, const std::string& content);

/// Moves a finished temporary file into place (same directory rename).
/// Errors: std::runtime_error naming both paths.
void commit_file(const std::string& temporary, const std::string& path);

}  // namespace aggnet
