#include "dgnn/gnn/models/deep.hpp"

#include <cmath>
#include <string>

#include "dgnn/common/error.hpp"

namespace dgnn {

bool is_deep_model(const std::string& name) { return name == "gcnii" || name == "resgcn"; }

DeepKind parse_deep_kind(const std::string& name) {
  if (name == "gcnii") return DeepKind::gcnii;
  if (name == "resgcn") return DeepKind::resgcn;
  throw OptionError("--model: '" + name + "' is not a deep model (expected gcnii or resgcn)");
}

const char* deep_kind_name(DeepKind kind) { return kind == DeepKind::gcnii ? "gcnii" : "resgcn"; }

void check_deep_options(const DeepModelOptions& o) {
  const char* m = deep_kind_name(o.kind);
  if (o.layers < 1) throw OptionError(std::string("--layers must be >= 1 (") + m + ")");
  if (o.hidden < 1) throw OptionError("--hidden must be >= 1");
  if (!(o.dropout >= 0 && o.dropout < 1)) throw OptionError("--dropout must be in [0, 1)");
  if (!(o.alpha >= 0 && o.alpha <= 1))
    throw OptionError("--alpha must be in [0, 1] (GCNII's initial residual share), got " +
                      std::to_string(o.alpha));
  if (!(o.lambda > 0 && std::isfinite(o.lambda)))
    throw OptionError("--lambda must be > 0 (GCNII: beta_l = log(lambda / l + 1)), got " +
                      std::to_string(o.lambda));
  if (!(o.conv_weight_decay < 0 || std::isfinite(o.conv_weight_decay)))
    throw OptionError("--conv-weight-decay must be a number >= 0");
}

namespace {

const DeepModelOptions& checked(const DeepModelOptions& o) {
  check_deep_options(o);  // before any layer is built: an OptionError naming the flag
  return o;
}

// The graph layers' weights ("convs.*") get their own weight decay (< 0: the optimiser's).
void decay_graph_layers(Module& m, float decay) {
  if (decay < 0) return;
  for (auto& [name, p] : m.named_parameters())
    if (name.rfind("convs.", 0) == 0) p->weight_decay = decay;
}

void refuse_blocks(const ForwardContext& ctx, const char* model) {
  if (!ctx.blocks.empty())
    throw OptionError(std::string("--model ") + model +
                      " trains on the whole graph (or a rank's part of it): every layer reads "
                      "the previous layer's rows of every neighbour, so it has no sampled "
                      "mini-batches (drop --batch-size)");
}

}  // namespace

DeepModel::DeepModel(const DeepModelOptions& o) : o_(checked(o)) {}

Var DeepModel::embed(ForwardContext& ctx, const Var& x) {
  refuse_blocks(ctx, deep_kind_name(o_.kind));
  const Var h0 = stem(ctx, x);
  const Var t = initial_term(h0);
  Var h = h0;
  for (int l = 1; l <= graph_layers(); ++l) h = graph_layer(ctx, l, h, t);
  return h;
}

Var DeepModel::forward(ForwardContext& ctx, const Var& x) { return head(ctx, embed(ctx, x)); }

GCNII::GCNII(int64_t in, int64_t classes, const DeepModelOptions& o)
    : DeepModel(o),
      in_(add_module("fc_in", std::make_unique<Linear>(in, o.hidden))),
      out_(add_module("fc_out", std::make_unique<Linear>(o.hidden, classes))) {
  reads_h0_ = o.alpha != 0.f;
  for (int l = 1; l <= o.layers; ++l)
    convs_.push_back(&add_parameter("convs." + std::to_string(l) + ".weight", o.hidden, o.hidden));
  decay_graph_layers(*this, o.conv_weight_decay);
}

double GCNII::beta(int l) const { return std::log(double(o_.lambda) / double(l) + 1.0); }

Var GCNII::stem(ForwardContext& ctx, const Var& x) {
  refuse_blocks(ctx, "gcnii");
  ctx.site = 0;
  return relu(in_.forward(ctx, ctx.dropout(x, o_.dropout)));
}

Var GCNII::initial_term(const Var& h0) const {
  return o_.alpha == 0.f ? Var() : scale(h0, o_.alpha);
}

// ((1 - alpha) A~ dropout(h) + alpha h0) ((1 - beta) I + beta W): one matmul by the mixed
// weight (hidden x hidden) instead of beta S W + (1 - beta) S, so that the tape keeps S alone.
Var GCNII::graph_layer(ForwardContext& ctx, int l, const Var& h, const Var& alpha_h0) {
  DGNN_CHECK(l >= 1 && l <= graph_layers(), Error, "GCNII: no graph layer " + std::to_string(l));
  DGNN_CHECK(o_.alpha == 0.f || alpha_h0.defined(), Error,
             "GCNII: graph layer " + std::to_string(l) + " needs alpha h0 (initial_term)");
  const Var& w = *convs_[size_t(l - 1)];
  if (!identity_.defined() || identity_.device() != w.device()) {
    std::vector<float> eye(size_t(o_.hidden * o_.hidden), 0.f);
    for (int64_t i = 0; i < o_.hidden; ++i) eye[size_t(i * o_.hidden + i)] = 1.f;
    identity_ = Var(Tensor::from_host(eye.data(), o_.hidden, o_.hidden).to(w.device()));
  }
  const float b = float(beta(l));
  const Var mixed_w = add(scale(w, b), scale(identity_, 1.f - b));
  ctx.site = uint64_t(l);
  Var agg = aggregate(ctx.graph, ctx.dropout(h, o_.dropout), Norm::gcn);
  Var s = o_.alpha == 0.f ? agg : add(scale(agg, 1.f - o_.alpha), alpha_h0);
  return relu(matmul(s, mixed_w));
}

Var GCNII::head(ForwardContext& ctx, const Var& h) {
  ctx.site = uint64_t(graph_layers()) + 1;
  return out_.forward(ctx, ctx.dropout(h, o_.dropout));
}

ResGCN::ResGCN(int64_t in, int64_t classes, const DeepModelOptions& o)
    : DeepModel(o),
      in_(add_module("fc_in", std::make_unique<Linear>(in, o.hidden))),
      out_(add_module("fc_out", std::make_unique<Linear>(o.hidden, classes))) {
  for (int l = 1; l <= o.layers; ++l) {
    convs_.push_back(&add_module("convs." + std::to_string(l),
                                 std::make_unique<GCNConv>(o.hidden, o.hidden)));
    gates_.push_back(&add_parameter("rezero." + std::to_string(l), 1, 1, Init::zeros, false));
  }
  decay_graph_layers(*this, o.conv_weight_decay);
}

Var ResGCN::stem(ForwardContext& ctx, const Var& x) {
  refuse_blocks(ctx, "resgcn");
  ctx.site = 0;
  return relu(in_.forward(ctx, ctx.dropout(x, o_.dropout)));
}

Var ResGCN::graph_layer(ForwardContext& ctx, int l, const Var& h, const Var&) {
  DGNN_CHECK(l >= 1 && l <= graph_layers(), Error, "resgcn: no graph layer " + std::to_string(l));
  ctx.site = uint64_t(l);
  const size_t i = size_t(l - 1);
  return add(h, scale_by(relu(convs_[i]->forward(ctx, ctx.dropout(h, o_.dropout))), *gates_[i]));
}

Var ResGCN::head(ForwardContext& ctx, const Var& h) {
  ctx.site = uint64_t(graph_layers()) + 1;
  return out_.forward(ctx, ctx.dropout(h, o_.dropout));
}

std::unique_ptr<DeepModel> make_deep_model(int64_t in, int64_t classes,
                                           const DeepModelOptions& o) {
  if (o.kind == DeepKind::gcnii) return std::make_unique<GCNII>(in, classes, o);
  return std::make_unique<ResGCN>(in, classes, o);
}

}  // namespace dgnn
