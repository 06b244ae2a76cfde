// `dgnn train`'s options, and which task's run they start (cli/cmd_train*.cpp).
#include <memory>
#include <string>
#include <vector>

#include "dgnn/cli/commands.hpp"
#include "dgnn/cli/options.hpp"
#include "dgnn/cli/train_args.hpp"
#include "dgnn/gnn/models/deep.hpp"
#include "dgnn/gnn/models/layers.hpp"

namespace dgnn::cli {

void register_train(CLI::App& app) {
  auto a = std::make_shared<TrainArgs>();
  a->train.weight_decay = 5e-4f;
  CLI::App* cmd = app.add_subcommand("train", "Train a GNN for node classification");
  cmd->add_option("--graph", a->data.graph,
                  "Edge-list file or dataset directory (default: a generated SBM graph)");
  add_dataset_options(cmd, a->data);
  // Layers the program registered (dgnn::register_layer before dgnn::cli_main) join the
  // static models.
  std::vector<std::string> models = builtin_model_names();
  std::string registered;
  for (const std::string& name : registered_layer_names()) {
    models.push_back(name);
    registered += ", " + name;
  }
  cmd->add_option("--model", a->model,
                  "Layer type (static: gcn, sage, gin, gat" + registered +
                      "; deep static: gcnii, resgcn, with --layers up to 64 and more"
                      "; temporal: evolvegcn-o, evolvegcn-h, gcrn, tgcn)")
      ->check(CLI::IsMember(models));
  cmd->add_option("--layers", a->layers, "Number of GNN layers")->capture_default_str();
  cmd->add_option("--hidden", a->hidden, "Hidden width")->capture_default_str();
  cmd->add_option("--dropout", a->dropout, "Dropout probability before each layer")
      ->capture_default_str();
  cmd->add_option("--alpha", a->alpha,
                  "--model gcnii: the share of the first layer's output mixed into every graph "
                  "layer's input (initial residual)")
      ->capture_default_str();
  cmd->add_option("--lambda", a->lambda,
                  "--model gcnii: identity mapping, layer l's weight counts beta_l = "
                  "log(lambda / l + 1)")
      ->capture_default_str();
  cmd->add_option("--conv-weight-decay", a->conv_weight_decay,
                  "--model gcnii or resgcn: L2 weight decay of the graph layers' weights "
                  "(default: --weight-decay; GCNII's paper uses 0.01 with --weight-decay 5e-4)")
      ->each([a](const std::string&) { a->conv_weight_decay_given = true; });
  cmd->add_option("--lr", a->train.lr, "Learning rate")->capture_default_str();
  cmd->add_option("--weight-decay", a->train.weight_decay, "L2 weight decay (weights, not biases)")
      ->capture_default_str();
  cmd->add_option("--optimizer", a->train.optimizer, "adam or sgd")
      ->check(CLI::IsMember({"adam", "sgd"}))
      ->capture_default_str();
  cmd->add_option("--momentum", a->train.momentum, "SGD momentum")->capture_default_str();
  cmd->add_option("--clip-norm", a->train.clip_norm,
                  "Clip the gradients' global L2 norm to this before each update (0: never)")
      ->capture_default_str();
  cmd->add_option("--epochs", a->train.epochs, "Training epochs")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--seed", a->train.seed, "Seed for initialisation and dropout")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_option("--save", a->train.save, "Write a checkpoint after the last epoch");
  cmd->add_option("--save-every", a->train.save_every,
                  "Also write the --save checkpoint after every N-th epoch (a crash loses at "
                  "most N epochs)");
  cmd->add_option("--load", a->train.load, "Resume from a checkpoint (continues to --epochs)");
  cmd->add_option("--patience", a->train.patience,
                  "Stop after N epochs without a better validation score (0: train all "
                  "--epochs)");
  cmd->add_flag("--normalize-features", a->normalize_features,
               "Static node classification: divide each vertex's feature row by its sum (PyG's "
               "NormalizeFeatures, as the GCN and GCNII papers' Planetoid inputs)");
  cmd->add_option("--select", a->train.select,
                  "Static node classification: the validation score that picks the tested model "
                  "and counts for --patience: acc (highest accuracy) or loss (lowest "
                  "cross-entropy, GCNII's protocol)")
      ->check(CLI::IsMember({"acc", "loss"}))
      ->capture_default_str();
  cmd->add_option("--embeddings", a->embeddings,
                  "Write the final vertex embeddings as .npy, rows in ascending input id "
                  "(the ids beside it, FILE.ids.txt)");
  cmd->add_option("--log-json", a->log_json, "Write one JSON object per epoch and a final line");
  cmd->add_option("--predictions", a->predictions,
                  "Write 'vertex predicted_class' per vertex, in the input's vertex ids");
  cmd->add_option("--device", a->device, "cpu or cuda")->capture_default_str();
  cmd->add_option("--comm", a->comm,
                  "GPU ranks (--device cuda under mpirun): nccl, mpi (buffers staged through "
                  "host memory; ranks may share a GPU), or auto (nccl when built and every rank "
                  "has its own GPU)")
      ->check(CLI::IsMember({"auto", "mpi", "nccl"}))
      ->capture_default_str();
  cmd->add_option("--parts", a->parts,
                  "Partition the vertices on the fly into this many parts, one per rank (must "
                  "equal the MPI rank count; the default under mpirun; temporal graphs: the "
                  "vertex strategy)");
  cmd->add_option("--partitioner", a->partitioner,
                  "metis, ptscotch (Scotch; PT-Scotch when the graph is distributed), random, "
                  "hash or range: how the vertices are partitioned")
      ->check(CLI::IsMember({"metis", "ptscotch", "random", "hash", "range"}))
      ->capture_default_str();
  cmd->add_option("--snapshot-groups", a->snapshot_groups,
                  "Temporal graphs, vertex strategy with METIS: also balance each of this many "
                  "groups of consecutive snapshots (0: the union graph's vertices only; default "
                  "min(snapshots, 16))")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--overpartition", a->overpartition,
                  "Temporal graphs, vertex strategy with ptscotch: cut into ranks x this many "
                  "pieces, then deal them to the ranks so that every snapshot group is balanced "
                  "(Scotch balances one weight; 1: off)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--partition", a->partition_dir,
                  "A directory written by `dgnn partition`: each rank reads only its part");
  cmd->add_flag("--no-overlap", a->no_overlap,
                "Wait for halo rows before aggregating (to measure what the overlap saves)");
  cmd->add_option("--halo-memory", a->halo_memory,
                  "Bound on one rank's halo buffers per aggregation under MPI (e.g. 256MB): the "
                  "halo then moves in pieces, peer after peer. `whole` exchanges every halo row "
                  "at once (fastest; holds them all). `auto` streams when the whole halo would "
                  "outgrow the rank's own rows")
      ->capture_default_str();
  cmd->add_option("--batch-size", a->batch_size,
                  "Mini-batch training: seeds per step (per rank under MPI), neighbours sampled "
                  "per layer (--fanouts); evaluation stays full-graph")
      ->each([a](const std::string&) { a->batch_size_given = true; });
  cmd->add_option("--fanouts", a->fanouts,
                  "Neighbours sampled per vertex, one per layer, input layer first, -1 = all "
                  "(e.g. 10,25; default: all)")
      ->each([a](const std::string&) { a->fanouts_given = true; });
  cmd->add_flag("--replace", a->replace, "Sample neighbours with replacement");
  cmd->add_flag("--no-prefetch", a->no_prefetch,
                "Sample each batch when it is needed instead of on a background thread one "
                "step ahead (to measure what the prefetch hides)");
  cmd->add_option("--threads", a->threads, "OpenMP threads (default: all cores)");
  cmd->add_flag("--quiet", a->quiet, "Only print the final line");
  add_snapshot_options(cmd, a->snapshots);
  cmd->add_option("--task", a->task,
                  "Temporal task: link (prediction of the next snapshot's edges), edge "
                  "(classification by weight sign), node (vertex labels, from the embeddings "
                  "after the last snapshot) or forecast (each vertex's signal --horizon steps "
                  "ahead from its last --lags: a PyG-Temporal .json, or signals.npy)")
      ->check(CLI::IsMember({"link", "edge", "node", "forecast"}))
      ->capture_default_str();
  cmd->add_option("--lags", a->lags, "--task forecast: past steps of the signal a vertex sees")
      ->capture_default_str();
  cmd->add_option("--horizon", a->horizon,
                  "--task forecast: steps ahead of the last lag that are predicted")
      ->capture_default_str();
  cmd->add_option("--signals", a->signals,
                  "--task forecast: the signal, .npy [steps, vertices] or [steps, vertices, "
                  "channels] (default: signals.npy of the dataset folder)");
  cmd->add_option("--strategy", a->strategy,
                  "Several ranks. Temporal: vertex (one partition, halo per snapshot, state stays "
                  "with its owner) or snapshot. Static: graph (each rank a part of the graph, "
                  "halo per layer; the default) or pipeline (deep models: each rank a stage of "
                  "layers, the graph streamed through in chunks)")
      ->check(CLI::IsMember({"vertex", "snapshot", "graph", "pipeline"}))
      ->capture_default_str();
  cmd->add_option("--chunks", a->chunks,
                  "--strategy pipeline: chunks of the graph (METIS) streamed through the stages; "
                  "out-of-chunk neighbours read their last rows (0: 4 per stage; 1: exact, the "
                  "same numbers as one process)")
      ->capture_default_str();
  cmd->add_option("--stages", a->stages,
                  "--strategy pipeline: stages of layers (0: one per rank); fewer than the ranks "
                  "is the hybrid, each stage's ranks splitting the graph (a divisor of the rank "
                  "count)")
      ->capture_default_str();
  cmd->add_option("--bptt", a->bptt,
                  "Temporal: snapshots per back-propagation window (0 = the whole training span)")
      ->capture_default_str();
  cmd->add_option("--neg-train", a->neg_train, "Temporal: sampled non-edges per edge in training")
      ->capture_default_str();
  cmd->add_option("--neg-eval", a->neg_eval,
                  "Temporal: sampled non-edges per edge in validation and test, or 'all': score "
                  "every vertex pair of each step (EvolveGCN's protocol; --task link)")
      ->capture_default_str();
  cmd->add_option("--eval-protocol", a->eval_protocol,
                  "Temporal link prediction: evolvegcn (MRR per source over the step's samples) "
                  "or tgb (each edge against its own --neg-eval negatives, half historical: the "
                  "Temporal Graph Benchmark's MRR, which then selects the model)")
      ->capture_default_str();
  cmd->get_option("--train-frac")->each([a](const std::string&) { a->train_frac_given = true; });
  cmd->get_option("--val-frac")->each([a](const std::string&) { a->val_frac_given = true; });
  cmd->callback([a, cmd] {
    a->data.seed = a->train.seed;
    if (!a->data.graph.empty() && !std::filesystem::exists(a->data.graph))
      throw OptionError("--graph " + a->data.graph + ": no such file or directory");
    if (!a->quiet) a->data.edges.progress = terminal_progress("loading " + a->data.graph);
    // An option the chosen path does not read is refused, not silently ignored.
    auto refuse = [cmd](const std::vector<const char*>& names, const std::string& why) {
      for (const char* n : names)
        if (cmd->get_option(n)->count() > 0) throw OptionError(std::string(n) + ": " + why);
    };
    refuse_input_options(cmd, a->data.graph);
    const bool static_strategy = a->strategy == "graph" || a->strategy == "pipeline";
    if (a->strategy != "pipeline")
      refuse({"--chunks", "--stages"}, "is for --strategy pipeline");
    if (a->train.optimizer != "sgd") refuse({"--momentum"}, "is for --optimizer sgd");
    if (a->model != "gcnii")
      refuse({"--alpha", "--lambda"},
             "is for --model gcnii (this run's model is " +
                 (a->model.empty() ? std::string("the default") : a->model) + ")");
    if (!is_deep_model(a->model))
      refuse({"--conv-weight-decay"},
             "is for the deep models, --model gcnii or resgcn (this run's model is " +
                 (a->model.empty() ? std::string("the default") : a->model) + ")");
    if (a->parts < 0 || (a->parts == 0 && cmd->get_option("--parts")->count() > 0))
      throw OptionError("--parts must be the MPI rank count (at least 1), got " +
                        std::to_string(a->parts));
    if (a->task != "forecast")
      refuse({"--lags", "--horizon", "--signals"}, "for --task forecast only");
    if (a->task == "forecast") {
      if (static_strategy)
        throw OptionError("--strategy " + a->strategy +
                          ": for static graphs; --task forecast takes vertex or snapshot");
      if (a->batch_size_given || a->fanouts_given)
        throw OptionError(std::string(a->batch_size_given ? "--batch-size" : "--fanouts") +
                          ": mini-batch training is for static node classification");
      refuse({"--dropout", "--partition", "--no-overlap", "--halo-memory", "--replace", "--select",
              "--normalize-features",
              "--no-prefetch", "--train-ids", "--val-ids", "--test-ids", "--generate-features",
              "--feature-dim", "--labels", "--num-classes", "--neg-train", "--neg-eval", "--eval-protocol"},
             "not used by --task forecast");
      if (a->strategy == "snapshot")
        refuse({"--parts", "--partitioner", "--snapshot-groups", "--overpartition"},
               "the snapshot strategy gives each rank whole steps and partitions no vertices "
               "(--strategy vertex does)");
      if (a->partitioner != "ptscotch")
        refuse({"--overpartition"},
               "is for --partitioner ptscotch (this run uses " + a->partitioner + ")");
      if (is_signal_json(a->data.graph))
        refuse({"--signals", "--time-col", "--weight-col", "--src-col", "--dst-col",
                "--snapshot-seconds", "--snapshots", "--window", "--cumulative", "--directed",
                "--self-loops"},
               "a PyG-Temporal .json names its edges and signal itself");
      run_train_forecast(*a);
      return;
    }
    if (is_signal_json(a->data.graph))
      throw OptionError("--graph " + a->data.graph +
                        ": a PyG-Temporal signal file; train on it with --task forecast");
    if (is_temporal_input(a->data.graph, a->data.edges, a->snapshots)) {
      if (static_strategy)
        throw OptionError("--strategy " + a->strategy +
                          ": for static graphs; this input has a time column (temporal runs "
                          "take vertex or snapshot)");
      if (is_deep_model(a->model))
        throw OptionError("--model " + a->model +
                          ": a deep model for static graphs; this input has a time column "
                          "(temporal models: evolvegcn-o, evolvegcn-h, gcrn, tgcn)");
      if (a->batch_size_given || a->fanouts_given)
        throw OptionError(std::string(a->batch_size_given ? "--batch-size" : "--fanouts") +
                          ": mini-batch training is for static graphs (this input has a time "
                          "column)");
      refuse({"--dropout", "--no-overlap", "--halo-memory", "--replace", "--select",
              "--normalize-features",
              "--no-prefetch", "--train-ids", "--val-ids", "--test-ids", "--generate-features",
              "--feature-dim"},
             "not used by temporal training (this input has a time column)");
      // --parts and --partitioner mean what they mean for static graphs: the vertex partition
      // (one part per rank), which the snapshot strategy does not make.
      if (a->strategy == "snapshot")
        refuse({"--parts", "--partitioner", "--snapshot-groups", "--overpartition",
                "--partition"},
               "the snapshot strategy gives each rank whole snapshots and partitions no "
               "vertices (--strategy vertex does)");
      if (!a->partition_dir.empty())
        refuse({"--partitioner", "--snapshot-groups", "--overpartition"},
               "the parts are read from --partition " + a->partition_dir +
                   " (give these to dgnn partition)");
      if (a->partitioner != "metis" && a->partitioner != "ptscotch")
        refuse({"--snapshot-groups"},
               "balances groups of snapshots with METIS or PT-Scotch (this run uses "
               "--partitioner " + a->partitioner + ")");
      if (a->partitioner != "ptscotch")
        refuse({"--overpartition"},
               "is for --partitioner ptscotch (this run uses " + a->partitioner + ")");
      if (a->task != "node")
        refuse({"--labels", "--num-classes"},
               "not used by --task " + a->task + " (it is for --task node)");
      else
        refuse({"--neg-train", "--neg-eval", "--eval-protocol"},
               "not used by --task node (it scores vertices, not sampled non-edges)");
      run_train_temporal(*a);
    } else {
      refuse({"--task", "--bptt", "--neg-train", "--neg-eval", "--eval-protocol",
              "--snapshot-groups", "--overpartition"},
             "for temporal graphs only (give the time column with --time-col)");
      if (!static_strategy && cmd->get_option("--strategy")->count() > 0)
        throw OptionError("--strategy " + a->strategy +
                          ": for temporal graphs (give the time column with --time-col); static "
                          "graphs take graph or pipeline");
      if (a->strategy == "pipeline") {
        if (!is_deep_model(a->model))
          throw OptionError("--strategy pipeline runs the deep models (--model gcnii or resgcn): "
                            "it splits their graph layers into stages");
        if (a->batch_size_given || a->fanouts_given)
          throw OptionError(std::string(a->batch_size_given ? "--batch-size" : "--fanouts") +
                            ": --strategy pipeline streams chunks of the whole graph");
        refuse({"--partition", "--parts", "--halo-memory", "--no-overlap"},
               "not used by --strategy pipeline (every stage holds the whole graph, cut into "
               "--chunks)");
        if (a->device != "cpu")
          throw OptionError("--device " + a->device +
                            ": --strategy pipeline runs on the CPU for now");
      }
      run_train(*a);
    }
  });
}

}  // namespace dgnn::cli
