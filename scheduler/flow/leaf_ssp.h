// LeafSspSolver: incremental successive shortest paths that keeps the
// scheduling graph's tasks out of its searches.
//
// A leaf is a node with no incoming arc and a supply of one: every task and
// root of the Quincy graph. It sends its one unit down one of its arcs, and
// sits at that arc's head, its hub (U_j for a waiting task, a computer for a
// running one). The residual network through a leaf at hub u is a set of
// arcs u -> v, one for each other arc w -> v of the leaf, with reduced cost
//     exit(w, v) = (cost(w, v) + p(v)) - (cost(w, u) + p(u)),
// so a leaf needs no potential of its own (it takes cost(w, u) + p(u) when a
// solution is emitted) and the flow is optimal exactly when every residual
// arc between non-leaves has a non-negative reduced cost and every leaf's
// cheapest exit does. The other nodes — the unscheduled, cluster, rack and
// computer aggregators and the sink, a few thousand where the tasks are a
// hundred thousand — form the core, and only the core is searched: each hub
// keeps its leaves in a heap (HubHeaps) keyed by a lower bound on
//     key(w) = min over w's other arcs v of (cost(w, v) + p(v)) - cost(w, u),
// and when a search settles the hub at distance d, its leaves enter the
// search one at a time, in key order, at distance d + key - p(u). A search
// ends at the radius where it has reached enough deficit, so the leaves
// whose exits cost more than that — most waiting tasks, nearly every
// running one — are never looked at. A leaf that has entered in full twice
// within a solve reads its cheapest exits from a cache after that instead
// of its arcs, and waits in the search's heap while they lead only to
// settled nodes (LeafSspOptions::exit_cache). Potentials only rise in a
// search, so a key stays a lower bound as hub potentials rise; when one is
// found stale it is recomputed and the leaf put back in place.
//
// A solve reads only the graph's change record:
//   1. sync: each changed arc and node is brought up to date in the kept
//      copy (a shifted cost group's arcs by the amount it moved, without
//      reading them from the graph); nodes are (re)classified as leaves or
//      core;
//   2. repair: a leaf whose unit was freed takes its cheapest exit; a leaf
//      whose exit became cheaper than where it sits (a waiting task's wait
//      cost rose) is absorbed by lowering its hub's potential when the
//      hub's other arcs allow it — one move per unscheduled node absorbs a
//      clock tick for the whole job — and is moved to its cheapest exit
//      otherwise; a violated core arc is saturated or emptied;
//   3. route: Dijkstra over the core from one node with excess (by
//      default; from all of them at once as an option), stopping once the
//      deficits reached can absorb what it holds (when a blocking flow
//      follows and it holds many units, once the rest of that distance
//      is settled too, so the blocking flow sees every path of that
//      length; after a run of searches that moved no potential, the next
//      starts from every source); among nodes at equal
//      distance a deficit is settled as soon as it is reached (the ties of
//      a plateau — the cluster aggregator's thousands of computers — would
//      otherwise all come first); potentials rise on the settled nodes,
//      flow goes along the search tree to each deficit it reached, and
//      (after a deep search, and after every search from all sources)
//      when a settled deficit and some excess remain, a blocking flow over
//      the zero-reduced-cost arcs sends the rest — after single-source
//      searches backing off while it sends nothing; repeated until no
//      excess is left. The single-source searches of a route (from a big
//      enough source on) keep a plateau of the core nodes they settled
//      (LeafSspOptions::kept_plateau):
//      each starts from those nodes too, at distance 0, with the leaves at
//      their hubs keyed by their ways out of it, so it does not sweep them
//      again;
//   4. emit: the flow of every arc and the potentials (a leaf's derived).
// Reduced-cost optimality holds between any two of these steps, so a
// cancelled or infeasible solve leaves a valid pseudoflow that the next
// solve continues from. The first solve, a solve after the change record
// was lost, and the first solve after Adopt() load the state from a full
// solution (cost scaling from scratch for the first). Adopt() only keeps a
// copy of the answer: a race's loser adopts every answer it lost, and
// loading it (about 180 ms at 2.2 million arcs) would hold up each of them.
//
// Thread-safety: one thread per object; the graph is only read.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "scheduler/flow/cost_scaling.h"
#include "scheduler/flow/hub_heaps.h"
#include "scheduler/flow/kept_arcs.h"
#include "scheduler/flow/radix_heap.h"
#include "scheduler/flow/solver.h"
#include "scheduler/flow/wide.h"

