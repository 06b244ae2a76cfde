// The arithmetic of `dgnn plan` for temporal models; what each term stands for is in
// perf_temporal.hpp and docs/scaling.md.
#include "dgnn/plan/perf_temporal.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "dgnn/common/error.hpp"

namespace dgnn::perf {

TemporalShape temporal_shape(TModel model, const std::vector<int64_t>& dims,
                             int64_t scorer_hidden) {
  DGNN_CHECK(dims.size() >= 2 && scorer_hidden >= 1, OptionError,
             "temporal_shape: need {in, out} widths and a scorer width");
  TemporalShape s;
  s.model = model;
  // GCNConv (gnn/models/layers.cpp): multiply first when that narrows the aggregation; no gradient
  // flows into the raw features, so aggregating them first needs no backward SpMM.
  auto gcn = [&](int64_t a, int64_t b, bool first, std::vector<TOp>& ops) {
    if (b < a) {
      ops.push_back(t_gemm(a, b, !first));
      ops.push_back(t_aggregate(b, true));
    } else {
      ops.push_back(t_aggregate(a, !first));
      ops.push_back(t_gemm(a, b, !first));
    }
    ops.push_back(t_elementwise(b));  // bias
  };
  int64_t params = 0, tensors = 0;
  auto param = [&](int64_t r, int64_t c) { params += r * c, ++tensors; };
  switch (model) {
    case TModel::evolvegcn_o:
    case TModel::evolvegcn_h: {
      const bool o = model == TModel::evolvegcn_o;
      for (size_t i = 0; i + 1 < dims.size(); ++i) {
        const int64_t a = dims[i], b = dims[i + 1];
        const bool first = i == 0, last = i + 2 == dims.size();
        if (o) {
          // W_t = LSTM(W_{t-1}): the in rows of W are the LSTM's batch.
          s.weights.push_back(t_gemm(b, 4 * b, true, a));
          s.weights.push_back(t_elementwise(4 * b, a));  // bias
          s.weights.push_back(t_cell(TOp::lstm, b, a));
          param(a, b), param(b, 4 * b), param(1, 4 * b);
        } else {
          // The top-k (k = out) summary of the input, then W_t = GRU(summary, W_{t-1}).
          s.graph.push_back(t_gemm(a, 1, !first));
          s.graph.push_back(t_elementwise(2));  // the score column and its ranking
          s.summaries.emplace_back(b, a);
          s.weights.push_back(t_gemm(b, 3 * b, true, a));        // summary^T Wx
          s.weights.push_back(t_gemm(b, 3 * b, true, a));        // W_{t-1} Wh
          s.weights.push_back(t_elementwise(3 * b + 3 * b, a));  // biases
          s.weights.push_back(t_cell(TOp::gru, b, a));
          param(a, b), param(a, 1), param(b, 3 * b), param(1, 3 * b), param(b, 3 * b),
              param(1, 3 * b);
        }
        // X W_t, aggregated: W_t always needs the backward SpMM.
        s.graph.push_back(t_gemm(a, b, !first));
        s.graph.push_back(t_aggregate(b, true));
        if (!last) s.graph.push_back(t_elementwise(b));  // ReLU
      }
      s.embedding = dims.back();
      break;
    }
    case TModel::gcrn: {
      std::vector<int64_t> g(dims.begin(), dims.end() - 1);
      if (g.size() < 2) g = {dims.front(), dims.back()};
      for (size_t i = 0; i + 1 < g.size(); ++i) {
        gcn(g[i], g[i + 1], i == 0, s.graph);
        s.graph.push_back(t_elementwise(g[i + 1]));  // ReLU
        param(g[i], g[i + 1]), param(1, g[i + 1]);
      }
      const int64_t h = dims.back(), in = g.back();
      s.recurrent = {t_gemm(in, 4 * h, true), t_gemm(h, 4 * h, true), t_elementwise(4 * h + 4 * h),
                     t_cell(TOp::lstm, h)};  // add, bias, cell
      param(in, 4 * h), param(h, 4 * h), param(1, 4 * h);
      s.reshard_in = in;
      s.reshard_out = h;
      s.embedding = h;
      break;
    }
    case TModel::tgcn: {
      const int64_t in = dims.front(), h = dims.back();
      // Input transforms A X Wx (parallel over snapshots), then the state's A H Wh and the GRU.
      s.graph = {t_gemm(in, 3 * h, false), t_aggregate(3 * h, true), t_elementwise(3 * h)};
      s.recurrent = {t_gemm(h, 3 * h, true), t_aggregate(3 * h, true), t_elementwise(3 * h),
                     t_cell(TOp::gru, h)};
      param(in, 3 * h), param(1, 3 * h), param(h, 3 * h), param(1, 3 * h);
      s.state = h;
      s.embedding = h;
      break;
    }
  }
  // PairClassifier: the fused pair MLP on [h_u | h_v | h_u * h_v], then one logit.
  const int64_t e = s.embedding;
  s.score = {t_cell(TOp::pair_mlp, e), t_elementwise(2)};  // the MLP, the loss
  s.score[1].pairs = true;
  s.scorer_hidden = scorer_hidden;
  param(3 * e, scorer_hidden), param(1, scorer_hidden), param(scorer_hidden, 1), param(1, 1);
  s.parameters = params;
  s.tensors = tensors;
  return s;
}

TemporalShape forecast_shape(TModel model, const std::vector<int64_t>& dims, int64_t channels) {
  TemporalShape s = temporal_shape(model, dims, 1);
  const int64_t e = s.embedding, f = channels;
  // Take the scorer out (3e x 1, 1, 1 x 1, 1: four tensors), put the head in.
  s.parameters -= 3 * e + 1 + 1 + 1;
  s.tensors -= 4;
  s.score = {t_elementwise(e), t_gemm(e, f, true), t_elementwise(2 * f)};  // ReLU, W, bias + loss
  s.parameters += e * f + f;
  s.tensors += 2;
  s.fetches_ends = false;
  return s;
}

std::vector<LayerShape> calibration_shapes(const TemporalShape& s) {
  std::set<int64_t> widths;
  std::set<std::pair<int64_t, int64_t>> gemms;
  for (const auto* ops : {&s.weights, &s.graph, &s.recurrent, &s.score})
    for (const TOp& o : *ops) {
      if (o.kind == TOp::aggregate) widths.insert(o.width);
      if (o.kind == TOp::gemm) gemms.insert({o.k, o.n});
      if (o.kind == TOp::pair_mlp) gemms.insert({o.floats, s.scorer_hidden});
    }
  std::vector<LayerShape> out;
  for (int64_t w : widths) {
    LayerShape l;
    l.in = l.out = l.agg_width = w;
    out.push_back(l);
  }
  for (auto [k, n] : gemms) {
    LayerShape l;  // a width already timed: calibrate() times every layer's
    l.in = k, l.out = n, l.agg_width = widths.empty() ? 1 : *widths.begin();
    l.gemms = {{k, n, true}};
    out.push_back(l);
  }
  return out;
}

namespace {

// The epoch as phases: each rank accumulates compute until a synchronising exchange, where the
// phase ends with the slowest rank.
class Timeline {
 public:
  Timeline(int ranks, const Rates& rates, const Network& net, const PlanOptions& opt,
           int64_t scorer_hidden)
      : p_(ranks),
        rates_(rates),
        net_(net),
        scale_(opt.compute_scale / opt.overhead),
        copy_scale_(opt.compute_scale),
        overlap_(opt.overlap),
        scorer_hidden_(scorer_hidden),
        work_(size_t(ranks), 0.0),
        bytes_(size_t(ranks), 0) {}

