// Data generators of the sample apps: the input `copse gen APP` writes into
// the DFS (docs/design.md §12; docs/apps.md). A generator makes one partition of
// one of its app's input files at a time, deterministically from the seed,
// the file and the partition, so that partitions can be written one by one,
// in any order, and the same command writes the same bytes again. It hands
// its output to `sink` in pieces of at most a few MiB and ends every piece at
// a record boundary. The partition's byte target is approximate: the
// partition ends near it, at a record boundary (at least one record unless
// the target is 0). Generators whose records name each other (DatabaseJoin's
// keys, PageRank's vertex ids) fix their record counts from the targets
// alone, the same in every partition, so that any partition can be made
// without the others.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "copse/status.h"

namespace copse::apps {

using ChunkSink = std::function<Status(std::string_view)>;

struct GenPartition {
  int file = 0;  // which of the app's input files (DatabaseJoin: 0 small, 1 big)
  int partition = 0;
  int partitions = 1;  // of every input file (they are partitioned alike)
  // Target bytes of one partition of each of the app's input files (one entry
  // per file); `file_bytes[file]` is this partition's target.
  std::vector<int64_t> file_bytes;
  uint64_t seed = 1;
};

// The generators, one per app (apps/<app>/generate.cc).
Status GenerateSort(const GenPartition& p, const ChunkSink& sink);
Status GenerateDatabaseJoin(const GenPartition& p, const ChunkSink& sink);
Status GeneratePageRank(const GenPartition& p, const ChunkSink& sink);
Status GenerateWordCount(const GenPartition& p, const ChunkSink& sink);
Status GeneratePrime(const GenPartition& p, const ChunkSink& sink);

}  // namespace copse::apps
