#include "scheduler/flow/cost_scaling.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <type_traits>

#include "scheduler/flow/feasibility.h"
#include "scheduler/flow/reuse.h"
#include "scheduler/flow/ssp.h"
#include "scheduler/flow/wide.h"

namespace copse::flow {

namespace {

// kSuspect: a warm start relabels far more than a feasible problem needs;
// the caller falls back to a cold solve, which checks feasibility first.
enum class Outcome { kDone, kCancelled, kOverflow, kStuck, kSuspect };

// The core's arrays in arithmetic type T (CostScalingEngine::Workspace).
template <typename T>
struct CoreBuffers {
  std::vector<T> p, trial;
  std::vector<uint32_t> cur, active, bucket_of, next, prev, heads, settled, dist, touched, dirty,
      ever;
  std::vector<uint8_t> queued, dirty_flag, ever_flag;
};

}  // namespace

// Everything a run works in, owned by the engine and kept between its runs
// (reuse.h explains why): the core's arrays in both arithmetic types, the
// shortest-path finish, the feasibility and exact-potential helpers' arrays,
// and the potentials a run started from.
struct CostScalingEngine::Workspace {
  CoreBuffers<int64_t> narrow;
  CoreBuffers<Wide> wide;
  ShortestPathEngine finish;  // CostScalingOptions::ssp_finish_below
  FeasibilityWorkspace feasibility;
  FixPotentialsWorkspace fix;
  std::vector<int64_t> start;     // the potentials to restart from (128 bits, or cold)
  std::vector<uint32_t> changed;  // the nodes whose potential a warm run moved

  template <typename T>
  CoreBuffers<T>& core() {
    if constexpr (std::is_same_v<T, int64_t>) {
      return narrow;
    } else {
      return wide;
    }
  }
};

namespace {

// The push-relabel core in arithmetic type T (int64_t or Wide). Potentials
// `p_` are in scaled units (original cost * scale_). In a warm run work is
// kept local to the nodes that need it: only "dirty" nodes (whose potentials
// moved, or whose neighbours' did) can have residual arcs of negative reduced
// cost, so only they are scanned when a refine starts or prices are refined.
// A cold run (without price refine) touches nearly every node in every
// refine, so it keeps no such record ("whole" mode): each refine scans every
// node, and a global update that moves potentials restarts every node's
// current arc instead of visiting the arcs into each node it moved (at scale
// (a) that visit was a quarter of the global update's arc reads, each a
// random access to the partner arc; bench/flow/journal.md, run 5).
template <typename T>
class Core {
 public:
  // Works in `buf`, with the potentials in buf.p.
  Core(ResidualNet& net, CoreBuffers<T>& buf, const CostScalingOptions& opt,
       CostScalingEngine::Stats& stats, const CancelFlag* cancel)
      : net_(net),
        p_(buf.p),
        opt_(opt),
        stats_(stats),
        cancel_(cancel),
        n_(net.node_count()),
        buf_(buf) {
    scale_ = static_cast<T>(n_) + 1;
    for (auto* v : {&active_, &heads_, &settled_, &touched_, &dirty_, &ever_}) v->clear();
    ReserveWithSlack(cur_, n_);
    cur_.resize(n_);
    AssignReuse(queued_, n_, uint8_t{0});
    AssignReuse(bucket_of_, n_, kUnset);
    for (auto* v : {&next_, &prev_, &dist_}) {
      ReserveWithSlack(*v, n_);
      v->resize(n_);
    }
    AssignReuse(dirty_flag_, n_, uint8_t{0});
    AssignReuse(ever_flag_, n_, uint8_t{0});
    for (uint32_t u = 0; u < n_; ++u) cur_[u] = net_.begin(u);
  }

  // From a feasible flow: epsilon starts at the largest violation.
  Outcome RunCold() {
    for (uint32_t u = 0; u < n_; ++u) MarkDirty(u);
    T eps = MaxViolation();
    if (!opt_.price_refine) {  // price refine needs the dirty record
      whole_ = true;
      for (uint32_t u : dirty_) dirty_flag_[u] = 0;
      dirty_.clear();
    }
    return Scale(eps, false);
  }

