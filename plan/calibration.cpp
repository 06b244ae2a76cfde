// Times the kernels a training step spends its compute in, on this graph's shapes: SpMM at every
// aggregated width, each GEMM shape forward (X W) and backward (X^T dY, dY W^T), and one
// element-wise kernel (memory bound, like dropout / bias / ReLU). Means over a fifth of a second
// of calls after a warm-up; the whole calibration takes a second or two. With several copies, that
// many threads run each kernel at once on their shares of the rows, as ranks sharing a node do: the
// rates are then per copy, with the node's memory bandwidth (and whatever else runs there) shared.
#include "dgnn/plan/calibration.hpp"

#include <omp.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "dgnn/common/error.hpp"
#include "dgnn/common/format.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/graph/atomic_write.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn::perf {

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
constexpr int64_t kMaxAttentionEntries = 1'000'000;
constexpr int kMinCalls = 3;
constexpr double kMinSeconds = 0.2;

// Wall time per call of f(copy): after a warm-up, calls repeat until kMinSeconds have passed,
// and the mean is taken. Training runs for seconds, so its kernels see the machine's sustained
// rates, descheduling included; a median of a few short bursts was up to 2.5x faster than that
// on a loaded machine. One copy: f(0) on this thread, whose kernels use the OpenMP threads set
// by the caller. Several: `copies` threads start together and each calls f(its index) on its
// own data for the window, independently, as ranks sharing a node compute between their
// exchanges (each copy is one thread: nested parallelism is off, and OpenBLAS runs
// single-threaded inside a parallel region); the mean over copies is returned.
template <class F>
double mean_seconds(int copies, F&& f) {
  std::vector<double> per_call(static_cast<size_t>(copies));
  auto run = [&](int me) {
    f(me);  // warm-up: page faults, thread start
    if (copies > 1) {
#pragma omp barrier
    }
    Timer timer;
    int calls = 0;
    do {
      f(me);
      ++calls;
    } while (calls < kMinCalls || timer.ms() < kMinSeconds * 1e3);
    per_call[size_t(me)] = timer.ms() / 1e3 / calls;
  };
  // One copy runs outside any parallel region: inside even an inactive one, every kernel's
  // team would be a nested team, its threads created anew at each call (measured: ReLU at 2
  // threads 8x slower than at 1).
  if (copies == 1) {
    run(0);
  } else {
#pragma omp parallel num_threads(copies)
    run(omp_get_thread_num());
  }
  double sum = 0;
  for (double t : per_call) sum += t;
  return std::max(sum / copies, 1e-9);
}

// What a synchronisation costs `copies` threads that each call f(their index) between them:
// the time per round of calls followed by a barrier, less the time per call of the same copies
// running freely (mean_seconds). What ranks pay at each exchange for waiting on the slowest of
// them, as the node schedules their threads (and anything else it runs). Zero for one copy.
template <class F>
double sync_seconds(int copies, double free_s, F&& f) {
  if (copies == 1) return 0;
  int rounds = 0;
  bool more = true;
  Timer timer;
#pragma omp parallel num_threads(copies)
  {
    f(omp_get_thread_num());  // warm-up
#pragma omp barrier
#pragma omp master
    timer.reset();
    while (true) {
#pragma omp barrier
      if (!more) break;
      f(omp_get_thread_num());
#pragma omp barrier
#pragma omp master
      more = ++rounds < kMinCalls || timer.ms() < kMinSeconds * 1e3;
    }
  }
  return std::max(0.0, timer.ms() / 1e3 / rounds - free_s);
}

