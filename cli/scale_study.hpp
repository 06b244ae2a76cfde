#pragma once
// What `dgnn scale` (cmd_scale.cpp) does around its runs: the MPI launcher's command line, the
// study's configurations, the folder it writes into, and the plots drawn from results.csv.
#include <filesystem>
#include <string>
#include <vector>

#include "dgnn/cli/scale_results.hpp"

namespace dgnn::cli {

// The launcher of ranks when --launcher is not given: Open MPI's mpiexec, "{ranks}" standing for
// the rank count.
std::string default_launcher();
// The words of a launcher template (split at blanks), each "{ranks}" replaced by `ranks`.
std::vector<std::string> launcher_argv(const std::string& tmpl, int ranks);

// The items of `v` joined with `sep` between them.
std::string join(const std::vector<std::string>& v, const std::string& sep);

// Every configuration of a study, by rank count then strategy: one per partitioner, but one for
// the snapshot strategy, which partitions no vertices (partitioner "-"; train refuses
// --partitioner with it).
std::vector<ScaleConfig> study_configs(const std::vector<int>& ranks,
                                       const std::vector<std::string>& strategies,
                                       const std::vector<std::string>& partitioners);

// OptionError naming --out when `out` cannot hold a study: results.csv there is not a file, it
// is not a folder, it is the dataset folder `graph`, or it holds files a study does not write
// (someone's folder, whose results.csv may be theirs).
void check_study_folder(const std::string& out, const std::string& graph);

// Draws the plots of out/results.csv with scripts/scale_plot.py (found next to `exe`, in the
// share folder or in the sources); one line says what was written, or why nothing was.
void draw_plots(const std::filesystem::path& exe, const std::filesystem::path& out,
                const std::string& title);

}  // namespace dgnn::cli
