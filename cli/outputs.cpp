// What a training run writes besides its log: predictions and embeddings, in the input file's
// vertex ids, atomically. On several ranks each rank writes its own block of the file (rows move
// to the rank holding their block of ids, none gathers them all); on one rank, or into a target
// that is not a regular file, rank 0 writes it whole.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "dgnn/cli/train_args.hpp"
#include "dgnn/comm/collectives.hpp"
#include "dgnn/graph/atomic_write.hpp"
#include "dgnn/graph/input_files.hpp"
#include "dgnn/graph/npy.hpp"
#include "dgnn/partition/dist_load.hpp"

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

// Whether `path` can be written by every rank in place of a temporary: it does not exist or is
// a regular file (a FIFO or /dev/null is written by rank 0 alone, in place). Rank 0 decides.
bool sharded_target(const std::string& path, Communicator& comm) {
  int64_t ok = 0;
  if (comm.rank() == 0) {
    struct stat st {};
    const std::string target = follow_links(path).string();
    ok = ::stat(target.c_str(), &st) != 0 ? errno == ENOENT : S_ISREG(st.st_mode);
  }
  comm.broadcast(&ok, 8, 0);
  return comm.size() > 1 && ok != 0;
}

// Writes `path` atomically as rank 0's `header` followed by every rank's records in ascending id
// order (record(i): the bytes of this rank's row i, whose id is ids[i]). Rows move to the rank
// holding their block of positions (ordered_positions: a sample sort), which writes its block
// at its offset into a temporary file that rank 0 then renames over `path`. Collective.
void write_in_id_order(const std::string& path, const std::string& header,
                       const std::vector<int64_t>& ids,
                       const std::function<std::string(size_t)>& record, Communicator& comm) {
  const int p = comm.size(), me = comm.rank();
  int64_t n = 0;
  const std::vector<int64_t> pos = ordered_positions(ids, comm, &n);
  auto owner = [&](int64_t x) { return int(std::min<int64_t>(p - 1, x * p / std::max<int64_t>(n, 1))); };
  // Positions and record bytes to the owners of the positions' blocks.
  std::vector<std::vector<int64_t>> where(static_cast<size_t>(p));
  std::vector<std::vector<char>> bytes(static_cast<size_t>(p));
  for (size_t i = 0; i < ids.size(); ++i) {
    const size_t r = size_t(owner(pos[i]));
    const std::string rec = record(i);
    where[r].insert(where[r].end(), {pos[i], int64_t(rec.size())});
    bytes[r].insert(bytes[r].end(), rec.begin(), rec.end());
  }
  const std::vector<int64_t> got = route(comm, where);
  const std::vector<char> data = route(comm, bytes);
  std::vector<std::pair<int64_t, size_t>> order;  // (position, byte offset in data)
  for (size_t k = 0, at = 0; 2 * k < got.size(); ++k) {
    order.push_back({got[2 * k], at});
    at += size_t(got[2 * k + 1]);
  }
  std::vector<int64_t> len_at(order.size());
  for (size_t k = 0; k < order.size(); ++k) len_at[k] = got[2 * k + 1];
  std::vector<size_t> idx(order.size());
  for (size_t k = 0; k < idx.size(); ++k) idx[k] = k;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return order[a].first < order[b].first; });
  std::string blob = me == 0 ? header : std::string();
  for (size_t k : idx) blob.append(data.data() + order[k].second, size_t(len_at[k]));
  const std::vector<int64_t> sizes = all_values(comm, int64_t(blob.size()));
  int64_t offset = 0;
  for (int r = 0; r < me; ++r) offset += sizes[size_t(r)];

  // The temporary, beside the target (so the rename is atomic), named by rank 0.
  std::string tmp;
  int64_t failed = 0;
  std::string why;
  if (me == 0) {
    refuse_overwriting_input(path);
    tmp = follow_links(path).string() + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) {
      failed = 1;
      why = "cannot create '" + tmp + "': " + std::strerror(errno);
    } else {
      ::close(fd);
    }
  }
  comm.allreduce_sum(&failed, 1);
  if (failed) {
    if (me == 0) throw IoError(why);
    throw IoError(path + ": rank 0 could not create the output");
  }
  int64_t len = int64_t(tmp.size());
  comm.broadcast(&len, 8, 0);
  tmp.resize(size_t(len));
  comm.broadcast(tmp.data(), len, 0);
  {
    const int fd = ::open(tmp.c_str(), O_WRONLY);
    if (fd < 0) {
      failed = 1, why = "cannot open '" + tmp + "': " + std::strerror(errno);
    } else {
      for (size_t done = 0; done < blob.size() && !failed;) {
        const ssize_t w = ::pwrite(fd, blob.data() + done, blob.size() - done, off_t(offset) + off_t(done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) failed = 1, why = "cannot write '" + path + "': " + std::strerror(errno);
        else done += size_t(w);
      }
      if (::close(fd) != 0 && !failed) failed = 1, why = "cannot write '" + path + "': " + std::strerror(errno);
    }
  }
  std::vector<int64_t> bad = all_values(comm, failed);
  int64_t any = 0;
  for (int64_t b : bad) any += b;
  if (me == 0) {
    if (any == 0 && ::rename(tmp.c_str(), follow_links(path).c_str()) != 0)
      failed = 1, why = "cannot write '" + path + "': " + std::strerror(errno), any = 1;
    if (any) ::unlink(tmp.c_str());
  }
  comm.allreduce_sum(&any, 1);
  if (any) {
    if (!why.empty()) throw IoError(why);
    throw IoError(path + ": another rank could not write its block");
  }
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
  if (sharded_target(path, comm)) {
    write_in_id_order(path, "", ids, [&](size_t i) {
      return std::to_string(mine[2 * i]) + " " + std::to_string(mine[2 * i + 1]) + "\n";
    }, comm);
    return;
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
  if (sharded_target(path, comm) && sharded_target(embeddings_ids_path(path), comm)) {
    int64_t n = int64_t(ids.size());
    comm.allreduce_sum(&n, 1);
    const float* values = rows.rows() > 0 ? rows.data() : nullptr;
    // The ids file first: an embeddings file is never left without its ids.
    write_in_id_order(embeddings_ids_path(path), "", ids, [&](size_t i) {
      return std::to_string(ids[i]) + "\n";
    }, comm);
    write_in_id_order(path, npy_header({n, cols}), ids, [&](size_t i) {
      return std::string(reinterpret_cast<const char*>(values + int64_t(i) * cols),
                         size_t(cols) * sizeof(float));
    }, comm);
    return;
  }
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
