// `dgnn generate <generator>`: synthetic datasets written as a dataset directory that `train`
// and `info` read. Each generator is one sibling subcommand with its own options.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "dgnn/cli/commands.hpp"
#include "dgnn/cli/options.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/format.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/datasets/diffusion.hpp"
#include "dgnn/datasets/evolving_sbm.hpp"
#include "dgnn/datasets/sbm.hpp"

namespace dgnn::cli {

namespace {

struct SbmArgs {
  SbmConfig cfg;
  std::string out;
  bool force = false;
};

void add_sbm(CLI::App* gen) {
  auto args = std::make_shared<SbmArgs>();
  SbmConfig& c = args->cfg;
  CLI::App* cmd = gen->add_subcommand(
      "sbm",
      "Planted-partition stochastic block model: classes joined mostly within themselves, "
      "features = class centroid * signal + N(0, noise^2)");
  cmd->add_option("--vertices,-n", c.vertices, "Number of vertices")
      ->check(CLI::Range(int64_t(2), int64_t(std::numeric_limits<int32_t>::max())))
      ->capture_default_str();
  cmd->add_option("--classes,-c", c.classes, "Number of classes (planted blocks)")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--avg-degree,-d", c.avg_degree,
                  "Average degree: 2 * undirected edges / vertices")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--homophily", c.homophily,
                  "Fraction of edges that join two vertices of the same class")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--features,-f", c.feature_dim, "Feature columns")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--signal", c.signal,
                  "Scale of the class centroids in the features (0 = features carry no label)")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_option("--noise", c.noise, "Standard deviation of the per-vertex feature noise")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_option("--degree-skew", c.degree_skew,
                  "0 = Poisson-like degrees; in (0, 1) power-law degrees with tail index "
                  "1/skew (0.5 ~ preferential attachment)")
      ->check(CLI::Range(0.0, 0.99))
      ->capture_default_str();
  cmd->add_option("--train-frac", c.train_frac, "Fraction of vertices in train.txt")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--val-frac", c.val_frac, "Fraction of vertices in val.txt")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  CLI::Option* test_frac =
      cmd->add_option(
             "--test-frac", c.test_frac,
             "Fraction of vertices in test.txt (default: the rest; train + val + test <= 1)")
          ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--seed,-s", c.seed, "Random seed: the same seed gives the same files")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_flag("--force", args->force,
                "Replace an --out folder of dataset files that dgnn did not generate");
  cmd->add_option("--out,-o", args->out,
                  "Output dataset directory (created; a dataset dgnn generated there is "
                  "replaced, another folder is refused)")
      ->required();
  cmd->callback([args, test_frac] {
    SbmConfig& c = args->cfg;
    if (c.train_frac + c.val_frac > 1 + 1e-9)
      throw OptionError("generate sbm: --train-frac + --val-frac exceed 1");
    // So that --train-frac 0.8 alone shrinks the test set instead of being an error.
    if (test_frac->count() == 0) c.test_frac = std::max(0.0, 1.0 - c.train_frac - c.val_frac);
    // validate() (in generate_sbm) throws OptionError for what per-option checks cannot see.
    Timer timer;
    SbmDataset ds = generate_sbm(args->cfg);
    // What `dgnn train` would refuse is not written: an empty split file, a graph without edges.
    for (const auto& [set, option] :
         {std::pair{&ds.train, "--train-frac"}, std::pair{&ds.val, "--val-frac"},
          std::pair{&ds.test, "--test-frac"}})
      if (set->empty())
        throw OptionError(std::string(option) + " leaves its split file empty (" +
                          std::to_string(ds.num_vertices()) +
                          " vertices): give each of train, val and test at least one vertex");
    if (ds.num_edges() == 0)
      throw OptionError("--avg-degree " + fmt_double(args->cfg.avg_degree) +
                        " generated no edges: raise it");
    ds.write_dataset_dir(args->out, args->force);
    std::printf(
        "sbm: %lld vertices, %lld edges (homophily %.3f), %d classes, %lld features "
        "-> %s in %.2f s\n",
        (long long)ds.num_vertices(), (long long)ds.num_edges(), ds.measured_homophily(),
        args->cfg.classes, (long long)args->cfg.feature_dim, args->out.c_str(), timer.ms() / 1000);
  });
}

struct EvolvingArgs {
  EvolvingSbmConfig cfg;
  std::string out;
  bool force = false;
};

