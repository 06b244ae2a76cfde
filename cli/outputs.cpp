// What a training run writes besides its log: predictions and embeddings, gathered on rank 0
// and written there (atomically) in the input file's vertex ids.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "dgnn/cli/train_args.hpp"
#include "dgnn/graph/npy.hpp"

namespace dgnn::cli {

namespace {

// Every rank's values to rank 0, in rank order (empty elsewhere). Collective.
template <class T>
std::vector<T> gather_to_root(Communicator& comm, const std::vector<T>& mine) {
  const int p = comm.size();
  std::vector<int64_t> counts(size_t(p), 0);
  counts[size_t(comm.rank())] = int64_t(mine.size() * sizeof(T));
  comm.allreduce_sum(counts.data(), p);
  std::vector<int64_t> send_counts(size_t(p), 0), send_displs(size_t(p), 0);
  std::vector<int64_t> recv_counts(size_t(p), 0), recv_displs(size_t(p), 0);
  send_counts[0] = counts[size_t(comm.rank())];
  int64_t total = 0;
  if (comm.rank() == 0)
    for (int r = 0; r < p; ++r) {
      recv_counts[size_t(r)] = counts[size_t(r)];
      recv_displs[size_t(r)] = total;
      total += counts[size_t(r)];
    }
  std::vector<T> all(size_t(total) / sizeof(T));
  comm.alltoallv(mine.data(), send_counts, send_displs, all.data(), recv_counts, recv_displs);
  return all;
}

}  // namespace

std::string embeddings_ids_path(const std::string& path) {
  const std::string ext = ".npy";
  const bool npy =
      path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
  return (npy ? path.substr(0, path.size() - ext.size()) : path) + ".ids.txt";
}

void write_class_predictions(const std::string& path, const Tensor& logits,
                             const std::vector<int64_t>& ids, Communicator& comm) {
  DGNN_CHECK(int64_t(ids.size()) == logits.rows(), ShapeError,
             "write_class_predictions: one id per row of logits");
  std::vector<int64_t> mine;
  for (int64_t v = 0; v < logits.rows(); ++v) {
    int64_t best = 0;
    for (int64_t c = 1; c < logits.cols(); ++c)
      if (logits.at(v, c) > logits.at(v, best)) best = c;
    mine.push_back(ids[size_t(v)]);
    mine.push_back(best);
  }
  const std::vector<int64_t> all = gather_to_root(comm, mine);
  if (comm.rank() != 0) return;
  std::vector<std::pair<int64_t, int64_t>> rows;
  for (size_t i = 0; i + 1 < all.size(); i += 2) rows.emplace_back(all[i], all[i + 1]);
  std::sort(rows.begin(), rows.end());
  AtomicFile out(path);
  for (auto [id, cls] : rows) std::fprintf(out.get(), "%lld %lld\n", (long long)id, (long long)cls);
  out.commit();
}

void write_embeddings(const std::string& path, const Tensor& rows, const std::vector<int64_t>& ids,
                      Communicator& comm) {
  DGNN_CHECK(int64_t(ids.size()) == rows.rows(), ShapeError, "write_embeddings: one id per row");
  double widest = double(rows.cols());
  comm.allreduce_max(&widest, 1);  // a rank without rows may hold a 0 x 0 tensor
  const int64_t cols = int64_t(widest);
  // Ids and values travel in two gathers, in the same rank order.
  std::vector<int64_t> my_ids(ids.begin(), ids.end());
  std::vector<float> my_values;
  if (rows.rows() > 0) my_values.assign(rows.data(), rows.data() + rows.numel());
  const std::vector<int64_t> all_ids = gather_to_root(comm, my_ids);
  const std::vector<float> all_values = gather_to_root(comm, my_values);
  if (comm.rank() != 0) return;
  std::vector<size_t> order(all_ids.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return all_ids[a] < all_ids[b]; });
  std::vector<float> sorted(all_values.size());
  for (size_t k = 0; k < order.size(); ++k)
    std::copy(all_values.begin() + int64_t(order[k]) * cols,
              all_values.begin() + int64_t(order[k] + 1) * cols,
              sorted.begin() + int64_t(k) * cols);
  AtomicFile ids_out(embeddings_ids_path(path));
  for (size_t k : order) std::fprintf(ids_out.get(), "%lld\n", (long long)all_ids[k]);
  write_npy(path, sorted.data(), int64_t(order.size()), cols);
  ids_out.commit();
}

void write_forecasts(const std::string& path, const std::vector<float>& mine,
                     const std::vector<int64_t>& ids, int64_t samples, int64_t channels,
                     Communicator& comm) {
  const int64_t rows = int64_t(ids.size());
  DGNN_CHECK(int64_t(mine.size()) == samples * rows * channels, ShapeError,
             "write_forecasts: samples x rows x channels values");
  // Vertex-major on the wire (each rank's rows with all their samples), ids beside them.
  std::vector<float> by_row(mine.size());
  for (int64_t i = 0; i < samples; ++i)
    for (int64_t r = 0; r < rows; ++r)
      std::copy_n(mine.begin() + (i * rows + r) * channels, channels,
                  by_row.begin() + (r * samples + i) * channels);
  const std::vector<int64_t> all_ids = gather_to_root(comm, ids);
  const std::vector<float> all = gather_to_root(comm, by_row);
  if (comm.rank() != 0) return;
  const int64_t n = int64_t(all_ids.size());
  std::vector<float> out(all.size());
  for (int64_t k = 0; k < n; ++k) {
    const int64_t v = all_ids[size_t(k)];
    DGNN_CHECK(v >= 0 && v < n, ShapeError, "write_forecasts: ids must be 0..N-1");
    for (int64_t i = 0; i < samples; ++i)
      std::copy_n(all.begin() + (k * samples + i) * channels, channels,
                  out.begin() + (i * n + v) * channels);
  }
  if (channels == 1)
    write_npy(path, out.data(), std::vector<int64_t>{samples, n});
  else
    write_npy(path, out.data(), std::vector<int64_t>{samples, n, channels});
}

void write_pair_predictions(const std::string& path,
                            const std::vector<LinkPredictionTrainer::ScoredPair>& pairs,
                            const std::vector<int64_t>& original_ids, bool link) {
  AtomicFile out(path);
  std::fprintf(out.get(), "# step src dst label score  (%s)\n",
               link ? "step t scores edges of snapshot t + 1; label 1 = an edge there, score = "
                      "the logit"
                    : "step t classifies the edges of snapshot t; label 1 = a negative weight, "
                      "score = the logit");
  for (const auto& p : pairs)
    std::fprintf(out.get(), "%d %lld %lld %d %.7g\n", p.step,
                 (long long)original_ids[size_t(p.src)], (long long)original_ids[size_t(p.dst)],
                 int(p.label), double(p.score));
  out.commit();
}

}  // namespace dgnn::cli