  // Seconds of op `o` forward or backward over `rows` rows (or pairs) with `entries` SpMM entries.
  double op(const TOp& o, double rows, double entries, double pairs, bool fwd) const {
    const double r = o.fixed_rows > 0 ? double(o.fixed_rows) : o.pairs ? pairs : rows;
    switch (o.kind) {
      case TOp::aggregate:
        if (!fwd && !o.backward) return 0;
        return (entries + (o.self_loops ? r : 0)) * double(o.width) /
               (rates_.spmm_rate(o.width) * scale_);
      case TOp::gemm: {
        const double f = 2.0 * r * double(o.k) * double(o.n);
        return fwd ? f / (rates_.gemm_fwd_rate(o.k, o.n) * scale_)
                   : f * (o.input_grad ? 2 : 1) / (rates_.gemm_bwd_rate(o.k, o.n) * scale_);
      }
      case TOp::elementwise:
        return r * double(o.floats) * (fwd ? 1 : 2) / (rates_.elementwise * scale_);
      // Fused ops at their timed rates; untimed, as the floats they touch (an LSTM cell reads
      // 5 and writes 2 per state column, a GRU cell 7 and 1; backward twice) or, for the pair
      // scorer, as its per-pair product (3 e x hidden, dense) and the gathers.
      case TOp::lstm: {
        const double v = fwd ? rates_.lstm_fwd : rates_.lstm_bwd;
        const double x = r * double(o.floats);
        return v > 0 ? x / (v * scale_) : x * 7 * (fwd ? 1 : 2) / (rates_.elementwise * scale_);
      }
      case TOp::gru: {
        const double v = fwd ? rates_.gru_fwd : rates_.gru_bwd;
        const double x = r * double(o.floats);
        return v > 0 ? x / (v * scale_) : x * 8 * (fwd ? 1 : 2) / (rates_.elementwise * scale_);
      }
      case TOp::pair_mlp: {
        const double v = fwd ? rates_.pair_fwd : rates_.pair_bwd;
        if (v > 0) return r / (v * scale_);
        const double e = double(o.floats), h = double(scorer_hidden_);
        const double f = 2.0 * r * e * h * (fwd ? 1 : 2);
        return f / (rates_.gemm_fwd_rate(int64_t(e), scorer_hidden_) * scale_) +
               r * 3 * e * (fwd ? 1 : 2) / (rates_.elementwise * scale_);
      }
    }
    return 0;
  }
  // Gathering (or scatter-adding) `rows` rows of `width` floats by index.
  double gather_seconds(double rows, int64_t width) const {
    const double v = rates_.gather > 0 ? rates_.gather : rates_.elementwise / 4;
    return rows * double(width) / (v * copy_scale_);
  }
  double copy_seconds(double floats) const { return floats / (rates_.elementwise * copy_scale_); }