void add_evolving_sbm(CLI::App* gen) {
  auto args = std::make_shared<EvolvingArgs>();
  EvolvingSbmConfig& c = args->cfg;
  CLI::App* cmd = gen->add_subcommand(
      "evolving-sbm",
      "Temporal SBM: communities drift (a fraction of vertices moves at every step) and each "
      "snapshot's edges are drawn from the current communities; features from the initial "
      "community, labels = the final one");
  cmd->add_option("--vertices,-n", c.vertices, "Number of vertices")
      ->check(CLI::Range(int64_t(2), int64_t(std::numeric_limits<int32_t>::max())))
      ->capture_default_str();
  cmd->add_option("--snapshots,-t", c.snapshots, "Number of snapshots (time steps)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--classes,-c", c.classes, "Number of communities")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--avg-degree,-d", c.avg_degree,
                  "Average degree of one snapshot: 2 * its undirected edges / vertices")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--homophily", c.homophily,
                  "Fraction of a snapshot's edges inside one (current) community")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--drift", c.drift,
                  "Fraction of vertices that move to another community at each step")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--features,-f", c.feature_dim, "Feature columns")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--signal", c.signal, "Scale of the initial-community centroid in the features")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_option("--noise", c.noise, "Standard deviation of the per-vertex feature noise")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_option("--seed,-s", c.seed, "Random seed: the same seed gives the same files")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_flag("--force", args->force,
                "Replace an --out folder of dataset files that dgnn did not generate");
  cmd->add_option("--out,-o", args->out,
                  "Output dataset directory (created; a dataset dgnn generated there is "
                  "replaced, another folder is refused)")
      ->required();
  cmd->callback([args] {
    Timer timer;
    const EvolvingSbm ds = generate_evolving_sbm(args->cfg);
    ds.write_dataset_dir(args->out, args->force);
    const int T = ds.num_snapshots();
    std::printf(
        "evolving-sbm: %lld vertices, %d snapshots, %lld edges (%.0f per snapshot, homophily "
        "%.3f), %d classes, drift %.3f per step, %lld features -> %s in %.2f s\n",
        (long long)ds.num_vertices(), T, (long long)ds.num_edges(), double(ds.num_edges()) / T,
        ds.measured_homophily(T - 1, T - 1), args->cfg.classes, T > 1 ? ds.measured_drift(1) : 0.0,
        (long long)args->cfg.feature_dim, args->out.c_str(), timer.ms() / 1000);
  });
}

struct DiffusionArgs {
  DiffusionConfig cfg;
  std::string out;
  bool force = false;
};

void add_diffusion(CLI::App* gen) {
  auto args = std::make_shared<DiffusionArgs>();
  DiffusionConfig& c = args->cfg;
  CLI::App* cmd = gen->add_subcommand(
      "diffusion",
      "Forecasting data: a noisy diffusion on a planted-partition graph, each community driven "
      "by a seasonal signal of its own phase; edges.txt and signals.npy [steps, vertices] for "
      "`dgnn train --task forecast`");
  cmd->add_option("--vertices,-n", c.vertices, "Number of vertices")
      ->check(CLI::Range(int64_t(2), int64_t(std::numeric_limits<int32_t>::max())))
      ->capture_default_str();
  cmd->add_option("--steps,-t", c.steps, "Number of time steps of the signal")
      ->check(CLI::Range(int64_t(2), int64_t(1) << 24))
      ->capture_default_str();
  cmd->add_option("--classes,-c", c.classes, "Number of communities (each its own phase)")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--avg-degree,-d", c.avg_degree, "Average degree: 2 * undirected edges / vertices")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--homophily", c.homophily, "Fraction of edges inside one community")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--persistence", c.persistence, "Share of a vertex's value kept at each step")
      ->check(CLI::Range(0.0, 0.999))
      ->capture_default_str();
  cmd->add_option("--mixing", c.mixing, "Of that, the share taken from the neighbours' mean")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--drive", c.drive, "Amplitude of the seasonal drive")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_option("--period", c.period, "Steps per season")
      ->check(CLI::Range(2, 1 << 24))
      ->capture_default_str();
  cmd->add_option("--noise", c.noise, "Standard deviation of each step's per-vertex noise")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_option("--seed,-s", c.seed, "Random seed: the same seed gives the same files")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_flag("--force", args->force,
                "Replace an --out folder of dataset files that dgnn did not generate");
  cmd->add_option("--out,-o", args->out,
                  "Output dataset directory (created; a dataset dgnn generated there is "
                  "replaced, another folder is refused)")
      ->required();
  cmd->callback([args] {
    Timer timer;
    const DiffusionDataset ds = generate_diffusion(args->cfg);
    ds.write_dataset_dir(args->out, args->force);
    std::printf("diffusion: %lld vertices, %lld edges, %lld steps, %d communities -> %s in %.2f s\n",
                (long long)args->cfg.vertices, (long long)ds.src.size(),
                (long long)args->cfg.steps, args->cfg.classes, args->out.c_str(),
                timer.ms() / 1000);
  });
}

}  // namespace

void register_generate(CLI::App& app) {
  CLI::App* gen =
      app.add_subcommand("generate", "Write a synthetic dataset directory (see the generators)");
  add_sbm(gen);
  add_evolving_sbm(gen);
  add_diffusion(gen);
  // Runs after the chosen generator's callback; with none chosen, say which exist.
  gen->callback([gen] {
    if (!gen->get_subcommands().empty()) return;
    std::string names;
    for (const CLI::App* sub :
         gen->get_subcommands([](CLI::App* a) { return !a->get_name().empty(); }))
      names += (names.empty() ? "" : ", ") + sub->get_name();
    throw OptionError("generate: name a generator: " + names +
                      " (dgnn generate <generator> --help)");
  });
}

}  // namespace dgnn::cli
