// The deep node classifiers (gnn/models/deep.hpp): GCNII's forward equals its formula written
// out op by op, both models' gradients equal finite differences, the graph layers carry their
// own weight decay, and the tape of a deep model grows by what each layer's backward reads.
#include <catch2/catch.hpp>
#include <cmath>

#include "dgnn/datasets/sbm.hpp"
#include "dgnn/gnn/core/gradcheck.hpp"
#include "dgnn/gnn/core/loss.hpp"
#include "dgnn/gnn/core/ops.hpp"
#include "dgnn/gnn/models/deep.hpp"
#include "dgnn/gnn/train/optimizer.hpp"
#include "dgnn/kernels/cpu/cpu_kernels.hpp"

using namespace dgnn;

namespace {

Dataset graph(int64_t n, int64_t features, uint64_t seed) {
  SbmConfig c;
  c.vertices = n;
  c.classes = 3;
  c.avg_degree = 5;
  c.feature_dim = features;
  c.seed = seed;
  return generate_sbm(c).to_dataset();
}

Var* param(Module& m, const std::string& name) {
  for (auto& [n, p] : m.named_parameters())
    if (n == name) return &p->var;
  FAIL("no parameter " << name);
  return nullptr;
}

}  // namespace

TEST_CASE("GCNII: forward is the paper's formula, beta_l = log(lambda / l + 1)") {
  const Dataset d = graph(60, 7, 3);
  GraphView g(d.graph.in);
  const Var x(Tensor::from_host(d.features.data(), d.num_vertices(), d.feature_dim));
  DeepModelOptions o;
  o.layers = 3;
  o.hidden = 5;
  o.alpha = 0.2f;
  o.lambda = 0.7f;
  GCNII model(d.feature_dim, 3, o);
  model.reset_parameters(4);
  for (int l = 1; l <= 3; ++l) CHECK(model.beta(l) == Approx(std::log(0.7 / l + 1)));
  ForwardContext ctx{g, false, 1, 0};
  const Var got = model.forward(ctx, x);
  // By hand: beta S W + (1 - beta) S, with S = (1 - alpha) A~ h + alpha h0.
  Var w_in = *param(model, "fc_in.weight"), b_in = *param(model, "fc_in.bias");
  const Var h0 = relu(add_bias(matmul(x, w_in), b_in));
  Var h = h0;
  for (int l = 1; l <= 3; ++l) {
    const Var& w = *param(model, "convs." + std::to_string(l) + ".weight");
    const Var s = add(scale(aggregate(g, h, Norm::gcn), 1.f - o.alpha), scale(h0, o.alpha));
    const float b = float(std::log(0.7 / l + 1));
    h = relu(add(scale(matmul(s, w), b), scale(s, 1.f - b)));
  }
  const Var want =
      add_bias(matmul(h, *param(model, "fc_out.weight")), *param(model, "fc_out.bias"));
  REQUIRE(got.rows() == want.rows());
  REQUIRE(got.cols() == 3);
  for (int64_t i = 0; i < want.value().numel(); ++i)
    CHECK(got.value().data()[i] == Approx(want.value().data()[i]).margin(1e-5));
  // The embeddings are h_L.
  const Var e = model.embed(ctx, x);
  for (int64_t i = 0; i < h.value().numel(); ++i)
    CHECK(e.value().data()[i] == Approx(h.value().data()[i]).margin(1e-5));
}

TEST_CASE("GCNII and the residual deep GCN: gradients equal finite differences") {
  // Few vertices: every ReLU whose input sits within the step of its zero is a kink the central
  // difference straddles (set aside when one side matches; two kinks in one step would not be).
  const Dataset d = graph(24, 6, 8);
  GraphView g(d.graph.in);
  const Tensor x = Tensor::from_host(d.features.data(), d.num_vertices(), d.feature_dim);
  for (DeepKind kind : {DeepKind::gcnii, DeepKind::resgcn}) {
    for (int layers : {1, 4}) {
      INFO(deep_kind_name(kind) << ", " << layers << " layers");
      DeepModelOptions o;
      o.kind = kind;
      o.layers = layers;
      o.hidden = 6;
      o.alpha = 0.3f;
      std::unique_ptr<NodeModel> m = make_deep_model(d.feature_dim, 3, o);
      m->reset_parameters(5);
      // The residual gates start at 0 (the stack is the identity): checked away from there.
      for (auto& [name, p] : m->named_parameters())
        if (name.rfind("rezero.", 0) == 0) p->var.value().data()[0] = 0.7f;
      GradCheckOptions opt;
      opt.entries_per_tensor = 24;
      opt.abs_tol = 3e-3;  // a residual stack's logits add up: float rounding of sum(y * R)
      const GradCheckResult r = check_layer_gradients(*m, g, x, opt);
      INFO(r.worst);
      CHECK(r.ok());
      CHECK(r.checked >= 24 * (3 + layers));
      CHECK(r.kinks * 10 < r.checked);  // most entries compared
      CHECK(m->graph_layers() == layers);
    }
  }
}