  // From a pseudoflow with every residual reduced cost >= 0: refine at
  // `eps` first, then scale down.
  Outcome RunWarm(T eps) {
    warm_ = true;
    return Scale(std::max<T>(eps, 1), true);
  }

  // Nodes whose potential changed; every node when whole().
  const std::vector<uint32_t>& changed() const { return ever_; }
  bool whole() const { return whole_; }
  // Scaling stopped early (CostScalingOptions::ssp_finish_below).
  bool finish() const { return finish_; }

 private:
  static constexpr uint32_t kUnset = std::numeric_limits<uint32_t>::max();
  static constexpr uint32_t kSettled = kUnset - 1;
  // Potentials stay within +-kGuard in int64 mode, so that reduced costs
  // (scaled costs are below 2^60) never overflow.
  static constexpr T kGuard = std::is_same_v<T, int64_t> ? (T{1} << 61) : (T{1} << 120);
  // A cold run checks whether its flow is optimal after each refine at an
  // epsilon below this many original cost units.
  static constexpr T kProveBelow = 16;

  T Scaled(int64_t c) const { return static_cast<T>(c) * scale_; }
  T Rc(uint32_t u, const ResidualArc& r) const { return Scaled(r.cost) - p_[u] + p_[r.head]; }

  void MarkDirty(uint32_t u) {
    if (whole_) return;
    if (!dirty_flag_[u]) {
      dirty_flag_[u] = 1;
      dirty_.push_back(u);
    }
  }
  void MarkChanged(uint32_t u) {
    cur_[u] = net_.begin(u);
    if (whole_) return;
    MarkDirty(u);
    if (!ever_flag_[u]) {
      ever_flag_[u] = 1;
      ever_.push_back(u);
    }
  }
  // After lowering p_[u]: arcs into u may have become negative.
  void MarkInNeighbours(uint32_t u) {
    for (uint32_t a = net_.begin(u); a < net_.end(u); ++a) {
      const ResidualArc& r = net_.arc(a);
      if (net_.arc(r.rev).resid > 0) {
        MarkDirty(r.head);
        cur_[r.head] = net_.begin(r.head);
      }
    }
  }

  Outcome TimedRefine(T eps) {
    ++stats_.refines;
    const auto start = std::chrono::steady_clock::now();
    const uint64_t relabels = stats_.relabels, updates = stats_.global_updates;
    Outcome o = Refine(eps);
    stats_.refine_log.push_back(
        {static_cast<double>(eps) / static_cast<double>(scale_),
         std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
             .count(),
         stats_.relabels - relabels, stats_.global_updates - updates});
    return o;
  }

  Outcome Scale(T eps, bool refine_first) {
    if (refine_first) {
      Outcome o = TimedRefine(eps);
      if (o != Outcome::kDone) return o;
    }
    while (eps > 1) {
      eps = std::max<T>(1, eps / opt_.scaling_factor);
      // One refine at 1 instead of two (say at 2 and 1): every refine costs
      // at least a pass over the arcs and a global update.
      if (eps < opt_.scaling_factor) eps = 1;
      if (IsCancelled(cancel_)) return Outcome::kCancelled;
      if (opt_.price_refine && PriceRefine(eps)) {
        ++stats_.skipped_by_price_refine;
        continue;
      }
      Outcome o = TimedRefine(eps);
      if (o != Outcome::kDone) return o;
      if (whole_ && eps > 1 && eps < kProveBelow * scale_ && ProveOptimal()) return Outcome::kDone;
      // eps / scale_ < k is eps < k * scale_ without the product overflowing.
      if (whole_ && eps > 1 && opt_.ssp_finish_below > 0 &&
          eps / scale_ < static_cast<T>(opt_.ssp_finish_below)) {
        finish_ = true;
        return Outcome::kDone;
      }
    }
    return Outcome::kDone;
  }

