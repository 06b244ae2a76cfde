#pragma once
// The planner's calibration: this machine's SpMM, GEMM and element-wise rates on the shapes of
// one graph and model, for a given number of threads per rank, cached in a JSON file so that
// repeated plans skip the timing; the temporal models' fused ops and a real training step; and
// the rates of P ranks sharing a node (RankRates), timed or given (--rates, rates_file.hpp).
// plan/plan_static.hpp and plan/plan_temporal.hpp plan from these with plan/perf_model.hpp and
// plan/perf_temporal.hpp.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dgnn/gnn/temporal/temporal_models.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"
#include "dgnn/graph/csr.hpp"
#include "dgnn/plan/perf_model.hpp"
#include "dgnn/plan/rates_file.hpp"

namespace dgnn::perf {

// The default cache file: $DGNN_CACHE_DIR, $XDG_CACHE_HOME/dgnn or ~/.cache/dgnn, then
// plan-calibration.json.
std::string default_calibration_file();

// OptionError naming --calibration when `file` exists and is not a calibration cache that dgnn
// wrote (a JSON object of entries with "threads"): a plan rewrites its cache, and a file of the
// user's given there by mistake (an edge list, another JSON) would be replaced. Empty is fine.
void check_calibration_file(const std::string& file);

struct Calibration {
  Rates rates;
  bool cached = false;  // read from the file, not timed now
  bool given = false;   // from --rates (RateOptions::given): neither timed nor cached
  double seconds = 0;   // spent timing
};

// Rates for `threads` OpenMP threads on `in` (its rows, entries) and `layers`' widths and GEMM
// shapes; with `copies` > 1 (threads must be 1), the rate of each of that many single-threaded
// copies running at once on their shares of the rows. Timed when `file` has no entry for this
// machine, graph size, shapes, threads and copies (or `recalibrate`); the entry is then written
// to `file` (atomically; an unwritable file only means no caching). Empty `file`: no cache.
// Seconds per call of f, sustained: the mean over a fifth of a second of calls after a warm-up,
// on this thread (its kernels use the OpenMP threads set by the caller).
double sustained_seconds(const std::function<void()>& f);

// What a synchronisation costs `procs` single-threaded processes sharing this node, each
// computing `phase_s` seconds (alone) between synchronisations and waiting for the others by
// polling, as MPI ranks do when a node runs more ranks than cores: rounds
// of work ended by a barrier, against the same work with none, per round. Threads synchronised by
// an OpenMP barrier (calibrate's copies) do not pay what descheduled processes do.
double process_sync_seconds(int procs, double phase_s);

Calibration calibrate(const Csr& in, const std::vector<LayerShape>& layers, int threads, int copies,
                      const std::string& file, bool recalibrate);

// This machine's rates of the temporal models' fused ops at `threads` OpenMP threads: LSTM and
// GRU cells on `rows` x `h` states, and the pair scorer on `pairs` pairs of an `n` x `e` table
// (hidden `ch`), forward and backward, the kernels training calls (plan/calibration_temporal.cpp).
Rates time_fused_ops(int threads, int64_t n, int64_t rows, int64_t h, int64_t e, int64_t ch,
                     int64_t pairs);

// Seconds of one real training step of the model at `threads` threads (forward on snapshot `snap`,
// the pair scorer on `pb`, backward), as the trainer runs it; random features of its width.
double time_real_step(TemporalKind kind, const std::vector<int64_t>& dims, int64_t hidden,
                      const Csr& snap, const PairBatch& pb, uint64_t seed, int threads);
// The same for forecasting: the model's step, ReLU, a linear head to `channels` outputs and the
// squared error, backward.
double time_real_forecast_step(TemporalKind kind, const std::vector<int64_t>& dims,
                               int64_t channels, const Csr& snap, uint64_t seed, int threads);

// How the ranks of a plan use a node's cores, and where calibrations are cached.
struct RateOptions {
  int threads_per_rank = 0;  // 0: the node's cores over the ranks (or all of them, without cores)
  int cores = 0;             // 0: not given (the ranks have the node to themselves)
  std::string calibration;   // the cache file; empty: default_calibration_file()
  bool recalibrate = false;
  // Rates given instead of timed (--rates): nothing is timed nor cached, and the node's cores
  // are the file's (when it names them) rather than this machine's.
  std::shared_ptr<const GivenRates> given;
};

// What a RankRates calibrated (or was given), kept for printing once the plan is made: every
// calibration by (threads, copies), the cache file and the node's cores.
struct CalibrationRecord {
  std::map<std::pair<int, int>, Calibration> calibrations;
  std::string cache;
  int node_cores = 0;
};

// Threads per rank and how much the ranks' compute shrinks when they share too few cores.
// Ranks that share the node (cores) share its memory bandwidth, and its cores with whatever
// else runs there: each kernel is also timed with as many single-threaded copies at once as the
// node runs threads (P x threads, at most one per core), and a rank's rate is its threads' rate
// alone times the slowdown the other ranks' threads add (the per-copy rate at that many copies
// over the one at the rank's own thread count). Past one thread per core, ranks add no
// throughput (MPI polls while a rank waits, so a waiting rank keeps its share of the cores):
// their rates shrink by the share of the cores each gets. A synchronisation costs what it was
// measured to cost with every core busy (validated on 2 cores with 2, 4 and 8 ranks:
// docs/scaling.md).
class RankRates {
 public:
  // `in` and `layers`: the graph and shapes the kernels are timed on; both must outlive this.
  RankRates(RateOptions opt, const Csr& in, const std::vector<LayerShape>& layers);
  int threads_for(int p) const;
  int copies_for(int p) const;
  double scale_for(int p) const;
  Rates rates_for(int p);
  // The rates of one rank's threads alone on the node (no other rank's copies running).
  const Rates& alone(int p) { return calibration(threads_for(p), 1).rates; }
  const std::string& cache() const { return cache_; }  // empty with given rates
  int node_cores() const { return node_cores_; }
  // Every calibration used so far, by (threads, copies).
  const std::map<std::pair<int, int>, Calibration>& calibrations() const { return cal_; }
  CalibrationRecord record() const { return {cal_, cache_, node_cores_}; }

 private:
  const Calibration& calibration(int t, int c);
  RateOptions opt_;
  const Csr& in_;
  const std::vector<LayerShape>& layers_;
  int node_cores_;
  std::string cache_;
  std::map<std::pair<int, int>, Calibration> cal_;
};

}  // namespace dgnn::perf
