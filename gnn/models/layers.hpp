#pragma once
// Built-in layers. Each is an ordinary Module whose forward uses ops only — exactly what a
// user's custom layer looks like (see examples/custom_layer).
#include <functional>

#include "dgnn/gnn/core/module.hpp"

namespace dgnn {

// y = x W + b
class Linear : public Module {
 public:
  Linear(int64_t in, int64_t out, bool bias = true);
  Var forward(ForwardContext& ctx, const Var& x) override;
  // The parameters, for fused ops that use the layer's weights (pair_mlp); bias null without.
  Var& weight() { return weight_; }
  Var* bias() { return bias_; }

 private:
  Var& weight_;
  Var* bias_ = nullptr;
};

// Kipf & Welling GCN: y = D^-1/2 (A + I) D^-1/2 x W + b. Multiplies by W first when that
// shrinks the rows being aggregated (out < in), as aggregation dominates the cost.
class GCNConv : public Module {
 public:
  GCNConv(int64_t in, int64_t out, bool bias = true);
  Var forward(ForwardContext& ctx, const Var& x) override;

 private:
  int64_t in_, out_;
  Var& weight_;
  Var* bias_ = nullptr;
};

// GraphSAGE with the mean aggregator: y = x W_self + mean_{u in N(v)} x_u W_neigh + b.
class SAGEConv : public Module {
 public:
  SAGEConv(int64_t in, int64_t out, bool bias = true);
  Var forward(ForwardContext& ctx, const Var& x) override;

 private:
  Var& self_weight_;
  Var& neigh_weight_;
  Var* bias_ = nullptr;
};

// GIN (Xu et al.): y = MLP((1 + eps) x + sum_{u in N(v)} x_u), MLP = Linear-ReLU-Linear with
// `mid` hidden units, eps fixed. mid = 0 picks max(out, min(in, 4 out)): a last layer mapping to
// a handful of classes must not squeeze its MLP through a ReLU that narrow (units die).
class GINConv : public Module {
 public:
  GINConv(int64_t in, int64_t out, float eps = 0.f, int64_t mid = 0);
  Var forward(ForwardContext& ctx, const Var& x) override;

 private:
  float eps_;
  Linear& lin1_;
  Linear& lin2_;
};

// GAT (Velickovic et al., ICLR'18): `heads` attention heads of out / heads columns each,
// concatenated. Per head, z = x W, alpha_vu = softmax over v's in-neighbours and v itself of
// LeakyReLU_0.2(a_src . z_u + a_dst . z_v), y_v = sum_u alpha_vu z_u; then a bias. Runs on a
// whole graph, a rank's part and a sampled block (gnn/core/attention.hpp).
class GATConv : public Module {
 public:
  // attention_dropout: dropout on the attention coefficients while training (the paper's 0.6),
  // masks keyed by the global ids of each edge's ends.
  GATConv(int64_t in, int64_t out, int64_t heads, float attention_dropout = 0.f);
  Var forward(ForwardContext& ctx, const Var& x) override;

 private:
  int64_t heads_;
  float attention_dropout_;
  Var& weight_;
  Var& att_src_;
  Var& att_dst_;
  Var& bias_;
};

// Makes layer `index` mapping `in` to `out` columns; custom layers plug in through this.
using LayerFactory = std::function<std::unique_ptr<Module>(int64_t in, int64_t out, int index)>;

// A node classifier: forward gives one row of logits per owned vertex (per seed of the last block
// in mini-batch training), embed the vertices' embeddings (what the output layer takes).
class NodeModel : public Module {
 public:
  virtual Var embed(ForwardContext& ctx, const Var& x) = 0;
  // The layers that aggregate over the graph (each exchanges a halo on a rank's part).
  virtual int graph_layers() const = 0;
};

// Layers stacked as dropout -> layer -> ReLU (no ReLU after the last): the classic GCN /
// GraphSAGE node classifier. dims = {in, hidden..., out}. Layer i runs on ctx.layer_graph(i):
// the whole graph, or its sampled block in mini-batch training.
class StackModel : public NodeModel {
 public:
  StackModel(const LayerFactory& make_layer, const std::vector<int64_t>& dims, float dropout);
  Var forward(ForwardContext& ctx, const Var& x) override;
  // The vertices' embeddings: what the last layer takes (after its ReLU), or the output of a
  // one-layer model.
  Var embed(ForwardContext& ctx, const Var& x) override;
  int graph_layers() const override { return int(layers_.size()); }

 private:
  std::vector<Module*> layers_;
  float dropout_;
};

enum class ModelKind : uint8_t { gcn, sage, gin, gat };
// The built-in GAT's heads for a layer of `out` columns: 4 when each gets at least 4 columns
// (hidden layers), else 1 (an output layer of a few classes).
int64_t gat_heads(int64_t out);
// `attention_dropout` applies to GAT's attention coefficients (the other layers have none).
LayerFactory builtin_layer(ModelKind kind, float attention_dropout = 0.f);
ModelKind parse_model_kind(const std::string& name);  // OptionError for unknown names
const char* model_kind_name(ModelKind kind);

// A layer of your own, made available by name to the command line (`--model NAME` of
// `dgnn::cli_main`, see cli/cli.hpp): train, scale and a mini-batch run build a StackModel of it
// exactly as of a built-in layer.
struct LayerSpec {
  LayerFactory factory;
  // Adjacencies its aggregate() calls use. A mini-batch loader builds these with each batch on
  // its prefetch thread; others are built on the training step when first asked for.
  std::vector<Norm> norms;
  // Reads the block's edge structure on the host (the attention ops do): sampled blocks are then
  // kept on the host side as well when training on a GPU.
  bool attention = false;
};
// Registers `name` (letters, digits, '-', '_'; a letter or digit first). A name taken by a built-in
// model or an earlier registration, an empty factory, or a malformed name throws dgnn::Error.
void register_layer(const std::string& name, LayerSpec spec);
const LayerSpec* find_registered_layer(const std::string& name);  // nullptr: not registered
std::vector<std::string> registered_layer_names();                // in registration order
// The models dgnn has (static, then temporal), as --model spells them.
const std::vector<std::string>& builtin_model_names();

}  // namespace dgnn
