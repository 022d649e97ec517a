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
#include <vector>

#include "common/status.h"
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

// A FlowGraph built from a DimacsProblem, with the maps from DIMACS ids.
struct LoadedProblem {
  FlowGraph graph;
  std::unordered_map<int64_t, NodeId> node_of;
  std::vector<ArcId> arc_of;  // per DimacsProblem arc
  int64_t cost_offset = 0;    // from lower bounds: add to the flow's cost
};

// kInvalidArgument if a lower bound exceeds its capacity.
Result<LoadedProblem> LoadDimacs(const DimacsProblem& problem, std::string_view origin);

// Edits `loaded` into the problem `next`: nodes matched by id, arcs by their
// (tail, head) pair (the k-th such arc of one with the k-th of the other).
// Returns the number of node and arc changes recorded by the graph.
Result<size_t> ApplySnapshot(LoadedProblem& loaded, const DimacsProblem& next,
                             std::string_view origin);

// Writes `graph` with nodes numbered 1..n in id order.
void WriteDimacs(const FlowGraph& graph, std::ostream& out, std::string_view comment = "");

}  // namespace copse::flow
