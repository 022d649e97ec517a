// NetworkSimplexSolver: the primal network simplex method, warm-started from
// its own last basis (issue 4; bench/flow/journal.md, run 7). Correct, and far slower
// than the library's solvers on the Quincy graphs, so it is in no race: it
// lives here as an experiment, `network_simplex` in the benchmark's registry
// (bench_solvers.h), in the flow library's namespace.
//
// A basis is a spanning tree over the graph's nodes plus an artificial root;
// every node has an artificial arc to or from the root (uncapacitated). Tree
// arcs carry whatever flow conservation asks of them, every other arc sits at
// zero or at its capacity, and potentials make every tree arc's reduced cost
// zero. A pivot brings in a non-tree arc whose reduced cost says the flow
// should move (block search pricing: the most violated arc of a block of
// about sqrt(arcs)), pushes flow around the cycle it closes in the tree and
// takes out the arc that blocks it; the leaving arc is chosen as in
// Cunningham's rule (the last blocking arc met going round the cycle from its
// apex), which keeps the tree strongly feasible, so degenerate pivots cannot
// cycle. Optimal when no arc violates; infeasible when an artificial arc
// still carries flow at an optimum where each artificial arc costs more than
// any path of real arcs.
//
// Warm start. After a solve the solver keeps, by the graph's stable ids, each
// arc's flow, each node's tree parent and arc, and each node's potential, as
// hints. The next solve (any graph: hints are only hints) rebuilds a basis
// from them in one pass over the nodes and arcs: an arc keeps its flow
// (clamped to its capacity) if its id still joins the same two nodes, a node
// keeps its parent if its tree arc still exists, and everything else hangs
// from the root. The tree arcs' flows are then recomputed from the supplies
// bottom-up; an arc whose flow would leave its bounds, or that would break
// strong feasibility, is taken out of the tree at its bound and its subtree
// hangs from the root through its artificial arc. An artificial arc carrying
// flow (a supply or capacity change that the tree could not absorb) costs
// ART = (nodes + 1) * max|cost| + 1; one carrying none costs what keeps its
// subtree's potentials at their hinted values, so that a cost change only
// violates the arcs it changed. Should the optimum of that first stage still
// route flow through the root, every artificial arc is priced at ART and the
// pivots continue (stage two), which decides feasibility exactly.
//
// The solver owns its basis, hints and working arrays, kept between solves.
// Thread-safety: one thread per object; the graph is only read.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "scheduler/flow/solver.h"

namespace copse::flow {

class NetworkSimplexSolver final : public FlowSolver {
 public:
  struct Stats {
    bool warm = false;        // started from the hints of a previous solve
    uint64_t pivots = 0;      // arcs priced in
    uint64_t degenerate = 0;  // ...of which moved no flow
    uint64_t cuts = 0;        // kept tree arcs taken out when the basis was rebuilt
    uint64_t hung = 0;        // nodes hanging from the root after the rebuild
    uint64_t settled = 0;     // ...of which moved their potentials into their interval
    bool stage_two = false;   // artificial arcs had to be priced at ART
    double build_ms = 0, pivot_ms = 0, emit_ms = 0;
  };

  std::string_view name() const override { return "network_simplex"; }
  Status Solve(const FlowGraph& graph, FlowSolution* out, const CancelFlag* cancel) override;
  const Stats& stats() const { return stats_; }
  // Forgets the hints: the next solve starts from the all-artificial basis.
  void Reset() { hint_nodes_ = hint_arcs_ = 0; }

 private:
  static constexpr int8_t kLower = 1, kUpper = -1, kTree = 0;

  Status Build(const FlowGraph& g);
  void Attach(uint32_t child, uint32_t parent);
  void Detach(uint32_t child);
  void Preorder();
  // The node after x in preorder within the subtree of `top` (x != top
  // itself is in it), or kNoId after its last node; no stack needed.
  uint32_t NextInSubtree(uint32_t x, uint32_t top) const {
    if (first_child_[x] != kNoId) return first_child_[x];
    while (x != top && next_sib_[x] == kNoId) x = parent_[x];
    return x == top ? kNoId : next_sib_[x];
  }
  void SetRootArc(uint32_t u, int64_t flow);
  void ComputePotentials();
  void SettleHung(const FlowGraph& g);
  uint32_t Price();
  void Pivot(uint32_t in);
  void KeepHints(const FlowGraph& g);

  Stats stats_;
  uint32_t n_ = 0;          // graph node ids [0, n_); the root is n_
  uint32_t m_ = 0;          // graph arc ids [0, m_); the artificial arc of node u is m_ + u
  int64_t art_ = 0;         // ART
  bool cheap_art_ = false;  // some artificial arc costs less than ART (stage one)
  // Block search order: every skip_-th arc (LEMON's "arc mixing": the arcs
  // of one node are adjacent ids, and a block of them offers one choice),
  // resuming at (row_, col_), i.e. arc row_ * skip_ + col_.
  uint32_t skip_ = 1, row_ = 0, col_ = 0;
  uint32_t block_ = 0;

  // By arc index (real then artificial).
  std::vector<uint32_t> src_, dst_;
  std::vector<int64_t> cap_, cost_, flow_;
  std::vector<int8_t> state_;  // kLower, kUpper, or kTree (also for dead ids)
  // By node index (the root last).
  std::vector<uint32_t> parent_, pred_;  // tree parent and the arc to it
  std::vector<uint8_t> up_;              // pred_ goes from the node to its parent
  std::vector<uint32_t> depth_;
  std::vector<uint32_t> first_child_, next_sib_, prev_sib_;
  std::vector<int64_t> pi_;   // reduced cost = cost + pi[src] - pi[dst]
  std::vector<int64_t> net_;  // Build: supply left for the tree arcs to carry
  std::vector<uint32_t> order_;
  std::vector<uint32_t> sub_, mark_;  // SettleHung: a subtree, and its marks
  uint32_t stamp_ = 0;

  // Hints from the last solve, by graph id.
  uint32_t hint_nodes_ = 0, hint_arcs_ = 0;
  std::vector<uint32_t> hint_tail_, hint_head_;
  std::vector<int64_t> hint_flow_;
  std::vector<uint32_t> hint_parent_, hint_pred_;  // kNoId: hung from the root
  std::vector<int64_t> hint_pi_;
  std::vector<uint8_t> hint_art_up_;  // the artificial arc's direction (1: to the root)
};

}  // namespace copse::flow
