#pragma once
// Module: the base of every layer and model, built-in or a user's. A module declares its
// parameters and children in its constructor and writes forward() with ops only; backward,
// halo exchange, gradient averaging and the device come from the engine.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/gnn/core/autograd.hpp"
#include "dgnn/gnn/core/graph_view.hpp"
#include "dgnn/gnn/core/ops.hpp"

namespace dgnn {

// What a forward pass may depend on besides its input.
struct ForwardContext {
  const GraphView& graph;
  bool training = false;
  uint64_t seed = 0;
  uint64_t step = 0;  // optimiser step: dropout masks differ per step, identical across ranks
  uint64_t site = 0;  // next dropout site, handed out in call order
  // Mini-batch training: the sampled block each layer aggregates over (blocks[0] feeds the
  // first layer, whose x holds the input features of blocks[0]'s sources); empty when every
  // layer runs on `graph`.
  std::vector<const GraphView*> blocks = {};

  // The graph layer i aggregates over.
  const GraphView& layer_graph(size_t i) const {
    if (blocks.empty()) return graph;
    DGNN_CHECK(i < blocks.size(), ShapeError,
               "layer " + std::to_string(i) + " has no sampled block (" +
                   std::to_string(blocks.size()) + " blocks: give one fanout per layer)");
    return *blocks[i];
  }
  // A context for layer i: its graph, the same step and dropout sites (hand `site` back with
  // end_layer, so sites keep counting in call order across layers).
  ForwardContext layer(size_t i) const {
    return ForwardContext{layer_graph(i), training, seed, step, site};
  }
  void end_layer(const ForwardContext& inner) { site = inner.site; }

  // Dropout keyed by (seed, step, site, global vertex id): the same numbers on any rank count.
  // x must have one row per owned vertex (or per owned + halo vertex).
  Var dropout(const Var& x, float p) {
    if (x.rows() != graph.n_owned() && x.rows() != graph.n_owned() + graph.n_halo())
      throw ShapeError("ForwardContext::dropout: " + std::to_string(x.rows()) +
                       " rows, but masks are keyed by vertex: expected " +
                       std::to_string(graph.n_owned()) +
                       " (one per owned vertex); use "
                       "dgnn::dropout with your own row keys for other matrices");
    return dgnn::dropout(x, p, DropoutKey{seed, step, site++}, graph.global_ids_on(x.device()),
                         training);
  }
};

enum class Init : uint8_t { glorot, zeros, ones };

struct Parameter {
  std::string name;  // within its module, e.g. "weight"
  Var var;
  Init init;
  bool decay;  // weight decay applies (weights yes, biases no)
  // This parameter's own weight decay where `decay` (< 0: the optimiser's): GCNII's graph layers
  // decay 20x stronger than its linear layers.
  float weight_decay = -1.f;
};

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  virtual Var forward(ForwardContext& ctx, const Var& x) = 0;

  // Every parameter of this module and its children, depth-first in declaration order, with
  // dotted paths ("layers.0.weight"): the names checkpoints use.
  std::vector<std::pair<std::string, Parameter*>> named_parameters();
  std::vector<Parameter*> parameters();
  // Re-initialises every parameter from (seed, its name): independent of construction order.
  void reset_parameters(uint64_t seed);
  int64_t num_parameters();
  // Moves every parameter to `dev` (values kept; gradients start afresh there).
  void to(Device dev);

 protected:
  // Declares a rows x cols parameter (initialised by reset_parameters, glorot until then).
  Var& add_parameter(const std::string& name, int64_t rows, int64_t cols, Init init = Init::glorot,
                     bool decay = true);
  template <class M>
  M& add_module(const std::string& name, std::unique_ptr<M> m) {
    check_new_name("add_module", name, m == nullptr);
    M& ref = *m;
    children_.emplace_back(name, std::move(m));
    return ref;
  }

 private:
  // Error for an empty name, one already taken by a parameter or a child of this module (its
  // checkpoint entry and seeded initialisation would be shared), or a null child.
  void check_new_name(const char* fn, const std::string& name, bool null_child) const;
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Parameter*>>& out);
  std::vector<std::unique_ptr<Parameter>> params_;
  std::vector<std::pair<std::string, std::unique_ptr<Module>>> children_;
};

// Stable 64-bit hash of a string (std::hash differs between standard libraries).
uint64_t stable_hash(const std::string& s, uint64_t seed = 0);

// Fills t (fan_in = rows, fan_out = cols) from a seeded stream.
void init_tensor(Tensor& t, Init init, uint64_t seed);

}  // namespace dgnn
