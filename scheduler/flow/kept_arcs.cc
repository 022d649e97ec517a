#include "scheduler/flow/kept_arcs.h"

#include <algorithm>

#include "scheduler/flow/reuse.h"

namespace copse::flow {

void KeptArcs::GrowArcs(size_t nodes, size_t arcs) {
  GrowTo(arcs_, arcs, ArcCopy{});
  GrowTo(fin_first_, nodes, kNoId);
  GrowTo(fin_next_, arcs, kNoId);
  GrowTo(fin_prev_, arcs, kNoId);
  if (out_.size() < nodes) {  // with slack: growing moves every node's arrays
    ReserveWithSlack(out_, nodes);
    ReserveWithSlack(in_, nodes);
    out_.resize(nodes);
    in_.resize(nodes);
  }
  GrowTo(out_pos_, arcs, 0u);
  GrowTo(in_pos_, arcs, 0u);
}

void KeptArcs::ResetTotals() {
  cost_ = capacity_ = supply_sum_ = abs_supply_ = 0;
  max_abs_cost_ = 0;
  max_exact_ = true;
}

Status KeptArcs::CheckMagnitudes(const FlowGraph& g) {
  const int64_t limit = kMaxCostTimesNodes / (int64_t{g.node_count()} + 1);
  if (max_abs_cost_ > limit && !max_exact_) {
    max_abs_cost_ = 0;
    for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
      if (arcs_[a].alive()) NoteCost(arcs_[a].cost);
    }
    max_exact_ = true;
  }
  return flow::CheckMagnitudes(max_abs_cost_, g.node_count(), capacity_ + abs_supply_, supply_sum_);
}

void KeptArcs::ClearLists() {
  std::fill(fin_first_.begin(), fin_first_.end(), kNoId);
  for (auto& l : out_) l.clear();
  for (auto& l : in_) l.clear();
}

void KeptArcs::LinkAdjacent(ArcId a) {
  const ArcCopy& c = arcs_[a];
  out_pos_[a] = static_cast<uint32_t>(out_[c.tail].size());
  out_[c.tail].push_back(a);
  in_pos_[a] = static_cast<uint32_t>(in_[c.head].size());
  in_[c.head].push_back(a);
}

void KeptArcs::UnlinkAdjacent(ArcId a) {
  const ArcCopy& c = arcs_[a];
  std::vector<ArcId>& out = out_[c.tail];
  out_pos_[out.back()] = out_pos_[a];
  out[out_pos_[a]] = out.back();
  out.pop_back();
  std::vector<ArcId>& in = in_[c.head];
  in_pos_[in.back()] = in_pos_[a];
  in[in_pos_[a]] = in.back();
  in.pop_back();
}

void KeptArcs::LinkFlow(ArcId a) {
  const NodeId h = arcs_[a].head;
  fin_prev_[a] = kNoId;
  fin_next_[a] = fin_first_[h];
  if (fin_first_[h] != kNoId) fin_prev_[fin_first_[h]] = a;
  fin_first_[h] = a;
}

void KeptArcs::UnlinkFlow(ArcId a) {
  const NodeId h = arcs_[a].head;
  if (fin_prev_[a] != kNoId) {
    fin_next_[fin_prev_[a]] = fin_next_[a];
  } else {
    fin_first_[h] = fin_next_[a];
  }
  if (fin_next_[a] != kNoId) fin_prev_[fin_next_[a]] = fin_prev_[a];
}

std::string KeptArcs::ListsError(const FlowGraph& g,
                                 const std::function<bool(ArcId)>& listed) const {
  size_t with_flow = 0, in_lists = 0;
  for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
    with_flow += g.IsArc(a) && g.tail(a) != g.head(a) && arcs_[a].flow > 0 && listed(a);
  }
  for (NodeId n = 0; n < g.node_id_bound() && n < fin_first_.size(); ++n) {
    for (ArcId a = fin_first_[n]; a != kNoId; a = fin_next_[a]) {
      if (++in_lists > with_flow || !g.IsArc(a) || g.head(a) != n || arcs_[a].flow <= 0 ||
          !listed(a)) {
        return "node " + std::to_string(n) + "'s list of arcs with flow is wrong";
      }
    }
  }
  if (in_lists != with_flow) return "arcs with flow missing from the lists";
  size_t adjacent = 0, linked_out = 0, linked_in = 0;
  for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
    if (!g.IsArc(a) || g.tail(a) == g.head(a)) continue;
    ++adjacent;
    const std::vector<ArcId>& out = out_[g.tail(a)];
    const std::vector<ArcId>& in = in_[g.head(a)];
    if (out_pos_[a] >= out.size() || out[out_pos_[a]] != a || in_pos_[a] >= in.size() ||
        in[in_pos_[a]] != a) {
      return "arc " + std::to_string(a) + " missing from its ends' adjacency arrays";
    }
  }
  for (NodeId n = 0; n < g.node_id_bound() && n < out_.size(); ++n) {
    linked_out += out_[n].size();
    linked_in += in_[n].size();
    if (!g.IsNode(n) && (!out_[n].empty() || !in_[n].empty())) {
      return "dead node " + std::to_string(n) + " has adjacent arcs";
    }
  }
  if (linked_out != adjacent || linked_in != adjacent) {
    return "adjacency arrays hold arcs that are gone";
  }
  return "";
}

}  // namespace copse::flow