namespace copse::flow {

struct LeafSspOptions {
  // Each search starts from one source and stops once it has reached what
  // that source holds; otherwise from every source, up to what they all hold.
  bool single_source = true;
  // Searches take nodes at equal distance last in, first out (deep) or
  // first in, first out (wide). The first solve after a solution is loaded
  // (the cold solve's, or an adopted one) goes wide either way: another
  // solver's potentials leave wide plateaus of zero reduced cost, which a
  // deep search sweeps before it comes out at a deficit near where it went in.
  bool deep_ties = true;
  // After a search from one source, a blocking flow over the arcs it made
  // zero-reduced-cost sends what the search tree could not (when a settled
  // deficit and some of the source's excess are left): never, after deep
  // searches only (the default), or after every search. A wide search (the
  // first after a load) settles a wide plateau, and a blocking flow over it
  // cost more than the searches it saved: at the benchmark's burst (d) 7.0 s
  // with it against 3.9 s without. After deep searches it pays: without it
  // the scheduler's burst took 8.4 s, with it 3.1-3.5 s
  // (bench/flow/journal.md, "Deficits first among ties"). Searches from every source
  // always run it: there the tree gives each deficit one source. After
  // single-source searches it backs off while it sends nothing
  // (blocking_flow_min_units below).
  enum class BlockingFlow { kNever, kAfterDeepSearches, kAlways };
  BlockingFlow blocking_flow = BlockingFlow::kAfterDeepSearches;
  // Among nodes at equal distance, a deficit reached at the distance being
  // settled is settled next. Off: ties come out in heap order, so such a
  // deficit waits behind every node already in the heap at that distance.
  bool eager_deficits = true;
  // A search that a blocking flow follows, from sources holding at least
  // this many units, settles every node at the distance where it reached
  // enough deficit before it stops, so that the blocking flow sends along
  // every path of that length, not only through the nodes settled before
  // the deficit. Without it the scheduler's burst (5,000 tasks of one job)
  // took 916 searches at one distance, each sending a few units through
  // the nodes its predecessor had happened to settle (bench/flow/journal.md, "The
  // blocking flow sees the whole distance"). A source holding a unit or
  // two has little for a blocking flow to send; finishing for sources of 2
  // or 4 units made other rounds slower in the one run measured of each.
  // 0: never. A search that stops because no deficit came for a while
  // (kSearchSlack) settles the rest of its distance too.
  int64_t finish_distance_units = 16;
  // After this many searches in a row from one source each that moved no
  // potential (each found its deficits at distance 0), the next search
  // starts from every source that holds excess, if two or more do: the
  // units left may well go at today's potentials, and then its blocking
  // flow sends them in one go where those searches would send a few each.
  // The scheduler's burst round took 0.6-2.2 s without it (about 231
  // searches), 0.18-0.32 s with it (bench/flow/journal.md, "A search from every
  // source after a flat run"). 0: never.
  int64_t batch_after_flat_searches = 16;
  // A blocking flow after a search from one source (in the loop over the
  // sources) that sent fewer than this many units beyond the search tree's
  // paths doubles the number of such searches that go without one, and
  // without finishing their distance, before the next; one that sends this
  // many resets it; each route starts afresh. Where every unit leaves at a
  // distance of its own (a burst in a running cluster, bench/flow/journal.md "The
  // burst in the steady state") those blocking flows send nothing, and
  // they and the sweeps that finish the distance for them cost much of the
  // step. 0: a blocking flow after every deep search.
  int64_t blocking_flow_min_units = 1;
  // A deep search relaxes each node's arcs, then, after pushing the node's
  // next leaf's event, the arc by which the last augmenting path left that
  // node; ties come out last in, first out, so the way the last path went
  // is tried first. In a burst the units go one by one from the burst's
  // computers through the cluster aggregator to the few computers with a
  // free slot; without the hint each search swept the full computers to
  // find one again (bench/flow/journal.md, "The last path's way first"). It orders
  // ties only: every answer has the same cost. Wide searches ignore it.
  // Among equal-cost answers it picks others than a search without it, and
  // the cost model does not tell a free slot from one being freed by a kill
  // (QuincyPolicy holds a task sent to the latter for a round): that kept
  // it off by default until the exit cache below (bench/flow/journal.md, "The
  // cheapest exits cached").
  bool path_hints = true;
  // A leaf that entered a search in full twice in a solve's route keeps,
  // for the rest of the route, its cheapest exits (arc, head and cost) and
  // a lower bound on the rest's prices cost(w, v) + p(v) (potentials only
  // rise in a route). When its hub lets it in again, it relaxes only those
  // of its cached exits that reach an unsettled node by the distance being
  // settled, reading no other arc, and is put off to where its next one
  // could, often beyond the search's radius; it enters in full again only
  // when the rest could be reached, or after it moved (and twice then,
  // the second time refilling the cache).
  // In a burst each search settles the burst's computers at one distance,
  // and their tasks' cheapest exits lead to one another: every search had
  // them all enter (bench/flow/journal.md, "The cheapest exits cached"). It orders
  // the relaxations only: every answer has the same cost.
  bool exit_cache = true;
  // A search from one source is wide when it settled a quarter of the core
  // or more, and at least reverse_min_nodes nodes. After this many wide
  // searches in a solve (0: never), the next phase first searches backwards
  // from every deficit at once and raises each core node's potential by its
  // distance to the nearest deficit, which makes every source it reached
  // tight, then searches from every source with excess, its blocking flow
  // sending what the tight paths carry; so does the phase after each later
  // wide search. A reverse phase that sent fewer than reverse_min_units
  // units doubles the number of wide searches to let pass before the next.
  // An experiment (`incremental_leaf_reverse` in `copse bench flow`), off
  // by default: each backward search scans the in-lists of every node it
  // settles — the cluster node's holds every task's arc — and pays only
  // where the wide searches are many (bench/flow/journal.md, "A search backwards
  // from the deficits").
  int64_t reverse_after_wide_searches = 0;
  size_t reverse_min_nodes = 4096;
  int64_t reverse_min_units = 16;
  // The single-source searches of a route keep a plateau (from a source
  // of plateau_min_units or more on): the core nodes that earlier ones
  // settled and reached by a step still there after their augmenting
  // paths (not nodes in deficit then, nor aggregators with more than
  // kHubDegree arcs), each with that step. Each search starts from the
  // plateau's nodes as well as its source, all at distance 0 — any set of
  // roots keeps every reduced cost non-negative, so the searches stay
  // exact — and does not sweep them again: a leaf that entered at a
  // plateau hub goes back keyed by its cheapest exit out of the plateau
  // (OutsideKey), so it is let in only when that exit comes within reach.
  // A path that starts at a plateau node holding no excess goes on along
  // the kept steps back to a source, or, where one is gone (a leaf moved,
  // an arc filled, the source ran dry), along tight steps found by a short
  // search backwards among plateau nodes (WayBack); failing that, the
  // plateau is emptied (its leaves' true keys back) and the source
  // searches afresh. A plateau source that ran dry leaves it, and every
  // leaf keyed without its exit into that node is keyed by it again
  // (LeavePlateau); otherwise the plateau only grows, so keys by the way
  // out stay lower bounds. It is emptied before a search from every source
  // or backwards, before a search from a small source outside it, after a
  // path with no way back, and when the route ends. In a burst each unit
  // left the burst's computers at a distance of its own, and every search
  // swept them and their 2,000-odd tasks first (bench/flow/journal.md, "The
  // plateau kept").
  bool kept_plateau = true;
  // A source that is not in the plateau searches from the plateau only if
  // it holds this many units; otherwise the plateau is emptied and it
  // searches alone. At (b), (c) and (e) about 1-2 % of the searches are
  // from sources of 4 units or more, at the burst about half: the plateau
  // costs where searches are small and far apart.
  int64_t plateau_min_units = 4;
};

class LeafSspSolver final : public FlowSolver, private KeptArcs {
 public:
  struct Stats {
    bool warm = false;            // started from kept state
    bool full_sync = false;       // the change record was not usable
    uint64_t synced = 0;          // arcs and nodes synced
    uint64_t shifted = 0;         // arcs that moved with their cost group
    uint64_t leaves = 0;          // leaves after the sync
    uint64_t dirty_leaves = 0;    // leaves whose arcs changed
    uint64_t placed = 0;          // leaves without a unit placed at their cheapest exit
    uint64_t hub_moves = 0;       // hubs whose potential fell to absorb their leaves' changes
    uint64_t leaf_moves = 0;      // violated leaves moved to their cheapest exit
    uint64_t core_fixes = 0;      // violated core arcs saturated or emptied
    uint64_t retracted = 0;       // deficits moved downstream
    int64_t excess_units = 0;     // units of excess left for routing
    uint64_t phases = 0;          // searches
    uint64_t finished = 0;        // searches that went on past their stop to settle that distance
    uint64_t batched = 0;         // searches from every source after a run of flat ones
    uint64_t blocking_flows = 0;  // blocking flows run after searches
    uint64_t unblocked = 0;       // blocking flows the back-off skipped
    int64_t blocked_units = 0;    // units the blocking flows sent beyond the search trees
    uint64_t exits_walked = 0;    // leaves' exits the blocking flows looked at
    uint64_t plateau = 0;         // the most nodes the kept plateau held
    uint64_t plateau_way_backs = 0;  // paths from a plateau node back to a source found afresh
    uint64_t plateau_breaks = 0;     // searches whose path from a plateau node had no way back
    uint64_t plateau_resets = 0;     // times the plateau was emptied
    uint64_t plateau_left = 0;       // plateau sources that ran dry and left it
    uint64_t wide = 0;               // wide searches from one source (counted when reversing)
    uint64_t reversed = 0;           // backward searches from every deficit after a wide one
    uint64_t reverse_settled = 0;    // core nodes they settled
    int64_t reverse_units = 0;       // units sent by the phases that followed them
    uint64_t settled = 0;            // core nodes settled, all searches
    uint64_t scanned = 0;            // core arcs scanned, all searches
    uint64_t leaf_events = 0;        // leaves that entered a search
    uint64_t deferred = 0;           // entries put off by the exit cache
    uint64_t stale_keys = 0;         // leaf keys found stale and recomputed in a search
    uint64_t paths = 0;              // augmenting paths
    uint64_t drained = 0;            // units a source sent out through its own leaves
    double sync_ms = 0, repair_ms = 0, route_ms = 0, emit_ms = 0;
    double search_ms = 0;   // route_ms spent searching, backwards included
    double reverse_ms = 0;  // search_ms spent searching backwards
    double shift_ms = 0;    // sync_ms spent on shifted cost groups
  };

