#pragma once
// What `dgnn scale` makes of its runs: one run's outcome read back from its --log-json file and
// its console log, the per-configuration summary (medians over repeats, speedup and efficiency
// against the smallest rank count), and results.csv.
#include <string>
#include <vector>

namespace dgnn::cli {

// One configuration of a study; every repeat of it is a separate run.
struct ScaleConfig {
  int ranks = 1;
  std::string strategy;     // vertex | snapshot
  std::string partitioner;  // metis | random | hash | range
};

// One `dgnn train` run.
struct ScaleRun {
  bool ok = false;
  std::string error;  // why it failed: the first error line of its log, or what was missing
  double epoch_ms = 0, compute_ms = 0, comm_ms = 0, wait_ms = 0;
  double bytes_sent_per_epoch = 0;
};

// A run's outcome from its exit status, its --log-json file (per-epoch lines and a final line)
// and its console log. The final line's medians are used where it has them; otherwise (temporal
// training writes only median_epoch_ms there) the median over the epoch lines.
ScaleRun read_scale_run(int exit_code, const std::string& json_path, const std::string& log_path);

// The first line of a run's console log that reports an error ("dgnn: error: ..." without that
// prefix, else any line mentioning an error), or "" when there is none.
std::string first_error_line(const std::string& log_text);

// One row of results.csv.
struct ScaleRow {
  ScaleConfig config;
  int repeats_done = 0;  // runs that succeeded
  int repeats_asked = 0;
  double epoch_ms = 0, compute_ms = 0, comm_ms = 0, wait_ms = 0, bytes_sent_per_epoch = 0;
  int baseline_ranks = 0;  // 0: no successful configuration of this strategy / partitioner
  double speedup = 0, efficiency = 0;
  bool ok = false;  // every repeat succeeded
  std::string error;
};

// Rows of `configs` (runs[i] holds the repeats of configs[i]): medians over the successful
// repeats; speedup = baseline epoch time / this one and efficiency = speedup * baseline ranks /
// ranks, against the smallest rank count of the same strategy and partitioner that has a time.
std::vector<ScaleRow> summarise_scale(const std::vector<ScaleConfig>& configs,
                                      const std::vector<std::vector<ScaleRun>>& runs);

// results.csv: a header, then one line per row (fields quoted where CSV needs it).
std::string scale_csv(const std::vector<ScaleRow>& rows);

// The median of `v` (the mean of the middle two for an even count); 0 for none.
double median_of(std::vector<double> v);

}  // namespace dgnn::cli