TEST_CASE("deep models: the graph layers' own weight decay, the linear layers' the optimiser's") {
  DeepModelOptions o;
  o.layers = 2;
  o.hidden = 4;
  o.conv_weight_decay = 0.5f;
  GCNII m(3, 2, o);
  m.reset_parameters(1);
  for (auto& [name, p] : m.named_parameters()) {
    INFO(name);
    if (name.rfind("convs.", 0) == 0)
      CHECK(p->weight_decay == 0.5f);
    else
      CHECK(p->weight_decay < 0);
  }
  // SGD with zero gradients: the update is -lr * decay * value, each with its own decay.
  std::vector<std::pair<std::string, Tensor>> before;
  for (auto& [name, p] : m.named_parameters()) {
    before.emplace_back(name, p->var.value().clone());
    p->var.grad() = Tensor(p->var.rows(), p->var.cols());
  }
  Sgd sgd(m.named_parameters(), SgdConfig{0.1f, 0.f, 0.01f});
  sgd.step();
  size_t i = 0;
  for (auto& [name, p] : m.named_parameters()) {
    INFO(name);
    const float decay = name.rfind("convs.", 0) == 0 ? 0.5f : p->decay ? 0.01f : 0.f;
    const Tensor& b = before[i++].second;
    for (int64_t k = 0; k < b.numel(); ++k)
      CHECK(p->var.value().data()[k] == Approx(b.data()[k] * (1 - 0.1f * decay)).margin(1e-7));
  }
}

TEST_CASE("deep models: the tape keeps about two rows per vertex per layer") {
  // Host bytes in use after a training forward, against depth: the growth per layer is what
  // its backward reads (GCNII: S_l and h_l, plus the dropout mask's byte per entry).
  const Dataset d = graph(4000, 8, 2);
  GraphView g(d.graph.in);
  (void)g.adjacency(Norm::gcn);  // built once, outside the measurement
  const Var x(Tensor::from_host(d.features.data(), d.num_vertices(), d.feature_dim));
  const int64_t n = d.num_vertices(), hidden = 32;
  const double row_bytes = double(n) * double(hidden) * 4;
  for (DeepKind kind : {DeepKind::gcnii, DeepKind::resgcn}) {
    std::vector<double> held;
    for (int layers : {4, 12}) {
      DeepModelOptions o;
      o.kind = kind;
      o.layers = layers;
      o.hidden = hidden;
      o.dropout = 0.5f;
      std::unique_ptr<NodeModel> m = make_deep_model(d.feature_dim, 3, o);
      m->reset_parameters(1);
      const size_t base = kernels::cpu::bytes_in_use();
      ForwardContext ctx{g, true, 1, 0};
      Var logits = m->forward(ctx, x);
      held.push_back(double(kernels::cpu::bytes_in_use() - base));
      // ... and the backward still runs from what was kept.
      std::vector<int32_t> rows, labels;
      for (int64_t v = 0; v < n; ++v) {
        rows.push_back(int32_t(v));
        labels.push_back(d.labels[size_t(v)]);
      }
      Var loss = cross_entropy(logits, rows, labels, double(n));
      loss.backward();
      CHECK(param(*m, "fc_in.weight")->grad().numel() > 0);
    }
    const double per_layer = (held[1] - held[0]) / 8 / row_bytes;
    INFO(deep_kind_name(kind) << ": " << per_layer << " rows of n x hidden floats per layer");
    CHECK(per_layer > 1.5);
    CHECK(per_layer < 2.6);
  }
}
