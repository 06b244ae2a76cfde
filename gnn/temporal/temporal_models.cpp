#include "dgnn/gnn/temporal/temporal_models.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "dgnn/common/error.hpp"
#include "dgnn/gnn/core/graph_view.hpp"
#include "dgnn/gnn/core/ops.hpp"
#include "dgnn/gnn/core/rnn.hpp"
#include "dgnn/gnn/temporal/temporal_snapshot.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

Var matmul_t(const Var& a, const Var& b, bool ta, bool tb) {
  DGNN_CHECK(a.device() == b.device(), DeviceError,
             std::string("matmul_t: inputs on ") + device_name(a.device()) + " and " +
                 device_name(b.device()));
  const int64_t m = ta ? a.cols() : a.rows(), k = ta ? a.rows() : a.cols();
  const int64_t k2 = tb ? b.cols() : b.rows(), n = tb ? b.rows() : b.cols();
  DGNN_CHECK(
      k == k2, ShapeError,
      "matmul_t: inner sizes " + std::to_string(k) + " and " + std::to_string(k2) + " differ");
  Tensor out = Tensor::uninitialized(m, n, a.device());
  kernels::gemm(a.device(), ta, tb, 1.f, a.value().view(), b.value().view(), 0.f, out.view());
  return make_op(
      std::move(out), {a, b},
      [ta, tb](Node& self) {
        Node& na = *self.inputs[0];
        Node& nb = *self.inputs[1];
        const Device d = self.value.device();
        const ConstMatView g = std::as_const(self.grad).view();
        // C = op(A) op(B): d op(A) = dC op(B)^T, d op(B) = op(A)^T dC, transposed back as needed.
        if (na.requires_grad) {
          if (!ta)
            kernels::gemm(d, false, !tb, 1.f, g, nb.value.view(), 1.f, na.grad_buffer().view());
          else
            kernels::gemm(d, tb, true, 1.f, nb.value.view(), g, 1.f, na.grad_buffer().view());
        }
        if (nb.requires_grad) {
          if (!tb)
            kernels::gemm(d, !ta, false, 1.f, na.value.view(), g, 1.f, nb.grad_buffer().view());
          else
            kernels::gemm(d, true, ta, 1.f, g, na.value.view(), 1.f, nb.grad_buffer().view());
        }
      },
      "matmul_t");
}

Var detach(const Var& x) { return Var(x.value().clone()); }

