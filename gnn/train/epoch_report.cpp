// One epoch printer and one epoch logger for every task (gnn/train/epoch_report.hpp).
#include "dgnn/gnn/train/epoch_report.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace dgnn {

namespace {

nlohmann::json split_object(const StepSplit& s) {
  return {{"time_ms", s.time_ms},
          {"compute_ms", s.compute_ms},
          {"comm_ms", s.comm_ms},
          {"wait_ms", s.wait_ms},
          {"bytes_sent", s.bytes_sent},
          {"max_compute_ms", s.max_compute_ms},
          {"max_comm_ms", s.max_comm_ms},
          {"max_wait_ms", s.max_wait_ms},
          {"max_bytes_sent", s.max_bytes_sent}};
}

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// The split as printed on an epoch's line: "  (compute .. comm .. wait .., sent .. MB)".
std::string split_text(const StepSplit& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "  (compute %.1f comm %.1f wait %.1f, sent %.2f MB)",
                s.compute_ms, s.comm_ms, s.wait_ms, double(s.bytes_sent) / 1e6);
  return buf;
}

}  // namespace

std::string epoch_line(const EpochRecord& r, const EpochFormat& f, bool split) {
  char head[64];
  std::snprintf(head, sizeof head, "epoch %4d  loss %.4f", r.epoch, r.loss);
  std::string line = head;
  for (const ShownMetric& m : f.metrics)
    if (!m.label.empty()) line += m.label + format(" %.4f", r.val.get(m.name));
  line += format("  %7.1f ms", r.time_ms);
  if (split) line += split_text(r);
  if (f.suffix) line += f.suffix(r);
  return line;
}

std::string epoch_json(const EpochRecord& r, const EpochFormat& f) {
  nlohmann::json j = {{"epoch", r.epoch}, {"loss", r.loss}, {"eval_ms", r.eval_ms}};
  j.update(split_object(r));
  for (const ShownMetric& m : f.metrics)
    if (!m.key.empty()) j[m.key] = r.val.get(m.name);
  for (const auto& [name, v] : r.figures) {
    if (std::find(f.counts.begin(), f.counts.end(), name) != f.counts.end())
      j[name] = int64_t(v);
    else
      j[name] = v;
  }
  return j.dump();
}

}  // namespace dgnn
