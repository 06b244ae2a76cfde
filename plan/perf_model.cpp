// The arithmetic of `dgnn plan`; the why of each term is in perf_model.hpp and docs/scaling.md.
#include "dgnn/plan/perf_model.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "dgnn/common/error.hpp"

namespace dgnn::perf {

PartitionCounts partition_counts(const Csr& in, const std::vector<int32_t>& part, int parts) {
  DGNN_CHECK(parts >= 1 && int64_t(part.size()) == in.rows, OptionError,
             "partition_counts: a partition of " + std::to_string(part.size()) + " vertices into " +
                 std::to_string(parts) + " parts for a graph of " + std::to_string(in.rows));
  PartitionCounts c;
  c.parts = parts;
  c.per_part.assign(size_t(parts), {});
  // seen[u] = the last part that counted u as a halo row; sent[u * ...] would need P bits per
  // vertex, so sends are counted from the receiver's side: part q receiving u from owner p means
  // p sends u once to q.
  std::vector<int32_t> seen(size_t(in.rows), -1);
  std::vector<std::vector<char>> talks(
      static_cast<size_t>(parts));  // talks[p][q]: p and q exchange rows
  // Vertices of each part in order, so `seen` stamps one part at a time.
  std::vector<std::vector<int32_t>> members(static_cast<size_t>(parts));
  for (int64_t v = 0; v < in.rows; ++v) {
    DGNN_CHECK(part[v] >= 0 && part[v] < parts, OptionError,
               "vertex " + std::to_string(v) + " is in part " + std::to_string(part[v]));
    members[part[v]].push_back(int32_t(v));
  }
  for (int p = 0; p < parts; ++p) talks[p].assign(size_t(parts), 0);
  for (int p = 0; p < parts; ++p) {
    PartCounts& pc = c.per_part[p];
    pc.rows = int64_t(members[p].size());
    for (int32_t v : members[p]) {
      const int64_t deg = in.degree(v);
      int64_t remote = 0;
      for (int64_t e = in.offsets[v]; e < in.offsets[v + 1]; ++e) {
        const int32_t u = in.indices[e];
        const int32_t q = part[u];
        if (q == p) continue;
        ++remote;
        if (seen[u] != p) {
          seen[u] = p;
          ++pc.halo_rows;
          ++c.per_part[q].send_rows;
          talks[p][q] = talks[q][p] = 1;
        }
      }
      pc.edges += deg;
      pc.cut_edges += remote;
      if (remote == 0) pc.interior_edges += deg;
    }
  }
  for (int p = 0; p < parts; ++p)
    c.per_part[p].peers = int(std::count(talks[p].begin(), talks[p].end(), char(1)));
  return c;
}

namespace {

// a P^b through (p0, y0) and (p1, y1); constant when either is 0.
double power_law(double p0, double y0, double p1, double y1, double p) {
  if (y0 <= 0 || y1 <= 0 || p0 == p1) return y1;
  const double b = std::log(y1 / y0) / std::log(p1 / p0);
  return y1 * std::pow(p / p1, b);
}

struct Totals {
  double rows = 0, edges = 0, halo = 0, cut = 0, interior = 0;
  double max_rows = 0, max_edges = 0, max_halo = 0, max_send = 0;
  int max_peers = 0;
};
Totals totals(const PartitionCounts& c) {
  Totals t;
  for (const PartCounts& p : c.per_part) {
    t.rows += double(p.rows), t.edges += double(p.edges), t.halo += double(p.halo_rows);
    t.cut += double(p.cut_edges), t.interior += double(p.interior_edges);
    t.max_rows = std::max(t.max_rows, double(p.rows));
    t.max_edges = std::max(t.max_edges, double(p.edges));
    t.max_halo = std::max(t.max_halo, double(p.halo_rows));
    t.max_send = std::max(t.max_send, double(p.send_rows));
    t.max_peers = std::max(t.max_peers, p.peers);
  }
  return t;
}

}  // namespace

PartitionCounts extrapolate_counts(const std::vector<PartitionCounts>& computed, int parts,
                                   int64_t vertices, int64_t edges) {
  DGNN_CHECK(computed.size() >= 2, OptionError,
             "extrapolating a partition needs at least two computed rank counts");
  const PartitionCounts& a = computed[computed.size() - 2];
  const PartitionCounts& b = computed.back();
  const Totals ta = totals(a), tb = totals(b);
  const double pa = a.parts, pb = b.parts, p = parts;
  const double row_balance = tb.max_rows * pb / std::max(1.0, tb.rows);
  const double edge_balance = tb.max_edges * pb / std::max(1.0, tb.edges);
  // Ratios of the busiest rank to the mean, kept from the largest computed partition.
  const double halo_skew = tb.halo > 0 ? tb.max_halo * pb / tb.halo : 1.0;
  const double send_skew = tb.halo > 0 ? tb.max_send * pb / tb.halo : 1.0;
  // Summed over ranks: a rank can at most receive every vertex it does not own.
  const double halo = std::min(power_law(pa, ta.halo, pb, tb.halo, p), double(vertices) * (p - 1));
  const double cut = std::min(power_law(pa, ta.cut, pb, tb.cut, p), double(edges));
  const double boundary_edges =
      std::min(power_law(pa, ta.edges - ta.interior, pb, tb.edges - tb.interior, p), double(edges));
  const double peers = std::min(p - 1, power_law(pa, ta.max_peers, pb, tb.max_peers, p));

  PartitionCounts c;
  c.parts = parts;
  c.extrapolated = true;
  PartCounts pc;
  pc.rows = int64_t(std::ceil(double(vertices) / p * row_balance));
  pc.edges = int64_t(std::ceil(double(edges) / p * edge_balance));
  pc.cut_edges = std::min(pc.edges, int64_t(std::ceil(cut / p * edge_balance)));
  pc.interior_edges =
      std::max<int64_t>(0, pc.edges - int64_t(std::ceil(boundary_edges / p * edge_balance)));
  pc.halo_rows = int64_t(std::ceil(halo / p * halo_skew));
  pc.send_rows = int64_t(std::ceil(halo / p * send_skew));
  pc.peers = int(std::lround(peers));
  c.per_part.assign(size_t(parts), pc);
  // The mean rank: the totals divided evenly, so the wait reflects the balance kept above.
  PartCounts mean = pc;
  mean.rows = vertices / parts;
  mean.edges = edges / parts;
  mean.cut_edges = std::min(mean.cut_edges, mean.edges);
  mean.interior_edges = std::min(mean.interior_edges, mean.edges);
  c.per_part[0] = pc;
  for (int r = 1; r < parts; ++r) c.per_part[r] = mean;
  return c;
}

std::vector<LayerShape> model_layers(ModelKind kind, int64_t in, int64_t hidden, int64_t classes,
                                     int layers) {
  DGNN_CHECK(layers >= 1, OptionError, "--layers must be >= 1");
  std::vector<int64_t> dims{in};
  for (int i = 0; i + 1 < layers; ++i) dims.push_back(hidden);
  dims.push_back(classes);
  std::vector<LayerShape> out;
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    const int64_t a = dims[i], b = dims[i + 1];
    const bool first = i == 0, last = i + 2 == dims.size();
    LayerShape s;
    s.in = a;
    s.out = b;
    // StackModel: dropout on the input, ReLU after every layer but the last; the aggregation
    // copies its input into the [owned | halo] buffer; every Linear adds a bias.
    int64_t elem = a + b + (last ? 0 : b);
    switch (kind) {
      case ModelKind::gcn: {
        const bool gemm_first = b < a;
        s.agg_width = gemm_first ? b : a;
        s.self_loops = true;
        // The features are a constant: no gradient reaches them, so layer 0 aggregating the
        // raw input has no backward SpMM (nor exchange).
        s.agg_backward = gemm_first || !first;
        s.gemms = {{a, b, !first}};
        s.biases = b;
        s.tensors = 2;
        elem += s.agg_width;
        break;
      }
      case ModelKind::sage:
        s.agg_width = a;
        s.agg_backward = !first;
        s.gemms = {{a, b, !first}, {a, b, !first}};
        s.biases = b;  // one bias for the sum of both products
        s.tensors = 3;
        elem += a + b;  // the copy, the add of the two products
        break;
      case ModelKind::gin: {
        const int64_t mid = std::max(b, std::min(a, 4 * b));
        s.agg_width = a;
        s.agg_backward = !first;
        s.gemms = {{a, mid, !first}, {mid, b, true}};
        s.biases = mid + b;
        s.tensors = 4;
        elem += a + a + 2 * mid;  // the copy, x + sum, the inner bias and ReLU
        break;
      }
      case ModelKind::gat:
        // GATConv: z = x W, z's halo rows fetched (with_halo), per-vertex scores (two head_dots
        // over the rows), attention over the GCN structure, then a bias.
        s.heads = gat_heads(b);
        s.agg_width = b;
        s.self_loops = true;
        s.agg_backward = true;  // W's gradient needs z's, halo rows included
        s.gemms = {{a, b, !first}};
        s.biases = 3 * b;  // the bias and the two attention vectors
        s.tensors = 4;
        elem += b + 2 * b;  // z into [owned | halo], the two head_dots
        break;
    }
    s.elementwise_per_row = elem;
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<LayerShape> deep_model_layers(const DeepModelOptions& o, int64_t in,
                                          int64_t classes) {
  check_deep_options(o);
  const int64_t h = o.hidden;
  std::vector<LayerShape> out;
  // The input layer: dropout on the features, x W_in + b, ReLU. The features are a constant,
  // so its product has no input gradient.
  LayerShape first;
  first.in = in;
  first.out = h;
  first.agg_backward = false;
  first.keeps_halo = false;
  first.gemms = {{in, h, false}};
  first.biases = h;
  first.tensors = 2;
  first.elementwise_per_row = in + 2 * h;
  first.tape_floats = in + h + (in + 3) / 4;  // x (W's gradient), h0 (ReLU), the mask's bytes
  out.push_back(first);
  for (int l = 1; l <= o.layers; ++l) {
    LayerShape s;
    s.in = s.out = s.agg_width = h;
    s.self_loops = true;  // A~ = D^-1/2 (A + I) D^-1/2
    s.keeps_halo = false;
    s.gemms = {{h, h, true}};
    if (o.kind == DeepKind::gcnii) {
      // dropout, the aggregation's copy, (1 - alpha) scale, + alpha h0, ReLU; the mixed
      // weight is hidden x hidden (not per row).
      s.tensors = 1;
      s.elementwise_per_row = 5 * h;
      s.tape_floats = 2 * h + (h + 3) / 4;  // S_l, h_l, the dropout mask (tests/gnn)
    } else {
      // dropout, the copy, the bias, ReLU, the gate's scale, the residual add.
      s.biases = h + 1;  // and the gate a_l
      s.tensors = 3;
      s.elementwise_per_row = 6 * h;
      s.tape_floats = 2 * h + (h + 3) / 4;  // A~ x (W's gradient), the ReLU's output, the mask
    }
    out.push_back(s);
  }
  LayerShape last;
  last.in = h;
  last.out = classes;
  last.agg_backward = false;
  last.keeps_halo = false;
  last.gemms = {{h, classes, true}};
  last.biases = classes;
  last.tensors = 2;
  last.elementwise_per_row = h + classes;
  last.tape_floats = h + (h + 3) / 4;  // the dropped-out h_L (W_out's gradient), the mask
  out.push_back(last);
  return out;
}

int64_t allreduce_floats(const std::vector<LayerShape>& layers) {
  int64_t n = parameter_count(layers) + 1;
  for (const LayerShape& l : layers) n += l.tensors;
  return n;
}

int64_t parameter_count(const std::vector<LayerShape>& layers) {
  int64_t n = 0;
  for (const LayerShape& l : layers) {
    n += l.biases;
    for (const Gemm& g : l.gemms) n += g.k * g.n;
  }
  return n;
}

namespace {

template <class Map, class Key>
double nearest(const Map& m, const Key& key, double fallback) {
  if (m.empty()) return fallback;
  auto it = m.find(key);
  if (it != m.end()) return it->second;
  it = m.lower_bound(key);
  if (it == m.end()) return std::prev(it)->second;
  return it->second;
}

}  // namespace

double Rates::spmm_rate(int64_t width) const { return nearest(spmm, width, 1e9); }
double Rates::attention_fwd_s(int64_t heads, int64_t width) const {
  // Unmeasured: about eight passes over an entry's heads and one SpMM entry of its width.
  return nearest(attention_fwd, std::make_pair(heads, width),
                 8.0 * double(heads) / elementwise + double(width) / spmm_rate(width));
}
double Rates::attention_bwd_s(int64_t heads, int64_t width) const {
  return nearest(attention_bwd, std::make_pair(heads, width), 2 * attention_fwd_s(heads, width));
}
double Rates::gemm_fwd_rate(int64_t k, int64_t n) const {
  return nearest(gemm_fwd, std::make_pair(k, n), 1e10);
}
double Rates::gemm_bwd_rate(int64_t k, int64_t n) const {
  return nearest(gemm_bwd, std::make_pair(k, n), 1e10);
}

const std::vector<Network>& named_networks() {
  // Per-message latency and per-direction bandwidth of a rank's link, typical of MPI over each.
  static const std::vector<Network> nets = {
      {"shm", 0.5e-6, 10e9},             // Open MPI shared memory on one node
      {"ethernet-10g", 25e-6, 1.25e9},   // TCP over 10 Gb/s Ethernet
      {"ethernet-100g", 10e-6, 12.5e9},  // TCP over 100 Gb/s Ethernet
      {"infiniband-hdr", 1.5e-6, 25e9},  // HDR 200 Gb/s InfiniBand, RDMA
      {"nvlink", 3e-6, 300e9},           // NVLink 3 between GPUs (A100: 300 GB/s each way)
  };
  return nets;
}

Network named_network(const std::string& name) {
  std::string all;
  for (const Network& n : named_networks()) {
    if (n.name == name) return n;
    all += (all.empty() ? "" : ", ") + n.name;
  }
  throw OptionError("--network: unknown '" + name + "' (expected " + all + ")");
}

Prediction predict(const PartitionCounts& counts, const std::vector<LayerShape>& layers,
                   const Rates& rates, const Network& net, const PlanOptions& opt) {
  DGNN_CHECK(counts.parts >= 1 && int(counts.per_part.size()) == counts.parts, OptionError,
             "predict: counts for " + std::to_string(counts.parts) + " parts hold " +
                 std::to_string(counts.per_part.size()));
  DGNN_CHECK(opt.compute_scale > 0 && net.bandwidth_Bps > 0 && net.latency_s >= 0, OptionError,
             "predict: rates and bandwidth must be positive");
  const int P = counts.parts;
  const double scale = opt.compute_scale;
  Prediction pr;
  pr.ranks = P;
  pr.extrapolated = counts.extrapolated;
  std::vector<int64_t> rank_bytes(size_t(P), 0);
  for (const PartCounts& c : counts.per_part) {
    pr.halo_rows_total += c.halo_rows;
    pr.max_peers = std::max(pr.max_peers, c.peers);
  }

  double compute_mean_s = 0, wait_s = 0, halo_s = 0, pack_s = 0;
  // One phase: every rank computes `work(c)` seconds, of which `hidden(c)` can run while its
  // exchange of `width` columns travels. The phase ends when the slowest rank is done.
  auto phase = [&](auto work, auto hidden, int64_t width) {
    double slowest = 0, slowest_compute = 0, slowest_pack = 0, sum = 0;
    for (int r = 0; r < P; ++r) {
      const PartCounts& c = counts.per_part[r];
      const double w = work(c);
      double t = w, pack = 0;
      if (width > 0 && P > 1 && c.peers > 0) {
        const int64_t bytes = std::max(c.send_rows, c.halo_rows) * width * 4;
        const double xfer = c.peers * net.latency_s + double(bytes) / net.bandwidth_Bps;
        t += opt.overlap ? std::max(0.0, xfer - hidden(c)) : xfer;
        // Packing the rows to send and placing (forward) or adding (backward) the received
        // ones: copies before the messages leave and after they arrive, never overlapped.
        pack = double(c.send_rows + c.halo_rows) * double(width) / (rates.elementwise * scale);
        t += pack;
        rank_bytes[r] += c.send_rows * width * 4;
      }
      if (t > slowest) slowest_pack = pack;
      slowest = std::max(slowest, t);
      slowest_compute = std::max(slowest_compute, w);
      sum += w;
    }
    const double mean = sum / P;
    compute_mean_s += mean;
    wait_s += slowest_compute - mean;
    halo_s += slowest - slowest_compute;
    pack_s += slowest_pack;
    if (width > 0 && P > 1) wait_s += rates.sync_s;
  };

  for (int dir = 0; dir < 2; ++dir) {  // 0: forward, layer by layer; 1: backward, reversed
    for (size_t k = 0; k < layers.size(); ++k) {
      const LayerShape& l = layers[dir == 0 ? k : layers.size() - 1 - k];
      const double spmm_rate = rates.spmm_rate(l.agg_width) * scale;
      auto nnz = [&](const PartCounts& c) { return double(c.edges + (l.self_loops ? c.rows : 0)); };
      auto gemm_s = [&](const PartCounts& c) {
        double s = 0;
        for (const Gemm& g : l.gemms) {
          const double f = 2.0 * double(c.rows) * double(g.k) * double(g.n);
          s += dir == 0 ? f / (rates.gemm_fwd_rate(g.k, g.n) * scale)
                        : f * (g.input_grad ? 2 : 1) / (rates.gemm_bwd_rate(g.k, g.n) * scale);
        }
        return s;
      };
      auto elem_s = [&](const PartCounts& c) {
        return double(c.rows) * double(l.elementwise_per_row) * (dir == 0 ? 1 : 2) /
               (rates.elementwise * scale);
      };
      const bool aggregates = dir == 0 || l.agg_backward;
      // Seconds per entry of the aggregation: an SpMM entry of agg_width, or attention's edge work.
      const double entry_s = l.heads > 0
                                 ? (dir == 0 ? rates.attention_fwd_s(l.heads, l.agg_width)
                                             : rates.attention_bwd_s(l.heads, l.agg_width)) /
                                       scale
                                 : double(l.agg_width) / spmm_rate;
      auto work = [&](const PartCounts& c) {
        return gemm_s(c) + elem_s(c) + (aggregates ? nnz(c) * entry_s : 0);
      };
      // Forward: interior rows aggregate while the halo travels. Backward: the transposed
      // product's owned-row entries (all but the cut ones) while the halo gradient travels.
      // Attention fetches its halo rows first (with_halo): nothing overlaps that exchange.
      auto hidden = [&](const PartCounts& c) {
        if (l.heads > 0) return 0.0;
        const double e = dir == 0 ? double(c.interior_edges) : double(c.edges - c.cut_edges);
        return e * entry_s;
      };
      phase(work, hidden, aggregates ? l.agg_width : 0);
    }
  }

  // Gradient all-reduce (parameters and the loss) and the optimizer's pass over the weights.
  const int64_t params = parameter_count(layers);
  const int64_t floats = allreduce_floats(layers);
  const double param_bytes = double(floats) * 4;
  double allreduce_s = 0;
  if (P > 1) {
    allreduce_s = 2.0 * (P - 1) / P * param_bytes / net.bandwidth_Bps +
                  2.0 * std::ceil(std::log2(double(P))) * net.latency_s;
    wait_s += rates.sync_s;
    for (int64_t& b : rank_bytes) b += floats * 4;
  }
  const double adam_s = double(params) * 8 / (rates.elementwise * scale);
  compute_mean_s += adam_s;

  pr.compute_ms = compute_mean_s * 1e3;
  pr.wait_ms = wait_s * 1e3;
  pr.halo_ms = halo_s * 1e3;
  pr.pack_ms = pack_s * 1e3;
  pr.allreduce_ms = allreduce_s * 1e3;
  pr.comm_ms = pr.halo_ms + pr.allreduce_ms;
  pr.epoch_ms = pr.compute_ms + pr.wait_ms + pr.comm_ms;
  for (int64_t b : rank_bytes) {
    pr.bytes_per_epoch += b;
    pr.max_rank_bytes = std::max(pr.max_rank_bytes, b);
  }
  return pr;
}

Prediction predict_pipeline(const PartitionCounts& parts, const std::vector<LayerShape>& layers,
                            const std::vector<int>& first, int chunks, bool stem_everywhere,
                            const Rates& rates, const Network& net, const PlanOptions& opt) {
  const int S = int(first.size()) - 1;
  const int Q = parts.parts;
  const int graph_layers = int(layers.size()) - 2;
  DGNN_CHECK(S >= 1 && graph_layers >= S && first.front() == 1 &&
                 first.back() == graph_layers + 1 && chunks >= 1 && Q >= 1 &&
                 int(parts.per_part.size()) == Q,
             OptionError, "predict_pipeline: stage bounds do not cover the graph layers");
  DGNN_CHECK(net.bandwidth_Bps > 0 && net.latency_s >= 0, OptionError,
             "predict_pipeline: rates and bandwidth must be positive");
  const int64_t hidden = layers[1].in;
  int64_t n = 0, largest = 0;
  for (const PartCounts& c : parts.per_part) {
    n += c.rows;
    largest = std::max(largest, c.rows);
  }
  // Each stage's time on its part(s): its layers only, one process or graph-parallel among the
  // stage's ranks (the optimiser's pass and the all-reduce are counted once below).
  std::vector<double> stage_s(size_t(S), 0);
  double compute_sum = 0, halo_sum = 0;
  int64_t halo_bytes = 0, max_halo_bytes = 0;
  for (int s = 0; s < S; ++s) {
    std::vector<LayerShape> mine;
    if (s == 0 || stem_everywhere) mine.push_back(layers.front());
    for (int l = first[size_t(s)]; l < first[size_t(s) + 1]; ++l) mine.push_back(layers[size_t(l)]);
    if (s == S - 1) mine.push_back(layers.back());
    const Prediction p = predict(parts, mine, rates, net, opt);
    const double adam_s =
        double(parameter_count(mine)) * 8 / (rates.elementwise * opt.compute_scale);
    const double ar_s = p.allreduce_ms / 1e3 + (Q > 1 ? rates.sync_s : 0);
    stage_s[size_t(s)] = p.epoch_ms / 1e3 - ar_s - adam_s;
    compute_sum += p.compute_ms / 1e3 - adam_s;
    halo_sum += p.halo_ms / 1e3;
    const int64_t ar_bytes = Q > 1 ? allreduce_floats(mine) * 4 : 0;
    halo_bytes += p.bytes_per_epoch - Q * ar_bytes;
    max_halo_bytes = std::max(max_halo_bytes, p.max_rank_bytes - ar_bytes);
  }
  double sum = 0, slowest = 0;
  for (double t : stage_s) {
    sum += t;
    slowest = std::max(slowest, t);
  }
  const double C = chunks;
  // One chunk's hop across a boundary, one way (forward activations or backward gradients).
  const double hop_s =
      S > 1 ? net.latency_s + double(largest) / C * double(hidden) * 4 / net.bandwidth_Bps : 0;
  const double flow_s = (sum + (C - 1) * std::max(slowest, 2 * hop_s * C)) / C;
  const double hops_s = 2.0 * (S - 1) * hop_s;  // the first chunk's path, both ways
  const int P = S * Q;
  Prediction pr;
  pr.ranks = P;
  pr.extrapolated = parts.extrapolated;
  const int64_t params = parameter_count(layers);
  const int64_t floats = allreduce_floats(layers);
  double allreduce_s = 0, sync_s = 0;
  if (P > 1) {
    allreduce_s = 2.0 * (P - 1) / P * double(floats) * 4 / net.bandwidth_Bps +
                  2.0 * std::ceil(std::log2(double(P))) * net.latency_s;
    sync_s = rates.sync_s;
  }
  const double adam_s = double(params) * 8 / (rates.elementwise * opt.compute_scale);
  pr.compute_ms = (compute_sum / S + adam_s) * 1e3;
  pr.halo_ms = (hops_s + halo_sum / S) * 1e3;  // between stages, and inside the hybrid's
  pr.allreduce_ms = allreduce_s * 1e3;
  pr.comm_ms = pr.halo_ms + pr.allreduce_ms;
  pr.epoch_ms = (flow_s + hops_s + allreduce_s + sync_s + adam_s) * 1e3;
  pr.wait_ms = pr.epoch_ms - pr.compute_ms - pr.comm_ms;  // the bubble, and imbalance
  pr.bytes_per_epoch = 2 * int64_t(S - 1) * n * hidden * 4 + halo_bytes + (P > 1 ? P * floats * 4 : 0);
  const int64_t boundary = largest * hidden * 4;
  pr.max_rank_bytes = (S > 2 ? 2 : S - 1) * boundary + max_halo_bytes + (P > 1 ? floats * 4 : 0);
  pr.max_peers = (S > 2 ? 2 : S - 1);
  for (const PartCounts& c : parts.per_part) pr.halo_rows_total += S * c.halo_rows;
  return pr;
}

}  // namespace dgnn::perf
