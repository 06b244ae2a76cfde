// The fused pair-scoring MLP: hand-computed pairs, the CPU kernel against the same MLP composed
// of plain kernels (kernels/pair_mlp_composed.hpp) over many blocks, indexed and unindexed ends,
// one shared table, several logits per pair, and the same bits for any thread count.
#include <omp.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/kernels/kernels.hpp"
#include "dgnn/kernels/pair_mlp_composed.hpp"

using namespace dgnn;

namespace {

std::vector<float> uniform(Rng& rng, size_t n, float scale) {
  std::vector<float> v(n);
  for (float& x : v) x = scale * (2 * rng.uniform() - 1);
  return v;
}

// One problem: tables, indices, weights and an upstream gradient, with every output buffer.
struct Problem {
  int64_t d, h, c, pairs, nu, nv;
  bool index_u, index_v, one_table;
  std::vector<float> hu, hv, w1, b1, w2, b2, dlogits;
  std::vector<int32_t> u, v;

  Problem(uint64_t seed, int64_t d_, int64_t h_, int64_t c_, int64_t pairs_, int64_t table_rows,
          bool iu, bool iv, bool one)
      : d(d_), h(h_), c(c_), pairs(pairs_), index_u(iu), index_v(iv), one_table(one) {
    Rng rng(seed);
    nu = iu ? table_rows : pairs;
    nv = one ? nu : iv ? table_rows + 3 : pairs;
    hu = uniform(rng, size_t(nu * d), 1.f);
    hv = one ? hu : uniform(rng, size_t(nv * d), 1.f);
    w1 = uniform(rng, size_t(3 * d * h), 0.5f);
    b1 = uniform(rng, size_t(h), 0.3f);
    w2 = uniform(rng, size_t(h * c), 0.5f);
    b2 = uniform(rng, size_t(c), 0.3f);
    dlogits = uniform(rng, size_t(pairs * c), 1.f);
    // Skewed targets, so that some rows collect many pairs (as a hub vertex does).
    for (int64_t i = 0; i < pairs && iu; ++i)
      u.push_back(int32_t(rng.uniform() < 0.3f ? 0 : rng.next() % uint64_t(nu)));
    for (int64_t i = 0; i < pairs && iv; ++i) v.push_back(int32_t(rng.next() % uint64_t(nv)));
  }
  kernels::PairMlp mlp() const {
    kernels::PairMlp p;
    p.hu = {hu.data(), nu, d, d};
    p.u = index_u ? u.data() : nullptr;
    p.hv = {one_table ? hu.data() : hv.data(), nv, d, d};
    p.v = index_v ? v.data() : nullptr;
    p.pairs = pairs;
    p.w1 = {w1.data(), 3 * d, h, h};
    p.b1 = b1.data();
    p.w2 = {w2.data(), h, c, c};
    p.b2 = b2.data();
    return p;
  }
};

// Every output of a forward and backward; the gradients start from nonzero values, so that
// accumulation (+=) is checked too.
struct Outputs {
  std::vector<float> logits, dhu, dhv, dw1, db1, dw2, db2;
};

Outputs run(const Problem& pr, bool fused) {
  Outputs o;
  const kernels::PairMlp p = pr.mlp();
  o.logits.assign(size_t(pr.pairs * pr.c), -5.f);
  o.dhu.assign(size_t(pr.nu * pr.d), 0.25f);
  o.dhv.assign(size_t(pr.nv * pr.d), -0.5f);
  o.dw1.assign(size_t(3 * pr.d * pr.h), 1.f);
  o.db1.assign(size_t(pr.h), 2.f);
  o.dw2.assign(size_t(pr.h * pr.c), -1.f);
  o.db2.assign(size_t(pr.c), 0.5f);
  const MatView logits{o.logits.data(), pr.pairs, pr.c, pr.c};
  const ConstMatView dl{pr.dlogits.data(), pr.pairs, pr.c, pr.c};
  // One table: both ends' gradients go to one buffer, as the autograd op passes them.
  float* dv = pr.one_table ? o.dhu.data() : o.dhv.data();
  const MatView dhu{o.dhu.data(), pr.nu, pr.d, pr.d}, dhv{dv, pr.nv, pr.d, pr.d};
  const MatView dw1{o.dw1.data(), 3 * pr.d, pr.h, pr.h}, dw2{o.dw2.data(), pr.h, pr.c, pr.c};
  if (fused) {
    kernels::pair_mlp_forward(Device::cpu, p, logits);
    kernels::pair_mlp_backward(Device::cpu, p, dl, dhu, dhv, dw1, o.db1.data(), dw2, o.db2.data());
  } else {
    kernels::pair_mlp_forward_composed(Device::cpu, p, logits);
    kernels::pair_mlp_backward_composed(Device::cpu, p, dl, dhu, dhv, dw1, o.db1.data(), dw2,
                                        o.db2.data());
  }
  return o;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want,
                 const std::string& what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(what << "[" << i << "]: " << got[i] << " vs " << want[i]);
    REQUIRE(std::fabs(double(got[i]) - want[i]) <= 1e-4 + 1e-4 * std::fabs(double(want[i])));
  }
}

}  // namespace

