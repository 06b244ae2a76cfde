#pragma once
// Deep node classifiers (16 to 64+ graph layers), whole-graph and graph-parallel alike: every
// layer aggregates over ctx.graph (a rank's part exchanges its halo per layer, as StackModel's
// layers do), dropout is keyed by vertex, so P ranks give one process's numbers.
//
// GCNII (Chen et al., "Simple and Deep Graph Convolutional Networks", ICML 2020):
//   h0 = ReLU(dropout(x) W_in + b_in)
//   h_l = ReLU( ((1 - alpha) A~ dropout(h_{l-1}) + alpha h0) ((1 - beta_l) I + beta_l W_l) ),
//         beta_l = log(lambda / l + 1),  l = 1..L   (initial residual, identity mapping)
//   logits = dropout(h_L) W_out + b_out
// A~ is GCN's D^-1/2 (A + I) D^-1/2. The layer weights carry their own weight decay (the paper's
// two weight decays: 0.01 on the W_l, 5e-4 on W_in / W_out; Parameter::weight_decay).
//
// Residual deep GCN ("resgcn"; the residual connections of Li et al., DeepGCNs, ICCV 2019):
//   h0 = ReLU(dropout(x) W_in + b_in),
//   h_l = h_{l-1} + a_l ReLU(GCNConv_l(dropout(h_{l-1}))),   a_l learnable, starting at 0,
//   logits = dropout(h_L) W_out + b_out.
// DeepGCNs normalise every layer (BatchNorm); without a normalisation the plain residual sum
// grows with depth (measured: 16 layers on Cora, first loss 8.9, test accuracy 0.699). The
// scalar a_l (ReZero, Bachlechner et al. 2021) keeps the stack the identity at the start, so
// that depth is learnt in rather than summed up.
//
// Memory: the tape keeps what each layer's backward reads and nothing else: per GCNII layer the
// mixed rows S_l (the matmul's input) and h_l (ReLU reads its output), plus the dropout mask
// (a byte per entry); A~ h and the mixing sums are dropped as soon as the next op has run (the
// ops declare what they read, Node::value_read). That is about 2.25 n x hidden floats per layer.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dgnn/gnn/core/module.hpp"
#include "dgnn/gnn/models/layers.hpp"

namespace dgnn {

enum class DeepKind : uint8_t { gcnii, resgcn };
// Whether --model names a deep model ("gcnii", "resgcn") rather than a stacked layer.
bool is_deep_model(const std::string& name);
DeepKind parse_deep_kind(const std::string& name);  // OptionError for other names
const char* deep_kind_name(DeepKind kind);

struct DeepModelOptions {
  DeepKind kind = DeepKind::gcnii;
  int layers = 64;        // graph layers (the input and output linear layers come besides)
  int64_t hidden = 64;
  float dropout = 0.6f;
  float alpha = 0.1f;     // GCNII: the share of h0 mixed into every layer's input
  float lambda = 0.5f;    // GCNII: beta_l = log(lambda / l + 1)
  // Weight decay of the graph layers' weights (< 0: the optimiser's, as every other weight).
  float conv_weight_decay = -1.f;
};
// OptionError naming the flag (--layers, --hidden, --dropout, --alpha, --lambda,
// --conv-weight-decay) for a value out of range.
void check_deep_options(const DeepModelOptions& o);

// A deep model as three parts that may run apart (the pipeline strategy gives contiguous graph
// layers to different ranks, gnn/train/pipeline.hpp):
//   h0 = stem(x);  t = initial_term(h0);  h_l = graph_layer(l, h_{l-1}, t), l = 1..L;
//   logits = head(h_L)
// which is what forward() runs. Each part sets its own dropout site (the stem 0, layer l l, the
// head L + 1), so that a part run alone draws the masks it draws in the whole model.
class DeepModel : public NodeModel {
 public:
  Var forward(ForwardContext& ctx, const Var& x) override;
  Var embed(ForwardContext& ctx, const Var& x) override;  // h_L
  virtual Var stem(ForwardContext& ctx, const Var& x) = 0;
  // What every graph layer reads of h0 (GCNII: alpha h0); undefined when the layers read none.
  virtual Var initial_term(const Var& h0) const = 0;
  bool reads_h0() const { return reads_h0_; }
  virtual Var graph_layer(ForwardContext& ctx, int l, const Var& h, const Var& h0_term) = 0;
  virtual Var head(ForwardContext& ctx, const Var& h) = 0;
  // The parameters of the stem, of graph layer l, of the head (names as named_parameters()).
  virtual bool in_stem(const std::string& name) const { return name.rfind("fc_in.", 0) == 0; }
  virtual bool in_head(const std::string& name) const { return name.rfind("fc_out.", 0) == 0; }
  int64_t hidden() const { return o_.hidden; }
  const DeepModelOptions& options() const { return o_; }

 protected:
  DeepModelOptions o_;
  bool reads_h0_ = false;
  explicit DeepModel(const DeepModelOptions& o);
};

class GCNII : public DeepModel {
 public:
  GCNII(int64_t in, int64_t classes, const DeepModelOptions& o);
  int graph_layers() const override { return int(convs_.size()); }
  double beta(int l) const;  // beta_l, l = 1..L
  Var stem(ForwardContext& ctx, const Var& x) override;
  Var initial_term(const Var& h0) const override;
  Var graph_layer(ForwardContext& ctx, int l, const Var& h, const Var& alpha_h0) override;
  Var head(ForwardContext& ctx, const Var& h) override;

 private:
  Linear& in_;
  Linear& out_;
  std::vector<Var*> convs_;
  Var identity_;  // hidden x hidden constant, on the parameters' device (made on first use there)
};

class ResGCN : public DeepModel {
 public:
  ResGCN(int64_t in, int64_t classes, const DeepModelOptions& o);
  int graph_layers() const override { return int(convs_.size()); }
  Var stem(ForwardContext& ctx, const Var& x) override;
  Var initial_term(const Var&) const override { return Var(); }
  Var graph_layer(ForwardContext& ctx, int l, const Var& h, const Var& unused) override;
  Var head(ForwardContext& ctx, const Var& h) override;

 private:
  Linear& in_;
  Linear& out_;
  std::vector<GCNConv*> convs_;
  std::vector<Var*> gates_;  // a_l, 1 x 1 ("rezero.<l>")
};

std::unique_ptr<DeepModel> make_deep_model(int64_t in, int64_t classes, const DeepModelOptions& o);

}  // namespace dgnn
