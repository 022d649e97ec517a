#include "scheduler/flow/cost_scaling.h"

#include <algorithm>
#include <limits>

#include "scheduler/flow/wide.h"

namespace copse::flow {

namespace {

enum class Outcome { kDone, kCancelled, kOverflow, kStuck };

// The push-relabel core in arithmetic type T (int64_t or Wide). Potentials
// `p_` are in scaled units (original cost * scale_).
template <typename T>
class Core {
 public:
  Core(ResidualNet& net, std::vector<T>& p, const CostScalingOptions& opt,
       CostScalingEngine::Stats& stats, const CancelFlag* cancel)
      : net_(net), p_(p), opt_(opt), stats_(stats), cancel_(cancel), n_(net.node_count()) {
    scale_ = static_cast<T>(n_) + 1;
    cur_.resize(n_);
    queued_.assign(n_, 0);
    bucket_of_.assign(n_, kUnset);
    next_.resize(n_);
    prev_.resize(n_);
  }

  // REQUIRES: the flow in net_ is feasible.
  Outcome Run() {
    T eps = MaxViolation();
    while (eps > 1) {
      eps = std::max<T>(1, eps / opt_.scaling_factor);
      if (opt_.price_refine && PriceRefine(eps)) {
        ++stats_.skipped_by_price_refine;
        continue;
      }
      ++stats_.refines;
      Outcome o = Refine(eps);
      if (o != Outcome::kDone) return o;
    }
    return Outcome::kDone;
  }

 private:
  static constexpr uint32_t kUnset = std::numeric_limits<uint32_t>::max();
  // Potentials stay within +-kGuard in int64 mode, so that reduced costs
  // (scaled costs are below 2^60) never overflow.
  static constexpr T kGuard = std::is_same_v<T, int64_t> ? (T{1} << 61) : (T{1} << 120);

  T Scaled(int64_t c) const { return static_cast<T>(c) * scale_; }
  T Rc(uint32_t u, const ResidualArc& r) const { return Scaled(r.cost) - p_[u] + p_[r.head]; }

  T MaxViolation() const {
    T worst = 0;
    for (uint32_t u = 0; u < n_; ++u) {
      for (uint32_t a = net_.begin(u); a < net_.end(u); ++a) {
        const ResidualArc& r = net_.arc(a);
        if (r.resid > 0) worst = std::max(worst, -Rc(u, r));
      }
    }
    return worst;
  }

  // Label correcting towards potentials with every residual reduced cost
  // >= -eps, giving up after about two passes over the nodes.
  bool PriceRefine(T eps) {
    std::vector<T> trial = p_;
    std::vector<uint32_t> queue(n_);
    std::vector<uint8_t> in(n_, 1);
    for (uint32_t u = 0; u < n_; ++u) queue[u] = u;
    uint64_t budget = 2 * uint64_t{n_} + 16;
    for (size_t qi = 0; qi < queue.size(); ++qi) {
      if (--budget == 0) return false;
      uint32_t u = queue[qi];
      in[u] = 0;
      T best = trial[u];
      for (uint32_t a = net_.begin(u); a < net_.end(u); ++a) {
        const ResidualArc& r = net_.arc(a);
        if (r.resid > 0) best = std::min(best, Scaled(r.cost) + trial[r.head] + eps);
      }
      if (best >= trial[u]) continue;
      trial[u] = best;
      for (uint32_t a = net_.begin(u); a < net_.end(u); ++a) {
        const ResidualArc& r = net_.arc(a);
        if (net_.arc(r.rev).resid > 0 && !in[r.head]) {
          in[r.head] = 1;
          queue.push_back(r.head);
        }
      }
    }
    p_.swap(trial);
    return true;
  }

  void Enqueue(uint32_t v) {
    if (!queued_[v]) {
      queued_[v] = 1;
      active_.push_back(v);
    }
  }