  // Whether the feasible flow a refine left is already optimal, which with
  // integer costs is common once epsilon is a few cost units: label
  // correcting from the current potentials towards ones with every residual
  // reduced cost >= 0, with a budget of about three scans per node (a
  // negative cycle, i.e. a flow that is not optimal, never settles). On
  // success the exact potentials replace p_ and the remaining refines are
  // skipped (at scale (a): two or three of seven; bench/flow/journal.md, run 5).
  bool ProveOptimal() {
    ++stats_.optimality_checks;
    CopyReuse(trial_, p_);
    std::vector<uint32_t>& queue = active_;  // empty between refines
    queue.clear();
    for (uint32_t u = 0; u < n_; ++u) {
      queue.push_back(u);
      queued_[u] = 1;
    }
    const size_t budget = 3 * size_t{n_} + 64;
    bool ok = true;
    for (size_t qi = 0; qi < queue.size(); ++qi) {
      const uint32_t u = queue[qi];
      queued_[u] = 0;
      if (!ok) continue;  // drain the queue to reset the flags
      if (qi > budget || ((qi & 0xfff) == 0 && IsCancelled(cancel_))) {
        ok = false;
        continue;
      }
      T best = trial_[u];
      for (uint32_t a = net_.begin(u); a < net_.end(u); ++a) {
        const ResidualArc& r = net_.arc(a);
        if (r.resid > 0) best = std::min(best, Scaled(r.cost) + trial_[r.head]);
      }
      if (best >= trial_[u]) continue;
      if (best < -kGuard) {  // keeps the sums above within range
        ok = false;
        continue;
      }
      trial_[u] = best;
      for (uint32_t a = net_.begin(u); a < net_.end(u); ++a) {
        const ResidualArc& r = net_.arc(a);
        if (net_.arc(r.rev).resid > 0 && !queued_[r.head]) {
          queued_[r.head] = 1;
          queue.push_back(r.head);
        }
      }
    }
    queue.clear();
    if (!ok) return false;
    ++stats_.proved_optimal;
    std::swap(trial_, p_);
    return true;
  }

  T MaxViolation() const {
    T worst = 0;
    for (uint32_t u : dirty_) {
      for (uint32_t a = net_.begin(u); a < net_.end(u); ++a) {
        const ResidualArc& r = net_.arc(a);
        if (r.resid > 0) worst = std::max(worst, -Rc(u, r));
      }
    }
    return worst;
  }

  // Label correcting from the dirty nodes towards potentials with every
  // residual reduced cost >= -eps; gives up after a budget of node scans.
  bool PriceRefine(T eps) {
    CopyReuse(trial_, p_);
    std::vector<uint32_t> queue = dirty_;
    std::vector<uint32_t> lowered;
    for (uint32_t u : queue) queued_[u] = 1;
    uint64_t budget = 4 * uint64_t{queue.size()} + 64;
    bool ok = true;
    for (size_t qi = 0; qi < queue.size(); ++qi) {
      uint32_t u = queue[qi];
      queued_[u] = 0;
      if (qi > budget) {
        ok = false;
        continue;  // drain the queue to reset the flags
      }
      T best = trial_[u];
      for (uint32_t a = net_.begin(u); a < net_.end(u); ++a) {
        const ResidualArc& r = net_.arc(a);
        if (r.resid > 0) best = std::min(best, Scaled(r.cost) + trial_[r.head] + eps);
      }
      if (best >= trial_[u]) continue;
      trial_[u] = best;
      lowered.push_back(u);
      for (uint32_t a = net_.begin(u); a < net_.end(u); ++a) {
        const ResidualArc& r = net_.arc(a);
        if (net_.arc(r.rev).resid > 0 && !queued_[r.head]) {
          queued_[r.head] = 1;
          queue.push_back(r.head);
        }
      }
    }
    if (!ok) return false;
    for (uint32_t u : lowered) {
      if (p_[u] == trial_[u]) continue;
      p_[u] = trial_[u];
      MarkChanged(u);
      MarkInNeighbours(u);
    }
    return true;
  }

  void Enqueue(uint32_t v) {
    if (!queued_[v]) {
      queued_[v] = 1;
      active_.push_back(v);
    }
  }

  void SaturateNegative(uint32_t u) {
    for (uint32_t a = net_.begin(u); a < net_.end(u); ++a) {
      const ResidualArc& r = net_.arc(a);
      if (r.resid > 0 && Rc(u, r) < 0) net_.Push(a, r.resid);
    }
  }

