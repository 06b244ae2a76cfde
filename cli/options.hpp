#pragma once
// Command-line options shared by subcommands that read edge lists (info, train, partition).
#include <CLI/CLI.hpp>

#include "graph/dataset.hpp"
#include "graph/graph.hpp"

namespace dgnn::cli {

// Adds --directed, --src-col, --dst-col, --weight-col, --time-col, --self-loops, --duplicates
// and --no-cache to `cmd`, bound to `opt` (which must outlive the parse). Defaults are opt's.
void add_edge_list_options(CLI::App* cmd, EdgeListOptions& opt);

// Adds the edge-list options plus what load_dataset reads besides the graph: --features,
// --labels, --train-ids / --val-ids / --test-ids, --generate-features, --feature-dim,
// --train-frac, --val-frac, --num-classes. Not --graph (each command words its own help) nor
// --seed (commands share theirs with other uses).
void add_dataset_options(CLI::App* cmd, DatasetOptions& opt);

}  // namespace dgnn::cli

namespace dgnn::cli {

// A progress indicator for long loads on stderr: silent unless stderr is a terminal and the
// load has run for over half a second; one line, rewritten in place, cleared when done.
ProgressFn terminal_progress(const std::string& what);

}  // namespace dgnn::cli