namespace {

// p / |p| for a column vector, with its gradient (I - v v^T) g / |p|. Host arithmetic: p is a
// single small parameter column.
Var unit_column(const Var& p) {
  const Tensor host = p.value().to(Device::cpu);
  double norm2 = 0;
  for (int64_t i = 0; i < host.numel(); ++i) norm2 += double(host.data()[i]) * host.data()[i];
  const double norm = std::max(std::sqrt(norm2), 1e-12);
  Tensor v(host.rows(), host.cols());
  for (int64_t i = 0; i < host.numel(); ++i) v.data()[i] = float(host.data()[i] / norm);
  Tensor out = v.to(p.device());
  return make_op(
      std::move(out), {p},
      [norm](Node& self) {
        const Tensor g = self.grad.to(Device::cpu);
        const Tensor vv = self.value.to(Device::cpu);
        double dot = 0;
        for (int64_t i = 0; i < g.numel(); ++i) dot += double(g.data()[i]) * vv.data()[i];
        Tensor d(g.rows(), g.cols());
        for (int64_t i = 0; i < g.numel(); ++i)
          d.data()[i] = float((g.data()[i] - dot * vv.data()[i]) / norm);
        Tensor& gp = self.inputs[0]->grad_buffer();
        const Tensor dd = d.to(gp.device());
        kernels::axpby(gp.device(), gp.numel(), 1.f, dd.data(), 1.f, gp.data());
      },
      "unit_column");
}

Var zeros_like_rows(int64_t rows, int64_t cols, Device dev) { return Var(Tensor(rows, cols, dev)); }

// ---- EvolveGCN-O: W_t = LSTM(W_{t-1}), the rows of W as the LSTM's batch ------------------
class EvolveOLayer : public Module {
 public:
  EvolveOLayer(int64_t in, int64_t out)
      : w0_(add_parameter("weight", in, out)),
        u_(add_parameter("lstm_weight", out, 4 * out)),
        b_(add_parameter("lstm_bias", 1, 4 * out, Init::zeros, false)) {}
  void reset() {
    w_ = w0_;
    c_ = zeros_like_rows(w0_.rows(), w0_.cols(), w0_.device());
  }
  int64_t min_vertices() const { return 0; }
  void detach_state() {
    w_ = detach(w_);
    c_ = detach(c_);
  }
  void save_state(std::vector<Var>* out) const {
    out->push_back(state_copy(w_));
    out->push_back(state_copy(c_));
  }
  size_t load_state(const std::vector<Var>& s, size_t at) {
    w_ = state_copy(s.at(at));
    c_ = state_copy(s.at(at + 1));
    return at + 2;
  }
  Var forward(ForwardContext& ctx, const Var& x) override {
    evolve();
    return aggregate(ctx.graph, matmul(x, w_), Norm::gcn);
  }
  // Snapshot strategy: every rank evolves the weights through the whole window (small matrices)
  // and applies those of its own steps; `xs` holds its steps' inputs.
  std::vector<Var> window(SnapshotWindow& w, const std::vector<Var>& xs) {
    std::vector<Var> out;
    for (int s = w.begin(); s < w.end(); ++s) {
      evolve();
      if (w.owns(s))
        out.push_back(
            aggregate(w.ctx(s).graph, matmul(xs[size_t(s - w.own_begin())], w_), Norm::gcn));
    }
    return out;
  }

 private:
  void evolve() {
    LstmOut next = lstm_cell(add_bias(matmul(w_, u_), b_), c_);
    w_ = next.h;
    c_ = next.c;
  }

  Var& w0_;
  Var& u_;
  Var& b_;
  Var w_, c_;
};

// ---- EvolveGCN-H: W_t = GRU(summary of H_t, W_{t-1}) ---------------------------------------
class EvolveHLayer : public Module {
 public:
  EvolveHLayer(int64_t in, int64_t out)
      : out_(out),
        w0_(add_parameter("weight", in, out)),
        p_(add_parameter("score", in, 1)),
        wx_(add_parameter("gru_x_weight", out, 3 * out)),
        bx_(add_parameter("gru_x_bias", 1, 3 * out, Init::zeros, false)),
        wh_(add_parameter("gru_h_weight", out, 3 * out)),
        bh_(add_parameter("gru_h_bias", 1, 3 * out, Init::zeros, false)) {}
  void reset() { w_ = w0_; }
  void detach_state() { w_ = detach(w_); }
  void save_state(std::vector<Var>* out) const { out->push_back(state_copy(w_)); }
  size_t load_state(const std::vector<Var>& s, size_t at) {
    w_ = state_copy(s.at(at));
    return at + 1;
  }
  int64_t min_vertices() const { return out_; }  // one per summary row
  Var forward(ForwardContext& ctx, const Var& x) override {
    evolve(summarise(x));
    return aggregate(ctx.graph, matmul(x, w_), Norm::gcn);
  }
  // Snapshot strategy: each owner summarises its steps' inputs `xs`, every rank gathers every
  // step's summary (k x in, small), evolves the weights through the whole window and applies
  // those of its own steps.
  std::vector<Var> window(SnapshotWindow& w, const std::vector<Var>& xs) {
    std::vector<Var> mine;
    for (const Var& x : xs) mine.push_back(summarise(x));
    const std::vector<Var> all = w.allgather(mine, out_, w0_.rows());
    std::vector<Var> out;
    for (int s = w.begin(); s < w.end(); ++s) {
      evolve(all[size_t(s - w.begin())]);
      if (w.owns(s))
        out.push_back(
            aggregate(w.ctx(s).graph, matmul(xs[size_t(s - w.own_begin())], w_), Norm::gcn));
    }
    return out;
  }

