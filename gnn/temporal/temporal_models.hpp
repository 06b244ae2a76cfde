#pragma once
// Models over snapshot sequences. A temporal model consumes one snapshot at a time (its graph
// view and vertex features) and carries recurrent state between steps; the state is part of the
// tape, so a loss over several steps back-propagates through time.
//   EvolveGCN-O / -H (Pareja et al., AAAI 2020): GCN weights evolved by an LSTM (O) or by a GRU
//     fed with top-k summarised node embeddings (H); the state is a few small weight matrices.
//   GCRN (as in WD-GCN / CD-GCN): a GCN, then an LSTM per vertex.
//   T-GCN: a GRU whose input and hidden transforms are graph convolutions.
// Per-vertex state (GCRN, T-GCN) has one row per owned vertex and stays with its owner.
// window() runs the same model under the snapshot strategy (gnn/temporal/temporal_snapshot.hpp):
// layer by layer over a window of steps, each rank computing the snapshots it owns.
#include <memory>
#include <string>
#include <vector>

#include "dgnn/gnn/core/module.hpp"
#include "dgnn/gnn/core/ops.hpp"
#include "dgnn/gnn/models/layers.hpp"

namespace dgnn {

class SnapshotWindow;

class TemporalModel : public Module {
 public:
  // Forgets the recurrent state: the next step starts a sequence.
  virtual void reset_state() = 0;
  // Cuts the tape behind the state (truncated back-propagation through time).
  virtual void detach_state() = 0;
  // Embeddings (n_owned x out_dim) of snapshot ctx.graph with features x; advances the state.
  virtual Var step(ForwardContext& ctx, const Var& x) = 0;
  Var forward(ForwardContext& ctx, const Var& x) override { return step(ctx, x); }
  // The snapshot strategy: the embeddings (all vertices x out_dim) of this rank's steps of the
  // window, in step order; advances the state over the whole window, as step() would over each
  // of its steps. Collective: every rank calls it with the same window.
  virtual std::vector<Var> window(SnapshotWindow& w) = 0;
  virtual int64_t out_dim() const = 0;
  // The fewest vertices a graph needs for this model (EvolveGCN-H summarises each step into as
  // many rows as its widths); the trainer refuses smaller graphs on every rank alike.
  virtual int64_t min_vertices() const { return 0; }
  // The recurrent state as copies (undefined where there is none yet), to continue the sequence
  // later with load_state; false when the model cannot (the trainer then reruns the sequence
  // from its start). Without a tape: for evaluation.
  virtual bool save_state(std::vector<Var>* /*out*/) const { return false; }
  virtual void load_state(const std::vector<Var>& /*state*/) {}
};

// A copy of v's value (undefined stays undefined), off the tape.
inline Var state_copy(const Var& v) { return v.defined() ? Var(v.value().clone()) : Var(); }

enum class TemporalKind : uint8_t { evolvegcn_o, evolvegcn_h, gcrn, tgcn };
TemporalKind parse_temporal_kind(const std::string& name);  // OptionError for unknown names
const char* temporal_kind_name(TemporalKind k);

// dims = {in, hidden..., out}: one graph layer per consecutive pair (EvolveGCN, GCRN's GCN part);
// T-GCN and GCRN's recurrent width is the last entry.
std::unique_ptr<TemporalModel> make_temporal_model(TemporalKind kind,
                                                   const std::vector<int64_t>& dims);

// PairClassifier (one logit) split by the blocks of its first layer, to score many pairs from
// per-vertex terms: W1 [h_u | h_v | h_u * h_v] + b1 = (h_u W_u + b1) + h_v (W_v + diag(h_u) W_uv).
// A row of n pairs (u, every v) then costs one (n x emb) (emb x hidden) product with u's own
// matrix, not n concatenated 3 x emb inputs. Both of u's terms are made as its pairs are scored
// (emb x hidden each): nothing but h has a row per vertex. Host tensors.
struct FactoredPairs {
  Tensor host;            // h's copy when h lives off the CPU (empty otherwise)
  ConstMatView h;         // n x emb: the embeddings (factor's own on the CPU, not a copy)
  Tensor w_u, w_v, w_uv;  // emb x hidden each
  std::vector<float> b1;  // hidden
  std::vector<float> w2;  // hidden: the output layer
  float b2 = 0.f;
  // out[v] = the logit of pair (u, v) for every v < n; deterministic. scratch: resized as needed.
  void score_row(int32_t u, float* out, std::vector<float>& scratch) const;
  // out[i] = the logit of pair (u, v[i]) for i < k: u's candidates alone (a positive and its
  // sampled negatives); v null: the rows 0..k-1. One kernel (kernels::factored_pair_logits) for
  // both: a pair scores alike in a row, in a list, or alone.
  void score_list(int32_t u, const int32_t* v, int64_t k, float* out,
                  std::vector<float>& scratch) const;
  // m (emb x hidden) = W_v + diag(h_u) W_uv: what the pairs of source u multiply their h_v by.
  void source_weights(int32_t u, float* m) const;
};

// Scores vertex pairs from embeddings: an MLP on [h_u | h_v | h_u * h_v], giving `classes`
// logits per pair (1 for link prediction). EvolveGCN's classifier sees [h_u | h_v] only; the
// element-wise product lets a small MLP express "u and v are alike", which a concatenation
// alone learns slowly. Scoring is one fused op (pair_mlp) over the MLP's parameters; forward()
// runs the same MLP as ops on features already concatenated.
class PairClassifier : public Module {
 public:
  PairClassifier(int64_t emb_dim, int64_t hidden, int64_t classes);
  // Logits for pairs of rows: u's i-th end and v's i-th end.
  Var score(ForwardContext& ctx, const PairEnd& u, const PairEnd& v);
  // Logits for pairs (src[i], dst[i]) of rows of h.
  Var score(ForwardContext& ctx, const Var& h, const std::vector<int32_t>& src,
            const std::vector<int32_t>& dst);
  // Logits for pairs whose endpoint rows are already gathered (h_u, h_v row by row).
  Var score_rows(ForwardContext& ctx, const Var& hu, const Var& hv);
  Var forward(ForwardContext& ctx, const Var& x) override;  // x = [h_u | h_v | h_u * h_v] rows
  // The factored form over embeddings h (every vertex; any device); one logit only (Error
  // otherwise). On the CPU it reads h in place: h must outlive the result.
  FactoredPairs factor(const Tensor& h);

 private:
  Linear& lin1_;
  Linear& lin2_;
};

// x^T-free products used by EvolveGCN: op(a) * op(b) with optional transposes, differentiable.
Var matmul_t(const Var& a, const Var& b, bool trans_a, bool trans_b);
// A leaf holding a copy of x's value: the tape stops here.
Var detach(const Var& x);

}  // namespace dgnn