  explicit LeafSspSolver(LeafSspOptions options = {})
      : options_(options), heap_(options.deep_ties) {}
  std::string_view name() const override { return "incremental_leaf"; }
  Status Solve(const FlowGraph& graph, FlowSolution* out, const CancelFlag* cancel) override;
  void Adopt(const FlowGraph& graph, const FlowSolution& solution) override;
  const Stats& stats() const { return stats_; }

  // Test hook: OK when the kept state equals what a rebuild from `graph`
  // with the kept flow gives (arc copies, excesses, total cost), leaves are
  // classified as the graph says, every leaf sits in its hub's heap under a
  // key no larger than its true key, and every residual core arc and every
  // leaf's cheapest exit has a non-negative reduced cost; otherwise
  // kInternal naming the first difference.
  Status CheckState(const FlowGraph& graph) const;

 private:
  // A leaf's cheapest exit: the arc and cost(w, v) + p(v).
  struct Exit {
    ArcId arc = kNoId;
    int64_t price = 0;
  };

  // ---- state (leaf_ssp.cc) ----
  void Resize(const FlowGraph& g);
  // Both return false, the state unusable, when `cancel` stopped them.
  bool LoadSolution(const FlowGraph& g, const FlowSolution& sol,
                    const CancelFlag* cancel = nullptr);
  bool LoadAndCheckAll(const FlowGraph& g, const FlowSolution& kept, const CancelFlag* cancel);
  void Reload(const FlowGraph& g);
  void SyncArc(const FlowGraph& g, ArcId a);
  void SyncShifts(const FlowGraph& g);
  void SeeGroups(const FlowGraph& g);
  void SyncNode(const FlowGraph& g, NodeId n);
  void LeafCostChanged(ArcId a, int64_t old_cost);
  void SetFlow(ArcId a, int64_t f);
  void Pend(NodeId n) { pending_.push_back(n); }
  void Mark(std::vector<NodeId>& list, uint8_t flag, NodeId n);
  bool LeafShape(NodeId n) const;
  void Classify(NodeId n);
  void MakeLeaf(NodeId n);
  void MakeCore(NodeId n);
  // The cheapest of w's arcs other than `except` with room (arc kNoId: none).
  Exit CheapestExit(NodeId w, ArcId except) const;
  // cost(w, v) + p(v) of leaf w's cheapest exit, less the cost of the arc
  // it sits on (kNoExit when it has none); minus its hub's potential, the
  // exit's reduced cost. REQUIRES: at_[w] != kNoId.
  int64_t Key(NodeId w) const;
  int64_t LeafPotential(NodeId w) const;
  // Puts leaf w's unit on arc `to`; heaps are the caller's.
  void MoveLeaf(NodeId w, ArcId to);
  Status Emit(const FlowGraph& g, FlowSolution* out);

