#include "dgnn/gnn/models/layers.hpp"

#include <algorithm>
#include <deque>
#include <mutex>

#include "dgnn/common/error.hpp"
#include "dgnn/gnn/core/attention.hpp"

namespace dgnn {

Linear::Linear(int64_t in, int64_t out, bool bias) : weight_(add_parameter("weight", in, out)) {
  if (bias) bias_ = &add_parameter("bias", 1, out, Init::zeros, false);
}

Var Linear::forward(ForwardContext&, const Var& x) {
  Var y = matmul(x, weight_);
  return bias_ ? add_bias(y, *bias_) : y;
}

GCNConv::GCNConv(int64_t in, int64_t out, bool bias)
    : in_(in), out_(out), weight_(add_parameter("weight", in, out)) {
  if (bias) bias_ = &add_parameter("bias", 1, out, Init::zeros, false);
}

Var GCNConv::forward(ForwardContext& ctx, const Var& x) {
  Var y = out_ < in_ ? aggregate(ctx.graph, matmul(x, weight_), Norm::gcn)
                     : matmul(aggregate(ctx.graph, x, Norm::gcn), weight_);
  return bias_ ? add_bias(y, *bias_) : y;
}

SAGEConv::SAGEConv(int64_t in, int64_t out, bool bias)
    : self_weight_(add_parameter("self_weight", in, out)),
      neigh_weight_(add_parameter("neigh_weight", in, out)) {
  if (bias) bias_ = &add_parameter("bias", 1, out, Init::zeros, false);
}

Var SAGEConv::forward(ForwardContext& ctx, const Var& x) {
  Var y = add(matmul(dst_rows(ctx.graph, x), self_weight_),
              matmul(aggregate(ctx.graph, x, Norm::mean), neigh_weight_));
  return bias_ ? add_bias(y, *bias_) : y;
}

static int64_t gin_mid(int64_t in, int64_t out, int64_t mid) {
  return mid > 0 ? mid : std::max(out, std::min(in, 4 * out));
}

GINConv::GINConv(int64_t in, int64_t out, float eps, int64_t mid)
    : eps_(eps),
      lin1_(add_module("mlp0", std::make_unique<Linear>(in, gin_mid(in, out, mid)))),
      lin2_(add_module("mlp1", std::make_unique<Linear>(gin_mid(in, out, mid), out))) {}

Var GINConv::forward(ForwardContext& ctx, const Var& x) {
  Var self = dst_rows(ctx.graph, x);
  Var h = add(eps_ == 0.f ? self : scale(self, 1.f + eps_), aggregate(ctx.graph, x, Norm::sum));
  return lin2_.forward(ctx, relu(lin1_.forward(ctx, h)));
}

GATConv::GATConv(int64_t in, int64_t out, int64_t heads, float attention_dropout)
    : heads_(heads),
      attention_dropout_(attention_dropout),
      weight_(add_parameter("weight", in, out)),
      att_src_(add_parameter("att_src", 1, out)),
      att_dst_(add_parameter("att_dst", 1, out)),
      bias_(add_parameter("bias", 1, out, Init::zeros, false)) {
  DGNN_CHECK(heads >= 1 && out % heads == 0, OptionError,
             "GAT: " + std::to_string(out) + " columns do not split into " + std::to_string(heads) +
                 " heads");
}

Var GATConv::forward(ForwardContext& ctx, const Var& x) {
  const GraphView& g = ctx.graph;
  Var z = matmul(x, weight_);
  Var zs = with_halo(g, z);  // every source's row: owned, halo, or a block's sources
  Var score = leaky_relu(
      edge_add(g, head_dot(zs, att_src_, heads_), head_dot(dst_rows(g, z), att_dst_, heads_)),
      0.2f);
  Var alpha = edge_softmax(g, score);
  if (attention_dropout_ > 0.f && ctx.training)
    alpha = dropout(alpha, attention_dropout_, DropoutKey{ctx.seed, ctx.step, ctx.site++},
                    g.attention().edge_keys_on(alpha.device()), true);
  return add_bias(aggregate_edges(g, alpha, zs), bias_);
}

int64_t gat_heads(int64_t out) { return out % 4 == 0 && out >= 16 ? 4 : 1; }

StackModel::StackModel(const LayerFactory& make_layer, const std::vector<int64_t>& dims,
                       float dropout)
    : dropout_(dropout) {
  DGNN_CHECK(dims.size() >= 2, OptionError, "a model needs at least one layer");
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    std::unique_ptr<Module> layer = make_layer(dims[i], dims[i + 1], int(i));
    if (!layer) throw Error("the layer factory returned null for layer " + std::to_string(i));
    layers_.push_back(&add_module("layers." + std::to_string(i), std::move(layer)));
  }
}

