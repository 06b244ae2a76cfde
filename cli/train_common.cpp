// What every `dgnn train` task shares: threads, the device, the settings runs record and what a
// checkpoint is bound to (cli/train_args.hpp).
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "dgnn/cli/train_args.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/kernels/kernels.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn::cli {

std::string checkpoint_data_id(const TrainArgs& a, Communicator& comm, bool temporal) {
  if (a.train.save.empty() && a.train.load.empty()) return "";
  std::string id;
  // Collective: every rank hashes its share of the large inputs; rank 0's id is everyone's.
  const std::string source = a.data.graph.empty() ? "" : dataset_source_hash(a.data, &comm);
  if (comm.rank() == 0) {
    if (a.data.graph.empty()) {
      // The generated default: its graph and split follow from these alone.
      char buf[128];
      std::snprintf(buf, sizeof buf, "generated-sbm:seed=%llu:train=%.9g:val=%.9g",
                    (unsigned long long)a.train.seed, a.data.train_frac, a.data.val_frac);
      id = buf;
    } else {
      id = source;
      if (temporal) {
        const SnapshotOptions& s = a.snapshots;
        char buf[256];
        std::snprintf(buf, sizeof buf, ":snap=%.17g/%d/%d/%d:steps=%d/%.9g/%.9g", s.seconds,
                      s.count, int(s.mode), s.window, int(a.step_fracs_given()), a.data.train_frac,
                      a.data.val_frac);
        id += buf;
        if (const auto layout = read_temporal_layout(a.data.graph))
          id += ":layout=" + std::to_string(std::hash<std::string>{}(layout->to_text()));
      }
    }
  }
  int64_t len = int64_t(id.size());
  comm.broadcast(&len, 8, 0);
  id.resize(size_t(len));
  comm.broadcast(id.data(), len, 0);
  return id;
}

void check_parts(const TrainArgs& a, const Communicator& comm) {
  if (a.parts > 0 && a.parts != comm.size())
    throw OptionError("--parts " + std::to_string(a.parts) + " but the job has " +
                      std::to_string(comm.size()) + " ranks (launch with mpirun -np " +
                      std::to_string(a.parts) + ")");
}

void set_threads(int threads) {
  if (threads < 0) throw OptionError("--threads must be >= 0 (0 = all cores)");
  // Far more threads than cores only slows a run down, and beyond some thousands the OpenMP
  // runtime cannot start them (it crashes instead of failing).
  const int cores = omp_get_num_procs(), most = std::max(64, 16 * cores);
  if (threads > most)
    throw OptionError("--threads " + std::to_string(threads) + ": at most " + std::to_string(most) +
                      " (16 per core; this machine has " + std::to_string(cores) + ")");
  if (threads > 0) {
    omp_set_num_threads(threads);
    return;
  }
  if (std::getenv("OMP_NUM_THREADS")) {
    if (omp_get_max_threads() > most)
      throw OptionError("OMP_NUM_THREADS asks for " + std::to_string(omp_get_max_threads()) +
                        " threads: at most " + std::to_string(most) + " (16 per core; this " +
                        "machine has " + std::to_string(cores) + ")");
    return;
  }
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"})
    if (const char* v = std::getenv(var)) {
      const int local = std::atoi(v);
      if (local > 1) omp_set_num_threads(std::max(1, omp_get_num_procs() / local));
      return;
    }
}

nlohmann::json temporal_settings(const TrainArgs& a, const std::string& model,
                                 const std::string& task, int ranks) {
  nlohmann::json s = {{"graph", a.data.graph},
          {"model", model},
          {"task", task},
          {"layers", a.layers},
          {"hidden", a.hidden},
          {"optimizer", a.train.optimizer},
          {"lr", a.train.lr},
          {"weight_decay", a.train.weight_decay},
          {"epochs", a.train.epochs},
          {"bptt", a.bptt},
          {"seed", a.train.seed},
          {"ranks", ranks},
          {"strategy", a.strategy},
          {"device", a.device},
          {"partitioner", a.strategy == "snapshot"        ? "none"
                          : !a.partition_dir.empty() ? "dir"
                                                     : a.partitioner},
          {"threads", omp_get_max_threads()}};
  if (!a.partition_dir.empty()) s["partition"] = a.partition_dir;
  if (a.train.clip_norm > 0) s["clip_norm"] = a.train.clip_norm;
  return s;
}

Device train_device(const TrainArgs& a, Communicator& comm, std::unique_ptr<DeviceComm>* link) {
  const std::string& name = a.device;
  if (name != "cpu" && name != "cuda")
    throw OptionError("--device: expected cpu or cuda, got '" + name + "'");
  if (name == "cpu") {
    attach_device_comm(comm, Device::cpu, a.comm);  // only checks --comm: nothing to attach
    return Device::cpu;
  }
  std::string why;
  if (!kernels::cuda_available(&why)) throw DeviceError("--device cuda: " + why);
  kernels::bind_cuda_device(comm.local_rank());
  *link = attach_device_comm(comm, Device::cuda, a.comm, &why);
  if (comm.size() > 1 && comm.rank() == 0 && !a.quiet)
    std::printf("gpu communication: %s\n", why.c_str());
  return Device::cuda;
}

std::vector<NamedPath> train_outputs(const TrainArgs& a) {
  return {{"--log-json", a.log_json},
          {"--predictions", a.predictions},
          {"--save", a.train.save},
          {"--embeddings", a.embeddings},
          {"--embeddings", a.embeddings.empty() ? "" : embeddings_ids_path(a.embeddings)}};
}

}  // namespace dgnn::cli
