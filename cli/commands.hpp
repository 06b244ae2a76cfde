#pragma once
// Each `dgnn` subcommand registers itself on the app; main() parses, runs the chosen one, and is
// the only place that catches dgnn::Error (one line on stderr, non-zero exit).
#include <CLI/CLI.hpp>
#include <string>

namespace dgnn::cli {

void register_train(CLI::App& app);
void register_info(CLI::App& app);
void register_generate(CLI::App& app);
void register_partition(CLI::App& app);
void register_scale(CLI::App& app);
void register_plan(CLI::App& app);
void register_datasets(CLI::App& app);

// The installed package's share folder (cli_main_with's share_dir): scale looks there first for
// scale_plot.py, datasets for the shipped datasets.
void set_share_dir(const std::string& dir);
const std::string& get_share_dir();

}  // namespace dgnn::cli
