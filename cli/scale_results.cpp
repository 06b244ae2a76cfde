#include "dgnn/cli/scale_results.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

namespace dgnn::cli {

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trim(std::string s) {
  const char* ws = " \t\r\n";
  s.erase(0, std::min(s.size(), s.find_first_not_of(ws)));
  const size_t end = s.find_last_not_of(ws);
  s.erase(end == std::string::npos ? 0 : end + 1);
  return s;
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (!trim(line).empty()) last = trim(line);
  return last;
}

// `key` of the final line when it is a number there, else the median of `epoch_key` over the
// epoch lines that have it.
double field(const nlohmann::json& final_line, const std::vector<nlohmann::json>& epochs,
             const char* key, const char* epoch_key) {
  if (auto it = final_line.find(key); it != final_line.end() && it->is_number())
    return it->get<double>();
  std::vector<double> v;
  for (const auto& e : epochs)
    if (auto it = e.find(epoch_key); it != e.end() && it->is_number())
      v.push_back(it->get<double>());
  return median_of(std::move(v));
}

std::string csv_field(const std::string& s) {
  std::string flat = s;
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  std::replace(flat.begin(), flat.end(), '\r', ' ');
  if (flat.find_first_of(",\"") == std::string::npos) return flat;
  std::string q = "\"";
  for (char c : flat) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string number(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

}  // namespace

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string first_error_line(const std::string& log_text) {
  std::istringstream in(log_text);
  std::string line, any;
  const std::string prefix = "dgnn: error: ";
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
    if (any.empty() && lower(line).find("error") != std::string::npos) any = line;
  }
  return any;
}

ScaleRun read_scale_run(int exit_code, const std::string& json_path, const std::string& log_path) {
  ScaleRun run;
  const std::string log = read_text(log_path);
  if (exit_code != 0) {
    run.error = first_error_line(log);
    if (run.error.empty()) run.error = last_line(log);
    const std::string code = exit_code > 128 ? "killed by signal " + std::to_string(exit_code - 128)
                                             : "exit code " + std::to_string(exit_code);
    run.error = run.error.empty() ? code : run.error + " (" + code + ")";
    return run;
  }
  std::ifstream in(json_path);
  if (!in) {
    run.error = "exit code 0 but no log " + json_path;
    return run;
  }
  std::vector<nlohmann::json> epochs;
  nlohmann::json final_line;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (trim(line).empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      run.error = json_path + ":" + std::to_string(n) + ": not a JSON object";
      return run;
    }
    if (j.value("final", false))
      final_line = std::move(j);
    else
      epochs.push_back(std::move(j));
  }
  if (final_line.is_null() || !final_line.contains("median_epoch_ms")) {
    run.error = json_path + ": no final line with median_epoch_ms";
    return run;
  }
  run.epoch_ms = field(final_line, epochs, "median_epoch_ms", "time_ms");
  run.compute_ms = field(final_line, epochs, "median_compute_ms", "compute_ms");
  run.comm_ms = field(final_line, epochs, "median_comm_ms", "comm_ms");
  run.wait_ms = field(final_line, epochs, "median_wait_ms", "wait_ms");
  run.bytes_sent_per_epoch = field(final_line, epochs, "bytes_sent_per_epoch", "bytes_sent");
  run.ok = true;
  return run;
}

std::vector<ScaleRow> summarise_scale(const std::vector<ScaleConfig>& configs,
                                      const std::vector<std::vector<ScaleRun>>& runs) {
  std::vector<ScaleRow> rows;
  for (size_t i = 0; i < configs.size(); ++i) {
    ScaleRow r;
    r.config = configs[i];
    r.repeats_asked = int(runs[i].size());
    std::vector<double> epoch, compute, comm, wait, bytes;
    for (const ScaleRun& run : runs[i]) {
      if (!run.ok) {
        if (r.error.empty()) r.error = run.error;
        continue;
      }
      ++r.repeats_done;
      epoch.push_back(run.epoch_ms);
      compute.push_back(run.compute_ms);
      comm.push_back(run.comm_ms);
      wait.push_back(run.wait_ms);
      bytes.push_back(run.bytes_sent_per_epoch);
    }
    r.ok = r.repeats_done == r.repeats_asked && r.repeats_asked > 0;
    r.epoch_ms = median_of(epoch);
    r.compute_ms = median_of(compute);
    r.comm_ms = median_of(comm);
    r.wait_ms = median_of(wait);
    r.bytes_sent_per_epoch = median_of(bytes);
    rows.push_back(std::move(r));
  }
  // The baseline of each strategy / partitioner: its smallest rank count with a time.
  std::map<std::pair<std::string, std::string>, const ScaleRow*> base;
  for (const ScaleRow& r : rows) {
    if (r.repeats_done == 0 || r.epoch_ms <= 0) continue;
    const ScaleRow*& b = base[{r.config.strategy, r.config.partitioner}];
    if (b == nullptr || r.config.ranks < b->config.ranks) b = &r;
  }
  for (ScaleRow& r : rows) {
    auto it = base.find({r.config.strategy, r.config.partitioner});
    if (it == base.end() || r.repeats_done == 0 || r.epoch_ms <= 0) continue;
    const ScaleRow& b = *it->second;
    r.baseline_ranks = b.config.ranks;
    r.speedup = b.epoch_ms / r.epoch_ms;
    r.efficiency = r.speedup * b.config.ranks / r.config.ranks;
  }
  return rows;
}

std::string scale_csv(const std::vector<ScaleRow>& rows) {
  std::string out =
      "ranks,strategy,partitioner,repeats_done,repeats_asked,epoch_ms,compute_ms,comm_ms,wait_ms,"
      "bytes_sent_per_epoch,speedup,efficiency,baseline_ranks,status,error\n";
  for (const ScaleRow& r : rows) {
    const bool timed = r.repeats_done > 0;
    const bool scaled = r.baseline_ranks > 0;
    out += std::to_string(r.config.ranks) + "," + csv_field(r.config.strategy) + "," +
           csv_field(r.config.partitioner) + "," + std::to_string(r.repeats_done) + "," +
           std::to_string(r.repeats_asked) + ",";
    for (double x : {r.epoch_ms, r.compute_ms, r.comm_ms, r.wait_ms})
      out += (timed ? number("%.3f", x) : "") + ",";
    out += (timed ? number("%.0f", r.bytes_sent_per_epoch) : "") + ",";
    out += (scaled ? number("%.4f", r.speedup) : "") + ",";
    out += (scaled ? number("%.4f", r.efficiency) : "") + ",";
    out += (scaled ? std::to_string(r.baseline_ranks) : "") + ",";
    out += std::string(r.ok ? "ok" : "failed") + "," + csv_field(r.error) + "\n";
  }
  return out;
}

}  // namespace dgnn::cli
