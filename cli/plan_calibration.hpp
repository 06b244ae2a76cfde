#pragma once
// `dgnn plan`'s calibration: this machine's SpMM, GEMM and element-wise rates on the shapes of
// one graph and model, for a given number of threads per rank, cached in a JSON file so that
// repeated plans skip the timing.
#include <functional>
#include <string>
#include <vector>

#include "dgnn/gnn/perf_model.hpp"
#include "dgnn/graph/csr.hpp"

namespace dgnn::cli {

// The default cache file: $DGNN_CACHE_DIR, $XDG_CACHE_HOME/dgnn or ~/.cache/dgnn, then
// plan-calibration.json.
std::string default_calibration_file();

struct Calibration {
  perf::Rates rates;
  bool cached = false;  // read from the file, not timed now
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

Calibration calibrate(const Csr& in, const std::vector<perf::LayerShape>& layers, int threads,
                      int copies, const std::string& file, bool recalibrate);

}  // namespace dgnn::cli