 private:
  // The k = out rows of x with the highest score x p / |p|, scaled by tanh(score): k x in.
  Var summarise(const Var& x) {
    Var y = matmul(x, unit_column(p_));
    if (x.rows() < out_)
      throw OptionError("EvolveGCN-H needs at least " + std::to_string(out_) +
                        " vertices per rank (one per summary row), this rank has " +
                        std::to_string(x.rows()));
    // Ranked on the host (topk_rows copies the one score column there): ties by row index.
    const std::vector<int32_t> idx = topk_rows(y.value(), out_);
    Var gate = tanh(gather_rows(y, idx));  // k x 1
    Var ones(Tensor::filled(1, x.cols(), 1.f, x.device()));
    return mul(gather_rows(x, idx), matmul(gate, ones));  // k x in
  }
  void evolve(const Var& z) {
    Var xg = add_bias(matmul_t(z, wx_, true, false), bx_);  // in x 3k
    Var hg = add_bias(matmul(w_, wh_), bh_);
    w_ = gru_cell(xg, hg, w_);
  }

  int64_t out_;
  Var& w0_;
  Var& p_;
  Var& wx_;
  Var& bx_;
  Var& wh_;
  Var& bh_;
  Var w_;
};

template <class Layer>
class EvolveGcn : public TemporalModel {
 public:
  explicit EvolveGcn(const std::vector<int64_t>& dims) : out_(dims.back()) {
    for (size_t i = 0; i + 1 < dims.size(); ++i)
      layers_.push_back(&add_module("layers." + std::to_string(i),
                                    std::make_unique<Layer>(dims[i], dims[i + 1])));
    reset_state();
  }
  void reset_state() override {
    for (auto* l : layers_) l->reset();
  }
  void detach_state() override {
    for (auto* l : layers_) l->detach_state();
  }
  bool save_state(std::vector<Var>* out) const override {
    out->clear();
    for (auto* l : layers_) l->save_state(out);
    return true;
  }
  void load_state(const std::vector<Var>& s) override {
    size_t at = 0;
    for (auto* l : layers_) at = l->load_state(s, at);
  }
  Var step(ForwardContext& ctx, const Var& x) override {
    Var h = x;
    for (size_t i = 0; i < layers_.size(); ++i) {
      h = layers_[i]->forward(ctx, h);
      if (i + 1 < layers_.size()) h = relu(h);
    }
    return h;
  }
  std::vector<Var> window(SnapshotWindow& w) override {
    std::vector<Var> h;
    for (int s = w.own_begin(); s < w.own_end(); ++s) h.push_back(w.x(s));
    for (size_t i = 0; i < layers_.size(); ++i) {
      h = layers_[i]->window(w, h);
      if (i + 1 < layers_.size())
        for (Var& v : h) v = relu(v);
    }
    return h;
  }
  int64_t out_dim() const override { return out_; }
  int64_t min_vertices() const override {
    int64_t most = 0;
    for (auto* l : layers_) most = std::max(most, l->min_vertices());
    return most;
  }

