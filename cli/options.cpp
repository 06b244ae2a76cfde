#include "dgnn/cli/options.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dgnn/common/error.hpp"

namespace dgnn::cli {

namespace {

// An enum option spelled by name. The enums have uint8_t storage, which CLI11's
// CheckedTransformer would print as raw characters in help and errors; matching the name with
// IsMember and mapping it here keeps both readable ("--x: foo not in {a,b}").
template <typename Enum>
CLI::Option* add_enum_option(CLI::App* cmd, const std::string& flag, Enum& target,
                             std::vector<std::pair<std::string, Enum>> names,
                             const std::string& help) {
  std::vector<std::string> keys;
  std::string current;
  for (const auto& [name, value] : names) {
    keys.push_back(name);
    if (value == target) current = name;
  }
  return cmd
      ->add_option_function<std::string>(
          flag,
          [&target, names](const std::string& s) {
            for (const auto& [name, value] : names)
              if (name == s) target = value;
          },
          help)
      ->transform(CLI::IsMember(keys, CLI::ignore_case))
      ->default_str(current);
}

CLI::Validator number_check(bool strict) {
  return CLI::Validator(
      [strict](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0') return {};  // not a number: the conversion says so
        const bool ok = std::isfinite(v) && (strict ? v > 0 : v >= 0);
        return ok ? std::string()
                  : "must be " + std::string(strict ? "> 0" : ">= 0") + " (a finite number), got " +
                        text;
      },
      strict ? "> 0" : ">= 0");
}

}  // namespace

CLI::Validator positive() { return number_check(true); }
CLI::Validator non_negative() { return number_check(false); }

void add_edge_list_options(CLI::App* cmd, EdgeListOptions& opt) {
  const std::string group = "Edge list";
  cmd->add_flag("--directed", opt.directed,
                "Keep edges one-way (src -> dst); by default every edge is stored both ways")
      ->group(group);
  cmd->add_flag("--bipartite", opt.bipartite,
                "Source and destination ids are two id spaces (JODIE / TGB users and items): "
                "destination ids are shifted past the largest source id")
      ->group(group);
  cmd->add_option("--src-col", opt.src_col, "0-based column of the source vertex id")
      ->check(non_negative())
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--dst-col", opt.dst_col, "0-based column of the destination vertex id")
      ->check(non_negative())
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--weight-col", opt.weight_col,
                  "0-based column of the edge weight (default: none)")
      ->check(non_negative())
      ->group(group);
  cmd->add_option("--time-col", opt.time_col,
                  "0-based column of the edge timestamp, for temporal graphs (default: none)")
      ->check(non_negative())
      ->group(group);
  add_enum_option(cmd, "--self-loops", opt.self_loops,
                  {{"keep", SelfLoops::keep}, {"remove", SelfLoops::remove}},
                  "What to do with edges v -> v")
      ->group(group);
  add_enum_option(cmd, "--duplicates", opt.duplicates,
                  {{"keep", Duplicates::keep}, {"merge", Duplicates::merge}},
                  "Repeated edges: keep every copy, or merge into one (weights summed)")
      ->group(group);
  cmd->add_flag_callback(
         "--no-cache", [&opt] { opt.use_cache = false; },
         "Parse the edge list even if a binary cache of it exists, and write none")
      ->group(group);
}

void refuse_input_options(const CLI::App* cmd, const std::string& graph) {
  if (!graph.empty()) return;
  // Every option of the three groups above, so one added there is covered too.
  for (const CLI::Option* o : cmd->get_options([](const CLI::Option* o) {
         const std::string& g = o->get_group();
         return g == "Edge list" || g == "Dataset" || g == "Snapshots (temporal graphs)";
       })) {
    const std::string n = o->get_name();
    if (o->count() > 0 && n != "--train-frac" && n != "--val-frac" && n != "--no-cache")
      throw OptionError(n +
                        ": describes an input graph, and no --graph is given (the generated "
                        "default SBM has its own features and labels)");
  }
}

SbmConfig default_sbm(const DatasetOptions& opt) {
  SbmConfig cfg;
  cfg.seed = opt.seed;
  if (opt.fracs_given) {
    cfg.train_frac = opt.train_frac;
    cfg.val_frac = opt.val_frac;
    cfg.test_frac = std::max(0.0, 1.0 - opt.train_frac - opt.val_frac);
  }
  return cfg;
}