TEST_CASE("pair_mlp on hand-computed pairs", "[kernels][pair_mlp]") {
  // D = H = C = 1, one table h = [2, 3]; W1 = [1, 1, 1], b1 = -9, W2 = 2, b2 = 1.
  // Pair (0, 1): x = [2, 3, 6], z = 2, logit 5. Pair (1, 1): [3, 3, 9], z = 6, logit 13.
  // Pair (0, 0): [2, 2, 4], z = -1 -> relu 0, logit 1 (and no gradient through it).
  const std::vector<float> h = {2, 3}, w1 = {1, 1, 1}, b1 = {-9}, w2 = {2}, b2 = {1};
  const std::vector<int32_t> u = {0, 1, 0}, v = {1, 1, 0};
  kernels::PairMlp p;
  p.hu = p.hv = {h.data(), 2, 1, 1};
  p.u = u.data();
  p.v = v.data();
  p.pairs = 3;
  p.w1 = {w1.data(), 3, 1, 1};
  p.b1 = b1.data();
  p.w2 = {w2.data(), 1, 1, 1};
  p.b2 = b2.data();
  std::vector<float> logits(3, -1.f);
  kernels::pair_mlp_forward(Device::cpu, p, {logits.data(), 3, 1, 1});
  CHECK(logits == std::vector<float>{5, 13, 1});

  // dlogits = 1: dW2 = sum a = 8, db2 = 3, dz = [2, 2, 0], db1 = 4,
  // dW1 = 2 [2, 3, 6] + 2 [3, 3, 9] = [10, 12, 30];
  // d h_u = dz (W1a + W1c h_v): pair 0 -> h[0] += 8, pair 1 -> h[1] += 8;
  // d h_v = dz (W1b + W1c h_u): pair 0 -> h[1] += 6, pair 1 -> h[1] += 8.
  const std::vector<float> dl = {1, 1, 1};
  std::vector<float> dh = {0, 0}, dw1 = {0, 0, 0}, db1 = {0}, dw2 = {0}, db2 = {0};
  const MatView dhv{dh.data(), 2, 1, 1};
  kernels::pair_mlp_backward(Device::cpu, p, {dl.data(), 3, 1, 1}, dhv, dhv, {dw1.data(), 3, 1, 1},
                             db1.data(), {dw2.data(), 1, 1, 1}, db2.data());
  CHECK(dw2[0] == 8);
  CHECK(db2[0] == 3);
  CHECK(db1[0] == 4);
  CHECK(dw1 == std::vector<float>{10, 12, 30});
  CHECK(dh == std::vector<float>{8, 22});
}

