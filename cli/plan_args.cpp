// What `dgnn plan`'s static and temporal paths share (plan_args.hpp): the network of the options,
// the partitioners, the rates given with --rates (and those used, as `--json` prints them), and
// the JSON row of a prediction.
#include "dgnn/cli/plan_args.hpp"

#include <cmath>

#include "dgnn/cli/options.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/format.hpp"

namespace dgnn::cli {

nlohmann::json prediction_json(const perf::Prediction& p, int threads, int copies,
                               double compute_scale) {
  return {{"ranks", p.ranks},
          {"epoch_ms", p.epoch_ms},
          {"compute_ms", p.compute_ms},
          {"comm_ms", p.comm_ms},
          {"wait_ms", p.wait_ms},
          {"halo_ms", p.halo_ms},
          {"pack_ms", p.pack_ms},
          {"allreduce_ms", p.allreduce_ms},
          {"bytes_per_epoch", p.bytes_per_epoch},
          {"max_rank_bytes", p.max_rank_bytes},
          {"threads_per_rank", threads},
          {"copies", copies},
          {"compute_scale", compute_scale}};
}

std::vector<Partitioner> parse_partitioners(const std::string& list,
                                            std::vector<std::string>* names) {
  *names = split_list(list, "--partitioners");
  std::vector<Partitioner> methods;
  for (const std::string& n : *names) {
    try {
      methods.push_back(parse_partitioner(n));
    } catch (const OptionError& e) {
      throw OptionError(std::string("--partitioners: ") + e.what());
    }
  }
  return methods;
}

void read_given_rates(PlanArgs& a) {
  if (a.rates.empty()) return;
  if (!a.calibration.empty())
    throw OptionError("--calibration: --rates " + a.rates +
                      " gives the rates, so nothing is timed or cached; give one of them");
  if (a.recalibrate)
    throw OptionError("--recalibrate: --rates " + a.rates +
                      " gives the rates, so nothing is timed; give one of them");
  a.given = std::make_shared<const perf::GivenRates>(perf::read_rates_file(a.rates));
}

nlohmann::json used_rates_json(const perf::CalibrationRecord& rates, perf::GivenRates g,
                               const std::map<int, perf::Rates>& fused) {
  g.cores = rates.node_cores;
  g.entries.clear();
  g.fallback.reset();
  for (auto& [tc, c] : rates.calibrations) {
    perf::Rates r = c.rates;
    // The fused ops are timed per thread count, one rank's threads alone.
    if (auto it = fused.find(tc.first); it != fused.end() && tc.second == 1) {
      const perf::Rates& f = it->second;
      r.lstm_fwd = f.lstm_fwd, r.lstm_bwd = f.lstm_bwd, r.gru_fwd = f.gru_fwd;
      r.gru_bwd = f.gru_bwd, r.pair_fwd = f.pair_fwd, r.pair_bwd = f.pair_bwd, r.gather = f.gather;
    }
    g.entries[tc] = r;
  }
  return nlohmann::json::parse(perf::rates_file_text(g));
}

perf::Network plan_network(const PlanArgs& a) {
  perf::Network net = perf::named_network(a.network);
  // Bounds a real network can have (a microsecond to a second per message, 1 MB/s to 1 PB/s):
  // beyond them the plan's times are only overflow.
  if (!std::isnan(a.latency_us)) {
    if (!(a.latency_us >= 0 && a.latency_us <= 1e6))
      throw OptionError("--latency-us must be from 0 to 1e6 (a second), got " +
                        fmt_double(a.latency_us));
    net.latency_s = a.latency_us * 1e-6, net.name = "custom";
  }
  if (!std::isnan(a.bandwidth_gbs)) {
    if (!(a.bandwidth_gbs >= 1e-3 && a.bandwidth_gbs <= 1e6))
      throw OptionError("--bandwidth-gbs must be from 0.001 (1 MB/s) to 1e6, got " +
                        fmt_double(a.bandwidth_gbs));
    net.bandwidth_Bps = a.bandwidth_gbs * 1e9, net.name = "custom";
  }
  // Both given: the --network's figures are all replaced, so naming one has no effect.
  if (!std::isnan(a.latency_us) && !std::isnan(a.bandwidth_gbs) && a.network_given)
    throw OptionError("--network " + a.network +
                      ": --latency-us and --bandwidth-gbs replace "
                      "both of its figures; give one of them, or no --network");
  return net;
}

}  // namespace dgnn::cli
