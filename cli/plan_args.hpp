#pragma once
// What `dgnn plan` shares between its static and temporal paths: the parsed options, and the
// per-rank rates for P ranks on this machine (calibrated once per thread count and number of
// copies running at once, see plan/calibration.hpp).
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "dgnn/graph/dataset.hpp"
#include "dgnn/graph/temporal.hpp"
#include "dgnn/partition/partition.hpp"
#include "dgnn/plan/calibration.hpp"
#include "dgnn/plan/memory_model.hpp"
#include "dgnn/plan/plan_static.hpp"
#include "dgnn/plan/plan_temporal.hpp"
#include "dgnn/plan/perf_model.hpp"

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
  std::string task = "link";                   // temporal graphs: link or edge; or forecast
  int lags = 4, horizon = 1;                   // --task forecast, as train
  std::string signals;                         // --task forecast: --signals, as train
  int bptt = 0;
  int neg_train = 5;
  int neg_eval = 100;
  int snapshot_groups = -1;  // vertex strategy with METIS, as train's (see PartitionOptions)
  // Each alone: the other keeps the task's default.
  bool train_frac_given = false, val_frac_given = false;
  bool step_fracs_given() const { return train_frac_given || val_frac_given; }
  bool temporal_options_given = false;  // --strategies, --task, --bptt, --neg-train, ...
  std::string network = "infiniband-hdr";
  bool network_given = false;
  double latency_us = NAN, bandwidth_gbs = NAN;  // NAN: the --network's
  int threads_per_rank = 0;                      // 0: see perf::RankRates::threads_for
  int cores = 0;
  int max_partition = 256;
  bool no_overlap = false;
  uint64_t seed = 0;
  std::string calibration;
  bool recalibrate = false;
  std::string rates;                              // --rates FILE: every rate given, nothing timed
  std::shared_ptr<const perf::GivenRates> given;  // read from `rates` by read_given_rates
  bool json = false;
  // --device-memory: whether the largest rank fits (0: not asked).
  std::string device_memory;
  std::string halo_memory = "auto";
  int64_t halo_memory_bytes = -1;  // parsed --halo-memory: < 0 auto, 0 whole
  int64_t device_memory_bytes = 0;
  // --vertices, --edges: a graph's size alone (no --graph): the memory rows only.
  int64_t size_vertices = 0, size_edges = 0;
};

// One rank count's memory in the sharded design (plan/memory_model.hpp): the largest rank's
// breakdown, which rank that is, and the sum over ranks.
struct MemoryRow {
  int ranks = 1;
  std::string partitioner;
  perf::MemoryBreakdown largest;
  int largest_rank = 0;
  int64_t sum_bytes = 0;
  bool halo_bound = false;  // no partition: the halo is its upper bound
  bool fits(int64_t device_bytes) const { return largest.total() <= device_bytes; }
};
// From the static plan's partitions (every rank's counts).
std::vector<MemoryRow> static_memory_rows(const Dataset& d, const perf::StaticPlan& plan,
                                          int64_t halo_memory);
// From the temporal plan's vertex-strategy rows (the largest training snapshot's counts per rank).
std::vector<MemoryRow> temporal_memory_rows(const TemporalGraph& g,
                                            const perf::TemporalTraining& t,
                                            const perf::TemporalPlan& plan, int64_t hidden,
                                            int neg_eval = 100);
// From --vertices and --edges alone (--snapshots T: a temporal graph of T snapshots), with
// --feature-dim, --num-classes, --model, --layers, --hidden, --bptt and --neg-train; `what` says
// what was planned. OptionError naming the option for sizes out of range.
std::vector<MemoryRow> size_memory_rows(PlanArgs& a, const std::vector<int>& ranks,
                                        std::string* what);
// The memory table (text), and its rows as `--json`'s "memory".
void print_memory(const PlanArgs& a, const std::vector<MemoryRow>& rows);
nlohmann::json memory_json(const PlanArgs& a, const std::vector<MemoryRow>& rows);

// The network of --network, --latency-us and --bandwidth-gbs (OptionError naming the option).
perf::Network plan_network(const PlanArgs& a);

// The partitioners of --partitioners, parsed, and their names as given (OptionError naming the
// option).
std::vector<Partitioner> parse_partitioners(const std::string& list,
                                            std::vector<std::string>* names);

// Reads --rates into a.given (OptionError: the file's errors, or --calibration / --recalibrate
// given with it: nothing is timed, so nothing is cached).
void read_given_rates(PlanArgs& a);

// The cores and the calibration cache (or given rates) of --threads-per-rank, --cores,
// --calibration, --recalibrate and --rates.
inline perf::RateOptions rate_options(const PlanArgs& a) {
  return {a.threads_per_rank, a.cores, a.calibration, a.recalibrate, a.given};
}

// What a plan used, in the form --rates reads (perf::rates_file_text), for `--json`'s "rates".
// `g` holds what the plan measured beyond the kernels (probes, synchronisations, pair drawing);
// `fused`, the temporal models' fused ops by threads per rank.
nlohmann::json used_rates_json(const perf::CalibrationRecord& rates, perf::GivenRates g,
                               const std::map<int, perf::Rates>& fused = {});

// A prediction's times, bytes and the rank's threads as `--json` rows print them.
nlohmann::json prediction_json(const perf::Prediction& p, int threads, int copies,
                               double compute_scale);

// `dgnn plan` on a temporal graph (plan_temporal.cpp).
void run_plan_temporal(PlanArgs& a, const std::vector<int>& ranks);

}  // namespace dgnn::cli