  Outcome Refine(T eps) {
    if (whole_) {
      for (uint32_t u = 0; u < n_; ++u) SaturateNegative(u);
    } else {
      for (uint32_t u : dirty_) {
        dirty_flag_[u] = 0;
        SaturateNegative(u);
      }
      dirty_.clear();
    }
    active_.clear();
    T highest = 0;
    for (uint32_t u = 0; u < n_; ++u) {
      if (net_.excess(u) > 0) Enqueue(u);
      highest = u == 0 ? p_[u] : std::max(highest, p_[u]);
    }
    // A node whose potential passes this bound has no residual path to any
    // deficit: the problem is infeasible.
    T step = Scaled(net_.max_abs_cost()) + eps;
    limit_ = step > kGuard / (static_cast<T>(n_) + 1) ? kGuard
                                                      : highest + (static_cast<T>(n_) + 1) * step;
    uint64_t relabel_budget = 16 * uint64_t{n_} + 4096;
    const uint64_t relabels_at_start = stats_.relabels;
    // A global update at the start pays when many nodes have excess (the
    // first refines); with fewer than n/3, relabels are cheaper until n/2 of
    // them call for one (a cold run only; the threshold was measured at scale
    // (a), where n/4 and n/3 did about equally on average and n/3 better on
    // the worst graph; bench/flow/journal.md, run 5).
    if (!whole_ || active_.size() * 3 >= n_) GlobalUpdate(eps);
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
      if ((qi & 0x3ff) == 0 && IsCancelled(cancel_)) return Outcome::kCancelled;
      if (warm_ && stats_.relabels - relabels_at_start > relabel_budget) return Outcome::kSuspect;
      if (relabels_since_update > n_ / 2 + 16) {
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
    MarkChanged(u);
    if (p_[u] > kGuard || p_[u] < -kGuard) return Outcome::kOverflow;
    if (p_[u] > limit_) return Outcome::kStuck;
    return Outcome::kDone;
  }

  void BucketInsert(uint32_t v, uint32_t k) {
    if (k >= heads_.size()) heads_.resize(k + 1, kUnset);
    if (bucket_of_[v] == kUnset) touched_.push_back(v);
    bucket_of_[v] = k;
    prev_[v] = kUnset;
    next_[v] = heads_[k];
    if (heads_[k] != kUnset) prev_[heads_[k]] = v;
    heads_[k] = v;
  }
  void BucketRemove(uint32_t v) {
    uint32_t k = bucket_of_[v];
    if (prev_[v] != kUnset) {
      next_[prev_[v]] = next_[v];
    } else {
      heads_[k] = next_[v];
    }
    if (next_[v] != kUnset) prev_[next_[v]] = prev_[v];
  }

  // Relaxes the arcs into settled node v (at distance k) in the backward search.
  void ScanInto(uint32_t v, uint32_t k, T eps, uint32_t max_bucket) {
    for (uint32_t b = net_.begin(v); b < net_.end(v); ++b) {
      const ResidualArc& back = net_.arc(b);
      uint32_t w = back.head;
      const ResidualArc& fwd = net_.arc(back.rev);  // w -> v
      if (fwd.resid <= 0 || bucket_of_[w] == kSettled) continue;
      T rc = Rc(w, fwd);
      // Most arcs are within one eps: skip the (slow, 64- or 128-bit) division.
      T nk = static_cast<T>(k) + (rc < 0 ? T{0} : rc < eps ? T{1} : rc / eps + 1);
      if (nk >= static_cast<T>(max_bucket)) continue;
      uint32_t nki = static_cast<uint32_t>(nk);
      if (bucket_of_[w] != kUnset) {
        if (bucket_of_[w] <= nki) continue;
        BucketRemove(w);
      }
      BucketInsert(w, nki);
    }
  }

  // Backward search from the deficits in units of eps (Goldberg's global
  // update), stopping once every active node is settled. Settled nodes at
  // distance k move by (k - K) * eps relative to the rest (K: the distance
  // reached), which keeps eps-optimality and points admissible arcs at the
  // deficits.
  void GlobalUpdate(T eps) {
    ++stats_.global_updates;
    const uint32_t max_bucket = n_ + 1;
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
        bucket_of_[v] = kSettled;
        dist_[v] = k;
        settled_.push_back(v);
        if (net_.excess(v) > 0) --active_left;
        ScanInto(v, k, eps, max_bucket);
        // A cancelled search stops here: treating the unsettled nodes as
        // farther than k keeps eps-optimality, as a finished search does.
        if ((settled_.size() & 0xfff) == 0 && IsCancelled(cancel_)) active_left = 0;
      }
      if (active_left == 0) break;
    }
    const uint32_t top = std::min<uint32_t>(k, max_bucket);
    bool moved = false;
    for (uint32_t v : settled_) {
      if (dist_[v] == top) continue;
      p_[v] -= static_cast<T>(top - dist_[v]) * eps;
      moved = true;
      if (whole_) continue;
      MarkChanged(v);
      MarkInNeighbours(v);
    }
    // A lowered potential can make arcs into its node admissible.
    if (whole_ && moved) {
      for (uint32_t u = 0; u < n_; ++u) cur_[u] = net_.begin(u);
    }
    for (uint32_t v : touched_) bucket_of_[v] = kUnset;
    touched_.clear();
  }

