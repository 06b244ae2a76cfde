// The pair-scoring MLP on the GPU (composed of the CUDA gathers, GEMMs and element-wise kernels)
// against the fused CPU kernel: one shared table with repeated rows, and an unindexed end,
// on strided views, with every gradient accumulated onto nonzero values.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "dgnn/common/hash_rng.hpp"
#include "gpu_test_util.hpp"
#include "dgnn/kernels/kernels.hpp"

using namespace dgnn;
using dgnn::test::check_close;
using dgnn::test::DeviceBuf;
using dgnn::test::HostMat;

TEST_CASE("gpu pair_mlp matches the cpu", "[gpu][kernels][pair_mlp]") {
  constexpr double kRel = 1e-4, kAbs = 1e-5;  // sums in other orders (GEMMs, scatter)
  Rng rng(31);
  const int64_t d = 12, h = 10, c = 2, rows = 50, pairs = 1000;
  for (bool unindexed_u : {false, true}) {
    const std::string what = unindexed_u ? "unindexed first end" : "one indexed table";
    const int64_t nu = unindexed_u ? pairs : rows;
    HostMat hu(nu, d, d + 3), hv(rows, d, d + 1), w1(3 * d, h, h + 2), w2(h, c, c + 1);
    hu.normal(rng, 1.f);
    hv.normal(rng, 1.f);
    w1.normal(rng, 0.3f);
    w2.normal(rng, 0.3f);
    std::vector<float> b1 = dgnn::test::uniform_vector(rng, size_t(h), -0.2f, 0.2f);
    std::vector<float> b2 = dgnn::test::uniform_vector(rng, size_t(c), -0.2f, 0.2f);
    std::vector<int32_t> u(static_cast<size_t>(pairs)), v(static_cast<size_t>(pairs));
    for (auto& x : u) x = int32_t(rng.below(uint64_t(rows)));
    for (auto& x : v) x = int32_t(rng.below(uint64_t(rows)));
    HostMat dl(pairs, c, c);
    dl.normal(rng, 1.f);
    // The indexed case reads both ends from hv (one table, one gradient buffer).
    const HostMat& first = unindexed_u ? hu : hv;
    DeviceBuf<float> d_first(first.v), d_hv(hv.v), d_w1(w1.v), d_w2(w2.v), d_b1(b1), d_b2(b2),
        d_dl(dl.v);
    DeviceBuf<int32_t> d_u(u), d_v(v);
    auto mlp = [&](bool gpu) {
      kernels::PairMlp p;
      p.hu = gpu ? first.cview(d_first) : first.cview();
      p.u = unindexed_u ? nullptr : gpu ? d_u.data() : u.data();
      p.hv = gpu ? hv.cview(d_hv) : hv.cview();
      p.v = gpu ? d_v.data() : v.data();
      p.pairs = pairs;
      p.w1 = gpu ? w1.cview(d_w1) : w1.cview();
      p.b1 = gpu ? d_b1.data() : b1.data();
      p.w2 = gpu ? w2.cview(d_w2) : w2.cview();
      p.b2 = gpu ? d_b2.data() : b2.data();
      return p;
    };

    HostMat logits(pairs, c, c + 2);
    HostMat want_logits = logits;
    kernels::pair_mlp_forward(Device::cpu, mlp(false), want_logits.view());
    DeviceBuf<float> d_logits(logits.v);
    kernels::pair_mlp_forward(Device::cuda, mlp(true), logits.view(d_logits));
    check_close(d_logits.download(), want_logits.v, kRel, kAbs, what + " logits");

    HostMat dfirst(first.rows, d, first.ld), dhv(rows, d, hv.ld), dw1(3 * d, h, h + 2),
        dw2(h, c, c + 1);
    for (HostMat* m : {&dfirst, &dhv, &dw1, &dw2}) m->uniform(rng, -1.f, 1.f);
    std::vector<float> db1(size_t(h), 0.5f), db2(size_t(c), -0.5f);
    HostMat want_dfirst = dfirst, want_dhv = dhv, want_dw1 = dw1, want_dw2 = dw2;
    std::vector<float> want_db1 = db1, want_db2 = db2;
    kernels::pair_mlp_backward(Device::cpu, mlp(false), dl.cview(), want_dfirst.view(),
                               unindexed_u ? want_dhv.view() : want_dfirst.view(), want_dw1.view(),
                               want_db1.data(), want_dw2.view(), want_db2.data());
    DeviceBuf<float> g_first(dfirst.v), g_hv(dhv.v), g_w1(dw1.v), g_w2(dw2.v), g_b1(db1), g_b2(db2);
    kernels::pair_mlp_backward(Device::cuda, mlp(true), dl.cview(d_dl), dfirst.view(g_first),
                               unindexed_u ? dhv.view(g_hv) : dfirst.view(g_first), dw1.view(g_w1),
                               g_b1.data(), dw2.view(g_w2), g_b2.data());
    check_close(g_first.download(), want_dfirst.v, kRel, kAbs, what + " d first end");
    check_close(g_hv.download(), want_dhv.v, kRel, kAbs, what + " d hv");
    check_close(g_w1.download(), want_dw1.v, kRel, kAbs, what + " dW1");
    check_close(g_w2.download(), want_dw2.v, kRel, kAbs, what + " dW2");
    check_close(g_b1.download(), want_db1, kRel, kAbs, what + " db1");
    check_close(g_b2.download(), want_db2, kRel, kAbs, what + " db2");
  }
}