  void add(int r, double s) { work_[size_t(r)] += s; }
  void add_bytes(int r, int64_t b) { bytes_[size_t(r)] += b; }

  // Ends a phase at an exchange: rank r moves xfer[r] seconds, hidden[r] of which overlap its
  // compute (with overlap on), and spends pack[r] seconds packing and placing rows.
  void sync(const std::vector<double>& xfer, const std::vector<double>& hidden,
            const std::vector<double>& pack) {
    double slowest = 0, slowest_work = 0, sum = 0, slowest_pack = 0;
    for (int r = 0; r < p_; ++r) {
      const double w = work_[size_t(r)];
      const double exposed =
          overlap_ ? std::max(0.0, xfer[size_t(r)] - hidden[size_t(r)]) : xfer[size_t(r)];
      const double t = w + exposed + pack[size_t(r)];
      if (t > slowest) slowest_pack = pack[size_t(r)];
      slowest = std::max(slowest, t);
      slowest_work = std::max(slowest_work, w);
      sum += w;
    }
    // What a synchronisation costs beyond the data is waiting for a peer descheduled while it
    // computed: collectives back to back (the fetch's counts, ids and rows) pay it once. On an
    // oversubscribed node (more ranks than cores, all polling) ranks are descheduled whatever
    // they do: every synchronisation pays it.
    const bool pays = p_ > 1 && (copy_scale_ < 1 || slowest_work > 0);
    close(slowest, slowest_work, sum, pays ? rates_.sync_s : 0.0);
    pack_ += slowest_pack;
  }
  // A collective moving `sent[r]` bytes from each rank (received[r] into it), paying `latencies`
  // message latencies, its copies in and out (`pack`) at the element-wise rate.
  void collective(const std::vector<int64_t>& sent, const std::vector<int64_t>& received,
                  double latencies, bool pack) {
    std::vector<double> xfer(static_cast<size_t>(p_)), none(static_cast<size_t>(p_), 0.0),
        packs(static_cast<size_t>(p_), 0.0);
    for (int r = 0; r < p_; ++r) {
      xfer[size_t(r)] = latencies * net_.latency_s +
                        double(std::max(sent[size_t(r)], received[size_t(r)])) / net_.bandwidth_Bps;
      if (pack) packs[size_t(r)] = copy_seconds(double(sent[size_t(r)] + received[size_t(r)]) / 4);
      bytes_[size_t(r)] += sent[size_t(r)];
    }
    sync(xfer, none, packs);
  }
  // An all-reduce of `bytes` per rank (Rabenseifner), counted as dgnn counts it: bytes per rank.
  void allreduce(int64_t bytes) {
    if (p_ == 1) return;
    const double P = p_;
    const double t = 2.0 * (P - 1) / P * double(bytes) / net_.bandwidth_Bps +
                     2.0 * std::ceil(std::log2(P)) * net_.latency_s;
    for (int64_t& b : bytes_) b += bytes;
    std::vector<double> none(static_cast<size_t>(p_), 0.0);
    sync(std::vector<double>(static_cast<size_t>(p_), t), none, none);
    allreduce_ += t;
  }
  // A serial chain (T-GCN's state through the window's blocks): every rank first finishes what it
  // has, then the stages run one after another, `handoffs` transfers of `bytes` between them.
  void serial(const std::vector<double>& stages, int handoffs, int64_t bytes,
              const std::vector<int>& senders) {
    if (p_ > 1) {  // no exchange: the chain's first stage waits for nothing but its own work
      double slowest = 0, sum = 0;
      for (double w : work_) slowest = std::max(slowest, w), sum += w;
      close(slowest, slowest, sum, 0);
    }
    // One rank computes at a time while the others wait in MPI, which yields the cores of an
    // oversubscribed node: the running stage gets its threads' full rate back.
    double total = 0, sum = 0;
    for (double s : stages) total += s * copy_scale_, sum += s * copy_scale_;
    const double xfer = net_.latency_s + double(bytes) / net_.bandwidth_Bps;
    const double handoff = handoffs * (xfer + copy_seconds(double(bytes) / 4 * 2));
    for (int r : senders) bytes_[size_t(r)] += bytes;
    epoch_ += total + handoff + (handoffs > 0 ? handoffs * rates_.sync_s : 0);
    compute_ += sum / p_;
    wait_ += total - sum / p_ + (handoffs > 0 ? handoffs * rates_.sync_s : 0);
    comm_ += handoff;
    pack_ += handoffs * copy_seconds(double(bytes) / 4 * 2);
  }
  // The rest of the epoch's compute (no exchange after it).
  void finish() {
    double slowest = 0, sum = 0;
    for (double w : work_) slowest = std::max(slowest, w), sum += w;
    close(slowest, slowest, sum, 0);
  }

