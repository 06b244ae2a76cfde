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

GCNII::GCNII(int64_t in, int64_t classes, const DeepModelOptions& o)
    : o_(checked(o)),
      in_(add_module("fc_in", std::make_unique<Linear>(in, o.hidden))),
      out_(add_module("fc_out", std::make_unique<Linear>(o.hidden, classes))) {
  for (int l = 1; l <= o.layers; ++l)
    convs_.push_back(&add_parameter("convs." + std::to_string(l) + ".weight", o.hidden, o.hidden));
  decay_graph_layers(*this, o.conv_weight_decay);
}

double GCNII::beta(int l) const { return std::log(double(o_.lambda) / double(l) + 1.0); }

// ((1 - alpha) A~ dropout(h) + alpha h0) ((1 - beta) I + beta W): one matmul by the mixed
// weight (hidden x hidden) instead of beta S W + (1 - beta) S, so that the tape keeps S alone.
Var GCNII::layer(ForwardContext& ctx, int l, const Var& h, const Var& alpha_h0) {
  const Var& w = *convs_[size_t(l - 1)];
  if (!identity_.defined() || identity_.device() != w.device()) {
    std::vector<float> eye(size_t(o_.hidden * o_.hidden), 0.f);
    for (int64_t i = 0; i < o_.hidden; ++i) eye[size_t(i * o_.hidden + i)] = 1.f;
    identity_ = Var(Tensor::from_host(eye.data(), o_.hidden, o_.hidden).to(w.device()));
  }
  const float b = float(beta(l));
  const Var mixed_w = add(scale(w, b), scale(identity_, 1.f - b));
  Var agg = aggregate(ctx.graph, ctx.dropout(h, o_.dropout), Norm::gcn);
  Var s = o_.alpha == 0.f ? agg : add(scale(agg, 1.f - o_.alpha), alpha_h0);
  return relu(matmul(s, mixed_w));
}

Var GCNII::embed(ForwardContext& ctx, const Var& x) {
  refuse_blocks(ctx, "gcnii");
  const Var h0 = relu(in_.forward(ctx, ctx.dropout(x, o_.dropout)));
  const Var alpha_h0 = o_.alpha == 0.f ? Var() : scale(h0, o_.alpha);
  Var h = h0;
  for (int l = 1; l <= int(convs_.size()); ++l) h = layer(ctx, l, h, alpha_h0);
  return h;
}

Var GCNII::forward(ForwardContext& ctx, const Var& x) {
  const Var h = embed(ctx, x);
  return out_.forward(ctx, ctx.dropout(h, o_.dropout));
}

ResGCN::ResGCN(int64_t in, int64_t classes, const DeepModelOptions& o)
    : o_(checked(o)),
      in_(add_module("fc_in", std::make_unique<Linear>(in, o.hidden))),
      out_(add_module("fc_out", std::make_unique<Linear>(o.hidden, classes))) {
  for (int l = 1; l <= o.layers; ++l) {
    convs_.push_back(&add_module("convs." + std::to_string(l),
                                 std::make_unique<GCNConv>(o.hidden, o.hidden)));
    gates_.push_back(&add_parameter("rezero." + std::to_string(l), 1, 1, Init::zeros, false));
  }
  decay_graph_layers(*this, o.conv_weight_decay);
}

Var ResGCN::embed(ForwardContext& ctx, const Var& x) {
  refuse_blocks(ctx, "resgcn");
  Var h = relu(in_.forward(ctx, ctx.dropout(x, o_.dropout)));
  for (size_t l = 0; l < convs_.size(); ++l)
    h = add(h, scale_by(relu(convs_[l]->forward(ctx, ctx.dropout(h, o_.dropout))), *gates_[l]));
  return h;
}

Var ResGCN::forward(ForwardContext& ctx, const Var& x) {
  const Var h = embed(ctx, x);
  return out_.forward(ctx, ctx.dropout(h, o_.dropout));
}

std::unique_ptr<NodeModel> make_deep_model(int64_t in, int64_t classes,
                                           const DeepModelOptions& o) {
  if (o.kind == DeepKind::gcnii) return std::make_unique<GCNII>(in, classes, o);
  return std::make_unique<ResGCN>(in, classes, o);
}

}  // namespace dgnn
