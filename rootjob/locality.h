// Locality of a vertex's input (Quincy §2.3 and appendix; docs/design.md §5): the
// bytes it would read across a rack switch (R) and across the core switch (X)
// on each computer and rack, the preferred lists (computers holding more than
// δc of the input, racks holding more than δr, at most ten of each), and which
// replica a vertex placed on a computer reads each piece from. Pure functions
// shared by the root task and the simulator.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "rootjob/job_dag.h"
#include "scheduler/quincy_costs.h"

namespace copse::rootjob {

struct LocalityOptions {
  double delta_c = 0.1;  // δc: share of the input a preferred computer holds (strictly more)
  double delta_r = 0.1;  // δr: share of the input a preferred rack holds (strictly more)
  int max_entries = 10;  // at most this many preferred computers and racks
};

// `rack_of[c]` is computer c's rack; racks are 0 .. num_racks-1.
// A computer's bytes: pieces it holds are local, pieces held elsewhere in its
// rack cross the rack switch, the rest cross the core switch. A rack's bytes
// are those of a computer in it that holds nothing; the worst case is the
// rack holding the least. Lists are ordered by bytes held (most first), then
// by index.
scheduler::TaskLocality ComputeLocality(const std::vector<InputPiece>& pieces,
                                        const std::vector<int>& rack_of, int num_racks,
                                        const LocalityOptions& options = {});

enum class ReadLevel { kLocal, kRack, kCore };

struct PlannedRead {
  int64_t bytes = 0;
  int source = -1;  // computer read from
  ReadLevel level = ReadLevel::kLocal;
};

// Where a vertex on `computer` reads each piece from: its own copy, else the
// first replica in its rack, else the first replica. One entry per piece.
// REQUIRES: every piece has at least one replica.
std::vector<PlannedRead> PlanReads(const std::vector<InputPiece>& pieces, int computer,
                                   const std::vector<int>& rack_of);

}  // namespace copse::rootjob
