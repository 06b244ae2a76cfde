#include "dgnn/graph/signals.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "dgnn/common/error.hpp"
#include "dgnn/graph/npy.hpp"

namespace dgnn {

namespace {

bool ends_with(const std::string& s, const char* tail) {
  const std::string t(tail);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

// A value for a message: scalars as written (cut to 60 characters), a list or an object by its
// kind and size (dump() recurses: a deeply nested value would overflow the stack).
std::string describe(const nlohmann::json& v) {
  if (v.is_array()) return "a list of " + std::to_string(v.size());
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + " keys";
  std::string d = v.dump();
  if (d.size() > 60) d = d.substr(0, 57) + "...";
  return d;
}

// A JSON number as a float; InputError naming `what` otherwise.
float number(const nlohmann::json& v, const std::string& path, const std::string& what) {
  if (!v.is_number()) throw InputError(path, 0, what + " is not a number (" + describe(v) + ")");
  const double d = v.get<double>();
  if (!std::isfinite(d) || std::fabs(d) > 3.4e38)
    throw InputError(path, 0, what + " is not a finite float (" + describe(v) + ")");
  return float(d);
}

int64_t vertex_id(const nlohmann::json& v, const std::string& path, const std::string& what,
                  int64_t n) {
  if (!v.is_number_integer())
    throw InputError(path, 0, what + " is not an integer vertex id (" + describe(v) + ")");
  // (An unsigned id above 2^63 would wrap as int64: compared as written.)
  const bool too_large = v.is_number_unsigned() && v.get<uint64_t>() >= uint64_t(n);
  const int64_t id = too_large ? n : v.get<int64_t>();
  if (id < 0 || id >= n)
    throw InputError(path, 0,
                     what + " names vertex " + describe(v) + ", outside 0.." +
                         std::to_string(n - 1) + " (the signal rows have " + std::to_string(n) +
                         " values: one per vertex)");
  return id;
}

// The rows of the signal: FX (chickenpox: T rows of N), or one object per step "0", "1", ...
// with its "y" (WikiMath, as PyG-Temporal's loaders read it), up to "time_periods".
std::vector<const nlohmann::json*> signal_rows(const nlohmann::json& doc, const std::string& path) {
  std::vector<const nlohmann::json*> rows;
  if (doc.contains("FX")) {
    const nlohmann::json& fx = doc["FX"];
    if (!fx.is_array()) throw InputError(path, 0, "\"FX\" is not a list of rows (one per step)");
    for (const auto& r : fx) rows.push_back(&r);
    return rows;
  }
  if (doc.contains("time_periods")) {
    const nlohmann::json& tp = doc["time_periods"];
    if (!tp.is_number_integer() || tp.get<int64_t>() < 1 || tp.get<int64_t>() > (1 << 24))
      throw InputError(path, 0,
                       "\"time_periods\" is not a positive step count (" + describe(tp) + ")");
    for (int64_t t = 0; t < tp.get<int64_t>(); ++t) {
      const std::string key = std::to_string(t);
      if (!doc.contains(key) || !doc[key].is_object() || !doc[key].contains("y"))
        throw InputError(
            path, 0,
            "\"time_periods\" is " + describe(tp) + " but step \"" + key + "\" has no \"y\" list");
      rows.push_back(&doc[key]["y"]);
    }
    return rows;
  }
  std::string keys;
  for (auto it = doc.begin(); it != doc.end() && keys.size() < 200; ++it)
    keys += (keys.empty() ? "" : ", ") + it.key();
  throw InputError(path, 0,
                   "no signal: expected \"FX\" (one row of vertex values per step) or "
                   "\"time_periods\" with a \"y\" per step; the file has " +
                       (keys.empty() ? std::string("no keys") : keys));
}

}  // namespace

bool is_signal_json(const std::string& path) {
  return ends_with(path, ".json") || ends_with(path, ".json.gz");
}

TemporalGraph static_as_temporal(EdgeList edges, const EdgeListOptions& opt,
                                 const std::string& path, int64_t min_vertices) {
  // One bucket: every edge at time 0.
  edges.time.assign(edges.src.size(), 0);
  EdgeListOptions o = opt;
  o.time_col = std::max(o.time_col, 0);
  SnapshotOptions snap;
  snap.count = 1;
  return build_temporal(edges, o, snap, path, min_vertices);
}

SignalSeries read_signal_json(const std::string& path) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, 0, std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object())
    throw InputError(path, 0, "expected a JSON object with \"edges\" and \"FX\"");
  if (!doc.contains("edges") || !doc["edges"].is_array())
    throw InputError(path, 0, "no \"edges\" list (pairs of vertex ids)");
  const std::vector<const nlohmann::json*> rows = signal_rows(doc, path);
  if (rows.empty()) throw InputError(path, 0, "the signal has no steps");
  SignalSeries s;
  s.source = path;
  s.steps = int64_t(rows.size());
  s.channels = 1;
  // Row t: N values (or N lists of F values each).
  const nlohmann::json& first = *rows[0];
  if (!first.is_array() || first.empty())
    throw InputError(path, 0, "step 0 of the signal is not a non-empty list of vertex values");
  const int64_t n = int64_t(first.size());
  if (first[0].is_array()) s.channels = int64_t(first[0].size());
  if (s.channels < 1) throw InputError(path, 0, "step 0, vertex 0 has no values");
  for (int64_t t = 0; t < s.steps; ++t) {
    const nlohmann::json& r = *rows[size_t(t)];
    const std::string where = "step " + std::to_string(t) + " of the signal";
    if (!r.is_array() || int64_t(r.size()) != n)
      throw InputError(path, 0,
                       where + " has " + (r.is_array() ? std::to_string(r.size()) : "no list of") +
                           " values, step 0 has " + std::to_string(n) + " (one per vertex)");
    for (int64_t v = 0; v < n; ++v) {
      const nlohmann::json& x = r[size_t(v)];
      const std::string at = where + ", vertex " + std::to_string(v);
      if (s.channels == 1 && !x.is_array()) {
        s.values.push_back(number(x, path, at));
        continue;
      }
      if (!x.is_array() || int64_t(x.size()) != s.channels)
        throw InputError(path, 0,
                         at + " does not have " + std::to_string(s.channels) +
                             " values (as step 0, vertex 0 has)");
      for (const auto& c : x) s.values.push_back(number(c, path, at));
    }
  }
  EdgeList e;
  const nlohmann::json& edges = doc["edges"];
  for (size_t i = 0; i < edges.size(); ++i) {
    const nlohmann::json& p = edges[i];
    const std::string what = "edge " + std::to_string(i);
    if (!p.is_array() || p.size() != 2)
      throw InputError(path, 0, what + " is not a pair of vertex ids (" + describe(p) + ")");
    e.src.push_back(vertex_id(p[0], path, what, n));
    e.dst.push_back(vertex_id(p[1], path, what, n));
  }
  if (e.src.empty()) throw InputError(path, 0, "\"edges\" is empty");
  if (doc.contains("weights") && !doc["weights"].is_null()) {
    const nlohmann::json& w = doc["weights"];
    if (!w.is_array() || w.size() != edges.size())
      throw InputError(path, 0,
                       "\"weights\" has " +
                           (w.is_array() ? std::to_string(w.size()) : "no list of") +
                           " values for " + std::to_string(edges.size()) + " edges");
    for (size_t i = 0; i < w.size(); ++i)
      e.weight.push_back(number(w[i], path, "weight " + std::to_string(i)));
  }
  e.lines = int64_t(edges.size());
  EdgeListOptions opt;
  opt.directed = true;  // as PyG-Temporal reads the pairs
  opt.weight_col = e.weight.empty() ? -1 : 2;
  s.graph = static_as_temporal(std::move(e), opt, path, n);
  return s;
}