TEST_CASE("pair_mlp fused equals the composed kernels", "[kernels][pair_mlp]") {
  struct Case {
    const char* name;
    int64_t d, h, c, pairs, rows;
    bool iu, iv, one;
  };
  // 700 pairs span three blocks of the fused kernel (the last one short); 37 fit in one.
  const Case cases[] = {
      {"one table, indexed", 8, 6, 1, 700, 40, true, true, true},
      {"two tables, indexed", 5, 7, 3, 700, 25, true, true, false},
      {"first end unindexed", 4, 9, 1, 700, 30, false, true, false},
      {"both unindexed", 6, 5, 2, 37, 0, false, false, false},
      {"fewer pairs than a block", 3, 4, 1, 37, 50, true, true, true},
  };
  uint64_t seed = 1;
  for (const Case& cs : cases) {
    INFO(cs.name);
    const Problem pr(seed++, cs.d, cs.h, cs.c, cs.pairs, cs.rows, cs.iu, cs.iv, cs.one);
    const Outputs got = run(pr, true), want = run(pr, false);
    check_close(got.logits, want.logits, "logits");
    check_close(got.dhu, want.dhu, "dhu");
    check_close(got.dhv, want.dhv, "dhv");
    check_close(got.dw1, want.dw1, "dW1");
    check_close(got.db1, want.db1, "db1");
    check_close(got.dw2, want.dw2, "dW2");
    check_close(got.db2, want.db2, "db2");
  }
}

TEST_CASE("pair_mlp gives the same bits on one thread and on several", "[kernels][pair_mlp]") {
  // Enough pairs x width that the gradient rows take the threaded scatter path.
  const Problem pr(7, 8, 8, 1, 5000, 300, true, true, true);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const Outputs one = run(pr, true);
  omp_set_num_threads(3);
  const Outputs three = run(pr, true);
  omp_set_num_threads(saved);
  CHECK(one.logits == three.logits);
  CHECK(one.dhu == three.dhu);
  CHECK(one.dw1 == three.dw1);
  CHECK(one.db1 == three.db1);
  CHECK(one.dw2 == three.dw2);
  CHECK(one.db2 == three.db2);
}

TEST_CASE("pair_mlp's backward in chunks gives the same bits on one thread and on several",
          "[kernels][pair_mlp]") {
  // 40000 pairs: the backward's chunks of 16384 pairs, the last one short; the table rows each
  // get additions from every chunk.
  const Problem pr(11, 6, 5, 2, 40000, 97, true, true, false);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const Outputs one = run(pr, true);
  omp_set_num_threads(2);
  const Outputs two = run(pr, true);
  omp_set_num_threads(saved);
  const Outputs composed = run(pr, false);
  CHECK(one.dhu == two.dhu);
  CHECK(one.dhv == two.dhv);
  CHECK(one.dw1 == two.dw1);
  CHECK(one.db1 == two.db1);
  CHECK(one.dw2 == two.dw2);
  CHECK(one.db2 == two.db2);
  check_close(two.dhu, composed.dhu, "dhu");
  check_close(two.dhv, composed.dhv, "dhv");
  check_close(two.dw1, composed.dw1, "dW1");
  check_close(two.dw2, composed.dw2, "dW2");
}

TEST_CASE("pair_mlp rejects mismatched shapes", "[kernels][pair_mlp]") {
  const Problem pr(3, 4, 5, 1, 10, 6, true, true, false);
  kernels::PairMlp p = pr.mlp();
  std::vector<float> logits(10);
  p.w1.rows = 11;  // not 3 x 4
  CHECK_THROWS_AS(kernels::pair_mlp_forward(Device::cpu, p, {logits.data(), 10, 1, 1}), ShapeError);
  p = pr.mlp();
  p.u = nullptr;  // without an index the table needs one row per pair
  CHECK_THROWS_AS(kernels::pair_mlp_forward(Device::cpu, p, {logits.data(), 10, 1, 1}), ShapeError);
  p = pr.mlp();
  CHECK_THROWS_AS(kernels::pair_mlp_forward(Device::cpu, p, {logits.data(), 9, 1, 1}), ShapeError);
}