  ResidualNet& net_;
  std::vector<T>& p_;
  const CostScalingOptions& opt_;
  CostScalingEngine::Stats& stats_;
  bool finish_ = false;
  const CancelFlag* cancel_;
  uint32_t n_;
  T scale_;
  T limit_ = 0;
  bool warm_ = false;
  bool whole_ = false;  // no dirty record: every node is scanned in every refine
  CoreBuffers<T>& buf_;
  std::vector<T>& trial_ = buf_.trial;
  std::vector<uint32_t>& cur_ = buf_.cur;
  std::vector<uint8_t>& queued_ = buf_.queued;
  std::vector<uint32_t>& active_ = buf_.active;
  std::vector<uint32_t>& bucket_of_ = buf_.bucket_of;
  std::vector<uint32_t>& next_ = buf_.next;
  std::vector<uint32_t>& prev_ = buf_.prev;
  std::vector<uint32_t>& heads_ = buf_.heads;
  std::vector<uint32_t>& settled_ = buf_.settled;
  std::vector<uint32_t>& dist_ = buf_.dist;
  std::vector<uint32_t>& touched_ = buf_.touched;
  std::vector<uint8_t>& dirty_flag_ = buf_.dirty_flag;
  std::vector<uint8_t>& ever_flag_ = buf_.ever_flag;
  std::vector<uint32_t>& dirty_ = buf_.dirty;
  std::vector<uint32_t>& ever_ = buf_.ever;
};

// REQUIRES: b > 0.
int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return a % b != 0 && a < 0 ? q - 1 : q;
}

int64_t FloorDiv(Wide a, Wide b) {
  Wide q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return FitsInt64(q) ? static_cast<int64_t>(q)
                      : (q < 0 ? std::numeric_limits<int64_t>::min() / 4
                               : std::numeric_limits<int64_t>::max() / 4);
}

// One run of the core in arithmetic T from `pot`, working in `ws`; the
// nodes whose potential a warm run moved are left in ws.changed.
template <typename T>
Outcome RunCore(ResidualNet& net, std::vector<int64_t>& pot, const CostScalingOptions& opt,
                CostScalingEngine::Stats& stats, const CancelFlag* cancel, int64_t warm_eps,
                CostScalingEngine::Workspace& ws) {
  const T scale = static_cast<T>(net.node_count()) + 1;
  CoreBuffers<T>& buf = ws.core<T>();
  std::vector<T>& p = buf.p;
  ReserveWithSlack(p, pot.size());
  p.resize(pot.size());
  for (size_t i = 0; i < pot.size(); ++i) p[i] = static_cast<T>(pot[i]) * scale;
  Core<T> core(net, buf, opt, stats, cancel);
  Outcome o = warm_eps > 0 ? core.RunWarm(static_cast<T>(warm_eps) * scale) : core.RunCold();
  if (o != Outcome::kDone) return o;
  if (core.whole()) {
    for (size_t u = 0; u < pot.size(); ++u) pot[u] = FloorDiv(p[u], scale);
    ws.changed.clear();  // the cold caller fixes every node's potential anyway
    if (core.finish()) {
      // Rounded down, every residual reduced cost is above -(1 + eps / scale):
      // saturate the negative ones and route what that displaces.
      SaturateNegativeArcs(net, pot);
      Status st = ws.finish.Route(net, pot, cancel);
      stats.ssp_finished = true;
      stats.ssp_phases = ws.finish.stats().phases;
      if (st.code() == StatusCode::kCancelled) return Outcome::kCancelled;
      if (!st.ok()) return Outcome::kStuck;
    }
  } else {
    for (uint32_t u : core.changed()) pot[u] = FloorDiv(p[u], scale);
    CopyReuse(ws.changed, core.changed());
  }
  return o;
}

}  // namespace