  // ---- repair (leaf_ssp_repair.cc) ----
  void Repair();
  void PlaceFresh(NodeId n);
  void RefreshLeaf(NodeId w);
  void NoteViolated(NodeId w, int64_t key);
  void CheckHub(NodeId u);
  bool LowerHub(NodeId u, int64_t need);
  void LowerKeysOfExitsInto(NodeId u);
  void FixCoreArc(ArcId a);
  void RetractDeficits();

  // ---- route (leaf_ssp_route.cc) ----
  Status Route(const CancelFlag* cancel);
  Status Phase(int64_t total, const CancelFlag* cancel, bool backs_off = false);
  void Drain(NodeId u);
  int64_t CollectSources(bool& stranded);
  // `finish`: settle all of the distance where it stops.
  bool Search(const std::vector<NodeId>& roots, int64_t total, bool finish,
              const CancelFlag* cancel);
  void Relax(NodeId v, int64_t dist, ArcId arc, NodeId prev, uint8_t kind);
  // Backward from every deficit; raises every core node's potential by its
  // distance to the nearest deficit, capped at the search's radius.
  // Returns false when cancelled (potentials as they were).
  bool ReverseSearch(const CancelFlag* cancel);
  // roots_ := every source that holds excess; returns what they hold.
  int64_t RootsFromEverySource();
  // ReverseSearch, then one Phase from every source that holds excess.
  Status ReversePhase(const CancelFlag* cancel);
  void LeafEvent(NodeId u, int64_t key);
  // Leaf w, taken from its hub u's heap, relaxes its exits...
  void Enter(NodeId w, NodeId u);
  // ...or, with a valid exit cache, relaxes the cached exits that reach an
  // unsettled node at distance d or less and is put off to where its next
  // exit could (true; false: it must enter in full).
  bool Defer(NodeId w, NodeId u, int64_t d);
  void NextStamp();
  void Augment();
  int64_t StepResidual(NodeId v) const;
  // The same for a step given by how it went (a kept one).
  int64_t StepResidual(uint8_t kind, ArcId arc, NodeId prev) const;
  bool StepTight(uint8_t kind, ArcId arc, NodeId prev, NodeId v) const;
  NodeId SendStep(uint8_t kind, ArcId a, int64_t delta);
  // The kept plateau (LeafSspOptions::kept_plateau).
  void GrowPlateau();
  void ResetPlateau();
  int64_t OutsideKey(NodeId w, NodeId hub) const;
  // Puts leaf w in plateau hub's heap under OutsideKey, listed for the reset.
  void PutOutside(NodeId w, NodeId hub);
  void LeavePlateau(NodeId u);
  // A way back from plateau node u to a source over tight steps, made u's
  // kept steps; the source, or kNoId.
  NodeId WayBack(NodeId u, int64_t& delta);

