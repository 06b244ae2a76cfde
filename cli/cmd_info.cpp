// `dgnn info`: what a graph or dataset directory holds, as text or one JSON object.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/timer.hpp"
#include "graph/dataset.hpp"
#include "graph/stats.hpp"

namespace dgnn::cli {

namespace {

struct InfoArgs {
  DatasetOptions dataset;
  bool json = false;
};

// load_dataset makes up features when none are given; info must not present those as data.
bool has_features(const DatasetOptions& opt) {
  namespace fs = std::filesystem;
  if (!opt.features.empty()) return true;
  std::error_code ec;
  if (!fs::is_directory(opt.graph, ec)) return false;
  return fs::exists(fs::path(opt.graph) / "features.npy", ec) ||
         fs::exists(fs::path(opt.graph) / "features.txt", ec);
}

std::string human_bytes(int64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double x = double(b);
  int u = 0;
  while (x >= 1024 && u < 4) x /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", x, units[u]);
  return buf;
}

nlohmann::json degree_json(const DegreeStats& d) {
  return {{"min", d.min}, {"max", d.max}, {"mean", d.mean}, {"median", d.median}, {"p99", d.p99}};
}

int64_t labelled_count(const Dataset& ds) {
  int64_t n = 0;
  for (int32_t l : ds.labels) n += l >= 0;
  return n;
}

void print_json(const InfoArgs& args, const Dataset& ds, const GraphStats& s, double load_ms) {
  const Graph& g = ds.graph;
  nlohmann::json j;
  j["graph"] = args.dataset.graph;
  j["vertices"] = s.vertices;
  j["edges"] = s.edges;
  j["stored_edges"] = s.stored_edges;
  j["directed"] = s.directed;
  j["weighted"] = g.in.weighted();
  j["self_loops"] = s.self_loops;
  j["isolated_vertices"] = s.isolated;
  j["input_edges"] = g.input_edges;
  j["self_loops_removed"] = g.self_loops_removed;
  j["duplicates_merged"] = g.duplicates_merged;
  j["in_degree"] = degree_json(s.in_degree);
  j["out_degree"] = degree_json(s.out_degree);
  j["components"] = {{"count", s.components}, {"largest", s.largest_component}};
  j["memory_bytes"] = {{"csr", s.csr_bytes}, {"id_map", s.id_map_bytes}};
  j["feature_dim"] = has_features(args.dataset) ? ds.feature_dim : 0;
  if (!ds.labels.empty()) {
    j["labels"] = {{"classes", ds.num_classes}, {"labelled", labelled_count(ds)}};
  } else {
    j["labels"] = nullptr;
  }
  j["split"] = {{"train", ds.train.size()}, {"val", ds.val.size()}, {"test", ds.test.size()}};
  j["description"] = ds.description;
  j["load_ms"] = load_ms;
  std::printf("%s\n", j.dump().c_str());
}

void print_degree(const char* name, const DegreeStats& d) {
  std::printf("%-12s min %lld  max %lld  mean %.2f  median %.1f  p99 %.1f\n", name,
              (long long)d.min, (long long)d.max, d.mean, d.median, d.p99);
}

void print_text(const InfoArgs& args, const Dataset& ds, const GraphStats& s, double load_ms) {
  const Graph& g = ds.graph;
  std::printf("%-12s %s (loaded in %.2f s)\n", "graph", args.dataset.graph.c_str(), load_ms / 1000);
  std::printf("%-12s %lld\n", "vertices", (long long)s.vertices);
  if (s.directed) {
    std::printf("%-12s %lld directed%s\n", "edges", (long long)s.edges,
                g.in.weighted() ? ", weighted" : "");
  } else {
    std::printf("%-12s %lld undirected (%lld stored both ways)%s\n", "edges", (long long)s.edges,
                (long long)s.stored_edges, g.in.weighted() ? ", weighted" : "");
  }
  std::printf("%-12s %lld edge lines read, %lld self loops removed, %lld duplicates merged\n",
              "input", (long long)g.input_edges, (long long)g.self_loops_removed,
              (long long)g.duplicates_merged);
  std::printf("%-12s %lld self loops, %lld isolated vertices\n", "structure",
              (long long)s.self_loops, (long long)s.isolated);
  if (s.directed) {
    print_degree("in-degree", s.in_degree);
    print_degree("out-degree", s.out_degree);
  } else {
    print_degree("degree", s.in_degree);
  }
  std::printf("%-12s %lld%s, largest %lld vertices (%.1f%%)\n", "components",
              (long long)s.components, s.directed ? " (weakly connected)" : "",
              (long long)s.largest_component,
              s.vertices ? 100.0 * double(s.largest_component) / double(s.vertices) : 0.0);
  std::printf("%-12s CSR %s, id map %s\n", "memory", human_bytes(s.csr_bytes).c_str(),
              human_bytes(s.id_map_bytes).c_str());
  if (has_features(args.dataset)) {
    std::printf("%-12s %lld x %lld\n", "features", (long long)ds.num_vertices(),
                (long long)ds.feature_dim);
  } else {
    std::printf("%-12s none (training would generate %lld columns)\n", "features",
                (long long)ds.feature_dim);
  }
  if (!ds.labels.empty()) {
    std::printf("%-12s %d classes, %lld labelled\n", "labels", ds.num_classes,
                (long long)labelled_count(ds));
    std::printf("%-12s train %zu, val %zu, test %zu\n", "split", ds.train.size(), ds.val.size(),
                ds.test.size());
  }
  if (!ds.description.empty()) std::printf("%-12s %s\n", "sources", ds.description.c_str());
}

}  // namespace

void register_info(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand(
      "info", "Load a graph or dataset directory and print its size, degrees and components");
  cmd->add_option("--graph", args->dataset.graph,
                  "Edge-list file (.txt/.csv, optionally .gz) or dataset directory")
      ->required()
      ->check(CLI::ExistingPath);
  add_dataset_options(cmd, args->dataset);
  cmd->add_flag("--json", args->json, "Print one JSON object instead of text");
  cmd->callback([args] {
    Timer timer;
    Dataset ds = load_dataset(args->dataset);
    const double load_ms = timer.ms();
    GraphStats s = graph_stats(ds.graph);
    if (args->json) {
      print_json(*args, ds, s, load_ms);
    } else {
      print_text(*args, ds, s, load_ms);
    }
  });
}

}  // namespace dgnn::cli
