#include "scheduler/flow/relaxation.h"

#include <algorithm>
#include <limits>

#include "scheduler/flow/reuse.h"
#include "scheduler/flow/stopwatch.h"

namespace copse::flow {

void RelaxationEngine::Activate(uint32_t v) {
  if (!queued_[v]) {
    queued_[v] = 1;
    active_.push_back(v);
  }
}

void RelaxationEngine::AddToTree(ResidualNet& net, const std::vector<int64_t>& pot, uint32_t v,
                                 int64_t& cut) {
  in_tree_[v] = stamp_;
  tree_.push_back(v);
  ++stats_.tree_nodes;
  if ((stats_.tree_nodes & 0xff) == 0 && IsCancelled(cancel_)) cancelled_ = true;
  for (uint32_t a = net.begin(v), e = net.end(v); a < e; ++a) {
    const ResidualArc& r = net.arc(a);
    uint32_t w = r.head;
    if (in_tree_[w] == stamp_) {
      // The arc w -> v no longer leaves the tree.
      const ResidualArc& in = net.arc(r.rev);
      if (in.resid > 0 && in.cost - pot[w] + pot[v] == 0) cut -= in.resid;
      continue;
    }
    if (r.resid <= 0 || r.cost - pot[v] + pot[w] != 0) continue;
    cut += r.resid;
    if (options_.arc_prioritisation && net.excess(w) < 0) {
      candidates_.push_front(a);
    } else {
      candidates_.push_back(a);
    }
  }
}

void RelaxationEngine::Augment(ResidualNet& net, uint32_t s, uint32_t t) {
  int64_t delta = std::min(net.excess(s), -net.excess(t));
  for (uint32_t v = t; v != s; v = net.tail(pred_[v])) {
    delta = std::min(delta, net.arc(pred_[v]).resid);
  }
  for (uint32_t v = t; v != s;) {
    uint32_t a = pred_[v];
    v = net.tail(a);
    net.Push(a, delta);
  }
  ++stats_.augmentations;
}

RelaxationEngine::Step RelaxationEngine::Ascend(ResidualNet& net, std::vector<int64_t>& pot) {
  ++stats_.ascents;
  int64_t delta = std::numeric_limits<int64_t>::max();
  for (uint32_t u : tree_) {
    for (uint32_t a = net.begin(u), e = net.end(u); a < e; ++a) {
      ResidualArc& r = net.arc(a);
      if (r.resid <= 0 || in_tree_[r.head] == stamp_) continue;
      int64_t rc = r.cost - pot[u] + pot[r.head];
      if (rc == 0) {
        uint32_t w = r.head;
        net.Push(a, r.resid);
        if (net.excess(w) > 0) Activate(w);
      } else {
        delta = std::min(delta, rc);
      }
    }
  }
  if (delta == std::numeric_limits<int64_t>::max()) return Step::kInfeasible;
  for (uint32_t u : tree_) pot[u] += delta;
  if (!checked_feasible_ && pot[tree_.front()] > alarm_) {
    Status st = CheckFeasibleOnce(net);
    if (st.code() == StatusCode::kInfeasible) return Step::kInfeasible;
    if (st.code() == StatusCode::kCancelled) return Step::kCancelled;
  }
  return Step::kAscended;
}

Status RelaxationEngine::CheckFeasibleOnce(const ResidualNet& net) {
  checked_feasible_ = true;
  ResidualNet copy = net;
  return MakeFeasible(copy, feasibility_, cancel_);
}

RelaxationEngine::Step RelaxationEngine::GrowTree(ResidualNet& net, std::vector<int64_t>& pot,
                                                  uint32_t s) {
  if (++stamp_ == 0) {
    std::fill(in_tree_.begin(), in_tree_.end(), 0);
    stamp_ = 1;
  }
  tree_.clear();
  candidates_.clear();
  int64_t cut = 0;
  int64_t tree_excess = net.excess(s);
  AddToTree(net, pot, s, cut);
  while (true) {
    if (cancelled_) return Step::kCancelled;
    if (tree_excess > cut) return Ascend(net, pot);
    // cut > 0 here, so some candidate arc still leaves the tree.
    uint32_t a = candidates_.front();
    candidates_.pop_front();
    const ResidualArc& r = net.arc(a);
    uint32_t v = r.head;
    if (in_tree_[v] == stamp_) continue;
    pred_[v] = a;
    if (net.excess(v) < 0) {
      Augment(net, s, v);
      return Step::kAugmented;
    }
    tree_excess += net.excess(v);
    AddToTree(net, pot, v, cut);
  }
}

Status RelaxationEngine::Run(ResidualNet& net, std::vector<int64_t>& pot,
                             const CancelFlag* cancel) {
  stats_ = Stats{};
  cancel_ = cancel;
  cancelled_ = false;
  checked_feasible_ = false;
  const uint32_t n = net.node_count();
  // Potentials only rise. Once one has risen more than twice the longest
  // simple path's cost above the highest starting potential, feasibility is
  // checked by max flow: this only triggers the check, the check decides
  // (overflow-safe: max|cost| * (n + 1) < 2^60).
  int64_t top = 0;
  for (uint32_t u = 0; u < n; ++u) top = u == 0 ? pot[u] : std::max(top, pot[u]);
  const int64_t span = 2 * net.max_abs_cost() * (static_cast<int64_t>(n) + 1) + 1;
  alarm_ = top > std::numeric_limits<int64_t>::max() / 2 - span ? top : top + span;
  AssignReuse(in_tree_, n, 0u);
  stamp_ = 0;
  AssignReuse(pred_, n, kNoId);
  AssignReuse(queued_, n, uint8_t{0});
  active_.clear();
  for (uint32_t u = 0; u < n; ++u) {
    if (net.excess(u) > 0) Activate(u);
  }
  uint64_t steps = 0;
  for (size_t qi = 0; qi < active_.size(); ++qi) {
    uint32_t s = active_[qi];
    queued_[s] = 0;
    while (net.excess(s) > 0) {
      if ((++steps & 0x3f) == 0 && IsCancelled(cancel)) return Cancelled("solve cancelled");
      Step step = GrowTree(net, pot, s);
      if (step == Step::kCancelled) return Cancelled("solve cancelled");
      if (step == Step::kInfeasible) {
        return Infeasible("no feasible flow: some supply cannot reach any demand");
      }
    }
    if (qi > n && qi * 2 > active_.size()) {
      active_.erase(active_.begin(), active_.begin() + static_cast<std::ptrdiff_t>(qi) + 1);
      qi = static_cast<size_t>(-1);
    }
  }
  if (IsCancelled(cancel)) return Cancelled("solve cancelled");
  return Status::Ok();
}

Status RelaxationSolver::Solve(const FlowGraph& graph, FlowSolution* out,
                               const CancelFlag* cancel) {
  // The network is kept between solves and synced from the change record
  // (at scale (c) building it anew took most of a step; bench/flow/journal.md, run 6).
  using Clock = SteadyClock;
  stats_ = Stats{};
  const auto t0 = Clock::now();
  COPSE_RETURN_IF_ERROR(net_.SyncSaturatingNegative(graph));
  const auto t1 = Clock::now();
  stats_.sync_ms = MsBetween(t0, t1);
  std::vector<int64_t> pot(net_.node_count(), 0);
  if (IsCancelled(cancel)) return Cancelled("solve cancelled");
  COPSE_RETURN_IF_ERROR(engine_.Run(net_, pot, cancel));
  if (IsCancelled(cancel)) return Cancelled("solve cancelled");
  const auto t2 = Clock::now();
  stats_.run_ms = MsBetween(t1, t2);
  Status st = net_.Extract(graph, pot, out);
  stats_.extract_ms = MsBetween(t2, Clock::now());
  return st;
}

}  // namespace copse::flow