  // ---- blocking flow (leaf_ssp_flow.cc) ----
  void GroupEntered();
  bool Admissible(NodeId u, ArcId a, uint8_t kind, NodeId& v) const;
  bool NextArc(NodeId u, ArcId& a, uint8_t& kind);
  bool BuildLevels();
  void BlockingFlow();

  static constexpr int64_t kNoExit = std::numeric_limits<int64_t>::max() / 4;
  // Hubs with more arcs than this never move their potential in the repair.
  static constexpr size_t kHubDegree = 4096;
  // Deficits move downstream from nodes with at most this many arcs (a
  // computer; not an aggregator with an arc from every task it prefers).
  static constexpr size_t kRetractDegree = 256;
  // A hub with violated leaves is lowered if it has at most this many arcs
  // per violated leaf (or kRetractDegree).
  static constexpr size_t kScanPerViolation = 16;
  // A search that has reached some deficit stops once it has settled twice
  // as many nodes as when it reached the last one, plus this many, without
  // reaching another: the phase then routes what it found rather than
  // sweeping the rest of the graph for deficits far away.
  static constexpr size_t kSearchSlack = 64;

  LeafSspOptions options_;
  CostScalingSolver cold_;
  Stats stats_;
  bool has_state_ = false;
  uint64_t revision_ = 0;
  uint64_t edits_seen_ = 0;           // the graph's edit_count() at the last sync
  std::vector<int64_t> seen_offset_;  // each cost group's offset at the last sync
  std::vector<ArcId> members_;        // SyncShifts' list of a group's arcs
  bool repair_all_ = false;           // a solve stopped before its repair
  bool loaded_ = false;               // the state was loaded from a solution since the last route
  // The blocking flow's back-off within a route (blocking_flow_min_units):
  // single-source searches left to go without it, and the next wait.
  int64_t unblocked_wait_ = 0, unblocked_backoff_ = 1;
  // An adopted answer, loaded by the next solve (for the graph as it is then).
  FlowSolution adopted_;
  bool adopt_pending_ = false;

