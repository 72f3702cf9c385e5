#include "common/schedule_names.h"

#include <regex>

namespace aggnet {

const std::vector<ScheduleName>& schedule_names() {
  // The shape only: SITE and RULE are words (\w+), checked where the schedule is made.
  static const std::vector<ScheduleName> names = {
      {"all-to-all", "all-to-all"},
      {"triads", "triads"},
      {"ring", "ring"},
      {"pairs", "pairs"},
      {"rotating-K", "rotating-[0-9]+"},
      {"sequential-K", "sequential-[0-9]+"},
      {"random-K:SEED", "random-[0-9]+:[0-9]+"},
      {"hierarchical", "hierarchical"},
      {"ring:RULE", "ring:\\w+"},
      {"reduce-scatter[:RULE]", "reduce-scatter(:\\w+)?"},
      {"all-gather[:RULE]", "all-gather(:\\w+)?"},
      {"p2p:SRC-DST[xK]", "p2p:.+"},
      {"parameter-server:SITE", "parameter-server:\\w+"},
      {"unicast-all-to-all", "unicast-all-to-all"},
      {"reduction-tree[:SITE]", "reduction-tree(:\\w+)?"},
      {"reduction-forest", "reduction-forest"},
      {"reduction-in-trees", "reduction-in-trees"},
  };
  return names;
}

std::string schedule_name_list() {
  std::string list;
  for (const auto& name : schedule_names())
    list += (list.empty() ? "" : ", ") + std::string(name.spelling);
  return list;
}

std::vector<std::string> schedule_name_words() {
  std::vector<std::string> words;
  for (const auto& name : schedule_names())
    words.emplace_back(name.spelling.substr(0, name.spelling.find('[')));
  return words;
}

bool is_schedule_name(const std::string& value) {
  static const std::vector<std::regex> patterns = [] {
    std::vector<std::regex> compiled;
    for (const auto& name : schedule_names())
      compiled.emplace_back(std::string(name.pattern), std::regex::ECMAScript);
    return compiled;
  }();
  for (const auto& pattern : patterns)
    if (std::regex_match(value, pattern)) return true;
  return false;
}

}  // namespace aggnet
