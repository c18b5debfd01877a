// Seeded parameter initialisation and tensor-parallel sharding of full matrices.
#include "sim/model/weights.h"

#include <cmath>
#include <stdexcept>

#include "sim/model/rng.h"

namespace meshscope::model {
namespace {

// Residual branches are damped by the depth so a deep MLP starts near the identity and trains
// without exploding (as GPT-2 scales its residual projections): the last linear of a dense unit,
// every expert's fc2 of a moe block.
double gain(const Workload& w, const Unit& u, size_t linear) {
  const int expert = u.linears[linear].expert;
  const bool branch_end = u.kind == UnitKind::kMoe
                              ? expert >= 0 && static_cast<int>(linear) == moe_fc2(expert)
                              : linear + 1 == u.linears.size();
  if (u.residual && branch_end) return 0.5 / std::sqrt(static_cast<double>(w.units.size()));
  return 1.0;
}

}  // namespace

std::vector<LinearWeights> init_weights(const Workload& w) {
  std::vector<LinearWeights> out;
  uint64_t index = 0;
  for (const Unit& u : w.units) {
    for (size_t i = 0; i < u.linears.size(); ++i, ++index) {
      const LinearSpec& l = u.linears[i];
      LinearWeights p{l.name, l.in, l.out, std::vector<float>(size_t(l.in) * l.out),
                      std::vector<float>(l.out)};
      Rng rw({w.spec.seed, index, 1});
      const double scale = gain(w, u, i) / std::sqrt(static_cast<double>(l.in));
      for (float& x : p.w) x = static_cast<float>(rw.normal() * scale);
      Rng rb({w.spec.seed, index, 2});
      for (float& x : p.b) x = static_cast<float>(rb.uniform(-0.1, 0.1));
      out.push_back(std::move(p));
    }
  }
  return out;
}

LinearWeights shard(const LinearWeights& full, TpSplit split, int rank, int tp) {
  if (tp < 1 || rank < 0 || rank >= tp) throw std::invalid_argument("shard: bad tp rank");
  if (split == TpSplit::kReplicated || tp == 1) return full;
  LinearWeights p{full.name, full.in, full.out, {}, {}};
  if (split == TpSplit::kColumn) {
    const int cols = full.out / tp, c0 = rank * cols;
    p.out = cols;
    p.w.resize(size_t(full.in) * cols);
    for (int r = 0; r < full.in; ++r) {
      for (int c = 0; c < cols; ++c)
        p.w[size_t(r) * cols + c] = full.w[size_t(r) * full.out + c0 + c];
    }
    p.b.assign(full.b.begin() + c0, full.b.begin() + c0 + cols);
  } else {
    const int rows = full.in / tp, r0 = rank * rows;
    p.in = rows;
    p.w.assign(full.w.begin() + size_t(r0) * full.out,
               full.w.begin() + size_t(r0 + rows) * full.out);
    p.b = full.b;
  }
  return p;
}

void unshard(const LinearWeights& part, TpSplit split, int rank, int tp, LinearWeights& full) {
  if (split == TpSplit::kReplicated || tp == 1) {
    full.w = part.w;
    full.b = part.b;
    return;
  }
  if (split == TpSplit::kColumn) {
    const int cols = full.out / tp, c0 = rank * cols;
    for (int r = 0; r < full.in; ++r) {
      for (int c = 0; c < cols; ++c)
        full.w[size_t(r) * full.out + c0 + c] = part.w[size_t(r) * cols + c];
    }
    for (int c = 0; c < cols; ++c) full.b[c0 + c] = part.b[c];
  } else {
    const int rows = full.in / tp, r0 = rank * rows;
    std::copy(part.w.begin(), part.w.end(), full.w.begin() + size_t(r0) * full.out);
    if (rank == 0) full.b = part.b;
  }
}

}  // namespace meshscope::model
