#pragma once
// Command-line options shared by subcommands that read edge lists (info, train, partition).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "dgnn/datasets/sbm.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/graph/graph.hpp"
#include "dgnn/graph/temporal.hpp"

namespace dgnn::cli {

// Adds --directed, --src-col, --dst-col, --weight-col, --time-col, --self-loops, --duplicates
// and --no-cache to `cmd`, bound to `opt` (which must outlive the parse). Defaults are opt's.
// Number checks for options: finite and > 0, or finite and >= 0. CLI11's PositiveNumber and
// NonNegativeNumber print DBL_MAX as an upper bound ("0 not in range 0.000000 to 1797...").
// A value that is not a number passes, and CLI11's conversion names it.
CLI::Validator positive();
CLI::Validator non_negative();

void add_edge_list_options(CLI::App* cmd, EdgeListOptions& opt);

// Adds the edge-list options plus what load_dataset reads besides the graph: --features,
// --labels, --train-ids / --val-ids / --test-ids, --generate-features, --feature-dim,
// --train-frac, --val-frac, --num-classes. Not --graph (each command words its own help) nor
// --seed (commands share theirs with other uses).
void add_dataset_options(CLI::App* cmd, DatasetOptions& opt);

// Adds --snapshot-seconds S, --snapshots T (exclusive), --window k (sliding when k > 1) and
// --cumulative (exclusive with --window), bound to `snap`, which must outlive the parse.
// load_temporal checks what the flags cannot: exactly one of seconds / count once a time column
// is used.
void add_snapshot_options(CLI::App* cmd, SnapshotOptions& snap);

// Without --graph (the generated default), train and plan refuse the options above that only
// describe an input graph (all but --train-frac, --val-frac and --no-cache) rather than ignore
// them: OptionError naming the first one given.
void refuse_input_options(const CLI::App* cmd, const std::string& graph);
// The graph train and plan use without --graph (the embedded default): a planted-partition SBM
// seeded by opt.seed, split by --train-frac / --val-frac when given.
SbmConfig default_sbm(const DatasetOptions& opt);

// After parsing: whether `graph` is to be read as a temporal graph (a --time-col, or a dataset
// directory with snapshots.txt). OptionError when snapshot options were given for an input
// that is not temporal.
bool is_temporal_input(const std::string& graph, const EdgeListOptions& edges,
                       const SnapshotOptions& snap);

}  // namespace dgnn::cli

namespace dgnn::cli {

// "a, b,c" -> {"a", "b", "c"}; OptionError naming `option` for an empty item or one listed twice.
std::vector<std::string> split_list(const std::string& s, const char* option);
// --ranks "1,2,4,8": distinct positive rank counts up to max_ranks, ascending; OptionError
// naming --ranks otherwise.
std::vector<int> parse_ranks(const std::string& s, int max_ranks);

// A progress indicator for long loads on stderr: silent unless stderr is a terminal and the
// load has run for over half a second; one line, rewritten in place, cleared when done.
ProgressFn terminal_progress(const std::string& what);

}  // namespace dgnn::cli
