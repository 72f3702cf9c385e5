// Splitting and trimming strings, one way for the whole tree.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace aggnet {

/// Whether split() keeps the empty fields.
enum class EmptyFields { kKeep, kSkip };

/// Splits `text` at every `sep`, without trimming and without any quoting rule.
///  - EmptyFields::kKeep (default): n separators give n + 1 fields, empty ones included,
///    as Python's str.split(sep): "a,,b" -> {"a", "", "b"}, "a," -> {"a", ""},
///    "" -> {""}. Joining the fields with `sep` gives `text` back.
///  - EmptyFields::kSkip: the same fields without the empty ones: ",a,,b," -> {"a", "b"},
///    "" and "," -> {} (lists where "a,,b" means a and b).
std::vector<std::string> split(std::string_view text, char sep,
                               EmptyFields empty = EmptyFields::kKeep);

/// `text` without leading and trailing whitespace (std::isspace).
std::string trim(std::string_view text);

}  // namespace aggnet
