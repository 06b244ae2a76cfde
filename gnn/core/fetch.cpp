#include "dgnn/gnn/core/fetch.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "dgnn/comm/device_comm.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/gnn/core/ops.hpp"
#include "dgnn/kernels/buffer.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

RowDirectory RowDirectory::single(int64_t n) {
  RowDirectory d;
  d.owner.assign(size_t(n), 0);
  d.local.resize(size_t(n));
  std::iota(d.local.begin(), d.local.end(), 0);
  return d;
}

RowDirectory RowDirectory::by_ascending_id(std::vector<int32_t> owner, int rank) {
  RowDirectory d;
  d.owner = std::move(owner);
  for (size_t v = 0; v < d.owner.size(); ++v)
    if (d.owner[v] == rank) d.owned.push_back(int32_t(v));
  d.owned.shrink_to_fit();
  return d;
}

int32_t RowDirectory::owned_row(int32_t v) const {
  if (!local.empty()) return local[size_t(v)];
  const auto it = std::lower_bound(owned.begin(), owned.end(), v);
  DGNN_CHECK(it != owned.end() && *it == v, Error,
             "RowDirectory: vertex " + std::to_string(v) + " is not owned by this rank");
  return int32_t(it - owned.begin());
}

namespace {

// Byte counts and displacements for rows of `f` floats.
struct Layout {
  std::vector<int64_t> counts, displs;
  int64_t total = 0;
  Layout(const std::vector<int64_t>& rows, int64_t row_bytes) {
    for (int64_t r : rows) {
      counts.push_back(r * row_bytes);
      displs.push_back(total);
      total += r * row_bytes;
    }
  }
};

// A host index list as the kernels of `dev` take it (shared: forward and backward use it).
std::shared_ptr<kernels::Buffer> indices_on(Device dev, const std::vector<int32_t>& host) {
  return std::make_shared<kernels::Buffer>(kernels::Buffer::upload(dev, host));
}

}  // namespace