TEST_CASE("factored_pair_logits: the pair MLP's logits, the same bits wherever a pair stands",
          "[kernels][pair_mlp]") {
  Rng rng(23);
  // Widths with and without a tail beyond the 16-wide chunks; lists shorter and longer than a
  // block of candidates.
  for (int64_t d : {1, 7, 16}) {
    for (int64_t hid : {5, 16, 40, 64}) {
      const int64_t n = 50;
      const std::vector<float> h = uniform(rng, size_t(n * d), 1.f);
      const std::vector<float> m = uniform(rng, size_t(d * hid), 1.f);
      const std::vector<float> au = uniform(rng, size_t(hid), 1.f);
      const std::vector<float> w2 = uniform(rng, size_t(hid), 1.f);
      const float b2 = 0.25f;
      const ConstMatView hv(h.data(), n, d, d);
      for (int64_t k : {0, 1, 3, 4, 9, 50}) {
        INFO("d " << d << ", hidden " << hid << ", k " << k);
        std::vector<int32_t> v(static_cast<size_t>(k));
        for (int32_t& x : v) x = int32_t(rng.below(uint64_t(n)));
        std::vector<float> out(size_t(k), NAN);
        kernels::factored_pair_logits(Device::cpu, hv, hid, m.data(), au.data(), w2.data(), b2,
                                      v.data(), k, out.data());
        for (int64_t i = 0; i < k; ++i) {
          // The definition, in double.
          double logit = b2;
          for (int64_t c = 0; c < hid; ++c) {
            double z = double(au[size_t(c)]);
            for (int64_t j = 0; j < d; ++j)
              z += double(h[size_t(v[size_t(i)] * d + j)]) * m[size_t(j * hid + c)];
            logit += double(w2[size_t(c)]) * std::max(z, 0.0);
          }
          CHECK(out[size_t(i)] == Approx(logit).margin(1e-5));
          // Alone, the candidate gets the same bits as in the list.
          float alone = NAN;
          kernels::factored_pair_logits(Device::cpu, hv, hid, m.data(), au.data(), w2.data(), b2,
                                        &v[size_t(i)], 1, &alone);
          CHECK(alone == out[size_t(i)]);
        }
        // No index: the rows 0..k-1.
        std::vector<int32_t> iota(static_cast<size_t>(k));
        for (int64_t i = 0; i < k; ++i) iota[size_t(i)] = int32_t(i);
        std::vector<float> rows(static_cast<size_t>(k)), listed(static_cast<size_t>(k));
        kernels::factored_pair_logits(Device::cpu, hv, hid, m.data(), au.data(), w2.data(), b2,
                                      nullptr, k, rows.data());
        kernels::factored_pair_logits(Device::cpu, hv, hid, m.data(), au.data(), w2.data(), b2,
                                      iota.data(), k, listed.data());
        CHECK(rows == listed);
      }
    }
  }
  const std::vector<float> h(4);
  CHECK_THROWS_AS(
      kernels::factored_pair_logits(Device::cpu, ConstMatView(h.data(), 2, 2, 2), 0, h.data(),
                                    h.data(), h.data(), 0.f, nullptr, 1, nullptr),
      ShapeError);
}

TEST_CASE("softplus_sum: binary cross-entropy terms to 1e-6 of libm's", "[kernels][loss]") {
  Rng rng(5);
  for (int64_t n : {0, 1, 15, 16, 17, 64, 65, 1000}) {
    for (float scale : {0.01f, 1.f, 30.f, 200.f}) {
      const std::vector<float> x = uniform(rng, size_t(n), scale);
      for (float sign : {1.f, -1.f}) {
        double ref = 0;
        for (float xi : x) {
          const double z = double(sign) * xi;
          ref += std::max(z, 0.0) + std::log1p(std::exp(-std::fabs(z)));
        }
        INFO("n " << n << ", scale " << scale << ", sign " << sign);
        CHECK(kernels::softplus_sum(Device::cpu, x.data(), n, sign) ==
              Approx(ref).epsilon(1e-6).margin(1e-7));
      }
    }
  }
  // Exact at the extremes: log 2 at 0, z itself far above, 0 far below.
  const std::vector<float> e{0.f, 100.f, -100.f};
  CHECK(kernels::softplus_sum(Device::cpu, e.data(), 1, 1.f) ==
        Approx(std::log(2.0)).epsilon(1e-7));
  CHECK(kernels::softplus_sum(Device::cpu, e.data() + 1, 1, 1.f) == Approx(100.0));
  CHECK(kernels::softplus_sum(Device::cpu, e.data() + 2, 1, 1.f) < 1e-40);
}