  // Kept state, by ArcId / NodeId.
  std::vector<int64_t> pot_;  // core nodes only (a leaf's is derived)
  std::vector<int64_t> excess_;
  std::vector<int64_t> supply_;
  std::vector<uint8_t> node_alive_;
  std::vector<uint8_t> leaf_;  // 1: the node is a leaf
  std::vector<ArcId> at_;      // a leaf's arc carrying its unit (kNoId: none)
  uint64_t leaf_count_ = 0;
  HubHeaps hubs_;                // the leaves at each hub that holds any
  std::vector<NodeId> pending_;  // core nodes that may hold a nonzero excess
  // KeptArcs holds the arc copies, the totals, each node's adjacency and
  // flow-in lists (here only arcs between core nodes enter the latter).

  // Per-solve work lists; a node is on a list while its flag is set.
  enum : uint8_t {
    kReclassify = 1,
    kDirty = 2,
    kHubHit = 4,
    kFresh = 8,
    kLoose = 16,
    kReceived = 32,
    kShifted = 64,
    kRetract = 128,
  };
  std::vector<uint8_t> flags_;        // by NodeId
  std::vector<NodeId> reclassify_;    // nodes whose degree or supply changed
  std::vector<NodeId> fresh_;         // nodes added in this batch
  std::vector<NodeId> dirty_;         // leaves whose arcs changed
  std::vector<ArcId> check_;          // core arcs added or changed
  std::vector<NodeId> loose_;         // leaves whose unit is on no arc
  std::vector<NodeId> violated_;      // leaves whose cheapest exit undercuts their hub
  std::vector<NodeId> hubs_hit_;      // their hubs...
  std::vector<int64_t> need_;         // ...how far each would have to fall...
  std::vector<uint32_t> violations_;  // ...and for how many leaves
  std::vector<NodeId> received_;      // nodes that received drained units
  std::vector<NodeId> shifted_;       // hubs whose leaves' arcs got dearer...
  std::vector<int64_t> shift_;        // ...by at most this much
  std::vector<NodeId> work_;          // RetractDeficits' work list
  std::vector<NodeId> taken_;         // CheckHub's violated leaves

