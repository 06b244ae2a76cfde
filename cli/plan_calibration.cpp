// Times the kernels a training step spends its compute in, on this graph's shapes: SpMM at every
// aggregated width, each GEMM shape forward (X W) and backward (X^T dY, dY W^T), and one
// element-wise kernel (memory bound, like dropout / bias / ReLU). Medians of a few repeats after
// a warm-up; the whole calibration takes seconds.
#include "cli/plan_calibration.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "common/timer.hpp"
#include "graph/atomic_write.hpp"
#include "kernels/kernels.hpp"

namespace dgnn::cli {

namespace fs = std::filesystem;

std::string default_calibration_file() {
  std::string dir;
  if (const char* d = std::getenv("DGNN_CACHE_DIR"); d && *d)
    dir = d;
  else if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d)
    dir = std::string(d) + "/dgnn";
  else if (const char* d = std::getenv("HOME"); d && *d)
    dir = std::string(d) + "/.cache/dgnn";
  else
    return "";
  return dir + "/plan-calibration.json";
}

namespace {

// Bounds on the timed shapes: large enough to leave the caches, small enough for seconds.
constexpr int64_t kMaxSpmmEntries = 4'000'000;
constexpr int64_t kMaxGemmRows = 200'000;
constexpr int kRepeats = 5;

template <class F>
double median_seconds(F&& f) {
  f();  // warm-up: page faults, thread start
  std::vector<double> t;
  for (int i = 0; i < kRepeats; ++i) {
    Timer timer;
    f();
    t.push_back(timer.ms() / 1000);
  }
  std::sort(t.begin(), t.end());
  return std::max(t[t.size() / 2], 1e-9);
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string key_of(const Csr& in, const std::vector<perf::LayerShape>& layers, int threads) {
  std::string k = host_name() + "|" + cpu_model() + "|rows " + std::to_string(in.rows) +
                  "|entries " + std::to_string(in.nnz()) + "|threads " + std::to_string(threads);
  for (const perf::LayerShape& l : layers) {
    k += "|w" + std::to_string(l.agg_width);
    for (const perf::Gemm& g : l.gemms) k += " " + std::to_string(g.k) + "x" + std::to_string(g.n);
  }
  return k;
}

nlohmann::json to_json(const perf::Rates& r) {
  nlohmann::json j;
  j["threads"] = r.threads;
  j["elementwise"] = r.elementwise;
  for (auto& [w, v] : r.spmm) j["spmm"][std::to_string(w)] = v;
  for (auto& [s, v] : r.gemm_fwd)
    j["gemm_fwd"][std::to_string(s.first) + "x" + std::to_string(s.second)] = v;
  for (auto& [s, v] : r.gemm_bwd)
    j["gemm_bwd"][std::to_string(s.first) + "x" + std::to_string(s.second)] = v;
  return j;
}

perf::Rates from_json(const nlohmann::json& j) {
  perf::Rates r;
  r.threads = j.at("threads").get<int>();
  r.elementwise = j.at("elementwise").get<double>();
  for (auto& [w, v] : j.at("spmm").items()) r.spmm[std::stoll(w)] = v.get<double>();
  auto shapes = [&](const char* name, auto& into) {
    for (auto& [s, v] : j.at(name).items()) {
      const size_t x = s.find('x');
      into[{std::stoll(s.substr(0, x)), std::stoll(s.substr(x + 1))}] = v.template get<double>();
    }
  };
  shapes("gemm_fwd", r.gemm_fwd);
  shapes("gemm_bwd", r.gemm_bwd);
  return r;
}

nlohmann::json read_cache(const std::string& file) {
  std::ifstream in(file);
  if (!in) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json::object();  // a corrupt cache is only re-measured
}

perf::Rates measure(const Csr& in, const std::vector<perf::LayerShape>& layers, int threads) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  perf::Rates r;
  r.threads = threads;
  const Device cpu = Device::cpu;

  // A prefix of the rows, reading columns anywhere in the graph like a rank's aggregation.
  CsrView a = in.view();
  if (a.nnz() > kMaxSpmmEntries) {
    a.rows = std::upper_bound(in.offsets.begin(), in.offsets.end(), kMaxSpmmEntries) -
             in.offsets.begin() - 1;
  }
  // With edge values, as the normalised adjacencies of GCN and SAGE (mean) carry: their SpMM
  // reads 4 more bytes per entry than an unweighted one.
  const std::vector<float> values(size_t(a.nnz()), 0.5f);
  a.values = values.data();
  std::set<int64_t> widths;
  std::set<std::pair<int64_t, int64_t>> shapes;
  int64_t widest = 1;
  for (const perf::LayerShape& l : layers) {
    widths.insert(l.agg_width);
    widest = std::max({widest, l.in, l.out, l.agg_width});
    for (const perf::Gemm& g : l.gemms) {
      shapes.insert({g.k, g.n});
      widest = std::max({widest, g.k, g.n});
    }
  }
  const int64_t m = std::max<int64_t>(1, std::min(in.rows, kMaxGemmRows));
  const int64_t cells = std::max(in.cols, m) * widest;
  std::vector<float> x(size_t(cells), 0.5f), y(size_t(cells), 0.f), w(size_t(widest * widest), 0.01f),
      dw(size_t(widest * widest), 0.f);
  for (size_t i = 0; i < x.size(); i += 7) x[i] = float(i % 13) * 0.1f;

  for (int64_t f : widths) {
    const double s = median_seconds([&] {
      kernels::spmm(cpu, a, ConstMatView(x.data(), in.cols, f, f), MatView{y.data(), a.rows, f, f});
    });
    r.spmm[f] = double(std::max<int64_t>(1, a.nnz())) * double(f) / s;
  }
  for (auto [k, n] : shapes) {
    const ConstMatView X(x.data(), m, k, k), W(w.data(), k, n, n), dY(x.data(), m, n, n);
    const double flops = 2.0 * double(m) * double(k) * double(n);
    const double fwd = median_seconds(
        [&] { kernels::gemm(cpu, false, false, 1.f, X, W, 0.f, MatView{y.data(), m, n, n}); });
    const double bwd = median_seconds([&] {
      kernels::gemm(cpu, true, false, 1.f, X, dY, 0.f, MatView{dw.data(), k, n, n});
      kernels::gemm(cpu, false, true, 1.f, dY, W, 0.f, MatView{y.data(), m, k, k});
    });
    r.gemm_fwd[{k, n}] = flops / fwd;
    r.gemm_bwd[{k, n}] = 2 * flops / bwd;
  }
  const int64_t n_elem = m * std::min<int64_t>(widest, 64);
  const double es = median_seconds(
      [&] { kernels::unary(cpu, kernels::Unary::relu, x.data(), y.data(), n_elem); });
  r.elementwise = double(n_elem) / es;
  omp_set_num_threads(before);
  return r;
}

}  // namespace

Calibration calibrate(const Csr& in, const std::vector<perf::LayerShape>& layers, int threads,
                      const std::string& file, bool recalibrate) {
  const std::string key = key_of(in, layers, threads);
  nlohmann::json cache = file.empty() ? nlohmann::json::object() : read_cache(file);
  Calibration c;
  if (!recalibrate && cache.contains(key)) {
    try {
      c.rates = from_json(cache[key]);
      c.cached = true;
      return c;
    } catch (const std::exception&) {
      // An entry of another format: measure again and replace it.
    }
  }
  Timer t;
  c.rates = measure(in, layers, threads);
  c.seconds = t.ms() / 1000;
  if (!file.empty()) {
    cache[key] = to_json(c.rates);
    std::error_code ec;
    fs::create_directories(fs::path(file).parent_path(), ec);
    try {
      write_file_atomically(file, cache.dump(1));
    } catch (const std::exception&) {
      // Caching is an optimisation: a read-only home must not stop the plan.
    }
  }
  return c;
}

}  // namespace dgnn::cli
