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

/// The items with `sep` between them: {"a", "b"} -> "a, b".
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

/// `text` without leading and trailing whitespace (std::isspace).
std::string trim(std::string_view text);

/// Edit distance with transpositions (optimal string alignment: insertions, deletions,
/// substitutions and swaps of two adjacent letters, "rnu" -> "run" is 1; ASCII
/// case-insensitive).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` by edit_distance, if it is close enough to be what the
/// user meant: at most max(1, |word| / 3) edits, or `word` being a prefix of it or it of
/// `word` ("london" -> "lon"); '-' and '_' are ignored ("all_to_all" -> "all-to-all",
/// "all2all" -> "all-to-all"). Ties go to the first candidate. "" when none is.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// " (did you mean 'bandwidth'?)" for closest_match(word, candidates), or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace aggnet
