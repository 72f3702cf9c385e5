// `aggnet platform`: a platform's sites, links, shortest-delay routes and multicast trees
// (the routing the simulation uses) and the physical bound for --gradient, as tables or --json
// (scripts/plot_platform.py draws the map from the JSON).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "common/atomic_file.h"
#include "common/config_error.h"
#include "common/units.h"
#include "model/physical_bound.h"
#include "model/routing.h"
#include "model/tree_packing.h"
#include "sim/report.h"
#include "traffic/forest_planner.h"

namespace aggnet {
namespace {

using nlohmann::json;

const char* kCaption =
    "aggnet platform: a platform's sites, links, routes (shortest one-way delay) and the "
    "multicast tree from every site to all others, and the physical bound on averaging "
    "--gradient bytes (docs/physical-bound.md)";

// Beyond this many sites the n(n-1) routes and the n trees are listed only on request:
// at 1,000 sites they were 23 CPU-s and 4 GB of JSON.
constexpr std::size_t kListedSitesMax = 100;

double ms(std::uint64_t ps) { return static_cast<double>(ps) * 1e-9; }
double gbps(std::uint64_t bps) { return static_cast<double>(bps) * 1e-9; }

json sites_json(const Platform& p) {
  json sites = json::array();
  for (const auto& s : p.sites)
    sites.push_back({{"site", s.code},
                     {"name", s.name},
                     {"continent", s.continent},
                     {"lat_deg", s.lat_deg},
                     {"lng_deg", s.lng_deg},
                     {"fpga_buffer_bytes", s.fpga.buffer_bytes},
                     {"compute_time_s", static_cast<double>(s.cluster.compute_time_ps) * 1e-12},
                     {"access_bandwidth_gbps", gbps(s.cluster.access_bandwidth_bps)}});
  return sites;
}

json links_json(const Platform& p) {
  json links = json::array();
  for (const auto& l : p.links)
    links.push_back({{"a", p.sites[static_cast<std::size_t>(l.a)].code},
                     {"b", p.sites[static_cast<std::size_t>(l.b)].code},
                     {"delay_ms", ms(l.params.delay_ps)},
                     {"bandwidth_gbps", gbps(l.params.bandwidth_bps)},
                     {"source", l.source}});
  return links;
}

std::vector<std::string> codes(const Platform& p, const std::vector<int>& sites) {
  std::vector<std::string> out;
  for (int s : sites) out.push_back(p.sites[static_cast<std::size_t>(s)].code);
  return out;
}

json routes_json(const Platform& p, const Routing& routing) {
  json routes = json::array();
  const int n = static_cast<int>(p.sites.size());
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (s != d)
        routes.push_back({{"from", p.sites[static_cast<std::size_t>(s)].code},
                          {"to", p.sites[static_cast<std::size_t>(d)].code},
                          {"delay_ms", ms(routing.delay_ps(s, d))},
                          {"path", codes(p, routing.path(s, d))}});
  return routes;
}

// The tree every site's chunks take to all the others (an all-to-all group's).
json trees_json(const Platform& p, const Routing& routing) {
  json trees = json::array();
  const int n = static_cast<int>(p.sites.size());
  for (int s = 0; s < n; ++s) {
    std::vector<int> receivers;
    for (int d = 0; d < n; ++d)
      if (d != s) receivers.push_back(d);
    json hops = json::array();
    for (const auto& [u, v] : routing.multicast_tree(s, receivers))
      hops.push_back(codes(p, {u, v}));
    trees.push_back({{"source", p.sites[static_cast<std::size_t>(s)].code},
                     {"links", hops.size()},
                     {"hops", hops}});
  }
  return trees;
}

// The physical bound of averaging `gradient_bytes` over the platform (docs/physical-bound.md).
json bound_json(const Platform& p, std::uint64_t gradient_bytes) {
  const PhysicalBound b = physical_bound(p, gradient_bytes);
  json out = {{"gradient_bytes", gradient_bytes},  {"bound_s", b.bound_s},
              {"set_by", b.binding.describe(p)},   {"path_s", b.path.time_s},
              {"path", b.path.describe(p)},        {"cut_s", b.cut.time_s},
              {"cut", b.cut.describe(p)},          {"method", bound_method_name(b.method)},
              {"cuts_evaluated", b.cuts_evaluated}};
  if (p.sites.size() <= static_cast<std::size_t>(kSiteCutsMaxSites)) {
    const PhysicalBound edge = edge_summation_bound(p, gradient_bytes);
    out["edge_summation_bound_s"] = edge.bound_s;
    out["edge_summation_set_by"] = edge.binding.describe(p);
  }
  if (p.sites.size() <= static_cast<std::size_t>(kForestMaxSites)) {
    const double forest = forest_rate_bytes_per_s(p);
    out["forest_rate_gbps"] = forest * 8e-9;
    out["forest_bandwidth_s"] = static_cast<double>(gradient_bytes) / forest;
  }
  return out;
}

std::string joined(const json& words, const char* sep);

// The reduction forest `reduction-forest` would run for `gradient_bytes`
// (traffic/forest_planner.h): its trees, their shares and rates, and the planner's estimate.
json forest_json(const Platform& p, const Routing& routing, std::uint64_t gradient_bytes) {
  const TreeNetwork net = tree_network(p, routing, RunOptions{}.chunk_bytes);
  const LoadAwareForest plan = plan_load_aware_forest(net, static_cast<double>(gradient_bytes));
  json trees = json::array();
  for (const PackedTree& t : plan.trees) {
    json links = json::array();
    for (int i : t.links)
      links.push_back(p.sites[net.links[i].a].code + "-" + p.sites[net.links[i].b].code);
    trees.push_back({{"root", p.sites[t.root].code},
                     {"share", t.bytes / static_cast<double>(gradient_bytes)},
                     {"rate_gbps", t.rate_bytes_per_s * 8e-9},
                     {"latency_s", t.latency_s},
                     {"links", links}});
  }
  return {{"estimate_s", plan.time_s},
          {"packing_gbps", plan.packing_bytes_per_s * 8e-9},
          {"trees", trees}};
}

std::string forest_table(const json& f) {
  std::string out = fmt::format(
      "\nReduction forest (--schedule reduction-forest): {} tree(s), estimate {}, packing {:.4g} "
      "Gbps of payload\n",
      f["trees"].size(), format_time_ps(f["estimate_s"].get<double>() * 1e12),
      f["packing_gbps"].get<double>());
  for (const auto& t : f["trees"])
    out += fmt::format(
        "  root {:<5} share {:>6.2f} %  {:>8.4g} Gbps  latency {:>10}  {}\n",
        t["root"].get<std::string>(), t["share"].get<double>() * 100, t["rate_gbps"].get<double>(),
        format_time_ps(t["latency_s"].get<double>() * 1e12), joined(t["links"], " "));
  return out;
}

std::string bound_table(const json& b) {
  std::string out = fmt::format(
      "\nPhysical bound for G = {} (no plan reaches the exact average sooner)\n  bound   {} "
      "({})\n  path    {}\n  cut     {}\n",
      format_bytes(b["gradient_bytes"].get<std::uint64_t>()),
      format_time_ps(b["bound_s"].get<double>() * 1e12), b["method"].get<std::string>(),
      b["path"].get<std::string>(), b["cut"].get<std::string>());
  if (b.contains("edge_summation_bound_s"))
    out += fmt::format(
        "  all-to-all, summed at the receiving edge only, any multicast trees: {}\n    {}\n",
        format_time_ps(b["edge_summation_bound_s"].get<double>() * 1e12),
        b["edge_summation_set_by"].get<std::string>());
  if (b.contains("forest_rate_gbps"))
    out += fmt::format(
        "  forest  {:.4g} Gbps of payload at most over reduce-then-broadcast trees (spanning-tree "
        "packing): G takes {} on bandwidth alone\n",
        b["forest_rate_gbps"].get<double>(),
        format_time_ps(b["forest_bandwidth_s"].get<double>() * 1e12));
  return out;
}

std::string joined(const json& words, const char* sep) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : sep) + w.get<std::string>();
  return out;
}