Var fetch_rows(Communicator& comm, const RowDirectory& dir, const Var& h,
               const std::vector<int32_t>& ids, bool peer_by_peer) {
  const int p = comm.size();
  if (p == 1) return gather_rows(h, ids);
  const int64_t f = h.cols();
  // Requests grouped by owner; `order[k]` is where the k-th request's row goes in the output.
  std::vector<std::vector<int32_t>> want(static_cast<size_t>(p));
  std::vector<std::vector<int32_t>> slot(static_cast<size_t>(p));
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t v = ids[i];
    DGNN_CHECK(v >= 0 && size_t(v) < dir.owner.size(), ShapeError,
               "fetch_rows: vertex id out of range");
    // With no row numbers here, the owner finds the rows of the ids it is asked for.
    want[size_t(dir.owner[size_t(v)])].push_back(dir.local.empty() ? v : dir.local[size_t(v)]);
    slot[size_t(dir.owner[size_t(v)])].push_back(int32_t(i));
  }
  // Exchange request counts (one number to each rank: O(P) a rank, where an all-reduce of the
  // P x P table was O(P^2)), then the requested local rows.
  std::vector<int64_t> send_rows(static_cast<size_t>(p)), recv_rows(static_cast<size_t>(p));
  for (int q = 0; q < p; ++q) send_rows[size_t(q)] = int64_t(want[size_t(q)].size());
  {
    std::vector<int64_t> one(static_cast<size_t>(p), 8), at(static_cast<size_t>(p));
    for (int q = 0; q < p; ++q) at[size_t(q)] = 8 * q;
    comm.alltoallv(send_rows.data(), one, at, recv_rows.data(), one, at);
  }
  std::vector<int32_t> req_send, req_recv;
  for (auto& w : want) req_send.insert(req_send.end(), w.begin(), w.end());
  Layout rs(send_rows, 4), rr(recv_rows, 4);
  req_recv.resize(size_t(rr.total / 4));
  comm.alltoallv(req_send.data(), rs.counts, rs.displs, req_recv.data(), rr.counts, rr.displs);
  if (dir.local.empty()) {
    // Each peer's ids usually ascend (a whole fetch asks for every row in order): search from
    // the last one found, in doubling steps, so that such a run costs O(1) an id.
    const std::vector<int32_t>& own = dir.owned;
    size_t at = 0;
    for (int32_t& r : req_recv) {
      size_t lo = 0, hi = own.size();
      if (at < own.size() && own[at] <= r) {
        lo = at;
        size_t step = 1;
        for (; lo + step < own.size() && own[lo + step] <= r; step *= 2) lo += step;
        hi = std::min(own.size(), lo + step + 1);  // own[lo] <= r < own[lo + step]
      }
      const auto it = std::lower_bound(own.begin() + ptrdiff_t(lo), own.begin() + ptrdiff_t(hi), r);
      DGNN_CHECK(it != own.end() && *it == r, Error,
                 "fetch_rows: asked for vertex " + std::to_string(r) + ", which rank " +
                     std::to_string(comm.rank()) + " does not own");
      r = int32_t(it - own.begin());
      at = size_t(r);
    }
  }

  // Serve the rows others asked for, receive ours. Row lists go where the kernels of the
  // rows' device read them; the rows themselves move in that device's memory.
  const Device dev = h.device();
  const int64_t n_served = int64_t(req_recv.size()), n_got = int64_t(req_send.size());
  auto served_idx = indices_on(dev, req_recv);
  std::vector<int32_t> order;
  for (auto& s : slot) order.insert(order.end(), s.begin(), s.end());
  auto order_idx = indices_on(dev, order);
  Tensor out = Tensor::uninitialized(int64_t(ids.size()), f, dev);
  // out[order[k]] = got[k]
  kernels::fill(dev, out.data(), out.numel(), 0.f);
  Layout ds(recv_rows, f * 4), dr(send_rows, f * 4);
  if (peer_by_peer && f > 0) {
    const int me = comm.rank();
    std::vector<int64_t> zero(static_cast<size_t>(p), 0), sc(zero), rc(zero);
    for (int r = 0; r < p; ++r) {
      const int to = (me - r + p) % p, from = (me + r) % p;  // served, got from
      const int64_t n_to = recv_rows[size_t(to)], n_from = send_rows[size_t(from)];
      Tensor served = Tensor::uninitialized(n_to, f, dev);
      kernels::gather_rows(dev, h.value().view(),
                           served_idx->as<const int32_t>() + ds.displs[size_t(to)] / (f * 4), n_to,
                           served.view());
      Tensor got = Tensor::uninitialized(n_from, f, dev);
      sc.assign(size_t(p), 0);
      rc.assign(size_t(p), 0);
      sc[size_t(to)] = n_to * f * 4;
      rc[size_t(from)] = n_from * f * 4;
      alltoallv_on(comm, dev, served.data(), sc, zero, got.data(), rc, zero);
      kernels::scatter_add_rows(dev, got.view(),
                                order_idx->as<const int32_t>() + dr.displs[size_t(from)] / (f * 4),
                                n_from, out.view());
    }
  } else {
    Tensor got = Tensor::uninitialized(n_got, f, dev);
    {
      // Freed once sent.
      Tensor served = Tensor::uninitialized(n_served, f, dev);
      kernels::gather_rows(dev, h.value().view(), served_idx->as<const int32_t>(), n_served,
                           served.view());
      alltoallv_on(comm, dev, served.data(), ds.counts, ds.displs, got.data(), dr.counts,
                   dr.displs);
    }
    kernels::scatter_add_rows(dev, got.view(), order_idx->as<const int32_t>(), n_got, out.view());
  }

  Communicator* c = &comm;
  Var result = make_op(
      std::move(out), {h},
      [c, order_idx, served_idx, n_got, n_served, send_rows, recv_rows, f](Node& self) {
        const Device d = self.value.device();
        // Gradient rows in request order go back to the owners, which add them in.
        Tensor back = Tensor::uninitialized(n_got, f, d);
        kernels::gather_rows(d, std::as_const(self.grad).view(), order_idx->as<const int32_t>(),
                             n_got, back.view());
        Tensor recv = Tensor::uninitialized(n_served, f, d);
        Layout bs(send_rows, f * 4), br(recv_rows, f * 4);
        alltoallv_on(*c, d, back.data(), bs.counts, bs.displs, recv.data(), br.counts, br.displs);
        kernels::scatter_add_rows(d, recv.view(), served_idx->as<const int32_t>(), n_served,
                                  self.inputs[0]->grad_buffer().view());
      },
      "fetch_rows");
  if (result.node()->backward) result.node()->collective = true;
  return result;
}

}  // namespace dgnn