  // The search, epoch-stamped by NodeId.
  enum : uint8_t { kRoot, kForward, kBackward, kViaLeaf };
  struct Label {
    int64_t dist = 0;
    uint32_t seen = 0;     // == stamp_: dist is set in this search
    uint32_t done = 0;     // == stamp_: settled in this search
    ArcId arc = kNoId;     // the arc it was reached by...
    NodeId prev = kNoId;   // ...from this core node...
    uint8_t kind = kRoot;  // ...forwards, backwards, or through the arc's leaf
  };
  std::vector<Label> label_;
  // By core NodeId: the arc by which the last search-tree path that
  // Augment sent along left it (not set by blocking flows or leaf steps).
  // Only matched against the node's own lists, so a stale one is harmless.
  std::vector<ArcId> hint_;
  uint32_t stamp_ = 0;
  static constexpr uint32_t kEvent = 0x80000000u;   // a heap value: a hub's next leaf
  static constexpr uint32_t kPutOff = 0x40000000u;  // a heap value: a leaf put off
  // A leaf's exit cache (LeafSspOptions::exit_cache): its kCached cheapest
  // exits when it last entered in full (arc kNoId past its exits), and a
  // lower bound on the prices cost(w, v) + p(v) of the rest; valid while
  // its mark holds 2 * route_ + 1 (the leaf has not moved since, in this
  // route). A leaf's first full entry in a route only sets the mark to
  // 2 * route_, and its second fills the cache: in the many routes where
  // each leaf enters once, filling it would be work for nothing. A full
  // entry with the cache valid sets the mark to 2 * route_ again.
  static constexpr int kCached = 6;
  struct CachedExit {
    int64_t cost;
    NodeId head;
    ArcId arc;
  };
  // What a search reads of a leaf it lets in, in two cache lines: the
  // exit cache, its mark, and where the leaf entered with which key.
  struct alignas(64) LeafSlot {
    CachedExit exit[kCached];
    int64_t rest;
    int64_t at_cost;    // the cost of the arc the leaf sits on
    int64_t entry_key;  // its key on entering this search (a lower bound if put off)...
    NodeId entry_hub;   // ...at this hub
    uint32_t mark;
  };
  static_assert(sizeof(LeafSlot) == 128);
  std::vector<LeafSlot> slot_;  // by NodeId
  uint32_t route_ = 0;          // this route's number (never 0)
  bool cache_on_ = false;       // exit_cache, and node ids fit beside kPutOff
  RadixHeap heap_;
  std::vector<NodeId> settled_;  // core nodes settled in this search, in order
  std::vector<NodeId> entered_;  // leaves taken from their heaps by this search (HubHeaps::Take)
  std::vector<NodeId> sources_;
  std::vector<NodeId> roots_;  // the sources of this search
  int64_t radius_ = 0;
  // The distance being settled, and the deficits relaxed at it: they are
  // settled before anything else the heap holds at that distance.
  int64_t current_ = 0;
  std::vector<NodeId> urgent_;
  // The kept plateau (LeafSspOptions::kept_plateau): its nodes (in no
  // order), each with the step it joined by or the way back WayBack found
  // (by NodeId); the leaves put in a plateau hub's heap under OutsideKey
  // since the last reset, each once (some may have moved on since).
  std::vector<NodeId> plateau_;
  std::vector<uint8_t> in_plateau_;
  std::vector<uint32_t> plateau_pos_;  // a plateau node's index in plateau_
  std::vector<ArcId> kept_arc_;
  std::vector<NodeId> kept_prev_;
  std::vector<uint8_t> kept_kind_;
  std::vector<NodeId> outside_keyed_;
  std::vector<uint8_t> outside_listed_;  // by NodeId: the leaf is in outside_keyed_
  // WayBack's search (by NodeId, valid where back_mark_ == back_stamp_).
  std::vector<uint32_t> back_mark_;
  std::vector<NodeId> back_next_;
  std::vector<ArcId> back_arc_;
  std::vector<uint8_t> back_kind_;
  std::vector<NodeId> back_queue_;
  uint32_t back_stamp_ = 0;
  static constexpr size_t kWayBackNodes = 256;
  bool plateau_search_ = false;  // the search in progress starts from the plateau
  bool plateau_broken_ = false;  // a path from a plateau node found no way back

  // The blocking flow. Leaves that entered the last search, listed by hub
  // (valid where entered_mark_ == stamp_); levels (valid where level_mark_
  // == level_stamp_; -2: a dead end); each node's current arc.
  std::vector<uint32_t> entered_mark_;
  std::vector<NodeId> entered_first_;  // by hub
  std::vector<NodeId> entered_next_;   // by leaf
  std::vector<int32_t> level_;
  std::vector<uint32_t> level_mark_;
  uint32_t level_stamp_ = 0;
  struct Cursor {
    uint8_t stage = 0;    // 0: out arcs, 1: flow-in list, 2: entered leaves' exits
    bool cached = false;  // stage 2: only the leaf's cached exits can be admissible
    uint32_t pos = 0;     // index in out_ (0), the leaf's out_ or cache (2); an arc (1)
    NodeId leaf = kNoId;  // stage 2: the leaf
  };
  bool OnlyCachedExits(NodeId w, NodeId u) const;
  std::vector<Cursor> cursor_;
  std::vector<NodeId> queue_;
  struct Step {
    ArcId arc;
    uint8_t kind;
    NodeId from;
  };
  std::vector<Step> steps_;
};

}  // namespace copse::flow