std::string tables(const json& doc) {
  std::string out = fmt::format("Platform {} ({}): {} sites, {} links\n\nSites\n",
                                doc["platform"].get<std::string>(), doc["file"].get<std::string>(),
                                doc["sites"].size(), doc["links"].size());
  std::size_t name_width = 4, continent_width = 9;
  for (const auto& s : doc["sites"]) {
    name_width = std::max(name_width, s["name"].get<std::string>().size());
    continent_width = std::max(continent_width, s["continent"].get<std::string>().size());
  }
  out += fmt::format("  {:<5} {:<{}} {:<{}} {:>8} {:>9} {:>11} {:>9} {:>10}\n", "site", "name",
                     name_width, "continent", continent_width, "lat", "lng", "FPGA buffer",
                     "compute", "access");
  for (const auto& s : doc["sites"])
    out += fmt::format("  {:<5} {:<{}} {:<{}} {:>8.3f} {:>9.3f} {:>11} {:>9} {:>10}\n",
                       s["site"].get<std::string>(), s["name"].get<std::string>(), name_width,
                       s["continent"].get<std::string>(), continent_width,
                       s["lat_deg"].get<double>(), s["lng_deg"].get<double>(),
                       format_bytes(s["fpga_buffer_bytes"].get<std::uint64_t>()),
                       format_time_ps(s["compute_time_s"].get<double>() * 1e12),
                       format_rate(s["access_bandwidth_gbps"].get<double>() * 1e9));
  out += "\nLinks (both directions)\n";
  for (const auto& l : doc["links"])
    out += fmt::format(
        "  {:<9} {:>12} {:>10}  {}\n", l["a"].get<std::string>() + "-" + l["b"].get<std::string>(),
        format_time_ps(l["delay_ms"].get<double>() * 1e9),
        format_rate(l["bandwidth_gbps"].get<double>() * 1e9), l["source"].get<std::string>());
  if (!doc.contains("routes"))
    return out +
           fmt::format(
               "\nRoutes and multicast trees: {} of each, not listed beyond {} sites "
               "(--routes lists them)\n",
               doc["sites"].size() * (doc["sites"].size() - 1), kListedSitesMax) +
           bound_table(doc["bound"]) + forest_table(doc["forest"]);
  out += "\nRoutes (shortest one-way delay)\n";
  for (const auto& r : doc["routes"])
    out += fmt::format("  {:<9} {:>12}  {}\n",
                       r["from"].get<std::string>() + "->" + r["to"].get<std::string>(),
                       format_time_ps(r["delay_ms"].get<double>() * 1e9), joined(r["path"], " "));
  out += "\nMulticast trees (from each site to all others: the links a chunk crosses, once each)\n";
  for (const auto& t : doc["trees"]) {
    std::string hops;
    for (const auto& h : t["hops"]) hops += (hops.empty() ? "" : ", ") + joined(h, "->");
    out += fmt::format("  {:<5} {:>2} links: {}\n", t["source"].get<std::string>(),
                       t["links"].get<std::size_t>(), hops);
  }
  return out + bound_table(doc["bound"]) + forest_table(doc["forest"]);
}

}  // namespace

int cmd_platform(int argc, char** argv) {
  return cli::run_command(
      "aggnet platform", options::kPlatform, kCaption, argc, argv,
      [](const options::OptionValues& values) {
        cli::check_outputs(values);
        const Platform platform = cli::load_platform(values, RunOptions{});
        const Routing routing(platform);
        json doc = {{"platform", platform.name},
                    {"file", platform.file},
                    {"sites", sites_json(platform)},
                    {"links", links_json(platform)},
                    {"bound", bound_json(platform, values.bytes("gradient"))},
                    {"forest", forest_json(platform, routing, values.bytes("gradient"))}};
        if (platform.sites.size() <= kListedSitesMax || values.flag("routes")) {
          doc["routes"] = routes_json(platform, routing);
          doc["trees"] = trees_json(platform, routing);
        }
        tidy_numbers(doc);
        const std::string& out = values.text("json");
        if (!is_stdout(out)) std::cout << tables(doc);
        if (!out.empty()) write_file_atomically(out, doc.dump(2) + "\n");
        return 0;
      });
}

}  // namespace aggnet
