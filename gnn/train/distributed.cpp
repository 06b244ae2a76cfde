#include "dgnn/gnn/train/distributed.hpp"

#include "dgnn/common/error.hpp"

namespace dgnn {

std::unique_ptr<RankSetup> make_rank_setup(LocalPart part, Communicator& comm, Device dev) {
  auto s = std::make_unique<RankSetup>();
  s->part = std::move(part);
  LocalPart& p = s->part;
  if (p.parts != comm.size())
    throw OptionError("the partition has " + std::to_string(p.parts) + " parts, the job has " +
                      std::to_string(comm.size()) + " ranks");
  // A rank may own no vertex at all (tiny graphs, hash parts): that is not "no labels".
  if (p.num_classes <= 0) throw OptionError("the dataset has no labels (give --labels FILE)");
  if (p.labels.empty()) p.labels.assign(size_t(p.n_owned), -1);
  s->halo = make_halo_exchange(p.plan, comm, dev);
  // The view takes the structure; the part keeps ids and labels (predictions need them).
  s->graph = std::make_unique<GraphView>(std::move(p.local_in), p.n_owned, p.global_ids,
                                         p.halo_in_degree, s->halo.get());
  NodeTask& t = s->task;
  t.features = Var(Tensor::from_host(p.features.data(), p.n_owned, p.feature_dim, dev));
  std::vector<float>().swap(p.features);
  t.labels = p.labels;
  t.train = p.train;
  t.val = p.val;
  t.test = p.test;
  t.global_train = p.global_train;
  t.global_val = p.global_val;
  t.global_test = p.global_test;
  t.num_classes = p.num_classes;
  return s;
}

LocalPart partition_and_extract(const Dataset& d, const PartitionOptions& opt, Communicator& comm) {
  PartitionOptions o = opt;
  o.parts = comm.size();
  std::vector<int32_t> part(size_t(d.num_vertices()));
  if (comm.rank() == 0) part = partition_vertices(d.graph.in, o, d.train);
  comm.broadcast(part.data(), int64_t(part.size()) * 4, 0);
  return extract_part(d, part, o.parts, comm.rank());
}

LocalPart partition_and_scatter(const Dataset* d, const PartitionOptions& opt, Communicator& comm) {
  const int p = comm.size(), me = comm.rank();
  std::vector<int64_t> sizes(size_t(p), 0);
  std::vector<std::string> encoded(static_cast<size_t>(p));
  if (me == 0) {
    PartitionOptions o = opt;
    o.parts = p;
    const std::vector<int32_t> part = partition_vertices(d->graph.in, o, d->train);
    for (int r = 0; r < p; ++r) {
      encoded[size_t(r)] = encode_part(extract_part(*d, part, p, r));
      sizes[size_t(r)] = int64_t(encoded[size_t(r)].size());
    }
  }
  comm.broadcast(sizes.data(), int64_t(sizes.size()) * 8, 0);
  std::vector<int64_t> send_counts(size_t(p), 0), send_displs(size_t(p), 0);
  std::vector<int64_t> recv_counts(size_t(p), 0), recv_displs(size_t(p), 0);
  std::string send;
  if (me == 0)
    for (int r = 0; r < p; ++r) {
      send_displs[size_t(r)] = int64_t(send.size());
      send_counts[size_t(r)] = sizes[size_t(r)];
      send += encoded[size_t(r)];
      std::string().swap(encoded[size_t(r)]);  // clear() would keep the memory
    }
  recv_counts[0] = sizes[size_t(me)];
  std::string mine(static_cast<size_t>(sizes[size_t(me)]), 0);
  comm.alltoallv(send.data(), send_counts, send_displs, mine.data(), recv_counts, recv_displs);
  return decode_part(mine, "the part rank 0 sent to rank " + std::to_string(me));
}

}  // namespace dgnn
