#include "scheduler/flow/residual_net.h"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <string>
#include <utility>

#include "scheduler/flow/reuse.h"
#include "scheduler/flow/wide.h"

namespace copse::flow {

namespace {

// Arcs ahead whose reverse-arc slot Build prefetches (those writes land in
// random rows: hub rows and 12,500 computers' rows at scale (c)).
constexpr uint32_t kPrefetch = 16;

Wide AbsWide(int64_t x) { return x < 0 ? -Wide{x} : Wide{x}; }

}  // namespace

Status CheckMagnitudes(int64_t max_abs_cost, uint32_t nodes, Wide total, Wide supply_sum) {
  if (max_abs_cost > kMaxCostTimesNodes / (int64_t{nodes} + 1)) {
    return InvalidArgument("arc costs up to " + std::to_string(max_abs_cost) +
                           " are too large for a graph of " + std::to_string(nodes) +
                           " nodes (|cost| * (nodes + 1) must stay below 2^60)");
  }
  if (total > kMaxTotalCapacity) {
    return InvalidArgument("capacities and supplies sum beyond 2^62");
  }
  if (supply_sum != 0) {
    return Infeasible("supplies sum to " + WideToString(supply_sum) + ", not 0");
  }
  return Status::Ok();
}

// One pass over the nodes and one over the arcs: the rows are sized from
// the graph's degree counts, and the magnitudes are gathered while the arcs
// are copied (at scale (c) a separate counting pass over the graph's arcs
// took about a third of the build; bench/flow/journal.md, run 6).
Status ResidualNet::Build(const FlowGraph& g, const std::vector<int64_t>* init_flow,
                          bool skip_new_arcs) {
  persistent_ = false;
  return BuildImpl(g, init_flow, skip_new_arcs, false);
}

Status ResidualNet::BuildSaturatingNegative(const FlowGraph& g) {
  persistent_ = false;
  return BuildImpl(g, nullptr, false, true);
}

Status ResidualNet::BuildImpl(const FlowGraph& g, const std::vector<int64_t>* init_flow,
                              bool skip_new_arcs, bool saturate_negative) {
  SizeNodeArrays(g);
  Wide total = 0, supply_sum = 0;
  const uint32_t residual_arcs = LayOutRows(g, total, supply_sum);
  SizeArcArrays(g, residual_arcs);
  total = CopyArcs(g, init_flow, skip_new_arcs, saturate_negative, total);
  if (persistent_) {
    built_size_ = residual_arcs;
    capacity_sum_ = total - abs_supply_;
    ReserveWithSlack(limit_, n_);
    limit_.resize(n_);
    for (uint32_t u = 0; u < n_; ++u) limit_[u] = first_[u + 1];
    free_dense_.clear();
  }
  return CheckMagnitudes(max_abs_cost_, n_, total, supply_sum);
}

void ResidualNet::SizeNodeArrays(const FlowGraph& g) {
  n_ = g.node_count();
  ReserveWithSlack(dense_, g.node_id_bound());
  dense_.resize(g.node_id_bound());
  for (auto* v : {&node_id_, &end_}) {
    ReserveWithSlack(*v, n_);
    v->resize(n_);
  }
  ReserveWithSlack(first_, size_t{n_} + 1);
  first_.resize(size_t{n_} + 1);
  ReserveWithSlack(excess_, n_);
  excess_.resize(n_);
  if (persistent_) {
    ReserveWithSlack(supply_, n_);
    supply_.resize(n_);
  }
}

// Row u is [first_[u], end_[u]); end_[u] advances as the row fills. A
// persistent network leaves room after each row (RowSlack) for arcs added
// later.
uint32_t ResidualNet::LayOutRows(const FlowGraph& g, Wide& total, Wide& supply_sum) {
  uint32_t k = 0, residual_arcs = 0;
  for (NodeId v = 0; v < g.node_id_bound(); ++v) {
    if (!g.IsNode(v)) {
      dense_[v] = kNoId;
      continue;
    }
    dense_[v] = k;
    node_id_[k] = v;
    const int64_t s = g.supply(v);
    excess_[k] = s;
    if (persistent_) supply_[k] = s;
    supply_sum += s;
    total += s < 0 ? -Wide{s} : Wide{s};
    first_[k] = end_[k] = residual_arcs;
    const uint32_t degree = g.residual_degree(v);
    residual_arcs += persistent_ ? degree + RowSlack(degree) : degree;
    ++k;
  }
  first_[n_] = residual_arcs;
  if (persistent_) {
    supply_sum_ = supply_sum;
    abs_supply_ = total;
  }
  return residual_arcs;
}

void ResidualNet::SizeArcArrays(const FlowGraph& g, uint32_t residual_arcs) {
  ReserveWithSlack(arcs_, residual_arcs);
  arcs_.resize(residual_arcs);
  if (persistent_) {
    ReserveWithSlack(rcap_, residual_arcs);
    rcap_.resize(residual_arcs);
    ReserveWithSlack(owner_, residual_arcs);
    owner_.resize(residual_arcs);
    loop_cap_.clear();
  }
  ReserveWithSlack(arc_pos_, g.arc_id_bound());
  arc_pos_.resize(g.arc_id_bound());
}

Wide ResidualNet::CopyArcs(const FlowGraph& g, const std::vector<int64_t>* init_flow,
                           bool skip_new_arcs, bool saturate_negative, Wide total) {
  max_abs_cost_ = 0;
  // While the running total of |supplies| and capacities stays within
  // kMaxTotalCapacity no excess can overflow; past it the build fails anyway.
  bool in_range = total <= kMaxTotalCapacity;
  const ArcId bound = g.arc_id_bound();
  for (ArcId a = 0; a < bound; ++a) {
    if (a + kPrefetch < bound && g.IsArc(a + kPrefetch)) {
      __builtin_prefetch(arcs_.data() + end_[dense_[g.head(a + kPrefetch)]], 1);
    }
    arc_pos_[a] = kNoId;
    if (!g.IsArc(a)) continue;
    const int64_t cap = g.capacity(a), cost = g.cost(a);
    max_abs_cost_ = std::max(max_abs_cost_, AbsCost(cost));
    total += cap;
    in_range = in_range && total <= kMaxTotalCapacity;
    const NodeId tail = g.tail(a), head = g.head(a);
    if (tail == head) {
      if (persistent_) loop_cap_[a] = cap;
      continue;
    }
    const uint32_t t = dense_[tail], h = dense_[head];
    const uint32_t fa = end_[t]++;
    const uint32_t ra = end_[h]++;
    int64_t f = saturate_negative && cost < 0 ? cap : 0;
    if (init_flow != nullptr && a < init_flow->size() && !(skip_new_arcs && g.IsNewArc(a))) {
      f = std::clamp<int64_t>((*init_flow)[a], 0, cap);
    }
    arcs_[fa] = ResidualArc{cap - f, cost, h, ra};
    arcs_[ra] = ResidualArc{f, NegCost(cost), t, fa};
    if (f != 0 && in_range) {
      excess_[t] -= f;
      excess_[h] += f;
    }
    arc_pos_[a] = fa;
    if (persistent_) {
      rcap_[fa] = rcap_[ra] = cap;
      owner_[fa] = a << 1;
      owner_[ra] = (a << 1) | 1;
    }
  }
  return total;
}

Status ResidualNet::SyncSaturatingNegative(const FlowGraph& g) {
  // The change record holds every edit since the last commit: it brings the
  // network up to date if the last sync was in this revision, or in the one
  // before and saw all of its edits.
  const bool continues = persistent_ && graph_instance_ == g.instance_id() &&
                         (g.revision() == revision_ || (g.revision() == revision_ + 1 &&
                                                        g.edits_at_last_commit() == edits_seen_)) &&
                         arcs_.size() <= 2 * built_size_ + 4096;
  graph_instance_ = g.instance_id();
  revision_ = g.revision();
  edits_seen_ = g.edit_count();
  persistent_ = true;
  if (!continues) return BuildImpl(g, nullptr, false, true);
  SyncChanges(g);
  // The kept sums are exact; the cost bound and the slot count may exceed
  // the graph's, so a refusal is checked again by a fresh build.
  Status st = CheckMagnitudes(max_abs_cost_, n_, capacity_sum_ + abs_supply_, supply_sum_);
  if (st.code() == StatusCode::kInvalidArgument) return BuildImpl(g, nullptr, false, true);
  if (!st.ok()) return st;
  ResetSaturatingNegative();
  return Status::Ok();
}

// Arcs removed or changed, then nodes removed (their arcs went first) or
// added, then arcs added (their ends have slots by then). Each step compares
// the graph with what is held, so syncing the same batch twice is harmless.
void ResidualNet::SyncChanges(const FlowGraph& g) {
  if (dense_.size() < g.node_id_bound()) {
    ReserveWithSlack(dense_, g.node_id_bound());
    dense_.resize(g.node_id_bound(), kNoId);
  }
  if (arc_pos_.size() < g.arc_id_bound()) {
    ReserveWithSlack(arc_pos_, g.arc_id_bound());
    arc_pos_.resize(g.arc_id_bound(), kNoId);
  }
  // A shifted cost group's arcs come as changed ones.
  g.ForEachChangedArc([&](ArcId a) {
    const bool alive = g.IsArc(a);
    if (!loop_cap_.empty()) {
      auto it = loop_cap_.find(a);
      if (it != loop_cap_.end()) {
        capacity_sum_ -= it->second;
        if (alive) {
          capacity_sum_ += g.capacity(a);
          it->second = g.capacity(a);
          max_abs_cost_ = std::max(max_abs_cost_, AbsCost(g.cost(a)));
        } else {
          loop_cap_.erase(it);
        }
        return;
      }
    }
    const uint32_t fa = arc_pos_[a];
    if (fa == kNoId) return;  // not held: added below if alive
    capacity_sum_ -= rcap_[fa];
    if (!alive) {
      RemovePair(fa);
      arc_pos_[a] = kNoId;
      return;
    }
    const int64_t cap = g.capacity(a), cost = g.cost(a);
    const uint32_t ra = arcs_[fa].rev;
    capacity_sum_ += cap;
    rcap_[fa] = rcap_[ra] = cap;
    arcs_[fa].cost = cost;
    arcs_[ra].cost = NegCost(cost);
    max_abs_cost_ = std::max(max_abs_cost_, AbsCost(cost));
  });
  for (NodeId v : g.changed_nodes()) {
    uint32_t u = dense_[v];
    if (!g.IsNode(v)) {
      if (u == kNoId) continue;
      supply_sum_ -= supply_[u];
      abs_supply_ -= AbsWide(supply_[u]);
      node_id_[u] = kNoId;
      supply_[u] = excess_[u] = 0;
      dense_[v] = kNoId;
      free_dense_.push_back(u);
      continue;
    }
    if (u == kNoId) {
      const uint32_t degree = g.residual_degree(v);
      u = NewSlot(degree + RowSlack(degree));
      dense_[v] = u;
      node_id_[u] = v;
    }
    const int64_t s = g.supply(v);
    supply_sum_ += Wide{s} - supply_[u];
    abs_supply_ += AbsWide(s) - AbsWide(supply_[u]);
    supply_[u] = s;
  }
  for (ArcId a : g.changed_arcs()) {
    if (!g.IsArc(a) || arc_pos_[a] != kNoId) continue;
    if (!loop_cap_.empty() && loop_cap_.count(a) != 0) continue;
    AddPair(g, a);
  }
}

void ResidualNet::MoveArc(uint32_t from, uint32_t to) {
  arcs_[to] = arcs_[from];
  rcap_[to] = rcap_[from];
  owner_[to] = owner_[from];
  arcs_[arcs_[to].rev].rev = to;
  if ((owner_[to] & 1) == 0) arc_pos_[owner_[to] >> 1] = to;
}

void ResidualNet::RemovePair(uint32_t fa) {
  const uint32_t ra = arcs_[fa].rev;
  const uint32_t t = arcs_[ra].head, h = arcs_[fa].head;
  // Each row's last arc fills the hole. The rows differ (no self-loops in
  // rows), so the first move cannot displace the second arc.
  for (auto [u, i] : {std::pair{t, fa}, std::pair{h, ra}}) {
    const uint32_t last = --end_[u];
    if (i != last) MoveArc(last, i);
  }
}

// Appends `room` unused residual arcs to the array; returns the first.
uint32_t ResidualNet::GrowArcs(uint32_t room) {
  const uint32_t base = static_cast<uint32_t>(arcs_.size());
  const size_t size = size_t{base} + room;
  ReserveWithSlack(arcs_, size);
  arcs_.resize(size);
  ReserveWithSlack(rcap_, size);
  rcap_.resize(size);
  ReserveWithSlack(owner_, size);
  owner_.resize(size);
  return base;
}

uint32_t ResidualNet::RowAppend(uint32_t u) {
  if (end_[u] == limit_[u]) {  // no room: the row moves to the end of the array
    const uint32_t size = end_[u] - first_[u];
    const uint32_t room = size + size / 2 + 4;
    const uint32_t base = GrowArcs(room);
    for (uint32_t i = 0; i < size; ++i) MoveArc(first_[u] + i, base + i);
    first_[u] = base;
    end_[u] = base + size;
    limit_[u] = base + room;
  }
  return end_[u]++;
}

void ResidualNet::AddPair(const FlowGraph& g, ArcId a) {
  const int64_t cap = g.capacity(a), cost = g.cost(a);
  capacity_sum_ += cap;
  max_abs_cost_ = std::max(max_abs_cost_, AbsCost(cost));
  const NodeId tail = g.tail(a), head = g.head(a);
  if (tail == head) {
    loop_cap_[a] = cap;
    return;
  }
  const uint32_t t = dense_[tail], h = dense_[head];
  const uint32_t fa = RowAppend(t);
  const uint32_t ra = RowAppend(h);  // may move row h, never row t
  arcs_[fa] = ResidualArc{cap, cost, h, ra};
  arcs_[ra] = ResidualArc{0, NegCost(cost), t, fa};
  rcap_[fa] = rcap_[ra] = cap;
  owner_[fa] = a << 1;
  owner_[ra] = (a << 1) | 1;
  arc_pos_[a] = fa;
}

// A slot for a new node with room for `room` arcs: a free slot (its row
// kept if large enough) or a new one, its row at the end of the array.
uint32_t ResidualNet::NewSlot(uint32_t room) {
  uint32_t u;
  if (!free_dense_.empty()) {
    u = free_dense_.back();
    free_dense_.pop_back();
  } else {
    u = n_++;
    first_.push_back(0);  // first_ keeps a last entry past the slots
    for (auto* v : {&end_, &limit_, &node_id_}) v->push_back(0);
    for (auto* v : {&excess_, &supply_}) v->push_back(0);
    limit_[u] = first_[u] = 0;
  }
  if (limit_[u] - first_[u] < room) {
    const uint32_t base = GrowArcs(room);
    first_[u] = base;
    limit_[u] = base + room;
  }
  end_[u] = first_[u];
  return u;
}

// The flow BuildSaturatingNegative starts from, in one pass over the rows:
// a forward arc of negative cost is saturated (its reverse arc, of positive
// cost, holds the capacity), every other arc is empty, and each node's
// excess is its supply plus what its own row's arcs carry in less out.
void ResidualNet::ResetSaturatingNegative() {
  for (uint32_t u = 0; u < n_; ++u) {
    int64_t ex = supply_[u];
    for (uint32_t i = first_[u], e = end_[u]; i < e; ++i) {
      ResidualArc& r = arcs_[i];
      const int64_t cap = rcap_[i];
      if ((owner_[i] & 1) == 0) {
        r.resid = r.cost < 0 ? 0 : cap;
        if (r.cost < 0) ex -= cap;
      } else {
        r.resid = r.cost > 0 ? cap : 0;
        if (r.cost > 0) ex += cap;
      }
    }
    excess_[u] = ex;
  }
}

// The flow of a graph arc is its capacity less the residual capacity of its
// forward arc: one read of the forward arc, which lies in its tail's row (in
// arc-id order for arcs added together), instead of a second, random read of
// the reverse arc in its head's row.
Status ResidualNet::Extract(const FlowGraph& g, const std::vector<int64_t>& pot,
                            FlowSolution* out) const {
  const uint32_t arcs = g.arc_id_bound();
  ReserveWithSlack(out->flow, arcs);
  out->flow.resize(arcs);
  AssignReuse(out->potential, g.node_id_bound(), int64_t{0});
  Wide cost = 0;
  for (ArcId a = 0; a < arcs; ++a) {
    int64_t f = 0;
    if (g.IsArc(a)) {
      const int64_t cap = g.capacity(a), c = g.cost(a);
      const uint32_t pos = arc_pos_[a];
      f = pos == kNoId ? (c < 0 ? cap : 0) : cap - arcs_[pos].resid;
      if (f != 0) cost += Wide{f} * c;
    }
    out->flow[a] = f;
  }
  for (uint32_t u = 0; u < n_; ++u) {
    if (node_id_[u] != kNoId) out->potential[node_id_[u]] = pot[u];  // kNoId: a free slot
  }
  if (!FitsInt64(cost)) {
    return InvalidArgument("the optimal cost " + WideToString(cost) + " does not fit in 64 bits");
  }
  out->cost = static_cast<int64_t>(cost);
  return Status::Ok();
}

size_t ResidualNet::MemoryBytes() const {
  return (first_.capacity() + end_.capacity() + limit_.capacity()) * 4 +
         arcs_.capacity() * sizeof(ResidualArc) + excess_.capacity() * 8 + dense_.capacity() * 4 +
         node_id_.capacity() * 4 + arc_pos_.capacity() * 4 + rcap_.capacity() * 8 +
         owner_.capacity() * 4 + supply_.capacity() * 8 + free_dense_.capacity() * 4;
}

bool FixPotentials(const ResidualNet& net, std::vector<int64_t>& pot, int64_t tolerance,
                   uint64_t max_scans, const CancelFlag* cancel, FixPotentialsWorkspace& ws,
                   const std::vector<uint32_t>* start) {
  const uint32_t n = net.node_count();
  std::vector<uint32_t>& queue = ws.queue;
  std::vector<uint8_t>& queued = ws.queued;
  queue.clear();
  AssignReuse(queued, n, uint8_t{0});
  if (start == nullptr) {
    queue.resize(n);
    for (uint32_t u = 0; u < n; ++u) queue[u] = u;
    std::fill(queued.begin(), queued.end(), 1);
  } else {
    for (uint32_t u : *start) {
      if (!queued[u]) {
        queued[u] = 1;
        queue.push_back(u);
      }
    }
  }
  size_t head = 0;
  uint64_t scans = 0;
  while (head < queue.size()) {
    uint32_t u = queue[head++];
    queued[u] = 0;
    if (head > n && head * 2 > queue.size()) {  // compact the FIFO
      queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(head));
      head = 0;
    }
    if (max_scans != 0 && ++scans > max_scans) return false;
    if ((scans & 0xfff) == 0 && IsCancelled(cancel)) return false;
    int64_t best = pot[u];
    for (uint32_t a = net.begin(u), e = net.end(u); a < e; ++a) {
      const ResidualArc& r = net.arc(a);
      if (r.resid > 0) best = std::min(best, r.cost + pot[r.head] + tolerance);
    }
    if (best >= pot[u]) continue;
    pot[u] = best;
    for (uint32_t a = net.begin(u), e = net.end(u); a < e; ++a) {
      const ResidualArc& r = net.arc(a);
      if (net.arc(r.rev).resid > 0 && !queued[r.head]) {
        queued[r.head] = 1;
        queue.push_back(r.head);
      }
    }
  }
  return true;
}

int64_t SaturateNegativeArcs(ResidualNet& net, const std::vector<int64_t>& pot) {
  int64_t worst = 0;
  for (uint32_t u = 0; u < net.node_count(); ++u) {
    for (uint32_t a = net.begin(u), e = net.end(u); a < e; ++a) {
      const ResidualArc& r = net.arc(a);
      if (r.resid <= 0) continue;
      int64_t rc = r.cost - pot[u] + pot[r.head];
      if (rc < 0) {
        worst = std::max(worst, -rc);
        net.Push(a, r.resid);
      }
    }
  }
  return worst;
}

}  // namespace copse::flow