 private:
  std::vector<Layer*> layers_;
  int64_t out_;
};

// ---- GCRN: GCN layers, then an LSTM per vertex ---------------------------------------------
class Gcrn : public TemporalModel {
 public:
  explicit Gcrn(const std::vector<int64_t>& dims) : hidden_(dims.back()) {
    // The last pair of dims is the LSTM; with only {in, out} the GCN maps in -> out first.
    std::vector<int64_t> g(dims.begin(), dims.end() - 1);
    if (g.size() < 2) g = {dims.front(), dims.back()};
    for (size_t i = 0; i + 1 < g.size(); ++i)
      gcn_.push_back(
          &add_module("gcn." + std::to_string(i), std::make_unique<GCNConv>(g[i], g[i + 1])));
    wx_ = &add_parameter("lstm_x_weight", g.back(), 4 * hidden_);
    wh_ = &add_parameter("lstm_h_weight", hidden_, 4 * hidden_);
    b_ = &add_parameter("lstm_bias", 1, 4 * hidden_, Init::zeros, false);
  }
  void reset_state() override {
    h_ = Var();
    c_ = Var();
  }
  void detach_state() override {
    if (h_.defined()) {
      h_ = detach(h_);
      c_ = detach(c_);
    }
  }
  bool save_state(std::vector<Var>* out) const override {
    *out = {state_copy(h_), state_copy(c_)};
    return true;
  }
  void load_state(const std::vector<Var>& s) override {
    h_ = state_copy(s.at(0));
    c_ = state_copy(s.at(1));
  }
  Var step(ForwardContext& ctx, const Var& x) override {
    Var g = x;
    for (auto* l : gcn_) g = relu(l->forward(ctx, g));
    if (!h_.defined()) {
      h_ = zeros_like_rows(x.rows(), hidden_, x.device());
      c_ = zeros_like_rows(x.rows(), hidden_, x.device());
    }
    advance(g);
    return h_;
  }
  // Snapshot strategy: the GCN on each owned snapshot, re-shard by vertex, the LSTM over the
  // window's steps on this rank's vertex block, re-shard back.
  std::vector<Var> window(SnapshotWindow& w) override {
    std::vector<Var> g;
    for (int s = w.own_begin(); s < w.own_end(); ++s) {
      Var x = w.x(s);
      for (auto* l : gcn_) x = relu(l->forward(w.ctx(s), x));
      g.push_back(x);
    }
    const std::vector<Var> by_vertex = w.to_vertex(g, wx_->rows());
    if (!h_.defined()) {
      h_ = zeros_like_rows(w.vertex_end() - w.vertex_begin(), hidden_, wx_->device());
      c_ = zeros_like_rows(w.vertex_end() - w.vertex_begin(), hidden_, wx_->device());
    }
    std::vector<Var> hs;
    for (const Var& v : by_vertex) {
      advance(v);
      hs.push_back(h_);
    }
    return w.to_snapshot(hs, hidden_);
  }
  int64_t out_dim() const override { return hidden_; }

 private:
  void advance(const Var& g) {
    LstmOut next = lstm_cell(add_bias(add(matmul(g, *wx_), matmul(h_, *wh_)), *b_), c_);
    h_ = next.h;
    c_ = next.c;
  }

