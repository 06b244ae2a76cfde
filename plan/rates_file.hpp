#pragma once
// Rates given instead of measured (`dgnn plan --rates FILE`): everything a plan would otherwise
// time on this machine, read from a JSON file, so that the same options give the same plan on
// any machine and at any load (a node other than this one, a plan to reproduce, the tests). A
// plan's `--json` holds what it measured in this form under "rates"; docs/scaling.md has the
// format with an example.
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "dgnn/plan/perf_model.hpp"

namespace dgnn::perf {

struct GivenRates {
  std::string file;  // named in errors and in the plan's output
  // The node's cores: a rank's threads without --threads-per-rank or --cores. 0: this machine's.
  int cores = 0;
  // Kernel rates (the temporal models' fused ops included) by (threads per rank, copies running
  // at once), as calibrate() measures them; `fallback`, an entry naming neither, stands for every
  // pair not listed.
  std::map<std::pair<int, int>, Rates> entries;
  std::optional<Rates> fallback;
  double attention_factor = 1;           // GAT: what the probe of real epochs scales attention by
  std::map<int, double> step_overhead;   // temporal, by threads: the real step's factor; none: 1
  std::map<int, double> process_sync_s;  // temporal, --cores, by processes polling; none: 0
  double pairs_per_s = 0;  // temporal: pairs one process draws per second; 0: drawing not costed
  double pair_draw_fixed = 1;  // of a step's drawing, the share each rank of several pays anyway

  // The rates of `threads` threads with `copies` copies at once; OptionError naming the file and
  // the pair when it has neither that entry nor a fallback.
  Rates at(int threads, int copies) const;
  // The nearest count's value at or above `threads` (`procs`), else the largest one's.
  double overhead(int threads) const;
  double process_sync(int procs) const;
};

// OptionError naming --rates, the file and what is wrong (a rate that is not a positive finite
// number, an unknown field, a shape key that is not "KxN", ...): every field is checked.
GivenRates read_rates_file(const std::string& file);
// The JSON text read_rates_file reads back to `g` (file and nothing else aside).
std::string rates_file_text(const GivenRates& g);

}  // namespace dgnn::perf
