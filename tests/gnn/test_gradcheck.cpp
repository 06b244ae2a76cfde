// The public gradient check for layer authors: every built-in layer passes it, and a layer that
// cuts the tape (its backward then disagrees with its forward) is caught and named.
#include <catch2/catch.hpp>

#include "dgnn/datasets/sbm.hpp"
#include "dgnn/gnn/core/gradcheck.hpp"
#include "dgnn/gnn/core/ops.hpp"
#include "dgnn/gnn/models/layers.hpp"

using namespace dgnn;

namespace {

SbmDataset small_graph() {
  SbmConfig c;
  c.vertices = 40;
  c.classes = 2;
  c.avg_degree = 4;
  c.feature_dim = 5;
  c.seed = 6;
  return generate_sbm(c);
}

// A layer whose output goes through a fresh Var: the tape stops there, so its parameter gets
// no gradient although the output depends on it.
struct CutsTheTape : Module {
  CutsTheTape(int64_t in, int64_t out) : w_(add_parameter("weight", in, out)) {}
  Var forward(ForwardContext& ctx, const Var& x) override {
    const Var h = aggregate(ctx.graph, matmul(x, w_), Norm::mean);
    return Var(h.value().clone());
  }
  Var& w_;
};

}  // namespace

TEST_CASE("check_layer_gradients: the built-in layers pass, a layer that cuts the tape fails") {
  const Dataset d = small_graph().to_dataset();
  GraphView g(d.graph.in);
  const Tensor x = Tensor::from_host(d.features.data(), d.num_vertices(), d.feature_dim);
  for (ModelKind kind : {ModelKind::gcn, ModelKind::sage, ModelKind::gin, ModelKind::gat}) {
    INFO(model_kind_name(kind));
    std::unique_ptr<Module> layer = builtin_layer(kind)(d.feature_dim, 4, 0);
    layer->reset_parameters(2);
    const GradCheckResult r = check_layer_gradients(*layer, g, x);
    INFO(r.worst);
    CHECK(r.ok());
    CHECK(r.checked > 64);
  }
  CutsTheTape bad(d.feature_dim, 3);
  bad.reset_parameters(1);
  GradCheckOptions opt;
  opt.check_input = false;
  const GradCheckResult r = check_layer_gradients(bad, g, x, opt);
  CHECK_FALSE(r.ok());
  CHECK(r.failed > 0);
  CHECK(r.worst.rfind("weight[", 0) == 0);
  CHECK(r.worst.find("analytic 0,") != std::string::npos);
}