  Outcome Refine(T eps) {
    for (uint32_t u = 0; u < n_; ++u) {
      for (uint32_t a = net_.begin(u); a < net_.end(u); ++a) {
        const ResidualArc& r = net_.arc(a);
        if (r.resid > 0 && Rc(u, r) < 0) net_.Push(a, r.resid);
      }
    }
    active_.clear();
    for (uint32_t u = 0; u < n_; ++u) {
      cur_[u] = net_.begin(u);
      queued_[u] = 0;
      if (net_.excess(u) > 0) Enqueue(u);
    }
    GlobalUpdate(eps);
    uint64_t relabels_since_update = 0;
    for (size_t qi = 0; qi < active_.size(); ++qi) {
      uint32_t u = active_[qi];
      queued_[u] = 0;
      if (active_.size() > 4 * size_t{n_} && qi > 2 * size_t{n_}) {
        active_.erase(active_.begin(), active_.begin() + static_cast<std::ptrdiff_t>(qi) + 1);
        qi = static_cast<size_t>(-1);
      }
      Outcome o = Discharge(u, eps, relabels_since_update);
      if (o != Outcome::kDone) return o;
      if (relabels_since_update > n_) {
        if (IsCancelled(cancel_)) return Outcome::kCancelled;
        GlobalUpdate(eps);
        relabels_since_update = 0;
      }
    }
    return Outcome::kDone;
  }

  Outcome Discharge(uint32_t u, T eps, uint64_t& relabels) {
    while (net_.excess(u) > 0) {
      uint32_t a = cur_[u];
      const uint32_t end = net_.end(u);
      for (; a < end; ++a) {
        ResidualArc& r = net_.arc(a);
        if (r.resid <= 0 || Rc(u, r) >= 0) continue;
        int64_t delta = std::min(net_.excess(u), r.resid);
        uint32_t v = r.head;
        net_.Push(a, delta);
        if (net_.excess(v) > 0) Enqueue(v);
        if (net_.excess(u) == 0) break;
      }
      cur_[u] = a;
      if (net_.excess(u) == 0) return Outcome::kDone;
      Outcome o = Relabel(u, eps);
      if (o != Outcome::kDone) return o;
      ++relabels;
    }
    return Outcome::kDone;
  }

  Outcome Relabel(uint32_t u, T eps) {
    ++stats_.relabels;
    bool any = false;
    T best = 0;
    for (uint32_t a = net_.begin(u); a < net_.end(u); ++a) {
      const ResidualArc& r = net_.arc(a);
      if (r.resid <= 0) continue;
      T cand = Scaled(r.cost) + p_[r.head];
      if (!any || cand < best) best = cand;
      any = true;
    }
    if (!any) return Outcome::kStuck;
    p_[u] = best + eps;
    if (p_[u] > kGuard || p_[u] < -kGuard) return Outcome::kOverflow;
    cur_[u] = net_.begin(u);
    return Outcome::kDone;
  }

  void BucketInsert(uint32_t v, uint32_t k) {
    if (k >= heads_.size()) heads_.resize(k + 1, kUnset);
    bucket_of_[v] = k;
    prev_[v] = kUnset;
    next_[v] = heads_[k];
    if (heads_[k] != kUnset) prev_[heads_[k]] = v;
    heads_[k] = v;
  }
  void BucketRemove(uint32_t v) {
    uint32_t k = bucket_of_[v];
    if (prev_[v] != kUnset) next_[prev_[v]] = next_[v];
    else heads_[k] = next_[v];
    if (next_[v] != kUnset) prev_[next_[v]] = prev_[v];
  }

