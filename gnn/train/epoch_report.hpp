#pragma once
// How a run shows its epochs, every task alike: one printed line and one --log-json record per
// epoch, made from the names of the task's metrics (EpochRecord::val) and figures
// (EpochRecord::figures). A task's run says which metrics it shows and how (EpochFormat).
#include <functional>
#include <string>
#include <vector>

#include "dgnn/gnn/train/training_loop.hpp"

namespace dgnn {

// A metric of the epoch's validation (its name there), its key in the JSON record ("": not
// logged) and the label printed before its value, separator included ("": not printed).
struct ShownMetric {
  std::string name, key, label;
};

struct EpochFormat {
  std::vector<ShownMetric> metrics;
  // Figures logged as whole numbers (the others as they are); every figure is logged, under its
  // own name.
  std::vector<std::string> counts;
  // Printed at the end of the line (after the time split), e.g. the mini-batch sampling.
  std::function<std::string(const EpochRecord&)> suffix;
};

// "epoch    3  loss 0.1234  <label> 0.5678 ...    12.3 ms", then, with `split` (several ranks),
// "  (compute .. comm .. wait .., sent .. MB)", then the format's suffix; no newline.
std::string epoch_line(const EpochRecord& r, const EpochFormat& f, bool split);
// The epoch as one JSON object: epoch, loss, eval_ms, the time split and bytes (time_ms,
// compute_ms, comm_ms, wait_ms, bytes_sent and their max_ over ranks), the shown metrics by key,
// and every figure.
std::string epoch_json(const EpochRecord& r, const EpochFormat& f);

}  // namespace dgnn
