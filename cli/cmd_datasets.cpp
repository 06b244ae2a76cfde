// `dgnn datasets`: the real datasets that ship with dgnn, where they are, their published
// reference number and the command that reproduces dgnn's own.
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dgnn/cli/commands.hpp"

namespace dgnn::cli {

namespace {

namespace fs = std::filesystem;

struct Shipped {
  const char* name;
  const char* path;  // under the datasets folder: a dataset folder or an edge-list file
  const char* what;
  const char* reference;  // the published number and dgnn's with `command`
  const char* options;    // what `dgnn train --graph PATH` needs besides the path
};

// dgnn's numbers were measured with exactly these commands (docs/benchmarks.md says how).
const Shipped kShipped[] = {
    {"cora", "cora",
     "static, node classification: 2,708 vertices, 5,278 edges, 1,433 features, 7 classes, "
     "Planetoid split 140 / 500 / 1,000",
     "GCN test accuracy 81.5% (Kipf & Welling, ICLR 2017); dgnn 0.808",
     "--model gcn --hidden 16 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 --epochs 200"},
    {"bitcoin-alpha", "bitcoin-alpha/soc-sign-bitcoinalpha.csv.gz",
     "temporal, link prediction: 3,783 vertices, 24,186 rated edges, 137 snapshots of "
     "1,200,000 s",
     "EvolveGCN-O test MAP 0.0036 / MRR 0.1185 over all vertex pairs (Pareja et al., AAAI "
     "2020); dgnn GCRN 0.0057 / 0.201",
     "--time-col 3 --snapshot-seconds 1200000 --model gcrn --hidden 32 --layers 2 --epochs 12 "
     "--bptt 10 --neg-train 100 --neg-eval all --seed 0"},
    {"collegemsg", "collegemsg/CollegeMsg.txt.gz",
     "temporal, link prediction: 1,899 vertices, 59,835 messages, 89 snapshots of 190,080 s "
     "(EvolveGCN's \"UCI\")",
     "EvolveGCN-O test MAP 0.0270 / MRR 0.1379 over all vertex pairs (Pareja et al., AAAI "
     "2020); dgnn T-GCN 0.0058 / 0.115",
     "--time-col 2 --snapshot-seconds 190080 --model tgcn --hidden 32 --layers 2 --epochs 12 "
     "--bptt 10 --neg-train 50 --neg-eval all --train-frac 0.71 --val-frac 0.11 --seed 0"},
};

// The datasets folder: the installed package's, else the source tree this binary was built
// from. Empty when neither has it.
fs::path datasets_dir() {
  std::vector<fs::path> candidates;
  if (!get_share_dir().empty()) candidates.push_back(fs::path(get_share_dir()) / "datasets");
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path() / DGNN_PLOT_SCRIPT_REL / "datasets");
  candidates.push_back(fs::path(DGNN_SOURCE_DIR) / "datasets");
  for (const fs::path& p : candidates)
    if (fs::is_directory(p / kShipped[0].path, ec)) return p.lexically_normal();
  return {};
}

// `p` as a user would type it here: relative when it is under the working directory.
std::string shown(const fs::path& p) {
  std::error_code ec;
  const fs::path rel = fs::relative(p, fs::current_path(ec), ec);
  if (!ec && !rel.empty() && rel.native().rfind("..", 0) != 0) return rel.string();
  return p.string();
}

uintmax_t size_of(const fs::path& p) {
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return fs::file_size(p, ec);
  uintmax_t total = 0;
  for (const auto& e : fs::directory_iterator(p, ec))
    if (e.is_regular_file(ec)) total += e.file_size(ec);
  return total;
}

}  // namespace

void register_datasets(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "datasets", "List the real datasets that ship with dgnn, with reference numbers");
  cmd->add_flag("--json", *json, "One JSON object instead of text");
  cmd->callback([json] {
    const fs::path dir = datasets_dir();
    nlohmann::json out = nlohmann::json::array();
    for (const Shipped& s : kShipped) {
      const fs::path p = dir / s.path;
      std::error_code ec;
      const bool here = !dir.empty() && fs::exists(p, ec);
      const std::string where = here ? shown(p) : std::string("datasets/") + s.path;
      const std::string command = "dgnn train --graph " + where + " " + s.options;
      if (*json) {
        out.push_back({{"name", s.name},
                       {"path", here ? where : ""},
                       {"bytes", here ? size_of(p) : 0},
                       {"what", s.what},
                       {"reference", s.reference},
                       {"command", command}});
        continue;
      }
      std::printf("%s\n  %s\n  %s%s\n  reference: %s\n  reproduce: %s\n\n", s.name, s.what,
                  here ? "at " : "not found (a clone has it under datasets/): ",
                  where.c_str(), s.reference, command.c_str());
    }
    if (*json) std::printf("%s\n", out.dump(1).c_str());
  });
}

}  // namespace dgnn::cli