// [begin, end) of `copy`'s equal share of n.
std::pair<int64_t, int64_t> share(int64_t n, int copy, int copies) {
  return {n * copy / copies, n * (copy + 1) / copies};
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

std::string key_of(const Csr& in, const std::vector<LayerShape>& layers, int threads, int copies) {
  std::string k = host_name() + "|" + cpu_model() + "|rows " + std::to_string(in.rows) +
                  "|entries " + std::to_string(in.nnz()) + "|threads " + std::to_string(threads);
  // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
  // "method 2": sustained means over signed data; entries of the earlier bursts are stale.
  k.append("|method 2");
  if (copies > 1) k.append("|copies ").append(std::to_string(copies));
  for (const LayerShape& l : layers) {
    k.append("|w").append(std::to_string(l.agg_width));
    if (l.heads > 0) k.append(" heads ").append(std::to_string(l.heads));
    for (const Gemm& g : l.gemms)
      k.append(" ").append(std::to_string(g.k)).append("x").append(std::to_string(g.n));
  }
  return k;
}

nlohmann::json to_json(const Rates& r) {
  nlohmann::json j;
  j["threads"] = r.threads;
  j["elementwise"] = r.elementwise;
  j["sync_s"] = r.sync_s;
  for (auto& [w, v] : r.spmm) j["spmm"][std::to_string(w)] = v;
  for (auto& [s, v] : r.gemm_fwd)
    j["gemm_fwd"][std::to_string(s.first) + "x" + std::to_string(s.second)] = v;
  for (auto& [s, v] : r.gemm_bwd)
    j["gemm_bwd"][std::to_string(s.first) + "x" + std::to_string(s.second)] = v;
  for (auto& [s, v] : r.attention_fwd)
    j["attention_fwd"][std::to_string(s.first) + "x" + std::to_string(s.second)] = v;
  for (auto& [s, v] : r.attention_bwd)
    j["attention_bwd"][std::to_string(s.first) + "x" + std::to_string(s.second)] = v;
  return j;
}

Rates from_json(const nlohmann::json& j) {
  // A rate that is not a positive finite number (a hand-edited or damaged cache) would make the
  // plan's times negative or infinite: such an entry is measured again instead.
  auto rate = [](const nlohmann::json& v) {
    const double x = v.get<double>();
    if (!(x > 0) || !std::isfinite(x)) throw std::runtime_error("not a positive rate");
    return x;
  };
  Rates r;
  r.threads = j.at("threads").get<int>();
  r.elementwise = rate(j.at("elementwise"));
  r.sync_s = j.at("sync_s").get<double>();
  if (!(r.sync_s >= 0) || !std::isfinite(r.sync_s)) throw std::runtime_error("bad sync time");
  for (auto& [w, v] : j.at("spmm").items()) r.spmm[std::stoll(w)] = rate(v);
  auto shapes = [&](const char* name, auto& into) {
    for (auto& [s, v] : j.at(name).items()) {
      const size_t x = s.find('x');
      into[{std::stoll(s.substr(0, x)), std::stoll(s.substr(x + 1))}] = rate(v);
    }
  };
  shapes("gemm_fwd", r.gemm_fwd);
  shapes("gemm_bwd", r.gemm_bwd);
  if (j.contains("attention_fwd")) shapes("attention_fwd", r.attention_fwd);
  if (j.contains("attention_bwd")) shapes("attention_bwd", r.attention_bwd);
  return r;
}

nlohmann::json read_cache(const std::string& file) {
  if (fs::is_directory(file))
    throw OptionError("--calibration " + file + ": is a directory (expected a JSON file)");
  std::ifstream in(file);
  if (!in) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json::object();  // a corrupt cache is only re-measured
}

Rates measure(const Csr& in, const std::vector<LayerShape>& layers, int threads, int copies) {
  const int before = omp_get_max_threads(), levels = omp_get_max_active_levels();
  omp_set_num_threads(threads);
  omp_set_max_active_levels(1);  // a copy's kernels stay on its one thread
  Rates r;
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
  for (const LayerShape& l : layers) {
    if (l.agg_width > 0) widths.insert(l.agg_width);  // (a linear layer aggregates nothing)
    widest = std::max({widest, l.in, l.out, l.agg_width});
    for (const Gemm& g : l.gemms) {
      shapes.insert({g.k, g.n});
      widest = std::max({widest, g.k, g.n});
    }
  }
  // Several copies split the rows, as ranks split the graph, each writing its own outputs.
  const int64_t m = std::max<int64_t>(copies, std::min(in.rows, kMaxGemmRows));
  const int64_t cells = std::max(in.cols, m) * widest;
  std::vector<float> x(size_t(cells), 0.5f), y(size_t(cells), 0.f),
      w(size_t(widest * widest), 0.01f), dw(size_t(copies * widest * widest), 0.f);
  // Activations of both signs, as after a layer: a kernel that branches on them (ReLU) must pay
  // for its mispredictions here too.
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 2654435761u % 13) - 6) * 0.1f;

  // Each copy aggregates from a table of its own, as each rank reads its own [owned | halo]
  // rows: copies reading one shared table would find each other's rows in the shared cache
  // (measured: 1.3x the rate two ranks get). Shared only past 2 GB of copies.
  const int64_t table = in.cols * widest;
  const bool own_tables = copies > 1 && double(copies * table) * 4 <= 2e9;
  std::vector<std::vector<float>> tables(own_tables ? size_t(copies) : 0);
  for (auto& t : tables) t.assign(x.begin(), x.begin() + table);
  for (int64_t f : widths) {
    auto spmm = [&, f](int c) {
      const auto [begin, end] = share(a.rows, c, copies);
      CsrView part = a;
      part.rows = end - begin;
      part.offsets = a.offsets + begin;  // absolute offsets: a row slice is a pointer shift
      const float* src = own_tables ? tables[size_t(c)].data() : x.data();
      kernels::spmm(cpu, part, ConstMatView(src, in.cols, f, f),
                    MatView{y.data() + begin * f, part.rows, f, f});
    };
    const double s = mean_seconds(copies, spmm);
    r.spmm[f] = double(std::max<int64_t>(1, a.nnz())) / copies * double(f) / s;
    // The widest aggregation stands for a phase's work between two exchanges.
    if (f == *widths.rbegin()) r.sync_s = sync_seconds(copies, s, spmm);
  }
  for (auto [k, n] : shapes) {
    const double flops = 2.0 * double(m) / copies * double(k) * double(n);
    auto rows = [&](int c) {
      const auto [begin, end] = share(m, c, copies);
      return std::pair{begin, end - begin};
    };
    const double fwd = mean_seconds(copies, [&](int c) {
      const auto [begin, rc] = rows(c);
      kernels::gemm(cpu, false, false, 1.f, ConstMatView(x.data() + begin * k, rc, k, k),
                    ConstMatView(w.data(), k, n, n), 0.f, MatView{y.data() + begin * n, rc, n, n});
    });
    const double bwd = mean_seconds(copies, [&](int c) {
      const auto [begin, rc] = rows(c);
      const ConstMatView X(x.data() + begin * k, rc, k, k), dY(x.data() + begin * n, rc, n, n);
      kernels::gemm(cpu, true, false, 1.f, X, dY, 0.f,
                    MatView{dw.data() + c * widest * widest, k, n, n});
      kernels::gemm(cpu, false, true, 1.f, dY, ConstMatView(w.data(), k, n, n), 0.f,
                    MatView{y.data() + begin * k, rc, k, k});
    });
    r.gemm_fwd[{k, n}] = flops / fwd;
    r.gemm_bwd[{k, n}] = 2 * flops / bwd;
  }
  // Attention layers: their edge work per entry, timed with the kernels a GAT layer runs, on a
  // prefix of the rows (each copy its own rows as a whole matrix: the edge kernels take no row
  // slice), entries of the GCN structure's density.
  std::set<std::pair<int64_t, int64_t>> attention;
  for (const LayerShape& l : layers)
    if (l.heads > 0) attention.insert({l.heads, l.agg_width});
  if (!attention.empty()) {
    CsrView base = in.view();
    if (base.nnz() > kMaxAttentionEntries)
      base.rows = std::upper_bound(in.offsets.begin(), in.offsets.end(), kMaxAttentionEntries) -
                  in.offsets.begin() - 1;
    struct Part {
      std::vector<int64_t> offsets;
      CsrView view;
    };
    std::vector<Part> parts(static_cast<size_t>(copies));
    for (int c = 0; c < copies; ++c) {
      const auto [begin, end] = share(base.rows, c, copies);
      Part& p = parts[size_t(c)];
      for (int64_t r = begin; r <= end; ++r)
        p.offsets.push_back(base.offsets[r] - base.offsets[begin]);
      p.view.rows = end - begin;
      p.view.cols = in.cols;
      p.view.offsets = p.offsets.data();
      p.view.indices = base.indices + base.offsets[begin];
    }
    for (auto [heads, f] : attention) {
      // Per copy: scores and coefficients (entries x heads), per-vertex terms, outputs.
      struct Buffers {
        std::vector<float> src, dst, score, alpha, dalpha, y, dx, row;
      };
      std::vector<Buffers> bufs(static_cast<size_t>(copies));
      for (int c = 0; c < copies; ++c) {
        const CsrView& v = parts[size_t(c)].view;
        Buffers& b = bufs[size_t(c)];
        const size_t e = size_t(std::max<int64_t>(1, v.nnz())) * size_t(heads);
        b.src.assign(size_t(in.cols * heads), 0.1f);
        b.dst.assign(size_t(std::max<int64_t>(1, v.rows) * heads), -0.2f);
        b.score.assign(e, 0.f);
        b.alpha.assign(e, 0.f);
        b.dalpha.assign(e, 0.01f);
        b.y.assign(size_t(std::max<int64_t>(1, v.rows) * f), 0.f);
        b.dx.assign(size_t(std::max<int64_t>(1, v.rows) * f), 0.f);
        b.row.assign(size_t(std::max<int64_t>(1, v.rows) * heads), 0.f);
      }
      auto table = [&](int c) -> const float* {
        return own_tables ? tables[size_t(c)].data() : x.data();
      };
      auto fwd = [&](int c) {
        const CsrView& v = parts[size_t(c)].view;
        Buffers& b = bufs[size_t(c)];
        const int64_t e = v.nnz();
        kernels::edge_add(cpu, v, ConstMatView(b.src.data(), in.cols, heads, heads),
                          ConstMatView(b.dst.data(), v.rows, heads, heads),
                          MatView{b.score.data(), e, heads, heads});
        // LeakyReLU and the coefficients' dropout: element-wise passes over entries x heads.
        kernels::unary(cpu, kernels::Unary::relu, b.score.data(), b.score.data(), e * heads);
        kernels::edge_softmax(cpu, v, ConstMatView(b.score.data(), e, heads, heads),
                              MatView{b.alpha.data(), e, heads, heads});
        kernels::unary(cpu, kernels::Unary::relu, b.alpha.data(), b.alpha.data(), e * heads);
        kernels::spmm_heads(cpu, v, ConstMatView(b.alpha.data(), e, heads, heads),
                            ConstMatView(table(c), in.cols, f, f),
                            MatView{b.y.data(), v.rows, f, f});
      };
      // The backward's kernels on the same entries (the transpose's SpMM reads as many): the
      // coefficients' gradient (SDDMM), the sources' (SpMM over heads), the softmax's and the
      // scores' (two row sums and the gather into the transpose's order).
      auto bwd = [&](int c) {
        const CsrView& v = parts[size_t(c)].view;
        Buffers& b = bufs[size_t(c)];
        const int64_t e = v.nnz();
        const ConstMatView dy(b.y.data(), v.rows, f, f);
        kernels::sddmm(cpu, v, dy, ConstMatView(table(c), in.cols, f, f),
                       MatView{b.dalpha.data(), e, heads, heads});
        kernels::spmm_heads(cpu, v, ConstMatView(b.alpha.data(), e, heads, heads),
                            ConstMatView(table(c), in.cols, f, f),
                            MatView{b.dx.data(), v.rows, f, f});
        kernels::edge_softmax_backward(cpu, v, ConstMatView(b.alpha.data(), e, heads, heads),
                                       ConstMatView(b.dalpha.data(), e, heads, heads),
                                       MatView{b.score.data(), e, heads, heads});
        kernels::unary(cpu, kernels::Unary::relu, b.score.data(), b.score.data(), e * heads);
        kernels::edge_row_sum(cpu, v, ConstMatView(b.score.data(), e, heads, heads),
                              MatView{b.row.data(), v.rows, heads, heads});
        kernels::edge_row_sum(cpu, v, ConstMatView(b.score.data(), e, heads, heads),
                              MatView{b.row.data(), v.rows, heads, heads});
        kernels::unary(cpu, kernels::Unary::relu, b.score.data(), b.dalpha.data(), e * heads);
      };
      const double entries = double(std::max<int64_t>(1, base.nnz())) / copies;
      r.attention_fwd[{heads, f}] = mean_seconds(copies, fwd) / entries;
      r.attention_bwd[{heads, f}] = mean_seconds(copies, bwd) / entries;
    }
  }

  const int64_t n_elem = m * std::min<int64_t>(widest, 64);
  const double es = mean_seconds(copies, [&](int c) {
    const auto [begin, end] = share(n_elem, c, copies);
    kernels::unary(cpu, kernels::Unary::relu, x.data() + begin, y.data() + begin, end - begin);
  });
  r.elementwise = double(n_elem) / copies / es;
  omp_set_num_threads(before);
  omp_set_max_active_levels(levels);
  return r;
}

}  // namespace