Var StackModel::embed(ForwardContext& ctx, const Var& x) {
  Var h = x;
  const size_t hidden = layers_.size() > 1 ? layers_.size() - 1 : 1;
  for (size_t i = 0; i < hidden; ++i) {
    ForwardContext lc = ctx.layer(i);
    h = lc.dropout(h, dropout_);
    h = layers_[i]->forward(lc, h);
    ctx.end_layer(lc);
    if (i + 1 < layers_.size()) h = relu(h);
  }
  return h;
}

Var StackModel::forward(ForwardContext& ctx, const Var& x) {
  Var h = x;
  for (size_t i = 0; i < layers_.size(); ++i) {
    ForwardContext lc = ctx.layer(i);
    h = lc.dropout(h, dropout_);
    h = layers_[i]->forward(lc, h);
    ctx.end_layer(lc);
    if (i + 1 < layers_.size()) h = relu(h);
  }
  return h;
}

LayerFactory builtin_layer(ModelKind kind, float attention_dropout) {
  return [kind, attention_dropout](int64_t in, int64_t out, int) -> std::unique_ptr<Module> {
    switch (kind) {
      case ModelKind::gcn:
        return std::make_unique<GCNConv>(in, out);
      case ModelKind::sage:
        return std::make_unique<SAGEConv>(in, out);
      case ModelKind::gin:
        return std::make_unique<GINConv>(in, out);
      case ModelKind::gat:
        return std::make_unique<GATConv>(in, out, gat_heads(out), attention_dropout);
    }
    return nullptr;
  };
}

ModelKind parse_model_kind(const std::string& name) {
  if (name == "gcn") return ModelKind::gcn;
  if (name == "sage" || name == "graphsage") return ModelKind::sage;
  if (name == "gin") return ModelKind::gin;
  if (name == "gat") return ModelKind::gat;
  if (name == "gcnii" || name == "resgcn")
    throw OptionError("--model: '" + name +
                      "' is a deep model, which dgnn train and dgnn plan take on a static graph "
                      "(here: gcn, sage, gin or gat)");
  throw OptionError("--model: unknown model '" + name + "' (expected gcn, sage, gin or gat)");
}

namespace {

struct Registry {
  std::mutex mu;
  // In registration order (for --help); a deque, so a found entry stays put as others are added.
  std::deque<std::pair<std::string, LayerSpec>> layers;
};
Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

const std::vector<std::string>& builtin_model_names() {
  static const std::vector<std::string> names{
      "gcn", "sage", "graphsage", "gin", "gat", "gcnii", "resgcn", "evolvegcn-o", "evolvegcn-h", "gcrn", "tgcn"};
  return names;
}

void register_layer(const std::string& name, LayerSpec spec) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  // A leading '-' could not be typed after --model.
  const bool well_formed = !name.empty() && name.size() <= 64 && alnum(name[0]) &&
                           std::all_of(name.begin(), name.end(),
                                       [&](char c) { return alnum(c) || c == '-' || c == '_'; });
  if (!well_formed)
    throw Error("register_layer: '" + name +
                "' is not a layer name (1 to 64 letters, digits, '-' or '_', starting with a "
                "letter or digit)");
  if (!spec.factory) throw Error("register_layer: '" + name + "' has no factory");
  const std::vector<std::string>& builtin = builtin_model_names();
  // (and the temporal models' other spellings, which parse_temporal_kind takes too)
  if (std::find(builtin.begin(), builtin.end(), name) != builtin.end() || name == "egcn-o" ||
      name == "egcn-h" || name == "t-gcn")
    throw Error("register_layer: '" + name + "' is a built-in model of dgnn");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& [n, s] : r.layers)
    if (n == name) throw Error("register_layer: '" + name + "' is registered already");
  r.layers.emplace_back(name, std::move(spec));
}

const LayerSpec* find_registered_layer(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& [n, s] : r.layers)
    if (n == name) return &s;
  return nullptr;
}

std::vector<std::string> registered_layer_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const auto& [n, s] : r.layers) names.push_back(n);
  return names;
}

const char* model_kind_name(ModelKind kind) {
  switch (kind) {
    case ModelKind::gcn:
      return "gcn";
    case ModelKind::sage:
      return "sage";
    case ModelKind::gin:
      return "gin";
    case ModelKind::gat:
      return "gat";
  }
  return "?";
}

}  // namespace dgnn
