// `dgnn plan`'s memory rows: per rank count, what the largest rank holds in the sharded design
// (plan/memory_model.hpp) and whether it fits --device-memory; from the plan's partitions, or
// from the graph's size alone (--vertices, --edges: no graph read, no times).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dgnn/cli/plan_args.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/gnn/models/deep.hpp"
#include "dgnn/gnn/temporal/temporal_models.hpp"
#include "dgnn/plan/memory_model.hpp"

namespace dgnn::cli {

namespace {

// Every rank's breakdown from `each(rank)`: the largest rank's, its index and the sum.
template <class Each>
MemoryRow row_of(int ranks, const std::string& partitioner, int parts, bool bound, Each&& each) {
  MemoryRow r;
  r.ranks = ranks;
  r.partitioner = partitioner;
  r.halo_bound = bound;
  for (int q = 0; q < parts; ++q) {
    const perf::MemoryBreakdown m = each(q);
    r.sum_bytes += m.total();
    if (q == 0 || m.total() > r.largest.total()) r.largest = m, r.largest_rank = q;
  }
  // Extrapolated counts hold the busiest rank's alone: every rank is that one.
  if (parts < ranks) r.sum_bytes = r.sum_bytes / std::max(parts, 1) * ranks;
  return r;
}

perf::TModel tmodel(TemporalKind k) {
  switch (k) {
    case TemporalKind::evolvegcn_o: return perf::TModel::evolvegcn_o;
    case TemporalKind::evolvegcn_h: return perf::TModel::evolvegcn_h;
    case TemporalKind::gcrn: return perf::TModel::gcrn;
    case TemporalKind::tgcn: return perf::TModel::tgcn;
  }
  return perf::TModel::gcrn;
}

std::string size_str(double b) {
  char buf[32];
  if (b >= 1e12)
    std::snprintf(buf, sizeof buf, "%.2f TB", b / 1e12);
  else if (b >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  else if (b >= 1e6)
    std::snprintf(buf, sizeof buf, "%.0f MB", b / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.0f kB", b / 1e3);
  return buf;
}

}  // namespace

std::vector<MemoryRow> static_memory_rows(const Dataset& d, const perf::StaticPlan& plan,
                                          int64_t halo_memory) {
  std::vector<MemoryRow> out;
  for (const perf::PlanRow& pr : plan.rows) {
    perf::StaticMemoryInput in;
    in.halo_memory = halo_memory;
    in.layers = plan.layers;
    in.features = d.feature_dim;
    in.weighted = d.graph.in.weighted();
    in.directed = d.graph.directed;
    in.ranks = pr.p.ranks;
    const auto& parts = pr.counts.per_part;
    if (parts.empty()) continue;
    out.push_back(row_of(pr.p.ranks, pr.partitioner, int(parts.size()), false, [&](int q) {
      return perf::static_rank_memory(in, parts[size_t(q)]);
    }));
  }
  return out;
}

std::vector<MemoryRow> temporal_memory_rows(const TemporalGraph& g,
                                            const perf::TemporalTraining& t,
                                            const perf::TemporalPlan& plan, int64_t hidden,
                                            int neg_eval) {
  perf::TemporalMemoryInput in;
  in.shape = plan.shape;
  in.features = plan.in_dim;
  in.hidden = hidden;
  for (size_t i = 0; i + 1 < t.steps.windows.size(); ++i)
    in.bptt = std::max(in.bptt, t.steps.windows[i + 1] - t.steps.windows[i]);
  in.snapshots = g.num_snapshots();
  in.weighted = g.weighted;
  in.directed = g.directed;
  in.largest_entries = *std::max_element(t.nnz.begin(), t.nnz.end());
  in.step_pairs = t.most_pairs;
  for (const SnapshotEvents& e : g.events) in.events += e.total_events();
  in.neg_eval = neg_eval;
  std::vector<MemoryRow> out;
  for (const perf::TemporalPlanRow& pr : plan.rows) {
    if (pr.p.strategy != "vertex" || !pr.p.feasible) continue;  // the sharded design's strategy
    in.ranks = pr.p.ranks;
    const auto& parts = pr.counts.per_part;
    if (parts.empty()) continue;
    out.push_back(row_of(pr.p.ranks, pr.partitioner, int(parts.size()), false, [&](int q) {
      return perf::temporal_rank_memory(in, parts[size_t(q)], g.num_vertices);
    }));
  }
  return out;
}

std::vector<MemoryRow> size_memory_rows(PlanArgs& a, const std::vector<int>& ranks,
                                        std::string* what) {
  const int64_t n = a.size_vertices, m = a.size_edges;
  if (n < 2) throw OptionError("--vertices must be >= 2, got " + std::to_string(n));
  if (m < 1) throw OptionError("--edges must be >= 1, got " + std::to_string(m));
  if (a.layers < 1) throw OptionError("--layers must be >= 1, got " + std::to_string(a.layers));
  if (a.hidden < 1) throw OptionError("--hidden must be >= 1, got " + std::to_string(a.hidden));
  if (ranks.back() > n)
    throw OptionError("--ranks " + std::to_string(ranks.back()) + " exceeds --vertices " +
                      std::to_string(n));
  const int64_t f = a.data.generated_dim;
  const bool directed = a.data.edges.directed;
  const int64_t stored = directed ? m : 2 * m;  // entries: every edge both ways unless --directed
  const int T = a.snapshots.count;
  char buf[512];
  std::vector<MemoryRow> out;
  if (T <= 0) {
    if (a.model.empty()) a.model = "gcn";
    const int64_t classes = a.data.num_classes > 0 ? a.data.num_classes : 2;
    perf::StaticMemoryInput in;
    if (is_deep_model(a.model)) {
      DeepModelOptions deep;
      deep.kind = parse_deep_kind(a.model);
      deep.layers = a.layers;
      deep.hidden = a.hidden;
      in.layers = perf::deep_model_layers(deep, f, classes);
    } else {
      in.layers = perf::model_layers(parse_model_kind(a.model), f, a.hidden, classes, a.layers);
    }
    in.features = f;
    in.directed = directed;
    in.halo_memory = a.halo_memory_bytes;
    for (int p : ranks) {
      in.ranks = p;
      const perf::PartCounts c = perf::balanced_share(n, stored, p);
      out.push_back(row_of(p, "balanced", 1, p > 1, [&](int) {
        return perf::static_rank_memory(in, c);
      }));
    }
    std::snprintf(buf, sizeof buf,
                  "%lld vertices, %lld edges (%lld stored entries), %lld features, %lld classes; "
                  "%s, %d layers, hidden %lld",
                  (long long)n, (long long)m, (long long)stored, (long long)f, (long long)classes,
                  a.model.c_str(), a.layers, (long long)a.hidden);
  } else {
    const TemporalKind kind = parse_temporal_kind(a.model.empty() ? "evolvegcn-o" : a.model);
    if (a.model.empty()) a.model = temporal_kind_name(kind);
    std::vector<int64_t> dims{f};
    for (int i = 0; i < a.layers; ++i) dims.push_back(a.hidden);
    perf::TemporalMemoryInput in;
    in.shape = perf::temporal_shape(tmodel(kind), dims, a.hidden);
    in.features = f;
    in.hidden = a.hidden;
    const int train_steps = std::max(1, int(std::lround(0.7 * (T - 1))));  // train's default
    in.bptt = a.bptt > 0 ? std::min(a.bptt, train_steps) : train_steps;
    in.snapshots = T;
    const int64_t per_snap = (stored + T - 1) / T;
    in.largest_entries = per_snap;
    in.step_pairs = (m + T - 1) / T * (1 + a.neg_train);  // each event, and its negatives
    in.events = m;
    in.neg_eval = a.neg_eval;
    for (int p : ranks) {
      in.ranks = p;
      const perf::PartCounts c = perf::balanced_share(n, per_snap, p);
      out.push_back(row_of(p, "balanced", 1, p > 1, [&](int) {
        return perf::temporal_rank_memory(in, c, n);
      }));
    }
    std::snprintf(buf, sizeof buf,
                  "%lld vertices, %lld edges in %d snapshots (%lld stored entries each), %lld "
                  "features; %s, %d layers, hidden %lld, BPTT window %d, %lld pairs per step",
                  (long long)n, (long long)m, T, (long long)per_snap, (long long)f,
                  a.model.c_str(), a.layers, (long long)a.hidden, in.bptt,
                  (long long)in.step_pairs);
  }
  *what = buf;
  return out;
}

void print_memory(const PlanArgs& a, const std::vector<MemoryRow>& rows) {
  if (rows.empty()) return;
  std::printf("\nmemory per rank, sharded (each rank holds its own vertices' share)");
  if (a.device_memory_bytes > 0)
    std::printf("; device memory %s", size_str(double(a.device_memory_bytes)).c_str());
  std::printf("\n%6s %-11s %9s %9s %9s %9s %9s %9s %9s %13s %10s%s\n", "ranks", "partitioner",
              "graph", "halo", "features", "model", "tape", "state", "pairs", "largest rank",
              "all ranks", a.device_memory_bytes > 0 ? "  fits" : "");
  bool bound = false;
  for (const MemoryRow& r : rows) {
    const perf::MemoryBreakdown& m = r.largest;
    bound = bound || r.halo_bound;
    std::printf("%6d %-11s %9s %9s %9s %9s %9s %9s %9s %13s %10s", r.ranks, r.partitioner.c_str(),
                size_str(double(m.graph)).c_str(), size_str(double(m.halo)).c_str(),
                size_str(double(m.features + m.labels)).c_str(), size_str(double(m.model)).c_str(),
                size_str(double(m.activations)).c_str(), size_str(double(m.state)).c_str(),
                size_str(double(m.pairs)).c_str(), size_str(double(m.total())).c_str(),
                size_str(double(r.sum_bytes)).c_str());
    if (a.device_memory_bytes > 0)
      std::printf("  %s", r.fits(a.device_memory_bytes) ? "yes" : "no");
    std::printf("\n");
  }
  if (bound)
    std::printf(
        "note      no partition: each rank owns n / P vertices and m / P entries, and its halo is "
        "the upper bound min(n - n / P, m / P) rows\n");
}

nlohmann::json memory_json(const PlanArgs& a, const std::vector<MemoryRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const MemoryRow& r : rows) {
    const perf::MemoryBreakdown& m = r.largest;
    nlohmann::json j = {{"ranks", r.ranks},
                        {"partitioner", r.partitioner},
                        {"largest_rank", r.largest_rank},
                        {"rank_bytes", m.total()},
                        {"total_bytes", r.sum_bytes},
                        {"graph_bytes", m.graph},
                        {"halo_bytes", m.halo},
                        {"feature_bytes", m.features},
                        {"label_bytes", m.labels},
                        {"model_bytes", m.model},
                        {"tape_bytes", m.activations},
                        {"state_bytes", m.state},
                        {"pair_bytes", m.pairs},
                        {"halo_upper_bound", r.halo_bound}};
    if (a.device_memory_bytes > 0) j["fits"] = r.fits(a.device_memory_bytes);
    out.push_back(j);
  }
  return out;
}

}  // namespace dgnn::cli
