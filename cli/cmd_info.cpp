// `dgnn info`: what a graph or dataset directory holds, as text or one JSON object.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "dgnn/cli/commands.hpp"
#include "dgnn/cli/options.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/graph/stats.hpp"
#include "dgnn/graph/temporal.hpp"

namespace dgnn::cli {

namespace {

struct InfoArgs {
  DatasetOptions dataset;
  SnapshotOptions snapshots;
  bool json = false;
};

// load_dataset makes up features when none are given; info must not present those as data.
bool has_features(const DatasetOptions& opt) { return !dataset_files(opt).features.empty(); }

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

// ---- temporal graphs: one row per snapshot, and what base + differences save ----------------

const char* mode_name(SnapshotMode m) {
  return m == SnapshotMode::cumulative ? "cumulative"
         : m == SnapshotMode::sliding  ? "sliding"
                                       : "window";
}

// How the snapshots were cut, in words ("137 buckets of 1200000 time units, window").
std::string cut_text(const TemporalGraph& g, const SnapshotOptions& snap) {
  const int T = g.num_snapshots();
  std::string s =
      std::to_string(T) + " snapshot" + (T == 1 ? "" : "s") + ", " + mode_name(snap.mode);
  if (snap.mode == SnapshotMode::sliding) s += " of " + std::to_string(snap.window) + " buckets";
  char buf[128];
  const int64_t first = g.events.front().start_time, end = g.events.back().end_time;
  const double len = snap.seconds > 0 ? snap.seconds : double(end - 1 - first) / T;
  std::snprintf(buf, sizeof buf, "; times %lld .. %lld, buckets of %.10g units", (long long)first,
                (long long)end - 1, len);
  return s + buf;
}

void temporal_json(const InfoArgs& args, const SnapshotOptions& snap, const TemporalGraph& g,
                   const std::vector<SnapshotStats>& st, double load_ms) {
  nlohmann::json j;
  j["graph"] = args.dataset.graph;
  j["temporal"] = true;
  j["vertices"] = g.num_vertices;
  j["directed"] = g.directed;
  j["weighted"] = g.weighted;
  j["snapshot_mode"] = mode_name(snap.mode);
  j["window"] = snap.mode == SnapshotMode::sliding ? snap.window : 1;
  if (snap.seconds > 0) j["snapshot_seconds"] = snap.seconds;
  if (snap.count > 0) j["snapshot_count"] = snap.count;
  j["num_snapshots"] = g.num_snapshots();
  nlohmann::json rows = nlohmann::json::array();
  int64_t events = 0;
  for (size_t t = 0; t < st.size(); ++t) {
    events += st[t].events;
    rows.push_back({{"t", t},
                    {"start_time", g.events[t].start_time},
                    {"end_time", g.events[t].end_time},
                    {"active_vertices", st[t].active_vertices},
                    {"edges", st[t].edges},
                    {"stored_edges", st[t].stored_edges},
                    {"events", st[t].events},
                    {"bytes", st[t].bytes},
                    {"diff_bytes", st[t].diff_bytes}});
  }
  j["events"] = events;
  j["snapshots"] = rows;
  const int64_t full = g.full_bytes(), diff = g.diff_bytes();
  j["memory_bytes"] = {{"full_snapshots", full},
                       {"base_plus_diffs", diff},
                       {"saved", full - diff},
                       {"ratio", diff > 0 ? double(full) / double(diff) : 0.0}};
  j["load_ms"] = load_ms;
  std::printf("%s\n", j.dump().c_str());
}

void temporal_text(const InfoArgs& args, const SnapshotOptions& snap, const TemporalGraph& g,
                   const std::vector<SnapshotStats>& st, double load_ms) {
  std::printf("%-12s %s (loaded in %.2f s)\n", "graph", args.dataset.graph.c_str(), load_ms / 1000);
  std::printf("%-12s %lld, one set for all snapshots\n", "vertices", (long long)g.num_vertices);
  int64_t events = 0;
  for (const SnapshotStats& s : st) events += s.events;
  std::printf("%-12s %lld events, %s%s\n", "edges", (long long)events,
              g.directed ? "directed" : "undirected", g.weighted ? ", weighted" : "");
  std::printf("%-12s %s\n", "snapshots", cut_text(g, snap).c_str());
  std::printf("%12s %14s %10s %10s %10s\n", "snapshot", "start time", "vertices", "edges",
              "events");
  auto row = [&](size_t t) {
    std::printf("%12zu %14lld %10lld %10lld %10lld\n", t, (long long)g.events[t].start_time,
                (long long)st[t].active_vertices, (long long)st[t].edges, (long long)st[t].events);
  };
  // Long sequences: the first and last rows and a summary, so the table stays one screen.
  const size_t T = st.size(), shown = 10;
  if (T <= 40) {
    for (size_t t = 0; t < T; ++t) row(t);
  } else {
    for (size_t t = 0; t < shown; ++t) row(t);
    std::printf("%12s  (%zu snapshots not shown)\n", "...", T - 2 * shown);
    for (size_t t = T - shown; t < T; ++t) row(t);
  }
  std::vector<int64_t> edges, active;
  int64_t empty = 0;
  for (const SnapshotStats& s : st) {
    edges.push_back(s.edges);
    active.push_back(s.active_vertices);
    empty += s.edges == 0;
  }
  const auto [e_min, e_max] = std::minmax_element(edges.begin(), edges.end());
  const int64_t lo = *e_min, hi = *e_max;
  const double e_med = quantile(edges, 0.5), a_med = quantile(active, 0.5);
  std::printf("%-12s edges min %lld  median %.1f  max %lld; vertices median %.1f; %lld empty\n",
              "per snapshot", (long long)lo, e_med, (long long)hi, a_med, (long long)empty);
  const int64_t full = g.full_bytes(), diff = g.diff_bytes();
  std::printf("%-12s every snapshot as a CSR %s, base + differences %s: %s %s (%.2fx)\n", "memory",
              human_bytes(full).c_str(), human_bytes(diff).c_str(),
              human_bytes(full >= diff ? full - diff : diff - full).c_str(),
              full >= diff ? "saved" : "more", diff > 0 ? double(full) / double(diff) : 0.0);
}

void run_temporal(const InfoArgs& args) {
  Timer timer;
  SnapshotOptions snap = args.snapshots;
  const TemporalGraph g = load_temporal(args.dataset.graph, args.dataset.edges, snap);
  const double load_ms = timer.ms();
  // A dataset directory's snapshots.txt may have supplied the bucket length (or the count).
  if (snap.seconds == 0 && snap.count == 0)
    if (auto lay = read_temporal_layout(args.dataset.graph)) {
      snap.seconds = lay->seconds;
      if (snap.seconds == 0) snap.count = lay->snapshots;
    }
  const std::vector<SnapshotStats> st = snapshot_stats(g);
  if (args.json) {
    temporal_json(args, snap, g, st, load_ms);
  } else {
    temporal_text(args, snap, g, st, load_ms);
  }
}

}  // namespace

void register_info(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand(
      "info",
      "Load a graph or dataset directory and print its size, degrees and components; for a "
      "temporal graph (--time-col), its snapshots and what storing them as differences saves");
  cmd->add_option("--graph", args->dataset.graph,
                  "Edge-list file (.txt/.csv, optionally .gz) or dataset directory")
      ->required()
      ->check(CLI::ExistingPath);
  add_dataset_options(cmd, args->dataset);
  add_snapshot_options(cmd, args->snapshots);
  cmd->add_flag("--json", args->json, "Print one JSON object instead of text");
  cmd->callback([args] {
    if (is_temporal_input(args->dataset.graph, args->dataset.edges, args->snapshots))
      return run_temporal(*args);
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
