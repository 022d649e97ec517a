// Re-replication planning: which block copies to make after computers die,
// and which surplus copies to drop when they come back. Pure functions of the
// blocks' replicas, the live computers and a seeded generator; the master's
// DFS service owns the timers, the copies in flight and the messages.
//
// Copies: a block is short when fewer of its replicas count (are on live
// computers, or on computers dead for less than the re-replication delay)
// than its replication factor, copies in flight included. Blocks with the
// fewest live replicas go first. A target is a live computer not holding the
// block; when every live replica is in one rack the target is in another, so
// that a block keeps replicas on at least two racks (blocks of files placed
// with 'confine N RACK' stay in their rack). The source is a live replica,
// preferably in the target's rack. No computer sends or receives more than
// `max_copies_per_computer` copies at once.
//
// Draining computers (`copse cluster drain`) are live but on their way out:
// their replicas do not count toward the factor, so every block they hold
// is short until it has its factor elsewhere; they are sources (the only
// ones for a block they alone hold: such blocks go first, as blocks with
// no other live replica) but never targets, and a source elsewhere is
// preferred when there is one. Their replicas are not counted for the
// two-racks rule either.
//
// Trims: a block with more live replicas than its factor loses the surplus,
// taken from the rack holding the most replicas, never dropping below two
// racks when it had two. Replicas on draining computers are neither counted
// nor trimmed: they stay until the computer is gone or undrained (when they
// count again and any surplus is trimmed as usual), so that an undrained
// computer keeps its data and its tasks' locality.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "dfs/namespace.h"
#include "dfs/placement.h"

namespace copse::dfs {

struct CopyTask {
  BlockId block = 0;
  uint64_t size = 0;
  std::string source;
  std::string target;
  int live_replicas = 0;  // before this copy, for logs
};

struct TrimTask {
  BlockId block = 0;
  std::string computer;
};

struct ReplicationState {
  std::vector<PlacementComputer> live;  // live computers, config order
  // Computers whose recorded replicas still count: the live ones plus those
  // dead for less than the re-replication delay.
  std::set<std::string> counted;
  // Copies under way: block -> target computers.
  std::map<BlockId, std::set<std::string>> in_flight;
  // Computers a block must not be copied to (one held a bad copy of it).
  std::map<BlockId, std::set<std::string>> avoid;
  // Copies each computer is already sending or receiving.
  std::map<std::string, int> busy;
  int max_copies_per_computer = 2;
  // Live computers being drained.
  std::set<std::string> draining;
};

std::vector<CopyTask> PlanCopies(const std::vector<ReplicatedBlock>& blocks,
                                 const ReplicationState& state, std::mt19937_64& rng);

// `usable` are the computers whose replicas are live and confirmed (they
// reported their blocks since they last came up); replicas on `draining`
// computers are left alone.
std::vector<TrimTask> PlanTrims(const std::vector<ReplicatedBlock>& blocks,
                                const std::vector<PlacementComputer>& usable,
                                const std::set<std::string>& draining = {});

}  // namespace copse::dfs
