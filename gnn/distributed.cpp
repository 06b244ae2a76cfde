#include "gnn/distributed.hpp"

#include "common/error.hpp"

namespace dgnn {

std::unique_ptr<RankSetup> make_rank_setup(LocalPart part, Communicator& comm) {
  auto s = std::make_unique<RankSetup>();
  s->part = std::move(part);
  LocalPart& p = s->part;
  if (p.parts != comm.size())
    throw OptionError("the partition has " + std::to_string(p.parts) + " parts, the job has " +
                      std::to_string(comm.size()) + " ranks");
  if (p.labels.empty()) throw OptionError("the dataset has no labels (give --labels FILE)");
  s->halo = make_halo_exchange(p.plan, comm);
  s->graph = std::make_unique<GraphView>(p.local_in, p.n_owned, p.global_ids, p.halo_in_degree,
                                         s->halo.get());
  NodeTask& t = s->task;
  t.features = Tensor::from_host(p.features.data(), p.n_owned, p.feature_dim);
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

}  // namespace dgnn
