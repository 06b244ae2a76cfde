// `dgnn scale`: a scaling study in one command. Every configuration (ranks x strategy x
// partitioner x repeat) is one `dgnn train` run of this same binary under an MPI launcher; the
// runs' --log-json files become results.csv (medians, speedup, efficiency) and, when python3 has
// matplotlib, plots drawn by scripts/scale_plot.py (scale_study.cpp).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "dgnn/cli/commands.hpp"
#include "dgnn/cli/options.hpp"
#include "dgnn/gnn/models/deep.hpp"
#include "dgnn/cli/scale_results.hpp"
#include "dgnn/cli/scale_study.hpp"
#include "dgnn/cli/subprocess.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/format.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/temporal/temporal_run.hpp"
#include "dgnn/graph/atomic_write.hpp"
#include "dgnn/graph/temporal.hpp"

namespace dgnn::cli {

namespace fs = std::filesystem;

namespace {

struct ScaleArgs {
  std::string graph, model, task;
  std::string ranks, strategies = "vertex", partitioners = "metis";
  int repeats = 1;
  int epochs = 10;
  double timeout_s = 0;
  std::string out;
  std::string launcher;  // empty: mpiexec from PATH
  std::vector<std::string> extra;
};

std::vector<std::string> parse_names(const std::string& s, const char* option,
                                     const std::vector<std::string>& known) {
  std::vector<std::string> names;
  for (const std::string& item : split_list(s, option)) {
    if (std::find(known.begin(), known.end(), item) == known.end()) {
      std::string all;
      for (const std::string& k : known) all += (all.empty() ? "" : ", ") + k;
      throw OptionError(std::string(option) + ": unknown '" + item + "' (expected " + all + ")");
    }
    names.push_back(item);
  }
  return names;
}

// "data/sbm100k/" -> "sbm100k".
std::string graph_name(const std::string& graph) {
  fs::path p = fs::path(graph).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

void check_extra(const std::vector<std::string>& extra) {
  auto given = [&](const std::string& o) {
    return std::any_of(extra.begin(), extra.end(),
                       [&](const std::string& a) { return a == o || a.rfind(o + "=", 0) == 0; });
  };
  for (const char* own : {"--graph", "--model", "--task", "--epochs", "--log-json"})
    if (given(own))
      throw OptionError(std::string("scale: ") + own +
                        " after -- is set by scale itself (give it as `dgnn scale " + own +
                        " ...`)");
  for (const auto& [own, plural] :
       {std::pair{"--partitioner", "--partitioners"}, std::pair{"--strategy", "--strategies"}})
    if (given(own))
      throw OptionError(std::string("scale: ") + own + " after -- is set by scale itself (give " +
                        plural + " to scale)");
  // Every run of a study would share one output, or use another partition than its row says.
  for (const char* shared : {"--save", "--predictions", "--partition"})
    if (given(shared))
      throw OptionError(std::string("scale: ") + shared + " after -- is not for a study (" +
                        (std::string(shared) == "--partition"
                             ? "each run partitions with its row's partitioner and rank count"
                             : "every run would write the same file") +
                        ")");
}

// The launcher template of --launcher, else the default (OptionError when it cannot start the
// ranks asked).
std::string launcher_template(const ScaleArgs& a, const std::vector<int>& ranks) {
  const bool custom_launcher = !a.launcher.empty();
  const std::string tmpl = custom_launcher ? a.launcher : default_launcher();
  if (custom_launcher) {
    if (tmpl.find("{ranks}") == std::string::npos)
      throw OptionError(
          "--launcher '" + tmpl +
          "': no {ranks} placeholder for the rank count (e.g. \"mpiexec -n {ranks}\")");
    const std::string prog = launcher_argv(tmpl, 1).at(0);
    if (find_program(prog).empty())
      throw OptionError("--launcher '" + tmpl + "': " + prog + " is not an executable on PATH");
  } else if (ranks.back() > 1 && find_program("mpiexec").empty()) {
    throw OptionError("--ranks " + a.ranks +
                      ": more than one rank needs an MPI launcher and no mpiexec is on PATH "
                      "(install Open MPI, or give --launcher \"... {ranks} ...\")");
  }
  return tmpl;
}

// Strategies divide snapshots among ranks (forecasting: the samples of a signal, static graph
// or not); a static graph has one way to be split.
bool is_temporal(const ScaleArgs& a) {
  return a.task == "forecast" || (!a.graph.empty() && read_temporal_layout(a.graph).has_value()) ||
         std::any_of(a.extra.begin(), a.extra.end(),
                     [](const std::string& s) { return s.rfind("--time-col", 0) == 0; });
}

// The strategies the graph can run (a note names those skipped): a static graph is split by
// vertex ("vertex", or its other name "graph") or, for the deep models, by layers ("pipeline");
// a temporal one by vertex or snapshot. The names every run would refuse are refused once, before
// any run.
void check_for_graph(const ScaleArgs& a, bool temporal, std::vector<std::string>& strategies) {
  auto fits = [&](const std::string& s) {
    return temporal ? (s == "vertex" || s == "snapshot") : s != "snapshot";
  };
  std::vector<std::string> kept, skipped;
  for (const std::string& s : strategies) (fits(s) ? kept : skipped).push_back(s);
  const char* which = temporal ? "a temporal graph is split by vertex or snapshot"
                               : "a static graph is split by vertex (graph) or by layers "
                                 "(pipeline, the deep models)";
  if (kept.empty()) throw OptionError("--strategies " + a.strategies + ": " + which);
  if (!skipped.empty())
    std::printf("note: strategy %s not applicable: %s; skipped\n", join(skipped, ", ").c_str(),
                which);
  strategies = kept;
  for (const char* layered : {"pipeline", "hybrid"})
    if (std::find(strategies.begin(), strategies.end(), layered) != strategies.end() &&
        !is_deep_model(a.model))
      throw OptionError(std::string("--strategies ") + layered +
                        ": splits a deep model's layers into stages (give --model gcnii or "
                        "resgcn)");
  if (!a.model.empty()) {
    if (temporal)
      (void)parse_temporal_kind(a.model);
    else if (!find_registered_layer(a.model) && !is_deep_model(a.model))
      (void)parse_model_kind(a.model);
  }
  if (!a.task.empty() && a.task != "forecast") {
    if (!temporal)
      throw OptionError("--task " + a.task + ": for temporal graphs (a static graph's task is " +
                        "node classification)");
    if (a.task != "node") (void)parse_temporal_task(a.task);
  }
}

// What every run of a study shares.
struct Study {
  std::string tmpl;  // the launcher's
  bool temporal = false;
  fs::path exe, runs_dir;
  int total = 0;  // runs
};

// One repeat of one configuration: `dgnn train` under the launcher, its outcome read back.
ScaleRun run_one(const ScaleArgs& a, const Study& st, const ScaleConfig& cfg, int rep, int k) {
  const std::string name = "ranks" + std::to_string(cfg.ranks) + "-" + cfg.strategy + "-" +
                           cfg.partitioner + "-rep" + std::to_string(rep);
  const std::string json = (st.runs_dir / (name + ".json")).string();
  const std::string log = (st.runs_dir / (name + ".log")).string();
  std::error_code ec;
  fs::remove(json, ec);  // a stale log of an earlier study must not pass for this run's

  std::vector<std::string> argv;
  if (cfg.ranks > 1) argv = launcher_argv(st.tmpl, cfg.ranks);
  argv.insert(argv.end(),
              {st.exe.string(), "train", "--epochs", std::to_string(a.epochs), "--log-json", json});
  if (cfg.strategy != "snapshot") argv.insert(argv.end(), {"--partitioner", cfg.partitioner});
  if (!a.graph.empty()) argv.insert(argv.end(), {"--graph", a.graph});
  if (!a.model.empty()) argv.insert(argv.end(), {"--model", a.model});
  if (!a.task.empty()) argv.insert(argv.end(), {"--task", a.task});
  if (st.temporal || cfg.strategy == "pipeline")
    argv.insert(argv.end(), {"--strategy", cfg.strategy});
  if (cfg.strategy == "hybrid")  // ranks / 2 stages x 2 graph parts
    argv.insert(argv.end(),
                {"--strategy", "pipeline", "--stages", std::to_string(cfg.ranks / 2)});
  argv.insert(argv.end(), a.extra.begin(), a.extra.end());

  std::printf("[%d/%d] ranks=%d strategy=%s partitioner=%s", k, st.total, cfg.ranks,
              cfg.strategy.c_str(), cfg.partitioner.c_str());
  if (a.repeats > 1) std::printf(" repeat=%d/%d", rep, a.repeats);
  std::printf(" ... ");
  std::fflush(stdout);
  const ProcessResult pr = run_process(argv, log, a.timeout_s);
  ScaleRun run;
  if (!pr.started)
    run.error = pr.error;
  else if (pr.timed_out)
    run.error = "timed out after " + fmt_double(a.timeout_s) + " s (--timeout)";
  else
    run = read_scale_run(pr.exit_code, json, log);
  if (run.ok)
    std::printf("%.1f ms/epoch\n", run.epoch_ms);
  else
    std::printf("failed: %s\n", run.error.c_str());
  std::fflush(stdout);
  return run;
}

void print_table(const std::vector<ScaleRow>& rows) {
  std::printf("\n%5s %-8s %-11s %10s %9s %8s %8s %10s %7s %6s\n", "ranks", "strategy",
              "partitioner", "epoch ms", "compute", "comm", "wait", "MB/epoch", "speedup", "eff");
  for (const ScaleRow& r : rows) {
    std::printf("%5d %-8s %-11s ", r.config.ranks, r.config.strategy.c_str(),
                r.config.partitioner.c_str());
    if (r.repeats_done == 0) {
      std::printf("failed: %s\n", r.error.c_str());
      continue;
    }
    std::printf("%10.1f %9.1f %8.1f %8.1f %10.2f", r.epoch_ms, r.compute_ms, r.comm_ms, r.wait_ms,
                r.bytes_sent_per_epoch / 1e6);
    if (r.baseline_ranks > 0) std::printf(" %6.2fx %6.2f", r.speedup, r.efficiency);
    std::printf("%s\n", r.ok ? "" : "  (some repeats failed)");
  }
}

void run_scale(ScaleArgs& a) {
  const std::vector<int> ranks = parse_ranks(a.ranks, 65536);
  std::vector<std::string> strategies =
      parse_names(a.strategies, "--strategies",
                  {"vertex", "snapshot", "graph", "pipeline", "hybrid"});
  const std::vector<std::string> partitioners =
      parse_names(a.partitioners, "--partitioners", {"metis", "ptscotch", "random", "hash", "range"});
  if (a.repeats < 1 || a.repeats > 1000) throw OptionError("--repeats must be from 1 to 1000");
  if (a.epochs < 1) throw OptionError("--epochs must be >= 1");
  if (a.timeout_s < 0) throw OptionError("--timeout must be >= 0 (0 = none)");
  check_extra(a.extra);
  if (!a.graph.empty() && !fs::exists(a.graph))
    throw OptionError("--graph " + a.graph + ": no such file or directory");
  Study st;
  st.tmpl = launcher_template(a, ranks);
  check_study_folder(a.out, a.graph);
  st.temporal = is_temporal(a);
  check_for_graph(a, st.temporal, strategies);
  const fs::path out = a.out;
  st.runs_dir = out / "runs";
  std::error_code ec;
  fs::create_directories(st.runs_dir, ec);
  if (ec)
    throw OptionError("--out " + a.out + ": cannot create " + st.runs_dir.string() + ": " +
                      ec.message());
  if (::access(st.runs_dir.c_str(), W_OK) != 0 || ::access(out.c_str(), W_OK) != 0)
    throw OptionError("--out " + a.out + ": not writable");

  const std::vector<ScaleConfig> configs = study_configs(ranks, strategies, partitioners);
  if (std::find(strategies.begin(), strategies.end(), "hybrid") != strategies.end())
    for (int r : ranks)
      if (r < 4 || r % 2 != 0)
        std::printf("note: strategy hybrid (ranks / 2 stages x 2 graph parts) needs an even rank "
                    "count from 4: skipped at %d rank%s\n", r, r == 1 ? "" : "s");
  if (configs.empty())
    throw OptionError("--ranks " + a.ranks + ": no configuration to run (the hybrid needs an "
                      "even rank count from 4)");
  st.exe = fs::read_symlink("/proc/self/exe");
  st.total = int(configs.size()) * a.repeats;
  std::printf("scale: %d run%s of `dgnn train` on %s (%s graph), %d epochs each; logs in %s\n",
              st.total, st.total == 1 ? "" : "s",
              a.graph.empty() ? "the generated default" : a.graph.c_str(),
              a.task == "forecast" ? "forecasting on a"
              : st.temporal        ? "temporal"
                                   : "static",
              a.epochs, st.runs_dir.c_str());
  std::fflush(stdout);

  std::vector<std::vector<ScaleRun>> results(configs.size());
  int k = 0, failed_runs = 0;
  for (size_t c = 0; c < configs.size(); ++c)
    for (int rep = 1; rep <= a.repeats; ++rep) {
      results[c].push_back(run_one(a, st, configs[c], rep, ++k));
      if (!results[c].back().ok) ++failed_runs;
    }

  const std::vector<ScaleRow> rows = summarise_scale(configs, results);
  const fs::path csv = out / "results.csv";
  write_file_atomically(csv.string(), scale_csv(rows));
  print_table(rows);
  std::printf("results: %s (%zu configurations, %d of %d runs failed)\n", csv.c_str(), rows.size(),
              failed_runs, st.total);
  std::fflush(stdout);
  const std::string title =
      (a.model.empty() ? std::string(st.temporal ? "evolvegcn-o" : "gcn") : a.model) + " on " +
      (a.graph.empty() ? std::string("the generated SBM") : graph_name(a.graph)) + ", " +
      std::to_string(a.epochs) + " epochs";
  // A study where some configurations fail is still a study (their rows say why); one where
  // every run failed measured nothing (no plots, its rows say why), and says so by its exit code.
  if (failed_runs == st.total)
    throw Error("every run failed (the first: " + results.front().front().error + "); see " +
                csv.string());
  draw_plots(st.exe, out, title);
}

}  // namespace

void register_scale(CLI::App& app) {
  auto args = std::make_shared<ScaleArgs>();
  ScaleArgs& a = *args;
  CLI::App* cmd = app.add_subcommand(
      "scale",
      "Scaling study: run `dgnn train` for every rank count x strategy x partitioner x repeat "
      "under an MPI launcher, and write results.csv (time split, bytes, speedup) and plots");
  cmd->add_option("--graph", a.graph,
                  "Edge-list file or dataset directory (default: the generated SBM of train)");
  cmd->add_option("--model", a.model, "Model, as for train (default: train's)");
  cmd->add_option("--task", a.task, "Task, as for train: link, edge, node or forecast");
  cmd->add_option("--ranks", a.ranks, "Rank counts, comma-separated, e.g. 1,2,4,8")->required();
  cmd->add_option("--strategies", a.strategies,
                  "Comma-separated. Temporal graphs: vertex, snapshot. Static graphs: vertex "
                  "(also called graph: each rank a part) and, for the deep models, pipeline "
                  "(each rank a stage of layers) and hybrid (ranks / 2 stages x 2 graph parts)")
      ->capture_default_str();
  cmd->add_option("--partitioners", a.partitioners,
                  "Comma-separated: metis, ptscotch, random, hash, range")
      ->capture_default_str();
  cmd->add_option("--repeats", a.repeats, "Runs of every configuration (medians are reported)")
      ->capture_default_str();
  cmd->add_option("--epochs", a.epochs, "Training epochs of every run")->capture_default_str();
  cmd->add_option("--out,-o", a.out, "Folder for results.csv, the plots and runs/")->required();
  cmd->add_option("--launcher", a.launcher,
                  "Command that starts {ranks} ranks of a program (default: \"" +
                      default_launcher() + "\"); 1 rank runs without it");
  cmd->add_option("--timeout", a.timeout_s,
                  "Seconds a run may take before it is stopped and recorded as failed (0: none)")
      ->capture_default_str();
  cmd->add_option("train-args", a.extra, "After --: more arguments for every `dgnn train` run");
  cmd->callback([args] { run_scale(*args); });
}

}  // namespace dgnn::cli
