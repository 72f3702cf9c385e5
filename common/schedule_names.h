// The built-in schedule names, one table for the option checks (options/), the schedule
// loader (config/) and the sweeps: what a user may write, what errors list and what a
// misspelling is compared with.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace aggnet {

/// One built-in schedule name: as help and errors write it (parameters in capitals,
/// optional parts in brackets) and the names it stands for.
struct ScheduleName {
  std::string_view spelling;  // "rotating-K", "reduction-tree[:SITE]"
  std::string_view pattern;   // ECMAScript regex of the names: "rotating-[0-9]+"
};

/// Every built-in schedule name, in the order help and errors list them.
const std::vector<ScheduleName>& schedule_names();

/// "all-to-all, triads, ..., reduction-in-trees": the spellings, for help and errors.
std::string schedule_name_list();

/// The spellings without their optional parts ("reduction-tree[:SITE]" -> "reduction-tree"),
/// what closest_match compares a misspelled name with.
std::vector<std::string> schedule_name_words();

/// Whether `value` has the shape of a built-in schedule name ("rotating-4", "p2p:a-b");
/// its sites and counts are checked where the schedule is made (config/schedule_io.h).
bool is_schedule_name(const std::string& value);

}  // namespace aggnet