  int64_t hidden_;
  std::vector<GCNConv*> gcn_;
  Var* wx_;
  Var* wh_;
  Var* b_;
  Var h_, c_;
};

// ---- T-GCN: a GRU whose transforms are graph convolutions ----------------------------------
class Tgcn : public TemporalModel {
 public:
  explicit Tgcn(const std::vector<int64_t>& dims)
      : hidden_(dims.back()),
        wx_(add_parameter("gru_x_weight", dims.front(), 3 * dims.back())),
        bx_(add_parameter("gru_x_bias", 1, 3 * dims.back(), Init::zeros, false)),
        wh_(add_parameter("gru_h_weight", dims.back(), 3 * dims.back())),
        bh_(add_parameter("gru_h_bias", 1, 3 * dims.back(), Init::zeros, false)) {}
  void reset_state() override { h_ = Var(); }
  void detach_state() override {
    if (h_.defined()) h_ = detach(h_);
  }
  bool save_state(std::vector<Var>* out) const override {
    *out = {state_copy(h_)};
    return true;
  }
  void load_state(const std::vector<Var>& s) override { h_ = state_copy(s.at(0)); }
  Var step(ForwardContext& ctx, const Var& x) override {
    if (!h_.defined()) h_ = zeros_like_rows(x.rows(), hidden_, x.device());
    h_ = advance(ctx, input_gates(ctx, x), h_);
    return h_;
  }
  // Snapshot strategy. The state is aggregated over each snapshot's graph, so it is not a
  // per-vertex recurrence that could move by vertex: the input transforms run on every owner at
  // once, then the state goes through the window's blocks in order, handed from one owner to
  // the next.
  std::vector<Var> window(SnapshotWindow& w) override {
    std::vector<Var> xg;
    for (int s = w.own_begin(); s < w.own_end(); ++s) xg.push_back(input_gates(w.ctx(s), w.x(s)));
    Var h = w.state_in(h_, w.num_vertices(), hidden_);
    std::vector<Var> out;
    if (w.own_begin() < w.own_end() && !h.defined())
      h = zeros_like_rows(w.num_vertices(), hidden_, wx_.device());
    for (int s = w.own_begin(); s < w.own_end(); ++s) {
      h = advance(w.ctx(s), xg[size_t(s - w.own_begin())], h);
      out.push_back(h);
    }
    h_ = w.state_out(h) ? h : Var();
    return out;
  }
  int64_t out_dim() const override { return hidden_; }

 private:
  Var input_gates(ForwardContext& ctx, const Var& x) {
    return add_bias(aggregate(ctx.graph, matmul(x, wx_), Norm::gcn), bx_);
  }
  Var advance(ForwardContext& ctx, const Var& xg, const Var& h) {
    Var hg = add_bias(aggregate(ctx.graph, matmul(h, wh_), Norm::gcn), bh_);
    return gru_cell(xg, hg, h);
  }

  int64_t hidden_;
  Var& wx_;
  Var& bx_;
  Var& wh_;
  Var& bh_;
  Var h_;
};

}  // namespace

TemporalKind parse_temporal_kind(const std::string& name) {
  if (name == "evolvegcn-o" || name == "egcn-o") return TemporalKind::evolvegcn_o;
  if (name == "evolvegcn-h" || name == "egcn-h") return TemporalKind::evolvegcn_h;
  if (name == "gcrn") return TemporalKind::gcrn;
  if (name == "tgcn" || name == "t-gcn") return TemporalKind::tgcn;
  throw OptionError("--model: unknown temporal model '" + name +
                    "' (expected evolvegcn-o, evolvegcn-h, gcrn or tgcn)");
}

const char* temporal_kind_name(TemporalKind k) {
  switch (k) {
    case TemporalKind::evolvegcn_o:
      return "evolvegcn-o";
    case TemporalKind::evolvegcn_h:
      return "evolvegcn-h";
    case TemporalKind::gcrn:
      return "gcrn";
    case TemporalKind::tgcn:
      return "tgcn";
  }
  return "?";
}

std::unique_ptr<TemporalModel> make_temporal_model(TemporalKind kind,
                                                   const std::vector<int64_t>& dims) {
  DGNN_CHECK(dims.size() >= 2, OptionError, "a temporal model needs at least {in, out} widths");
  switch (kind) {
    case TemporalKind::evolvegcn_o:
      return std::make_unique<EvolveGcn<EvolveOLayer>>(dims);
    case TemporalKind::evolvegcn_h:
      return std::make_unique<EvolveGcn<EvolveHLayer>>(dims);
    case TemporalKind::gcrn:
      return std::make_unique<Gcrn>(dims);
    case TemporalKind::tgcn:
      return std::make_unique<Tgcn>(dims);
  }
  return nullptr;
}

PairClassifier::PairClassifier(int64_t emb_dim, int64_t hidden, int64_t classes)
    : lin1_(add_module("lin1", std::make_unique<Linear>(3 * emb_dim, hidden))),
      lin2_(add_module("lin2", std::make_unique<Linear>(hidden, classes))) {}

