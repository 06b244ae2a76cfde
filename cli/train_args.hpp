#pragma once
// What `dgnn train` was asked to do, shared by the static (cmd_train.cpp) and temporal
// (cmd_train_temporal.cpp) paths, and the atomic writer both use for their outputs.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/error.hpp"
#include "gnn/trainer.hpp"
#include "graph/dataset.hpp"
#include "graph/temporal.hpp"

namespace dgnn::cli {

struct TrainArgs {
  DatasetOptions data;
  std::string model;  // empty: gcn for static graphs, evolvegcn-o for temporal ones
  int layers = 2;
  int64_t hidden = 16;
  float dropout = 0.5f;
  TrainOptions train;
  std::string log_json;
  std::string predictions;
  std::string device = "cpu";
  int parts = 0;                    // 0 = as many as ranks
  std::string partitioner = "metis";
  std::string partition_dir;
  bool no_overlap = false;
  // Temporal (snapshot) training: used when the input has a time column.
  SnapshotOptions snapshots;
  std::string task = "link";  // link (prediction) on temporal graphs
  int bptt = 0;
  int neg_train = 5;
  int neg_eval = 100;
  int threads = 0;
  bool quiet = false;
};

// Writes a text file atomically: the content appears whole under `path` or not at all.
class AtomicFile {
 public:
  // The temporary name is per process, so two runs writing the same output never share one.
  explicit AtomicFile(std::string path)
      : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(::getpid())) {
    f_ = std::fopen(tmp_.c_str(), "w");
    if (!f_) throw IoError(path_ + ": cannot write (" + std::strerror(errno) + ")");
  }
  ~AtomicFile() {
    if (f_) {
      std::fclose(f_);
      std::remove(tmp_.c_str());
    }
  }
  FILE* get() { return f_; }
  void commit() {
    const bool ok = std::fflush(f_) == 0 && !std::ferror(f_);
    std::fclose(f_);
    f_ = nullptr;
    if (!ok || std::rename(tmp_.c_str(), path_.c_str()) != 0) {
      std::remove(tmp_.c_str());
      throw IoError(path_ + ": writing failed");
    }
  }

 private:
  std::string path_, tmp_;
  FILE* f_ = nullptr;
};


// Fails now, not after hours of training, if `path` could not be written later: its folder must
// exist and be writable.
void check_writable(const std::string& path, const char* option);

// Temporal training (link prediction over snapshots): the input has a time column.
void run_train_temporal(TrainArgs& a);

}  // namespace dgnn::cli
