// The temporal models' part of the planner's calibration (plan/calibration.hpp): the fused ops'
// rates and the seconds of one real training step, timed on this machine.
#include <omp.h>

#include "dgnn/gnn/core/graph_view.hpp"
#include "dgnn/gnn/core/loss.hpp"
#include "dgnn/kernels/kernels.hpp"
#include "dgnn/plan/calibration.hpp"

namespace dgnn::perf {

Rates time_fused_ops(int threads, int64_t n, int64_t rows, int64_t h, int64_t e, int64_t ch,
                     int64_t pairs) {
  omp_set_num_threads(threads);
  const Device cpu = Device::cpu;
  auto filled = [](int64_t r, int64_t c, uint64_t seed) {
    Tensor t(r, c);
    uint64_t x = seed;
    for (int64_t i = 0; i < t.numel(); ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      t.data()[i] = float(int64_t(x >> 40) % 2001 - 1000) / 500.f;  // both signs, |x| <= 2
    }
    return t;
  };
  Rates r;
  {
    const Tensor gates = filled(rows, 4 * h, 1), c0 = filled(rows, h, 2), dh = filled(rows, h, 3);
    Tensor hh(rows, h), c(rows, h), dg(rows, 4 * h), dc(rows, h);
    const double x = double(rows * h);
    r.lstm_fwd = x / sustained_seconds([&] {
                   kernels::lstm_cell_forward(cpu, gates.view(), c0.view(), hh.view(), c.view());
                 });
    r.lstm_bwd = x / sustained_seconds([&] {
                   kernels::lstm_cell_backward(cpu, gates.view(), c0.view(), dh.view(), dh.view(),
                                               dg.view(), dc.view(), false);
                 });
  }
  {
    const Tensor xg = filled(rows, 3 * h, 4), hg = filled(rows, 3 * h, 5), h0 = filled(rows, h, 6);
    Tensor out(rows, h), dx(rows, 3 * h), dhg(rows, 3 * h), dh0(rows, h);
    const double x = double(rows * h);
    r.gru_fwd = x / sustained_seconds([&] {
                  kernels::gru_cell_forward(cpu, xg.view(), hg.view(), h0.view(), out.view());
                });
    r.gru_bwd = x / sustained_seconds([&] {
                  kernels::gru_cell_backward(cpu, xg.view(), hg.view(), h0.view(), out.view(),
                                             dx.view(), dhg.view(), dh0.view(), false);
                });
  }
  {
    const Tensor table = filled(n, e, 7), w1 = filled(3 * e, ch, 8), b1 = filled(1, ch, 9),
                 w2 = filled(ch, 1, 10), b2 = filled(1, 1, 11), dl = filled(pairs, 1, 12);
    std::vector<int32_t> u(static_cast<size_t>(pairs)), v(static_cast<size_t>(pairs));
    uint64_t x = 13;
    for (int64_t i = 0; i < pairs; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      u[size_t(i)] = int32_t((x >> 33) % uint64_t(n));
      v[size_t(i)] = int32_t((x >> 13) % uint64_t(n));
    }
    kernels::PairMlp p;
    p.hu = p.hv = table.view();
    p.u = u.data(), p.v = v.data(), p.pairs = pairs;
    p.w1 = w1.view(), p.b1 = b1.data(), p.w2 = w2.view(), p.b2 = b2.data();
    Tensor logits(pairs, 1), dtable(n, e), dw1(3 * e, ch), db1(1, ch), dw2(ch, 1), db2(1, 1);
    r.pair_fwd = double(pairs) /
                 sustained_seconds([&] { kernels::pair_mlp_forward(cpu, p, logits.view()); });
    // Fetching pair ends: rows gathered by index, then scatter-added into the pair order.
    Tensor rows_out(pairs, e);
    r.gather = 2.0 * double(pairs * e) / sustained_seconds([&] {
                 kernels::gather_rows(cpu, table.view(), v.data(), pairs, rows_out.view());
                 kernels::scatter_add_rows(cpu, rows_out.view(), u.data(), pairs, dtable.view());
               });
    r.pair_bwd = double(pairs) / sustained_seconds([&] {
                   kernels::pair_mlp_backward(cpu, p, dl.view(), dtable.view(), dtable.view(),
                                              dw1.view(), db1.data(), dw2.view(), db2.data());
                 });
  }
  return r;
}

double time_real_step(TemporalKind kind, const std::vector<int64_t>& dims, int64_t hidden,
                      const Csr& snap, const PairBatch& pb, uint64_t seed, int threads) {
  omp_set_num_threads(threads);
  auto model = make_temporal_model(kind, dims);
  PairClassifier head(model->out_dim(), hidden, 1);
  model->reset_parameters(seed);
  head.reset_parameters(seed + 1);
  const GraphView view(snap);
  Tensor xt(snap.rows, dims.front());
  uint64_t r = seed + 17;
  for (int64_t i = 0; i < xt.numel(); ++i) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    xt.data()[i] = float(r >> 40) / float(1 << 24);
  }
  const Var x(std::move(xt));
  return sustained_seconds([&] {
    ForwardContext ctx{view, true, seed, 1};
    model->reset_state();
    const Var h = model->step(ctx, x);
    bce_with_logits(head.score(ctx, h, pb.src, pb.dst), pb.target, 1.0, pb.weight).backward();
  });
}

double time_real_forecast_step(TemporalKind kind, const std::vector<int64_t>& dims,
                               int64_t channels, const Csr& snap, uint64_t seed, int threads) {
  omp_set_num_threads(threads);
  auto model = make_temporal_model(kind, dims);
  Linear head(model->out_dim(), channels);
  model->reset_parameters(seed);
  head.reset_parameters(seed + 1);
  const GraphView view(snap);
  Tensor xt(snap.rows, dims.front()), yt(snap.rows, channels);
  uint64_t r = seed + 17;
  for (Tensor* t : {&xt, &yt})
    for (int64_t i = 0; i < t->numel(); ++i) {
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      t->data()[i] = float(r >> 40) / float(1 << 24);
    }
  const Var x(std::move(xt)), y(std::move(yt));
  return sustained_seconds([&] {
    ForwardContext ctx{view, true, seed, 1};
    model->reset_state();
    Var d = sub(head.forward(ctx, relu(model->step(ctx, x))), y);
    scale(sum(mul(d, d)), 1.f / float(d.value().numel())).backward();
  });
}

}  // namespace dgnn::perf
