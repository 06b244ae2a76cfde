// Every task's epoch lines and --log-json records (cli/train_args.hpp, EpochPrinter).
#include <cstdio>

#include "dgnn/cli/train_args.hpp"

namespace dgnn::cli {

EpochPrinter::EpochPrinter(const TrainArgs& a, Communicator& comm, EpochFormat format)
    : format_(std::move(format)),
      print_(!a.quiet && comm.rank() == 0),
      split_(comm.size() > 1),
      loaded_(gather_rank_usage(comm)) {
  if (comm.rank() == 0 && !a.log_json.empty()) log_ = std::make_unique<LineLog>(a.log_json);
  if (print_) std::printf("memory after loading: %s\n", rank_usage_text(loaded_).c_str());
}

std::function<void(const EpochRecord&)> EpochPrinter::callback() {
  return [this](const EpochRecord& r) {
    if (print_) std::printf("%s\n", epoch_line(r, format_, split_).c_str());
    if (log_) log_->line(epoch_json(r, format_));
  };
}

void EpochPrinter::final_line(nlohmann::json j, const LoopSummary& s) {
  if (!log_) return;
  j["rank_read_bytes"] = loaded_.read_bytes;
  j["rank_loaded_peak_bytes"] = loaded_.peak_bytes;
  j["rank_peak_bytes"] = s.usage.peak_bytes;
  log_->line(j.dump());
}

}  // namespace dgnn::cli