  // Backward search from the deficits in units of eps (Goldberg's global
  // update): raises each node's potential by eps times its distance, which
  // keeps eps-optimality and points admissible arcs towards the deficits.
  void GlobalUpdate(T eps) {
    ++stats_.global_updates;
    const uint32_t max_bucket = n_ + 1;
    std::fill(bucket_of_.begin(), bucket_of_.end(), kUnset);
    heads_.assign(1, kUnset);
    settled_.clear();
    size_t active_left = 0;
    for (uint32_t u = 0; u < n_; ++u) {
      if (net_.excess(u) > 0) ++active_left;
      if (net_.excess(u) < 0) BucketInsert(u, 0);
    }
    uint32_t k = 0;
    for (; k < heads_.size() && active_left > 0; ++k) {
      while (heads_[k] != kUnset && active_left > 0) {
        uint32_t v = heads_[k];
        BucketRemove(v);
        bucket_of_[v] = kUnset - 1;  // settled
        dist_of_settled_.resize(n_);
        dist_of_settled_[v] = k;
        settled_.push_back(v);
        if (net_.excess(v) > 0) --active_left;
        for (uint32_t b = net_.begin(v); b < net_.end(v); ++b) {
          const ResidualArc& back = net_.arc(b);
          uint32_t w = back.head;
          const ResidualArc& fwd = net_.arc(back.rev);  // w -> v
          if (fwd.resid <= 0 || bucket_of_[w] == kUnset - 1) continue;
          T rc = Rc(w, fwd);
          T len = rc < 0 ? T{0} : rc / eps + 1;
          T nk = static_cast<T>(k) + len;
          if (nk >= static_cast<T>(max_bucket)) continue;
          uint32_t nki = static_cast<uint32_t>(nk);
          if (bucket_of_[w] != kUnset) {
            if (bucket_of_[w] <= nki) continue;
            BucketRemove(w);
          }
          BucketInsert(w, nki);
        }
      }
      if (active_left == 0) break;
    }
    T top = static_cast<T>(std::min<uint32_t>(k, max_bucket));
    for (uint32_t v = 0; v < n_; ++v) {
      if (bucket_of_[v] != kUnset - 1) p_[v] += top * eps;
    }
    for (uint32_t v : settled_) p_[v] += static_cast<T>(dist_of_settled_[v]) * eps;
    for (uint32_t u = 0; u < n_; ++u) cur_[u] = net_.begin(u);
  }

  ResidualNet& net_;
  std::vector<T>& p_;
  const CostScalingOptions& opt_;
  CostScalingEngine::Stats& stats_;
  const CancelFlag* cancel_;
  uint32_t n_;
  T scale_;
  std::vector<uint32_t> cur_;
  std::vector<uint8_t> queued_;
  std::vector<uint32_t> active_;
  std::vector<uint32_t> bucket_of_, next_, prev_, heads_, settled_, dist_of_settled_;
};

int64_t FloorDiv(Wide a, Wide b) {
  Wide q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return FitsInt64(q) ? static_cast<int64_t>(q) : (q < 0 ? std::numeric_limits<int64_t>::min() / 4
                                                         : std::numeric_limits<int64_t>::max() / 4);
}

template <typename T>
Outcome RunCore(ResidualNet& net, std::vector<int64_t>& pot, const CostScalingOptions& opt,
                CostScalingEngine::Stats& stats, const CancelFlag* cancel) {
  const T scale = static_cast<T>(net.node_count()) + 1;
  std::vector<T> p(pot.size());
  for (size_t i = 0; i < pot.size(); ++i) p[i] = static_cast<T>(pot[i]) * scale;
  Outcome o = Core<T>(net, p, opt, stats, cancel).Run();
  if (o != Outcome::kDone) return o;
  for (size_t i = 0; i < pot.size(); ++i) pot[i] = FloorDiv(p[i], scale);
  return o;
}

}  // namespace

Status CostScalingEngine::Run(ResidualNet& net, std::vector<int64_t>& pot,
                              const CancelFlag* cancel) {
  stats_ = Stats{};
  COPSE_RETURN_IF_ERROR(MakeFeasible(net, cancel));
  std::vector<int64_t> start = pot;
  Outcome o = Outcome::kOverflow;
  if (!options_.force_wide) o = RunCore<int64_t>(net, pot, options_, stats_, cancel);
  if (o == Outcome::kOverflow) {
    stats_.used_wide = true;
    pot = start;
    o = RunCore<Wide>(net, pot, options_, stats_, cancel);
  }
  if (o == Outcome::kCancelled) return Cancelled("solve cancelled");
  if (o != Outcome::kDone) return Internal("cost scaling: an active node has no residual arc");
  // Rounded potentials are 1-optimal in original units; make them exact.
  if (!FixPotentials(net, pot, 0, 0, cancel)) return Cancelled("solve cancelled");
  return Status::Ok();
}

Status CostScalingSolver::Solve(const FlowGraph& graph, FlowSolution* out,
                                const CancelFlag* cancel) {
  COPSE_RETURN_IF_ERROR(net_.Build(graph));
  std::vector<int64_t> pot(net_.node_count(), 0);
  COPSE_RETURN_IF_ERROR(engine_.Run(net_, pot, cancel));
  return net_.Extract(graph, pot, out);
}

}  // namespace copse::flow