Calibration calibrate(const Csr& in, const std::vector<LayerShape>& layers, int threads, int copies,
                      const std::string& file, bool recalibrate) {
  DGNN_CHECK(copies >= 1 && (copies == 1 || threads == 1), Error,
             "calibrate: several copies run one thread each");
  const std::string key = key_of(in, layers, threads, copies);
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
  c.rates = measure(in, layers, threads, copies);
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

double process_sync_seconds(int procs, double phase_s) {
  if (procs < 2) return 0;
  struct Shared {
    std::atomic<int> arrived{0};
    std::atomic<int> generation{0};
  };
  void* mem =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return 0;
  Shared* sh = new (mem) Shared;
  // Work that touches no memory to speak of: the cost measured is the scheduling.
  volatile double sink = 0;
  auto work = [&sink](int64_t iters) {
    double x = 1.0;
    for (int64_t i = 0; i < iters; ++i) x = x * 1.0000001 + 1e-9;
    sink = x;
  };
  int64_t iters = 1 << 14;
  for (;;) {
    Timer t;
    work(iters);
    const double ms = t.ms();
    if (ms > 20 || iters > (int64_t(1) << 40)) {
      iters = std::max<int64_t>(1000, int64_t(double(iters) * phase_s * 1e3 / std::max(ms, 1e-3)));
      break;
    }
    iters *= 2;
  }
  const int rounds = std::clamp(int(0.25 / std::max(phase_s, 1e-4)), 10, 400);
  auto barrier = [sh, procs] {
    const int g = sh->generation.load();
    if (sh->arrived.fetch_add(1) == procs - 1) {
      sh->arrived.store(0);
      sh->generation.fetch_add(1);
    } else {
      while (sh->generation.load() == g) {
        // Busy polling, as Open MPI's progress loop does (it does not give up the core).
      }
    }
  };
  auto body = [&](bool sync) {
    for (int r = 0; r < rounds; ++r) {
      work(iters);
      if (sync) barrier();
    }
  };
  // Children run the work and nothing else (no allocation, no OpenMP) and leave with _exit.
  auto run = [&](bool sync) {
    Timer t;
    std::vector<pid_t> kids;
    for (int i = 1; i < procs; ++i) {
      const pid_t k = fork();
      if (k == 0) {
        body(sync);
        _exit(0);
      }
      if (k > 0) kids.push_back(k);
    }
    if (int(kids.size()) != procs - 1) {  // could not fork them all: nothing to measure
      for (pid_t k : kids) kill(k, SIGKILL), waitpid(k, nullptr, 0);
      return -1.0;
    }
    body(sync);
    for (pid_t k : kids) waitpid(k, nullptr, 0);
    return t.ms() / 1e3;
  };
  const double free_s = run(false);
  const double sync_s = free_s < 0 ? -1.0 : run(true);
  munmap(mem, sizeof(Shared));
  if (free_s < 0 || sync_s < 0) return 0;
  return std::max(0.0, (sync_s - free_s) / rounds);
}

double sustained_seconds(const std::function<void()>& f) {
  return mean_seconds(1, [&](int) { f(); });
}

RankRates::RankRates(RateOptions opt, const Csr& in, const std::vector<LayerShape>& layers)
    : opt_(std::move(opt)),
      in_(in),
      layers_(layers),
      node_cores_(opt_.given && opt_.given->cores > 0 ? opt_.given->cores : omp_get_num_procs()),
      cache_(opt_.given                 ? std::string()
             : opt_.calibration.empty() ? default_calibration_file()
                                        : opt_.calibration) {}

int RankRates::threads_for(int p) const {
  if (opt_.threads_per_rank > 0) return opt_.threads_per_rank;
  return opt_.cores > 0 ? std::max(1, opt_.cores / p) : node_cores_;
}

int RankRates::copies_for(int p) const {
  return opt_.cores > 0 ? std::max(1, std::min(p * threads_for(p), opt_.cores)) : 1;
}

double RankRates::scale_for(int p) const {
  const int t = threads_for(p);
  return opt_.cores > 0 && p * t > opt_.cores ? double(opt_.cores) / double(p * t) : 1.0;
}

const Calibration& RankRates::calibration(int t, int c) {
  auto it = cal_.find({t, c});
  if (it != cal_.end()) return it->second;
  Calibration cal;
  if (opt_.given) {
    cal.rates = opt_.given->at(t, c);
    cal.given = true;
  } else {
    cal = calibrate(in_, layers_, t, c, cache_, opt_.recalibrate);
  }
  return cal_.emplace(std::pair{t, c}, std::move(cal)).first->second;
}

Rates RankRates::rates_for(int p) {
  const int t = threads_for(p), c = copies_for(p);
  Rates r = calibration(t, 1).rates;
  if (c <= t) return r;
  const Rates& busy = calibration(1, c).rates;
  const Rates& own = calibration(1, t).rates;
  for (auto& [w, v] : r.spmm) v *= busy.spmm_rate(w) / own.spmm_rate(w);
  for (auto& [s, v] : r.gemm_fwd)
    v *= busy.gemm_fwd_rate(s.first, s.second) / own.gemm_fwd_rate(s.first, s.second);
  for (auto& [s, v] : r.gemm_bwd)
    v *= busy.gemm_bwd_rate(s.first, s.second) / own.gemm_bwd_rate(s.first, s.second);
  r.elementwise *= busy.elementwise / own.elementwise;
  r.sync_s = busy.sync_s;
  return r;
}

void check_calibration_file(const std::string& file) {
  std::error_code ec;
  if (file.empty() || !fs::exists(file, ec)) return;
  if (fs::is_directory(file, ec))
    throw OptionError("--calibration " + file + ": is a directory (expected a JSON file)");
  if (fs::is_regular_file(file, ec) && fs::file_size(file, ec) == 0) return;
  std::ifstream in(file);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  bool ours = j.is_object();
  if (ours)
    for (const auto& [key, entry] : j.items())
      ours = ours && entry.is_object() && entry.contains("threads");
  if (!ours)
    throw OptionError("--calibration " + file +
                      ": exists and is not a dgnn calibration cache (the plan would replace it); "
                      "give a new file name");
}

}  // namespace dgnn::perf