CostScalingEngine::CostScalingEngine(CostScalingOptions options)
    : options_(options), ws_(std::make_unique<Workspace>()) {}
CostScalingEngine::~CostScalingEngine() = default;
CostScalingEngine::CostScalingEngine(CostScalingEngine&&) noexcept = default;
CostScalingEngine& CostScalingEngine::operator=(CostScalingEngine&&) noexcept = default;

Status CostScalingEngine::Run(ResidualNet& net, std::vector<int64_t>& pot,
                              const CancelFlag* cancel) {
  stats_ = Stats{};
  Workspace& ws = *ws_;
  COPSE_RETURN_IF_ERROR(MakeFeasible(net, ws.feasibility, cancel));
  CopyReuse(ws.start, pot);
  Outcome o = Outcome::kOverflow;
  if (!options_.force_wide) {
    o = RunCore<int64_t>(net, pot, options_, stats_, cancel, 0, ws);
  }
  if (o == Outcome::kOverflow) {
    stats_.used_wide = true;
    pot = ws.start;
    o = RunCore<Wide>(net, pot, options_, stats_, cancel, 0, ws);
  }
  if (o == Outcome::kCancelled) return Cancelled("solve cancelled");
  if (o != Outcome::kDone) return Internal("cost scaling: an active node cannot reach a deficit");
  // Potentials proved exact in scaled units stay exact when rounded down
  // (c * s >= a - b implies c >= floor(a / s) - floor(b / s)); otherwise the
  // rounded ones are 1-optimal in original units: make them exact.
  if ((stats_.proved_optimal > 0 || stats_.ssp_finished) && !stats_.used_wide) {
    return Status::Ok();
  }
  if (!FixPotentials(net, pot, 0, 0, cancel, ws.fix)) return Cancelled("solve cancelled");
  return Status::Ok();
}

Status CostScalingEngine::RunWarm(ResidualNet& net, std::vector<int64_t>& pot, int64_t eps,
                                  const CancelFlag* cancel) {
  stats_ = Stats{};
  Workspace& ws = *ws_;
  CopyReuse(ws.start, pot);
  Outcome o = Outcome::kOverflow;
  if (!options_.force_wide) {
    o = RunCore<int64_t>(net, pot, options_, stats_, cancel, std::max<int64_t>(eps, 1), ws);
  }
  if (o == Outcome::kOverflow || o == Outcome::kSuspect) {
    // Start over from whatever pseudoflow this left: a cold solve checks
    // feasibility first and falls back to 128 bits when needed.
    Stats warm = stats_;
    pot = ws.start;
    Status st = Run(net, pot, cancel);
    stats_.refines += warm.refines;
    stats_.relabels += warm.relabels;
    stats_.refine_log.insert(stats_.refine_log.begin(), warm.refine_log.begin(),
                             warm.refine_log.end());
    return st;
  }
  if (o == Outcome::kCancelled) return Cancelled("solve cancelled");
  if (o == Outcome::kStuck) {
    return Infeasible("no feasible flow: some supply cannot reach any demand");
  }
  if (!FixPotentials(net, pot, 0, 0, cancel, ws.fix, &ws.changed)) {
    return Cancelled("solve cancelled");
  }
  return Status::Ok();
}

Status CostScalingSolver::Solve(const FlowGraph& graph, FlowSolution* out,
                                const CancelFlag* cancel) {
  COPSE_RETURN_IF_ERROR(net_.Build(graph));
  AssignReuse(pot_, net_.node_count(), int64_t{0});
  COPSE_RETURN_IF_ERROR(engine_.Run(net_, pot_, cancel));
  return net_.Extract(graph, pot_, out);
}

}  // namespace copse::flow