  TemporalPrediction result(const char* strategy) const {
    TemporalPrediction pr;
    pr.strategy = strategy;
    pr.ranks = p_;
    pr.compute_ms = compute_ * 1e3;
    pr.wait_ms = wait_ * 1e3;
    pr.comm_ms = comm_ * 1e3;
    pr.allreduce_ms = allreduce_ * 1e3;
    pr.halo_ms = pr.comm_ms - pr.allreduce_ms;
    pr.pack_ms = pack_ * 1e3;
    pr.epoch_ms = epoch_ * 1e3;
    for (int64_t b : bytes_) {
      pr.bytes_per_epoch += b;
      pr.max_rank_bytes = std::max(pr.max_rank_bytes, b);
    }
    return pr;
  }

 private:
  void close(double slowest, double slowest_work, double sum, double sync_s) {
    const double mean = sum / p_;
    epoch_ += slowest + sync_s;
    compute_ += mean;
    wait_ += slowest_work - mean + sync_s;
    comm_ += slowest - slowest_work;
    std::fill(work_.begin(), work_.end(), 0.0);
  }

  int p_;
  const Rates& rates_;
  const Network& net_;
  double scale_, copy_scale_;
  bool overlap_;
  int64_t scorer_hidden_;
  std::vector<double> work_;
  std::vector<int64_t> bytes_;
  double epoch_ = 0, compute_ = 0, comm_ = 0, wait_ = 0, pack_ = 0, allreduce_ = 0;
};

// Whether training step s has a loss (and so a backward).
bool has_loss(const TemporalSteps& st, int s) {
  return st.loss.empty() ? st.pairs[size_t(s)] > 0 : st.loss[size_t(s)] != 0;
}

void check_steps(const TemporalSteps& st) {
  DGNN_CHECK(!st.windows.empty() && st.windows.front() == 0 &&
                 st.windows.back() == int(st.entries.size()) &&
                 st.pairs.size() == st.entries.size() &&
                 (st.loss.empty() || st.loss.size() == st.entries.size()) &&
                 (st.batch_s.empty() || st.batch_s.size() == st.entries.size()) &&
                 (st.batch_fixed_s.empty() || st.batch_fixed_s.size() == st.batch_s.size()) &&
                 (st.batch_known_s.empty() || st.batch_known_s.size() == st.batch_s.size()),
             Error, "temporal plan: windows must cover the training steps");
}

}  // namespace

TemporalPrediction predict_vertex(const TemporalShape& shape, const TemporalSteps& steps,
                                  const std::vector<VertexStep>& counts, const Rates& rates,
                                  const Network& net, const PlanOptions& opt) {
  check_steps(steps);
  DGNN_CHECK(counts.size() == steps.entries.size(), Error,
             "temporal plan: need the vertex strategy's counts of every training step");
  const int P = counts.empty() ? 1 : counts.front().graph.parts;
  Timeline tl(P, rates, net, opt, shape.scorer_hidden);
  // An aggregation's exchange: the step's halo rows, as for a static graph.
  auto exchange = [&](const VertexStep& c, const TOp& o, bool fwd) {
    std::vector<double> xfer(static_cast<size_t>(P), 0.0), hidden(static_cast<size_t>(P), 0.0),
        pack(static_cast<size_t>(P), 0.0);
    for (int r = 0; r < P; ++r) {
      const PartCounts& pc = c.graph.per_part[size_t(r)];
      if (pc.peers == 0) continue;
      const double w = double(o.width);
      xfer[size_t(r)] = pc.peers * net.latency_s +
                        double(std::max(pc.send_rows, pc.halo_rows)) * w * 4 / net.bandwidth_Bps;
      const double e = fwd ? double(pc.interior_edges) : double(pc.edges - pc.cut_edges);
      hidden[size_t(r)] = e * w / (rates.spmm_rate(o.width) * opt.compute_scale);
      pack[size_t(r)] = tl.copy_seconds(double(pc.send_rows + pc.halo_rows) * w);
      tl.add_bytes(r, pc.send_rows * o.width * 4);
    }
    tl.sync(xfer, hidden, pack);
  };
  auto run_ops = [&](const std::vector<TOp>& ops, const VertexStep& c, bool fwd) {
    const size_t n = ops.size();
    for (size_t i = 0; i < n; ++i) {
      const TOp& o = ops[fwd ? i : n - 1 - i];
      for (int r = 0; r < P; ++r) {
        const PartCounts& pc = c.graph.per_part[size_t(r)];
        tl.add(r, tl.op(o, double(pc.rows), double(pc.edges), c.pairs[size_t(r)], fwd));
      }
      if (o.kind == TOp::aggregate && P > 1 && (fwd || o.backward)) exchange(c, o, fwd);
    }
  };
  // The second ends' embeddings, each distinct end once, in P - 1 rounds (round r: the ends
  // rank + r owns; the rank's own ends need no fetch), each a fetch of its own: the request
  // counts (one number to every rank), the row ids and then the rows to and from one peer;
  // backward, their gradients back to the owners. Gathered by the owner, scattered into the
  // ends' order, and the reverse backward.
  auto fetch = [&](const VertexStep& c, bool fwd) {
    if (P == 1) return;
    const int64_t e = shape.embedding;
    for (int r = 0; r < P; ++r) {
      const double ends = c.ends[size_t(r)];
      const double mine = c.served[size_t(r)] + ends - c.fetched[size_t(r)];
      tl.add(r, tl.gather_seconds(ends + mine, e));
    }
    const int64_t row_bytes = e * 4;
    std::vector<int64_t> sent(static_cast<size_t>(P)), received(static_cast<size_t>(P));
    if (fwd) {
      const std::vector<int64_t> counts(static_cast<size_t>(P), 8 * int64_t(P - 1) * (P - 1));
      tl.collective(counts, counts, double(P - 1) * (P - 1), false);
      for (int r = 0; r < P; ++r) {
        sent[size_t(r)] = int64_t(std::llround(c.fetched[size_t(r)])) * 4;
        received[size_t(r)] = int64_t(std::llround(c.served[size_t(r)])) * 4;
      }
      tl.collective(sent, received, P - 1, false);
    }
    for (int r = 0; r < P; ++r) {
      const int64_t f = std::llround(c.fetched[size_t(r)]), s = std::llround(c.served[size_t(r)]);
      sent[size_t(r)] = (fwd ? s : f) * row_bytes;
      received[size_t(r)] = (fwd ? f : s) * row_bytes;
    }
    tl.collective(sent, received, P - 1, true);
  };

  for (size_t wi = 0; wi + 1 < steps.windows.size(); ++wi) {
    const int a = steps.windows[wi], b = steps.windows[wi + 1];
    bool any = false;
    for (int s = a; s < b; ++s) {
      const VertexStep& c = counts[size_t(s)];
      run_ops(shape.weights, c, true);
      run_ops(shape.graph, c, true);
      run_ops(shape.recurrent, c, true);
      if (!has_loss(steps, s)) continue;
      any = true;
      if (!steps.batch_s.empty() && steps.pairs[size_t(s)] > 0) {
        // One rank draws the whole batch as one process does.
        const double all = P > 1 && !steps.batch_known_s.empty() ? steps.batch_known_s[size_t(s)]
                                                                 : steps.batch_s[size_t(s)];
        const double fixed =
            P == 1 || steps.batch_fixed_s.empty() ? all : steps.batch_fixed_s[size_t(s)];
        const double pairs = double(steps.pairs[size_t(s)]);
        for (int r = 0; r < P; ++r)
          tl.add(r, (fixed + (all - fixed) * c.pairs[size_t(r)] / pairs) / opt.compute_scale);
      }
      if (shape.fetches_ends) fetch(c, true);
      run_ops(shape.score, c, true);
    }
    if (!any) continue;
    tl.allreduce(8);
    for (int s = b - 1; s >= a; --s) {
      const VertexStep& c = counts[size_t(s)];
      if (has_loss(steps, s)) {
        run_ops(shape.score, c, false);
        if (shape.fetches_ends) fetch(c, false);
      }
      run_ops(shape.recurrent, c, false);
      run_ops(shape.graph, c, false);
      run_ops(shape.weights, c, false);
    }
    for (int r = 0; r < P; ++r) tl.add(r, tl.copy_seconds(double(shape.parameters) * 8));
    tl.allreduce((shape.parameters + shape.tensors) * 4);
  }
  tl.finish();
  return tl.result("vertex");
}

TemporalPrediction predict_snapshot(const TemporalShape& shape, const TemporalSteps& steps,
                                    const SnapshotAssignment& plan, const Rates& rates,
                                    const Network& net, const PlanOptions& opt) {
  check_steps(steps);
  const int P = int(plan.block.size());
  DGNN_CHECK(P >= 1 && plan.owner.size() >= steps.entries.size(), Error,
             "temporal plan: need an owner for every training step and a block per rank");
  Timeline tl(P, rates, net, opt, shape.scorer_hidden);
  const double n = double(steps.vertices);
  auto ops_on = [&](const std::vector<TOp>& ops, int r, double rows, int s, bool fwd) {
    for (const TOp& o : ops)
      tl.add(r,
             tl.op(o, rows, double(steps.entries[size_t(s)]), double(steps.pairs[size_t(s)]), fwd));
  };
  // GCRN's re-shard: `to_vertex` sends the owner's rows of each owned step to every block;
  // `to_snapshot` the block's rows of every step back to the step's owner.
  auto reshard = [&](const std::vector<int>& own, bool to_vertex, int64_t cols) {
    std::vector<int64_t> sent(static_cast<size_t>(P), 0), received(static_cast<size_t>(P), 0);
    for (int r = 0; r < P; ++r)
      for (int q = 0; q < P; ++q) {
        if (q == r) continue;
        // rank r -> rank q
        const int64_t b = to_vertex ? int64_t(own[size_t(r)]) * plan.block[size_t(q)] * cols * 4
                                    : int64_t(own[size_t(q)]) * plan.block[size_t(r)] * cols * 4;
        sent[size_t(r)] += b;
        received[size_t(q)] += b;
      }
    tl.collective(sent, received, P - 1, true);
  };
  // EvolveGCN-H's summaries: forward, each owner's to every rank; backward, every rank's
  // gradients of the others' summaries to their owners.
  auto allgather = [&](const std::vector<int>& own, int64_t rows, int64_t cols, bool fwd) {
    std::vector<int64_t> sent(static_cast<size_t>(P), 0), received(static_cast<size_t>(P), 0);
    int total = 0;
    for (int q : own) total += q;
    for (int r = 0; r < P; ++r) {
      const int64_t mine = int64_t(own[size_t(r)]) * rows * cols * 4 * (P - 1);
      const int64_t others = int64_t(total - own[size_t(r)]) * rows * cols * 4;
      sent[size_t(r)] = fwd ? mine : others;
      received[size_t(r)] = fwd ? others : mine;
    }
    tl.collective(sent, received, P - 1, true);
  };
  const int64_t state_bytes = steps.vertices * shape.state * 4;
  int last_owner = -1;  // T-GCN: who holds the state after the previous window

  for (size_t wi = 0; wi + 1 < steps.windows.size(); ++wi) {
    const int a = steps.windows[wi], b = steps.windows[wi + 1];
    std::vector<int> own(static_cast<size_t>(P), 0);
    std::vector<int> order;  // ranks with steps, in step order
    bool any = false;
    for (int s = a; s < b; ++s) {
      const int r = plan.owner[size_t(s)];
      if (own[size_t(r)]++ == 0) order.push_back(r);
      any = any || has_loss(steps, s);
    }
    // Forward.
    for (int r = 0; r < P; ++r)
      for (int s = a; s < b; ++s) ops_on(shape.weights, r, n, s, true);
    for (int s = a; s < b; ++s) ops_on(shape.graph, plan.owner[size_t(s)], n, s, true);
    if (P > 1)
      for (auto [rows, cols] : shape.summaries) allgather(own, rows, cols, true);
    if (shape.model == TModel::gcrn) {
      if (P > 1) reshard(own, true, shape.reshard_in);
      for (int r = 0; r < P; ++r)
        for (int s = a; s < b; ++s)
          ops_on(shape.recurrent, r, double(plan.block[size_t(r)]), s, true);
      if (P > 1) reshard(own, false, shape.reshard_out);
    }
    if (shape.model == TModel::tgcn) {
      std::vector<double> stages;
      for (int r : order) {
        double w = 0;
        for (int s = a; s < b; ++s)
          if (plan.owner[size_t(s)] == r)
            for (const TOp& o : shape.recurrent)
              w += tl.op(o, n, double(steps.entries[size_t(s)]), 0, true);
        stages.push_back(w);
      }
      // The state enters from the previous window's last owner (moved, detached), then passes
      // from each block's owner to the next.
      std::vector<int> senders(order.begin(), order.end() - 1);
      int handoffs = int(order.size()) - 1;
      if (last_owner >= 0 && last_owner != order.front()) {
        senders.push_back(last_owner);
        ++handoffs;
      }
      if (P > 1)
        tl.serial(stages, handoffs, state_bytes, senders);
      else
        for (double w : stages) tl.add(0, w);
      last_owner = order.back();
    }
    for (int s = a; s < b; ++s) {
      ops_on(shape.score, plan.owner[size_t(s)], n, s, true);
      if (!steps.batch_s.empty() && steps.pairs[size_t(s)] > 0)
        tl.add(plan.owner[size_t(s)], steps.batch_s[size_t(s)] / opt.compute_scale);
    }
    if (!any) continue;
    tl.allreduce(8);
    // Backward.
    for (int s = a; s < b; ++s) ops_on(shape.score, plan.owner[size_t(s)], n, s, false);
    if (shape.model == TModel::tgcn) {
      std::vector<double> stages;
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        double w = 0;
        for (int s = a; s < b; ++s)
          if (plan.owner[size_t(s)] == *it)
            for (const TOp& o : shape.recurrent)
              w += tl.op(o, n, double(steps.entries[size_t(s)]), 0, false);
        stages.push_back(w);
      }
      if (P > 1)
        tl.serial(stages, int(order.size()) - 1, state_bytes,
                  std::vector<int>(order.begin() + 1, order.end()));
      else
        for (double w : stages) tl.add(0, w);
    }
    if (shape.model == TModel::gcrn) {
      // Each re-shard's backward moves its bytes the other way: the opposite re-shard's.
      if (P > 1) reshard(own, true, shape.reshard_out);
      for (int r = 0; r < P; ++r)
        for (int s = a; s < b; ++s)
          ops_on(shape.recurrent, r, double(plan.block[size_t(r)]), s, false);
      if (P > 1) reshard(own, false, shape.reshard_in);
    }
    if (P > 1)
      for (auto [rows, cols] : shape.summaries) allgather(own, rows, cols, false);
    for (int s = a; s < b; ++s) ops_on(shape.graph, plan.owner[size_t(s)], n, s, false);
    for (int r = 0; r < P; ++r)
      for (int s = a; s < b; ++s) ops_on(shape.weights, r, n, s, false);
    for (int r = 0; r < P; ++r) tl.add(r, tl.copy_seconds(double(shape.parameters) * 8));
    tl.allreduce((shape.parameters + shape.tensors) * 4);
  }
  tl.finish();
  return tl.result("snapshot");
}

}  // namespace dgnn::perf