Var PairClassifier::forward(ForwardContext& ctx, const Var& x) {
  return lin2_.forward(ctx, relu(lin1_.forward(ctx, x)));
}

Var PairClassifier::score(ForwardContext&, const PairEnd& u, const PairEnd& v) {
  return pair_mlp(u, v, lin1_.weight(), *lin1_.bias(), lin2_.weight(), *lin2_.bias());
}

Var PairClassifier::score(ForwardContext& ctx, const Var& h, const std::vector<int32_t>& src,
                          const std::vector<int32_t>& dst) {
  return score(ctx, PairEnd{h, src}, PairEnd{h, dst});
}

Var PairClassifier::score_rows(ForwardContext& ctx, const Var& hu, const Var& hv) {
  return score(ctx, PairEnd{hu, std::nullopt}, PairEnd{hv, std::nullopt});
}

FactoredPairs PairClassifier::factor(const Tensor& h) {
  auto host = [](Module& m, const char* name) {
    for (auto& [n, p] : m.named_parameters())
      if (n == name) return p->var.value().to(Device::cpu);
    throw Error(std::string("PairClassifier: no parameter ") + name);
  };
  const Tensor w1 = host(lin1_, "weight"), b1 = host(lin1_, "bias");
  const Tensor w2 = host(lin2_, "weight"), b2 = host(lin2_, "bias");
  const int64_t e = h.cols(), hid = w1.cols();
  DGNN_CHECK(w1.rows() == 3 * e, ShapeError,
             "PairClassifier::factor: embeddings of width " + std::to_string(e) +
                 " for a classifier of input width " + std::to_string(w1.rows()));
  if (w2.cols() != 1) throw Error("PairClassifier::factor: only for one logit per pair");
  FactoredPairs f;
  if (h.device() != Device::cpu) f.host = h.to(Device::cpu);
  f.h = (h.device() == Device::cpu ? h : f.host).view();
  f.w_u = Tensor::from_host(w1.data(), e, hid);
  f.w_v = Tensor::from_host(w1.data() + e * hid, e, hid);
  f.w_uv = Tensor::from_host(w1.data() + 2 * e * hid, e, hid);
  f.b1.assign(b1.data(), b1.data() + hid);
  f.w2.assign(w2.data(), w2.data() + hid);
  f.b2 = b2.data()[0];
  return f;
}

void FactoredPairs::source_weights(int32_t u, float* m) const {
  const int64_t e = h.cols, hid = int64_t(b1.size());
  const float* hu = h.row(u);
  const float *wv = w_v.data(), *wuv = w_uv.data();
  for (int64_t j = 0; j < e; ++j)
    for (int64_t c = 0; c < hid; ++c) m[j * hid + c] = wv[j * hid + c] + hu[j] * wuv[j * hid + c];
}

void FactoredPairs::score_row(int32_t u, float* out, std::vector<float>& scratch) const {
  score_list(u, nullptr, h.rows, out, scratch);
}

void FactoredPairs::score_list(int32_t u, const int32_t* v, int64_t k, float* out,
                               std::vector<float>& scratch) const {
  const int64_t e = h.cols, hid = int64_t(b1.size());
  scratch.resize(size_t(e * hid + hid));
  source_weights(u, scratch.data());
  // a_u = h_u W_u + b1, in a fixed order (the same bits wherever u's pairs are scored).
  float* au = scratch.data() + e * hid;
  const float* hu = h.row(u);
  std::copy(b1.begin(), b1.end(), au);
  for (int64_t j = 0; j < e; ++j)
    for (int64_t c = 0; c < hid; ++c) au[c] += hu[j] * w_u.data()[j * hid + c];
  kernels::factored_pair_logits(Device::cpu, h, hid, scratch.data(), au, w2.data(), b2, v, k, out);
}

}  // namespace dgnn
