// The one dispatch point: checks shapes once for every backend, then turns the runtime Device
// into a call of that backend's implementation (DGNN_DISPATCH, kernels/backend.hpp); nothing
// outside kernels/ knows which backends exist.
//
// Most entry points are generated from kernels/kernel_list.def (at the end of this file): a
// kernel's whole dispatch is `if (checks::name(dev, args...)) return cpu:: or cuda::name(args...)`,
// so what is written here per kernel is its check, checks::name, declared from the same list
// (a check whose parameters drift from the kernel's does not compile). A check throws
// ShapeError for an invalid call and returns false when there is nothing to do (an empty
// shape: the kernel returns void, 0 or false without reaching a backend). The entries the list
// marks BY_HAND are written out below as they do more than check and forward.
#include <climits>
#include <string>
#include <type_traits>

#include "dgnn/common/error.hpp"
#include "dgnn/kernels/backend.hpp"
#include "dgnn/kernels/kernels.hpp"
#include "dgnn/kernels/minibatch_kernels.hpp"
#include "dgnn/kernels/pair_mlp_composed.hpp"
#include "dgnn/kernels/sample_block.hpp"

namespace dgnn::kernels {

namespace checks {
#define DGNN_KERNEL(ret, name, params, args) bool name DGNN_WITH_DEVICE params;
#define DGNN_HOST_KERNEL(ret, name, params, args) bool name DGNN_WITH_DEVICE params;
#include "dgnn/kernels/kernel_list.def"
}  // namespace checks

namespace {

std::string shape(int64_t rows, int64_t cols) {
  // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
  std::string s = "[";
  s += std::to_string(rows);
  s += " x ";
  s += std::to_string(cols);
  s += "]";
  return s;
}
std::string shape(ConstMatView v) {
  std::string s = shape(v.rows, v.cols);
  if (v.ld != v.cols) s.insert(s.size() - 1, ", ld " + std::to_string(v.ld));
  return s;
}

[[noreturn]] void mismatch(const char* fn, const char* na, const std::string& sa, const char* nb,
                           const std::string& sb, const char* rule) {
  throw ShapeError(std::string("kernels::") + fn + ": " + na + " is " + sa + " but " + nb + " is " +
                   sb + " (" + rule + ")");
}

// A view is usable when its extents are non-negative, rows do not overlap, and it has memory
// whenever it has elements.
void check_view(const char* fn, const char* name, ConstMatView v) {
  const bool ok = v.rows >= 0 && v.cols >= 0 && (v.rows <= 1 || v.ld >= v.cols) &&
                  (v.rows * v.cols == 0 || v.data != nullptr);
  if (!ok)
    throw ShapeError(std::string("kernels::") + fn + ": " + name + " is not a valid view " +
                     shape(v) + (v.data ? "" : " with no data"));
}

void check_same(const char* fn, const char* na, ConstMatView a, const char* nb, ConstMatView b) {
  check_view(fn, na, a);
  check_view(fn, nb, b);
  if (a.rows != b.rows || a.cols != b.cols)
    mismatch(fn, na, shape(a), nb, shape(b), "shapes must be equal");
}

void check_count(const char* fn, int64_t n) {
  if (n < 0)
    throw ShapeError(std::string("kernels::") + fn + ": negative length " + std::to_string(n));
}

void check_csr(const char* fn, Device dev, const CsrView& a, const char* name) {
  const std::string sa = shape(a.rows, a.cols);
  if (dev != Device::cpu && a.device_nnz < 0)
    throw ShapeError(std::string("kernels::") + fn + ": " + name + " " + sa + " on " +
                     device_name(dev) +
                     " has no device_nnz (make device views with kernels::DeviceCsr)");
  if (a.rows < 0 || a.cols < 0 || (a.rows > 0 && !a.offsets) || (a.nnz() > 0 && !a.indices))
    throw ShapeError(std::string("kernels::") + fn + ": " + name + " " + sa +
                     " is not a valid CSR view");
}

}  // namespace

// ---- memory ------------------------------------------------------------------------------

void* alloc(Device dev, size_t bytes) { DGNN_DISPATCH(alloc, bytes); }

void free(Device dev, void* p) noexcept {
  if (!p) return;
  // In a build without CUDA, alloc never succeeded on cuda: there is nothing to free.
  if (dev == Device::cuda && !kHaveCuda) return;
  DGNN_ON_DEVICE("free", cpu::free(p), cuda::free(p));
}

DeviceBlock sample_block(Device dev, const SampleGraph& g, const int64_t* dst, int64_t n_dst,
                         int fanout, bool replace, uint64_t seed, uint64_t epoch, int layer,
                         int32_t* local_of, int64_t* first_of) {
  if (n_dst < 0 || g.in.rows != g.in.cols)
    throw ShapeError("kernels::sample_block: " + std::to_string(n_dst) + " destinations of a " +
                     shape(g.in.rows, g.in.cols) + " graph");
  if (dev == Device::cpu)
    throw DeviceError("kernels::sample_block on cpu: the CPU samples with sampler/NeighborSampler");
  DGNN_CUDA_ONLY("sample_block", return cuda::sample_block(g, dst, n_dst, fanout, replace, seed,
                                                           epoch, layer, local_of, first_of));
}

void trim_host_heap() noexcept { (void)cpu::trim_free_heap(); }

void release_cached(Device dev) noexcept {
  if (dev == Device::cpu) cpu::release_cached();
  DGNN_IF_CUDA(if (dev == Device::cuda) cuda::release_cached();)
}

void synchronize(Device dev) {
  (void)dev;  // the CPU's kernels return done
  DGNN_IF_CUDA(if (dev == Device::cuda) cuda::synchronize();)
}

void copy(Device dst_dev, void* dst, Device src_dev, const void* src, size_t bytes) {
  if (bytes == 0) return;
  if (!dst || !src)
    throw Error("kernels::copy: null pointer for " + std::to_string(bytes) + " bytes");
  if (dst_dev == Device::cpu && src_dev == Device::cpu) return cpu::copy(dst, src, bytes);
  // One device per process: cuda <-> cuda is a device-to-device copy on the context stream.
  DGNN_IF_CUDA(return cuda::copy(dst, src, bytes,
                                 src_dev == Device::cpu   ? 0
                                 : dst_dev == Device::cpu ? 1
                                                          : 2);)
  no_backend(dst_dev == Device::cpu ? src_dev : dst_dev, "copy");
}

bool checks::fill(Device dev, float* x, int64_t n, float value) {
  check_count("fill", n);
  if (n == 0) return false;
  return true;
}

bool checks::copy_view(Device dev, ConstMatView src, MatView dst, bool accumulate) {
  check_same("copy_view", "src", src, "dst", dst);
  if (src.rows * src.cols == 0) return false;
  return true;
}

// ---- sparse ------------------------------------------------------------------------------

bool checks::spmm(Device dev, const CsrView& a, ConstMatView x, MatView y, bool accumulate) {
  check_csr("spmm", dev, a, "A");
  const std::string sa = shape(a.rows, a.cols);
  check_view("spmm", "X", x);
  check_view("spmm", "Y", y);
  if (a.cols != x.rows) mismatch("spmm", "A", sa, "X", shape(x), "A.cols must equal X.rows");
  if (y.rows != a.rows || y.cols != x.cols)
    mismatch("spmm", "Y", shape(y), "A X", shape(a.rows, x.cols), "Y must be A.rows x X.cols");
  if (y.rows * y.cols == 0) return false;
  return true;
}

bool checks::spmm_span(Device dev, const CsrView& a, const int32_t* begin, const int32_t* end,
                       int64_t col_base, ConstMatView x, MatView y) {
  check_csr("spmm_span", dev, a, "A");
  check_view("spmm_span", "X", x);
  check_view("spmm_span", "Y", y);
  if (col_base < 0) throw ShapeError("kernels::spmm_span: negative column base");
  if (y.rows != a.rows)
    mismatch("spmm_span", "Y", shape(y), "A", shape(a.rows, a.cols), "Y must have A.rows rows");
  if (y.cols != x.cols)
    mismatch("spmm_span", "Y", shape(y), "X", shape(x), "Y and X must have as many columns");
  (void)begin, (void)end;
  if (y.rows * y.cols == 0) return false;
  return true;
}

bool checks::spmm_extreme(Device dev, const CsrView& a, ConstMatView x, MatView y, int32_t* arg,
                          bool is_max) {
  check_csr("spmm_extreme", dev, a, "A");
  check_view("spmm_extreme", "X", x);
  check_view("spmm_extreme", "Y", y);
  const std::string sa = shape(a.rows, a.cols);
  if (a.cols != x.rows)
    mismatch("spmm_extreme", "A", sa, "X", shape(x), "A.cols must equal X.rows");
  if (y.rows != a.rows || y.cols != x.cols)
    mismatch("spmm_extreme", "Y", shape(y), "A X", shape(a.rows, x.cols),
             "Y must be A.rows x X.cols");
  if (a.cols > INT32_MAX)
    throw ShapeError("kernels::spmm_extreme: A " + sa + " has 2^31 columns or more");
  if (y.rows * y.cols == 0) return false;
  return true;
}

bool checks::spmm_extreme_backward(Device dev, const CsrView& at, int64_t row_base,
                                   const int32_t* arg, ConstMatView gy, MatView gx,
                                   bool accumulate) {
  check_csr("spmm_extreme_backward", dev, at, "At");
  check_view("spmm_extreme_backward", "gY", gy);
  check_view("spmm_extreme_backward", "gX", gx);
  const std::string sa = shape(at.rows, at.cols);
  if (at.cols != gy.rows)
    mismatch("spmm_extreme_backward", "At", sa, "gY", shape(gy), "At.cols must equal gY.rows");
  if (gx.rows != at.rows || gx.cols != gy.cols)
    mismatch("spmm_extreme_backward", "gX", shape(gx), "At gY", shape(at.rows, gy.cols),
             "gX must be At.rows x gY.cols");
  if (row_base < 0 || row_base + at.rows > int64_t(INT32_MAX))
    throw ShapeError("kernels::spmm_extreme_backward: rows from " + std::to_string(row_base) +
                     " past 2^31");
  if (gx.rows * gx.cols == 0) return false;
  if (!arg && gy.rows > 0)
    throw ShapeError("kernels::spmm_extreme_backward: no arg array for gY " + shape(gy));
  return true;
}

// ---- attention ---------------------------------------------------------------------------

namespace {

// A whole CSR (entries numbered from 0) whose edge matrices have `heads` columns.
void check_edges(const char* fn, Device dev, const CsrView& a) {
  check_csr(fn, dev, a, "A");
  // The edge kernels index edge rows by entry number: a slice past row 0 would write past them.
  if ((dev == Device::cpu && a.rows > 0 && a.offsets[0] != 0) ||
      (dev != Device::cpu && a.device_row_begin != 0))
    throw ShapeError(std::string("kernels::") + fn + ": A must be a whole matrix (a row slice's "
                     "entries do not start at edge row 0)");
}

void check_edge_matrix(const char* fn, const char* name, const CsrView& a, ConstMatView e,
                       int64_t heads) {
  check_view(fn, name, e);
  if (e.rows != a.nnz() || e.cols != heads)
    mismatch(fn, name, shape(e), "A's entries x heads", shape(a.nnz(), heads),
             "one row per entry of A");
}

void check_heads(const char* fn, const char* name, ConstMatView x, int64_t heads) {
  if (heads < 1 || x.cols % heads != 0)
    mismatch(fn, name, shape(x), "heads", std::to_string(heads),
             "columns must split evenly into the heads");
}

}  // namespace

bool checks::edge_add(Device dev, const CsrView& a, ConstMatView src, ConstMatView dst,
                      MatView out) {
  check_edges("edge_add", dev, a);
  check_view("edge_add", "src", src);
  check_view("edge_add", "dst", dst);
  const int64_t h = out.cols;
  check_edge_matrix("edge_add", "out", a, out, h);
  if (src.rows != a.cols || src.cols != h)
    mismatch("edge_add", "src", shape(src), "A.cols x heads", shape(a.cols, h), "src per column");
  if (dst.rows != a.rows || dst.cols != h)
    mismatch("edge_add", "dst", shape(dst), "A.rows x heads", shape(a.rows, h), "dst per row");
  if (out.rows * out.cols == 0) return false;
  return true;
}

bool checks::sddmm(Device dev, const CsrView& a, ConstMatView x, ConstMatView y, MatView out) {
  check_edges("sddmm", dev, a);
  check_view("sddmm", "X", x);
  check_view("sddmm", "Y", y);
  const int64_t h = out.cols;
  check_edge_matrix("sddmm", "out", a, out, h);
  check_heads("sddmm", "X", x, h);
  if (x.rows != a.rows) mismatch("sddmm", "X", shape(x), "A", shape(a.rows, a.cols), "X per row");
  if (y.rows != a.cols || y.cols != x.cols)
    mismatch("sddmm", "Y", shape(y), "A.cols x X.cols", shape(a.cols, x.cols), "Y per column");
  if (out.rows * out.cols == 0) return false;
  return true;
}

bool checks::edge_softmax(Device dev, const CsrView& a, ConstMatView s, MatView out) {
  check_edges("edge_softmax", dev, a);
  check_edge_matrix("edge_softmax", "S", a, s, s.cols);
  check_same("edge_softmax", "S", s, "out", out);
  if (out.rows * out.cols == 0) return false;
  return true;
}

bool checks::edge_softmax_backward(Device dev, const CsrView& a, ConstMatView alpha,
                                   ConstMatView dalpha, MatView ds, bool accumulate) {
  check_edges("edge_softmax_backward", dev, a);
  check_edge_matrix("edge_softmax_backward", "alpha", a, alpha, alpha.cols);
  check_same("edge_softmax_backward", "alpha", alpha, "dalpha", dalpha);
  check_same("edge_softmax_backward", "alpha", alpha, "ds", ds);
  if (ds.rows * ds.cols == 0) return false;
  return true;
}

bool checks::spmm_heads(Device dev, const CsrView& a, ConstMatView w, ConstMatView x, MatView y,
                        bool accumulate) {
  check_edges("spmm_heads", dev, a);
  check_edge_matrix("spmm_heads", "W", a, w, w.cols);
  check_view("spmm_heads", "X", x);
  check_view("spmm_heads", "Y", y);
  check_heads("spmm_heads", "X", x, w.cols);
  if (x.rows != a.cols) mismatch("spmm_heads", "A", shape(a.rows, a.cols), "X", shape(x), "A.cols must equal X.rows");
  if (y.rows != a.rows || y.cols != x.cols)
    mismatch("spmm_heads", "Y", shape(y), "A X", shape(a.rows, x.cols), "Y must be A.rows x X.cols");
  if (y.rows * y.cols == 0) return false;
  return true;
}

bool checks::edge_row_sum(Device dev, const CsrView& a, ConstMatView w, MatView out,
                          bool accumulate) {
  check_edges("edge_row_sum", dev, a);
  check_edge_matrix("edge_row_sum", "W", a, w, w.cols);
  check_view("edge_row_sum", "out", out);
  if (out.rows != a.rows || out.cols != w.cols)
    mismatch("edge_row_sum", "out", shape(out), "A.rows x heads", shape(a.rows, w.cols), "one row per row of A");
  if (out.rows * out.cols == 0) return false;
  return true;
}

// ---- dense -------------------------------------------------------------------------------

bool checks::gemm(Device dev, bool trans_a, bool trans_b, float alpha, ConstMatView a,
                  ConstMatView b, float beta, MatView c) {
  check_view("gemm", "A", a);
  check_view("gemm", "B", b);
  check_view("gemm", "C", c);
  const int64_t m = trans_a ? a.cols : a.rows, ka = trans_a ? a.rows : a.cols;
  const int64_t kb = trans_b ? b.cols : b.rows, n = trans_b ? b.rows : b.cols;
  const char* na = trans_a ? "A^T" : "A";
  const char* nb = trans_b ? "B^T" : "B";
  if (ka != kb) mismatch("gemm", na, shape(m, ka), nb, shape(kb, n), "inner sizes must agree");
  if (c.rows != m || c.cols != n)
    mismatch("gemm", "C", shape(c), "op(A) op(B)", shape(m, n), "C must be the product's shape");
  for (int64_t extent : {m, n, ka, a.ld, b.ld, c.ld})
    if (extent > INT_MAX)
      throw ShapeError("kernels::gemm: extent " + std::to_string(extent) +
                       " exceeds the 32-bit range BLAS takes");
  return true;
}

// ---- element-wise ------------------------------------------------------------------------

bool checks::unary(Device dev, Unary op, const float* x, float* y, int64_t n, float alpha) {
  check_count("unary", n);
  if (n == 0) return false;
  return true;
}

bool checks::unary_backward(Device dev, Unary op, const float* x, const float* y, const float* dy,
                            float* dx, int64_t n, float alpha, bool accumulate) {
  check_count("unary_backward", n);
  if (n == 0) return false;
  return true;
}

bool checks::axpby(Device dev, int64_t n, float a, const float* x, float b, float* y) {
  check_count("axpby", n);
  if (n == 0) return false;
  return true;
}

bool checks::mul(Device dev, int64_t n, const float* x, const float* y, float* z, bool accumulate) {
  check_count("mul", n);
  if (n == 0) return false;
  return true;
}

bool checks::add_row_vector(Device dev, MatView y, const float* bias) {
  check_view("add_row_vector", "Y", y);
  if (y.rows * y.cols == 0) return false;
  return true;
}

bool checks::column_sum(Device dev, ConstMatView x, float* out, bool accumulate) {
  check_view("column_sum", "X", x);
  if (x.cols == 0) return false;
  return true;
}

bool checks::sum(Device dev, const float* x, int64_t n) {
  check_count("sum", n);
  if (n == 0) return false;
  return true;
}

// ---- rows --------------------------------------------------------------------------------

bool checks::gather_rows(Device dev, ConstMatView src, const int32_t* idx, int64_t n, MatView dst) {
  check_count("gather_rows", n);
  check_view("gather_rows", "src", src);
  check_view("gather_rows", "dst", dst);
  if (dst.rows != n || dst.cols != src.cols)
    mismatch("gather_rows", "dst", shape(dst), "the gathered rows", shape(n, src.cols),
             "dst must be n x src.cols");
  if (n * src.cols == 0) return false;
  return true;
}

bool checks::scatter_add_rows(Device dev, ConstMatView src, const int32_t* idx, int64_t n,
                              MatView dst) {
  check_count("scatter_add_rows", n);
  check_view("scatter_add_rows", "src", src);
  check_view("scatter_add_rows", "dst", dst);
  if (src.rows != n || dst.cols != src.cols)
    mismatch("scatter_add_rows", "src", shape(src), "dst", shape(dst),
             "src must be n rows with dst's columns");
  if (n * src.cols == 0) return false;
  return true;
}

bool checks::scatter_rows(Device dev, ConstMatView src, const int32_t* idx, int64_t n,
                          MatView dst) {
  check_count("scatter_rows", n);
  check_view("scatter_rows", "src", src);
  check_view("scatter_rows", "dst", dst);
  if (src.rows != n || dst.cols != src.cols)
    mismatch("scatter_rows", "src", shape(src), "dst", shape(dst),
             "src must be n rows with dst's columns");
  if (n * src.cols == 0) return false;
  return true;
}

// ---- pair scoring ------------------------------------------------------------------------

namespace {

void check_pair_mlp(const char* fn, const PairMlp& p) {
  check_count(fn, p.pairs);
  check_view(fn, "hu", p.hu);
  check_view(fn, "hv", p.hv);
  check_view(fn, "W1", p.w1);
  check_view(fn, "W2", p.w2);
  const int64_t d = p.hu.cols;
  if (p.hv.cols != d) mismatch(fn, "hv", shape(p.hv), "hu", shape(p.hu), "one width for both ends");
  if (p.w1.rows != 3 * d)
    mismatch(fn, "W1", shape(p.w1), "hu", shape(p.hu), "W1 has 3 x the ends' width rows");
  if (p.w2.rows != p.w1.cols)
    mismatch(fn, "W2", shape(p.w2), "W1", shape(p.w1), "W2 has W1's columns as rows");
  // No pairs: nothing is read, and an empty index has no data pointer, so that it looks like
  // no index at all; the ends' tables may then hold any rows (a rank with nothing to score).
  if (!p.u && p.pairs > 0 && p.hu.rows != p.pairs)
    mismatch(fn, "hu", shape(p.hu), "the pairs", shape(p.pairs, d), "one row per pair without u");
  if (!p.v && p.pairs > 0 && p.hv.rows != p.pairs)
    mismatch(fn, "hv", shape(p.hv), "the pairs", shape(p.pairs, d), "one row per pair without v");
  if (p.pairs > 0 && (!p.b1 || !p.b2))
    throw ShapeError(std::string("kernels::") + fn + ": the biases b1 and b2 need data");
}

}  // namespace

void pair_mlp_forward(Device dev, const PairMlp& p, MatView logits) {
  check_pair_mlp("pair_mlp_forward", p);
  check_view("pair_mlp_forward", "logits", logits);
  if (logits.rows != p.pairs || logits.cols != p.w2.cols)
    mismatch("pair_mlp_forward", "logits", shape(logits), "pairs x W2's columns",
             shape(p.pairs, p.w2.cols), "one row of logits per pair");
  if (p.pairs == 0) return;
  DGNN_ON_DEVICE("pair_mlp_forward", cpu::pair_mlp_forward(p, logits),
                 pair_mlp_forward_composed(dev, p, logits));
}

bool checks::factored_pair_logits(Device dev, ConstMatView h, int64_t hid, const float* m,
                                  const float* au, const float* w2, float b2, const int32_t* v,
                                  int64_t k, float* out) {
  check_count("factored_pair_logits", k);
  if (hid <= 0)
    throw ShapeError("factored_pair_logits: a hidden width of " + std::to_string(hid) +
                     " (expected at least 1)");
  if (k == 0) return false;
  return true;
}

bool checks::softplus_sum(Device dev, const float* x, int64_t n, float sign) {
  check_count("softplus_sum", n);
  return true;
}

bool checks::count_below_at_most(Device dev, const float* x, int64_t n, float lo, float hi,
                                 int64_t* below, int64_t* at_most) {
  check_count("count_below_at_most", n);
  return true;
}

bool checks::hashed_draws(Device dev, uint64_t seed, uint64_t base, int64_t count, uint64_t n,
                          int32_t u, const uint64_t* links, int64_t num_links, int32_t* out) {
  check_count("hashed_draws", count);
  check_count("hashed_draws", num_links);
  return true;
}

bool vector_draws_pay() { return cpu::vector_draws_pay(); }

void pair_mlp_backward(Device dev, const PairMlp& p, ConstMatView dlogits, MatView dhu, MatView dhv,
                       MatView dw1, float* db1, MatView dw2, float* db2) {
  const char* fn = "pair_mlp_backward";
  check_pair_mlp(fn, p);
  check_view(fn, "dlogits", dlogits);
  if (dlogits.rows != p.pairs || dlogits.cols != p.w2.cols)
    mismatch(fn, "dlogits", shape(dlogits), "pairs x W2's columns", shape(p.pairs, p.w2.cols),
             "one row per pair");
  if (dhu.data) check_same(fn, "dhu", dhu, "hu", p.hu);
  if (dhv.data) check_same(fn, "dhv", dhv, "hv", p.hv);
  if (dw1.data) check_same(fn, "dW1", dw1, "W1", p.w1);
  if (dw2.data) check_same(fn, "dW2", dw2, "W2", p.w2);
  if (p.pairs == 0) return;
  DGNN_ON_DEVICE("pair_mlp_backward",
                 cpu::pair_mlp_backward(p, dlogits, dhu, dhv, dw1, db1, dw2, db2),
                 pair_mlp_backward_composed(dev, p, dlogits, dhu, dhv, dw1, db1, dw2, db2));
}

// ---- dropout -----------------------------------------------------------------------------

bool checks::dropout(Device dev, ConstMatView x, float p, uint64_t key, const int64_t* row_ids,
                     MatView y, uint8_t* mask) {
  check_same("dropout", "X", x, "Y", y);
  if (!(p >= 0.f && p < 1.f))
    throw OptionError("kernels::dropout: p must be in [0, 1), got " + std::to_string(p));
  if (x.rows * x.cols == 0) return false;
  return true;
}

bool checks::dropout_backward(Device dev, ConstMatView dy, const uint8_t* mask, float p, MatView dx,
                              bool accumulate) {
  check_same("dropout_backward", "dY", dy, "dX", dx);
  if (!(p >= 0.f && p < 1.f))
    throw OptionError("kernels::dropout_backward: p must be in [0, 1), got " + std::to_string(p));
  if (dy.rows * dy.cols == 0) return false;
  // A null mask would be a crash on the CPU and a lost CUDA context on the GPU.
  if (!mask) throw ShapeError("kernels::dropout_backward: no mask (the forward kept none)");
  return true;
}

// ---- losses ------------------------------------------------------------------------------

bool checks::softmax_xent(Device dev, ConstMatView logits, const int32_t* rows,
                          const int32_t* labels, int64_t n, float scale, MatView dlogits) {
  check_count("softmax_xent", n);
  check_view("softmax_xent", "logits", logits);
  if (dlogits.data) check_same("softmax_xent", "logits", logits, "dlogits", dlogits);
  if (n > 0 && logits.cols == 0)
    throw ShapeError("kernels::softmax_xent: logits " + shape(logits) + " have no classes");
  if (n == 0) return false;
  return true;
}

bool checks::count_correct(Device dev, ConstMatView logits, const int32_t* rows,
                           const int32_t* labels, int64_t n) {
  check_count("count_correct", n);
  check_view("count_correct", "logits", logits);
  if (n > 0 && logits.cols == 0)
    throw ShapeError("kernels::count_correct: logits " + shape(logits) + " have no classes");
  if (n == 0) return false;
  return true;
}

// ---- recurrent cells ---------------------------------------------------------------------

namespace {

// Checks a cell's operand: `width` state columns per row for every one of `rows` rows. Optional
// operands (null data) are skipped: they mean "zero" for inputs and "not wanted" for outputs.
void check_cell(const char* fn, const char* name, ConstMatView v, int64_t rows, int64_t width,
                bool optional, const char* rule) {
  if (optional && !v.data) return;
  check_view(fn, name, v);
  if (v.rows != rows || v.cols != width)
    mismatch(fn, name, shape(v), "the cell", shape(rows, width), rule);
}

}  // namespace

bool checks::lstm_cell_forward(Device dev, ConstMatView gates, ConstMatView c_prev, MatView h,
                               MatView c) {
  check_view("lstm_cell_forward", "c_prev", c_prev);
  const int64_t n = c_prev.rows, hid = c_prev.cols;
  const char* rule = "gates are N x 4H, c_prev, h and c N x H";
  check_cell("lstm_cell_forward", "gates", gates, n, 4 * hid, false, rule);
  check_cell("lstm_cell_forward", "h", h, n, hid, false, rule);
  check_cell("lstm_cell_forward", "c", c, n, hid, false, rule);
  if (n * hid == 0) return false;
  return true;
}

bool checks::lstm_cell_backward(Device dev, ConstMatView gates, ConstMatView c_prev,
                                ConstMatView dh, ConstMatView dc, MatView dgates, MatView dc_prev,
                                bool accumulate) {
  check_view("lstm_cell_backward", "c_prev", c_prev);
  const int64_t n = c_prev.rows, hid = c_prev.cols;
  const char* rule = "gates and dgates are N x 4H, the rest N x H";
  check_cell("lstm_cell_backward", "gates", gates, n, 4 * hid, false, rule);
  check_cell("lstm_cell_backward", "dh", dh, n, hid, true, rule);
  check_cell("lstm_cell_backward", "dc", dc, n, hid, true, rule);
  check_cell("lstm_cell_backward", "dgates", dgates, n, 4 * hid, true, rule);
  check_cell("lstm_cell_backward", "dc_prev", dc_prev, n, hid, true, rule);
  if (n * hid == 0 || (!dgates.data && !dc_prev.data)) return false;
  return true;
}

bool checks::gru_cell_forward(Device dev, ConstMatView xg, ConstMatView hg, ConstMatView h_prev,
                              MatView h) {
  check_view("gru_cell_forward", "h_prev", h_prev);
  const int64_t n = h_prev.rows, hid = h_prev.cols;
  const char* rule = "xg and hg are N x 3H, h_prev and h N x H";
  check_cell("gru_cell_forward", "xg", xg, n, 3 * hid, false, rule);
  check_cell("gru_cell_forward", "hg", hg, n, 3 * hid, false, rule);
  check_cell("gru_cell_forward", "h", h, n, hid, false, rule);
  if (n * hid == 0) return false;
  return true;
}

bool checks::gru_cell_backward(Device dev, ConstMatView xg, ConstMatView hg, ConstMatView h_prev,
                               ConstMatView dh, MatView dxg, MatView dhg, MatView dh_prev,
                               bool accumulate) {
  check_view("gru_cell_backward", "h_prev", h_prev);
  const int64_t n = h_prev.rows, hid = h_prev.cols;
  const char* rule = "xg, hg, dxg and dhg are N x 3H, the rest N x H";
  check_cell("gru_cell_backward", "xg", xg, n, 3 * hid, false, rule);
  check_cell("gru_cell_backward", "hg", hg, n, 3 * hid, false, rule);
  check_cell("gru_cell_backward", "dh", dh, n, hid, false, rule);
  check_cell("gru_cell_backward", "dxg", dxg, n, 3 * hid, true, rule);
  check_cell("gru_cell_backward", "dhg", dhg, n, 3 * hid, true, rule);
  check_cell("gru_cell_backward", "dh_prev", dh_prev, n, hid, true, rule);
  if (n * hid == 0 || (!dxg.data && !dhg.data && !dh_prev.data)) return false;
  return true;
}

// ---- optimisers -------------------------------------------------------------------------

bool checks::adam_step(Device dev, int64_t n, float* w, const float* g, float* m, float* v,
                       float step_size, float beta1, float beta2, float eps, float inv_sqrt_bc2,
                       float wd) {
  check_count("adam_step", n);
  if (n == 0) return false;
  return true;
}

bool checks::sgd_step(Device dev, int64_t n, float* w, const float* g, float* vel, float lr,
                      float momentum, float wd) {
  check_count("sgd_step", n);
  if (n == 0) return false;
  return true;
}

// ---- mini-batch blocks -------------------------------------------------------------------

bool checks::block_adjacency(Device dev, const DeviceBlock& b, BlockNorm norm) {
  const size_t n_dst = size_t(b.n_dst), n_src = size_t(b.n_src), nnz = size_t(b.nnz);
  DGNN_CHECK(b.n_dst >= 0 && b.n_src >= b.n_dst && b.nnz >= 0 && b.n_src <= INT32_MAX &&
                 b.offsets.bytes() == (n_dst + 1) * sizeof(int64_t) &&
                 b.indices.bytes() == nnz * sizeof(int32_t) &&
                 (b.values.bytes() == 0 || b.values.bytes() == nnz * sizeof(float)) &&
                 b.src.bytes() == n_src * sizeof(int64_t) &&
                 b.src_degree.bytes() == n_src * sizeof(int64_t),
             ShapeError,
             "kernels::block_adjacency: a block of " + std::to_string(b.n_dst) + " destinations, " +
                 std::to_string(b.n_src) + " sources and " + std::to_string(b.nnz) +
                 " entries with arrays of other sizes");
  DGNN_CHECK(
      b.offsets.device() == dev && b.src_degree.device() == dev, DeviceError,
      std::string("kernels::block_adjacency: the block is not in ") + device_name(dev) + " memory");
  return true;
}

bool checks::gather_rows_by_id(Device dev, ConstMatView src, const int64_t* ids, int64_t n,
                               MatView dst) {
  DGNN_CHECK(n >= 0 && dst.rows == n && dst.cols == src.cols && src.rows >= 0 &&
                 (n * src.cols == 0 || (src.data && dst.data && ids)),
             ShapeError,
             "kernels::gather_rows_by_id: " + std::to_string(n) + " ids into a [" +
                 std::to_string(dst.rows) + " x " + std::to_string(dst.cols) + "] view from [" +
                 std::to_string(src.rows) + " x " + std::to_string(src.cols) + "]");
  return n * src.cols != 0;  // each id's range: the CPU checks it, the GPU trusts the sampler
}

// ---- the generated entry points ----------------------------------------------------------
// std::type_identity_t<ret>() is the "nothing to do" result: void, 0.0, 0 or false.
#define DGNN_KERNEL(ret, name, params, args)                                       \
  ret name DGNN_WITH_DEVICE params {                                               \
    if (!checks::name(dev, DGNN_UNPAREN args)) return std::type_identity_t<ret>(); \
    DGNN_DISPATCH(name, DGNN_UNPAREN args);                                        \
  }
#define DGNN_HOST_KERNEL(ret, name, params, args)                                  \
  ret name DGNN_WITH_DEVICE params {                                               \
    if (!checks::name(dev, DGNN_UNPAREN args)) return std::type_identity_t<ret>(); \
    if (dev != Device::cpu) no_backend(dev, #name);                                \
    return cpu::name(DGNN_UNPAREN args);                                           \
  }
#include "dgnn/kernels/kernel_list.def"

}  // namespace dgnn::kernels
