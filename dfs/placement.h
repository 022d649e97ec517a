// Replica placement: which computers hold each partition of a new file. A
// pure function of the live computers, the placement mode and a seeded random
// generator (no I/O, no clock), shared by the master's name service and the
// simulator.
//
// Modes (`copse fs put --placement MODE`):
//   writer         HDFS's default: the first replica on the writer's computer
//                  (a random one when the writer is outside the cluster), the
//                  second on a computer in another rack, the third on another
//                  computer in the second's rack, further ones spread over the
//                  racks with the fewest replicas.
//   random         each partition's first replica on a random computer, the
//                  rest as above (the Quincy paper's default for its data).
//   colocate PATH  partition i on the replica set of partition i of PATH
//                  (DatabaseJoin40); replicas on dead computers are replaced.
//   confine N RACK every partition and every replica on N computers of RACK
//                  (DatabaseJoin5), chosen at random, partitions rotated over them.
// Thread-safety: pure functions.
#pragma once

#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "copse/status.h"

namespace copse::dfs {

struct PlacementComputer {
  std::string name;
  std::string rack;
};

struct PlacementMode {
  enum class Kind { kWriter, kRandom, kColocate, kConfine };
  Kind kind = Kind::kWriter;
  std::string colocate_path;  // kColocate
  int confine_count = 0;      // kConfine
  std::string confine_rack;   // kConfine

  // "writer", "random", "colocate /data/x", "confine 5 r1".
  std::string ToString() const;
};

// Parses the forms ToString prints; ':' may stand for the spaces
// ("confine:5:r1"). InvalidArgument says what was expected.
Result<PlacementMode> ParsePlacementMode(std::string_view text);

struct PlacementRequest {
  PlacementMode mode;
  std::string writer;  // the writer's computer; empty when outside the cluster
  int replication = 3;
  int partitions = 1;
  // kColocate: the other file's replica sets, partition by partition
  // (partition i uses set i modulo their number).
  std::vector<std::vector<std::string>> colocate_sets;
};

// One replica set per partition, first replica first. `live` lists the live
// computers in a fixed order (the config's). Fails with kFailedPrecondition
// when there are fewer live computers than replicas ("not enough computers
// for the requested replication"), kInvalidArgument for a bad request.
Result<std::vector<std::vector<std::string>>> PlaceFile(const std::vector<PlacementComputer>& live,
                                                        const PlacementRequest& request,
                                                        std::mt19937_64& rng);

// Extends `chosen` (replicas already placed, in order) to `replication`
// computers by the HDFS rule above, never picking a computer in `exclude` or
// one already chosen. Returns fewer when too few computers qualify.
std::vector<std::string> CompleteReplicaSet(const std::vector<PlacementComputer>& live,
                                            std::vector<std::string> chosen, int replication,
                                            const std::set<std::string>& exclude,
                                            std::mt19937_64& rng);

}  // namespace copse::dfs
