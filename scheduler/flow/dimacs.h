// DIMACS min-cost-flow files ("p min", "n", "a" lines; "c" comments): a
// reader that reports malformed input with its line number, a writer, and
// the conversion to a FlowGraph. Node ids need not be dense: the nodes are
// the ids that appear (the "p" line's node count is an upper bound). Arc
// lower bounds are supported by the usual transformation (the forced flow
// moves supply and adds a constant to the cost).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "copse/status.h"
#include "scheduler/flow/flow_graph.h"

namespace copse::flow {

struct DimacsArc {
  int64_t tail = 0, head = 0;
  int64_t low = 0, cap = 0, cost = 0;
  int line = 0;
};

struct DimacsProblem {
  int64_t declared_nodes = 0;
  int64_t declared_arcs = 0;
  std::map<int64_t, int64_t> supply;  // every node id that appears, with its supply
  std::vector<DimacsArc> arcs;
};

// Reads a problem. Errors are kInvalidArgument with "origin:line: what".
Result<DimacsProblem> ReadDimacs(std::istream& in, std::string_view origin);

// ApplySnapshot's working space, kept in the LoadedProblem so that a replay
// of many snapshots reuses it: the diff then neither allocates nor frees per
// node or arc. (Freeing millions of small map nodes just before a solve made
// the solve at scale (c) take 150 ms instead of 65: glibc consolidated them
// inside the solver's first large allocation.) Contents are meaningless
// between calls.
struct SnapshotScratch {
  std::vector<std::pair<int64_t, int64_t>> shift;  // (node id, supply moved by a lower bound)
  std::vector<NodeId> tail, head;                  // by DimacsProblem arc
  std::vector<uint32_t> count;                     // counting-sort buckets, by NodeId
  std::vector<uint32_t> unsorted, sorted_tmp;
  std::vector<uint32_t> old_sorted;   // live arcs of arc_of, by (tail, head)
  std::vector<uint32_t> next_sorted;  // DimacsProblem arcs, by (tail, head)
  std::vector<ArcId> arc_of, stale;
};

// A FlowGraph built from a DimacsProblem, with the maps from DIMACS ids.
struct LoadedProblem {
  FlowGraph graph;
  std::unordered_map<int64_t, NodeId> node_of;
  std::vector<ArcId> arc_of;  // per DimacsProblem arc
  int64_t cost_offset = 0;    // from lower bounds: add to the flow's cost
  SnapshotScratch scratch;
};

// kInvalidArgument if a lower bound exceeds its capacity.
Result<LoadedProblem> LoadDimacs(const DimacsProblem& problem, std::string_view origin);

// Edits `loaded` into the problem `next`: nodes matched by id, arcs by their
// (tail, head) pair (the k-th such arc of one with the k-th of the other).
// Returns the number of node and arc changes recorded by the graph. Arcs are
// paired by two counting sorts on node ids, not by ordered maps; apart from
// the node_of entries of new nodes, a call allocates only when a snapshot
// outgrows the ones before.
Result<size_t> ApplySnapshot(LoadedProblem& loaded, const DimacsProblem& next,
                             std::string_view origin);

// Writes `graph` with node id v numbered v + 1 (and the "p" line's node count
// the id bound), so that snapshots of one evolving graph keep each node's
// number and ApplySnapshot finds only the real changes.
void WriteDimacs(const FlowGraph& graph, std::ostream& out, std::string_view comment = "");

}  // namespace copse::flow
