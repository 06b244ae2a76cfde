#pragma once
// What `dgnn plan` shares between its static and temporal paths: the parsed options, and the
// per-rank rates for P ranks on this machine (calibrated once per thread count and number of
// copies running at once, see plan_calibration.hpp).
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "dgnn/cli/plan_calibration.hpp"
#include "dgnn/gnn/perf_model.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/graph/temporal.hpp"

namespace dgnn::cli {

struct PlanArgs {
  DatasetOptions data;
  SnapshotOptions snapshots;
  std::string model;  // empty: gcn for static graphs, evolvegcn-o for temporal ones (as train)
  int layers = 2;
  int64_t hidden = 16;
  std::string ranks;
  std::string partitioners = "metis";
  std::string strategies = "vertex,snapshot";  // temporal graphs
  std::string task = "link";                   // temporal graphs: link or edge
  int bptt = 0;
  int neg_train = 5;
  bool step_fracs_given = false;
  bool temporal_options_given = false;  // --strategies, --task, --bptt or --neg-train
  std::string network = "infiniband-hdr";
  bool network_given = false;
  double latency_us = NAN, bandwidth_gbs = NAN;  // NAN: the --network's
  int threads_per_rank = 0;                      // 0: see RankRates::threads_for
  int cores = 0;
  int max_partition = 256;
  bool no_overlap = false;
  uint64_t seed = 0;
  std::string calibration;
  bool recalibrate = false;
  bool json = false;
};

// The network of --network, --latency-us and --bandwidth-gbs (OptionError naming the option).
perf::Network plan_network(const PlanArgs& a);

// Threads per rank and how much the ranks' compute shrinks when they share too few cores.
// Ranks that share the node (--cores) share its memory bandwidth, and its cores with whatever
// else runs there: each kernel is also timed with as many single-threaded copies at once as the
// node runs threads (P x threads, at most one per core), and a rank's rate is its threads' rate
// alone times the slowdown the other ranks' threads add (the per-copy rate at that many copies
// over the one at the rank's own thread count). Past one thread per core, ranks add no
// throughput (MPI polls while a rank waits, so a waiting rank keeps its share of the cores):
// their rates shrink by the share of the cores each gets. A synchronisation costs what it was
// measured to cost with every core busy (validated on 2 cores with 2, 4 and 8 ranks: docs/scaling.md).
class RankRates {
 public:
  // `in` and `layers`: the graph and shapes the kernels are timed on; both must outlive this.
  RankRates(const PlanArgs& a, const Csr& in, const std::vector<perf::LayerShape>& layers);
  int threads_for(int p) const;
  int copies_for(int p) const;
  double scale_for(int p) const;
  perf::Rates rates_for(int p);
  // The rates of one rank's threads alone on the node (no other rank's copies running).
  const perf::Rates& alone(int p) { return calibration(threads_for(p), 1).rates; }
  const std::string& cache() const { return cache_; }
  // Every calibration used so far, by (threads, copies).
  const std::map<std::pair<int, int>, Calibration>& calibrations() const { return cal_; }

 private:
  const Calibration& calibration(int t, int c);
  const PlanArgs& a_;
  const Csr& in_;
  const std::vector<perf::LayerShape>& layers_;
  int node_cores_;
  std::string cache_;
  std::map<std::pair<int, int>, Calibration> cal_;
};

// A prediction's times, bytes and the rank's threads as `--json` rows print them.
nlohmann::json prediction_json(const perf::Prediction& p, int threads, int copies,
                               double compute_scale);

// `dgnn plan` on a temporal graph (plan_temporal.cpp).
void run_plan_temporal(PlanArgs& a, const std::vector<int>& ranks);

}  // namespace dgnn::cli
