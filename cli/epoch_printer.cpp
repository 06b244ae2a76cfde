// Every task's epoch lines and --log-json records (cli/train_args.hpp, EpochPrinter).
#include <cstdio>

#include "dgnn/cli/train_args.hpp"

namespace dgnn::cli {

EpochPrinter::EpochPrinter(const TrainArgs& a, const Communicator& comm, EpochFormat format)
    : format_(std::move(format)),
      print_(!a.quiet && comm.rank() == 0),
      split_(comm.size() > 1) {
  if (comm.rank() == 0 && !a.log_json.empty()) log_ = std::make_unique<LineLog>(a.log_json);
}

std::function<void(const EpochRecord&)> EpochPrinter::callback() {
  return [this](const EpochRecord& r) {
    if (print_) std::printf("%s\n", epoch_line(r, format_, split_).c_str());
    if (log_) log_->line(epoch_json(r, format_));
  };
}

void EpochPrinter::final_line(const nlohmann::json& j) {
  if (log_) log_->line(j.dump());
}

}  // namespace dgnn::cli