void add_dataset_options(CLI::App* cmd, DatasetOptions& opt) {
  const std::string group = "Dataset";
  cmd->add_option("--features", opt.features,
                  "Feature matrix: .npy (row i = vertex id i) or text 'vertex f1 f2 ...' "
                  "(default: features.npy|features.txt of a dataset directory)")
      ->check(CLI::ExistingFile)
      ->group(group);
  cmd->add_option("--labels", opt.labels,
                  "Labels, 'vertex label' per line, -1 = unlabelled (default: labels.txt of a "
                  "dataset directory)")
      ->check(CLI::ExistingFile)
      ->group(group);
  cmd->add_option("--train-ids", opt.train, "Training vertex ids, one per line")
      ->check(CLI::ExistingFile)
      ->group(group);
  cmd->add_option("--val-ids", opt.val, "Validation vertex ids, one per line")
      ->check(CLI::ExistingFile)
      ->group(group);
  cmd->add_option("--test-ids", opt.test, "Test vertex ids, one per line")
      ->check(CLI::ExistingFile)
      ->group(group);
  add_enum_option(cmd, "--generate-features", opt.generated,
                  {{"degree", GeneratedFeatures::degree},
                   {"onehot", GeneratedFeatures::onehot},
                   {"random", GeneratedFeatures::random}},
                  "Features to make when none are given: degree (one-hot log2 degree bucket), "
                  "onehot (vertex id), random")
      ->each([&opt](const std::string&) { opt.generate_given = true; })
      ->group(group);
  cmd->add_option("--feature-dim", opt.generated_dim, "Columns of generated features")
      ->check(positive())
      ->capture_default_str()
      ->each([&opt](const std::string&) { opt.generate_given = true; })
      ->group(group);
  cmd->add_option("--train-frac", opt.train_frac,
                  "Without split files: fraction of labelled vertices to train on (temporal "
                  "link and edge tasks: fraction of the steps, 0.7 when not given)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str()
      ->each([&opt](const std::string&) { opt.fracs_given = true; })
      ->group(group);
  cmd->add_option("--val-frac", opt.val_frac,
                  "Without split files: fraction of labelled vertices to validate on (the rest "
                  "is the test set; temporal link and edge tasks: of the steps, 0.1 when not "
                  "given)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str()
      ->each([&opt](const std::string&) { opt.fracs_given = true; })
      ->group(group);
  cmd->add_option("--num-classes", opt.num_classes,
                  "Number of classes (default: largest label + 1; larger labels are errors)")
      ->check(positive())
      ->group(group);
  add_edge_list_options(cmd, opt.edges);
}

void add_snapshot_options(CLI::App* cmd, SnapshotOptions& snap) {
  const std::string group = "Snapshots (temporal graphs)";
  CLI::Option* secs =
      cmd->add_option("--snapshot-seconds", snap.seconds,
                      "Cut the time line into buckets of this many time units (e.g. 1200000 s)")
          ->check(positive())
          ->group(group);
  CLI::Option* count = cmd->add_option("--snapshots", snap.count,
                                       "Cut [first time, last time] into this many equal buckets")
                           ->check(positive())
                           ->group(group);
  secs->excludes(count);
  CLI::Option* window =
      cmd->add_option_function<int>(
             "--window",
             [&snap](int k) {
               snap.window = k;
               snap.mode = k > 1 ? SnapshotMode::sliding : SnapshotMode::window;
             },
             "Snapshot t holds the edges of buckets t-k+1..t (default 1: its own bucket only)")
          ->check(positive())
          ->group(group);
  CLI::Option* cumulative =
      cmd->add_flag_callback(
             "--cumulative", [&snap] { snap.mode = SnapshotMode::cumulative; },
             "Snapshot t holds every edge up to the end of bucket t")
          ->group(group);
  window->excludes(cumulative);
}

bool is_temporal_input(const std::string& graph, const EdgeListOptions& edges,
                       const SnapshotOptions& snap) {
  if (edges.time_col >= 0 || read_temporal_layout(graph)) return true;
  const bool given =
      snap.seconds != 0 || snap.count != 0 || snap.window != 1 || snap.mode != SnapshotMode::window;
  if (given)
    throw OptionError(
        "--snapshot-seconds, --snapshots, --window and --cumulative cut a temporal graph: "
        "give the column of the timestamps with --time-col");
  return false;
}

}  // namespace dgnn::cli

namespace dgnn::cli {

ProgressFn terminal_progress(const std::string& what) {
  if (!isatty(STDERR_FILENO)) return {};
  auto start =
      std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  return [what, start](const char* stage, double fraction) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - *start).count();
    if (s < 0.5) return;
    std::fprintf(stderr, "\r%s: %-5s %3.0f%%  (%.1f s)\x1b[K", what.c_str(), stage,
                 100.0 * fraction, s);
    if (std::string(stage) == "build" && fraction >= 1.0) std::fprintf(stderr, "\r\x1b[K");
    std::fflush(stderr);
  };
}

std::vector<std::string> split_list(const std::string& s, const char* option) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t comma = s.find(',', start);
    std::string item =
        s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (item.empty())
      throw OptionError(std::string(option) + " '" + s +
                        "': expected a comma-separated list with no empty items");
    if (std::find(items.begin(), items.end(), item) != items.end())
      throw OptionError(std::string(option) + " '" + s + "': '" + item + "' is listed twice");
    items.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

std::vector<int> parse_ranks(const std::string& s, int max_ranks) {
  std::vector<int> ranks;
  for (const std::string& item : split_list(s, "--ranks")) {
    int r = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), r);
    if (ec != std::errc() || end != item.data() + item.size() || r < 1 || r > max_ranks)
      throw OptionError("--ranks '" + s + "': '" + item + "' is not a rank count (expected " +
                        "integers from 1 to " + std::to_string(max_ranks) + ", e.g. 1,2,4,8)");
    if (std::find(ranks.begin(), ranks.end(), r) != ranks.end())
      throw OptionError("--ranks '" + s + "': " + item + " is listed twice");
    ranks.push_back(r);
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

}  // namespace dgnn::cli