NpyMatrix read_signal_npy(const std::string& path) {
  NpyMatrix m = read_npy(path, 3);
  if (m.shape.size() < 2)
    throw InputError(path, 0,
                     "expected a [T, N] or [T, N, F] array (step, vertex, channel), got a 1-D one "
                     "of " +
                         std::to_string(m.rows) + " values");
  for (int64_t d : m.shape)
    if (d < 1) throw InputError(path, 0, "the signal is empty (a dimension is 0)");
  const int64_t per_step = m.shape[1] * (m.shape.size() == 3 ? m.shape[2] : 1);
  for (size_t i = 0; i < m.data.size(); ++i)
    if (!std::isfinite(m.data[i]))
      throw InputError(path, 0,
                       "the value at step " + std::to_string(int64_t(i) / per_step) + ", vertex " +
                           std::to_string((int64_t(i) % per_step) * m.shape[1] / per_step) +
                           " is not a finite float32 (" + std::to_string(m.data[i]) +
                           ": inf or nan in the file, or a float64 beyond float32's range)");
  return m;
}

SignalSeries attach_signals(TemporalGraph graph, NpyMatrix m, const std::string& path) {
  DGNN_CHECK(m.shape.size() >= 2, ShapeError, "attach_signals: use read_signal_npy");
  SignalSeries s;
  s.source = path;
  s.steps = m.shape[0];
  const int64_t n = m.shape[1];
  s.channels = m.shape.size() == 3 ? m.shape[2] : 1;
  // The array's shape as the file has it, for messages: "is [10, 4] ([T, N])". (Appended:
  // "x" + std::string trips GCC 12's -Wrestrict.)
  std::string shape = "is [";
  for (size_t d = 0; d < m.shape.size(); ++d)
    shape.append(d ? ", " : "").append(std::to_string(m.shape[d]));
  shape += m.shape.size() == 3 ? "] ([T, N, F])" : "] ([T, N])";
  if (graph.num_vertices != n) {
    int64_t largest = 0;
    for (int64_t id : graph.original_ids) largest = std::max(largest, id);
    throw InputError(path, 0,
                     shape + ", expected N = " +
                         std::to_string(largest >= n ? largest + 1 : graph.num_vertices) +
                         ": the graph names " +
                         (largest >= n ? "vertex " + std::to_string(largest) + " (ids must be 0.." +
                                             std::to_string(n - 1) + ", the signal's columns)"
                                       : std::to_string(graph.num_vertices) + " vertices"));
  }
  for (int64_t v = 0; v < n; ++v)
    DGNN_CHECK(graph.original_ids[size_t(v)] == v, Error, "attach_signals: ids are not 0..N-1");
  if (graph.num_snapshots() > 1 && graph.num_snapshots() != s.steps)
    throw InputError(path, 0,
                     shape + ", expected T = " + std::to_string(graph.num_snapshots()) +
                         ": the graph has " + std::to_string(graph.num_snapshots()) +
                         " snapshots, and a temporal graph needs one signal row per snapshot");
  s.values = std::move(m.data);
  s.graph = std::move(graph);
  return s;
}

}  // namespace dgnn
