@0x9f3b9fe86e328c7d;
# The DFS protocol (frames with protocol id 4, dfs). Three conversations use it:
#
#   client  -> master   the name service: create, allocate, commit, list, stat,
#                       delete, open a job's pending output file, report a
#                       bad replica. Every request gets one reply: the
#                       matching *Reply, or an Error.
#   worker <-> master   on the worker's registration connection: the worker
#                       reports the blocks it holds, each block it stores and
#                       each bad replica it finds; the master tells it to
#                       delete blocks and to copy blocks from a peer.
#   peer    -> worker   the data port: read a block, or write a block through
#                       a pipeline of replicas. Chunk bytes travel as raw
#                       frames (payload kind 1): the chunk's bytes followed by
#                       their CRC32C, 4 bytes little-endian. A chunk is 1 MiB,
#                       except a block's last one.
#
# Data port, read:   ReadBlock -> ReadHeader (or Error), then the chunks from
#                    firstChunk on as raw frames; an Error in their place ends
#                    the transfer (a checksum mismatch, say).
# Data port, write:  WriteBlock, then raw chunk frames, then WriteEnd. The
#                    worker forwards everything to the next replica of the
#                    pipeline, answers ChunkAck once a chunk is stored here and
#                    downstream, and WriteAck (or Error) after WriteEnd, once
#                    the block is committed (flushed and synced, unless
#                    WriteBlock said noSync: scratch data).
#
# Writer identity: a client running as a task run of the engine sends its
# task id and attempt with CreateFile and AllocateBlock (0: not a task), so
# the master can drop what a run that ended without completing left behind.
#
# The records at the end are how the master stores its namespace in RocksDB.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("copse::proto");

# A failed request: a copse::StatusCode and what was wrong.
struct Error {
  code @0 :UInt16;
  message @1 :Text;
}

struct Endpoint {
  computer @0 :Text;
  rack @1 :Text;
  host @2 :Text;
  dataPort @3 :UInt16;
}

struct Placement {
  union {
    writer @0 :Void;        # HDFS default: the writer, another rack, the second's rack
    random @1 :Void;        # a random first computer, then as HDFS
    colocate @2 :Text;      # partition i on the replica set of partition i of this file
    confine @3 :Confine;    # every replica on `count` computers of one rack
  }
}

struct Confine {
  count @0 :UInt32;
  rack @1 :Text;
}

# ---- client -> master ----------------------------------------------------

struct CreateFile {
  path @0 :Text;
  partitions @1 :UInt32;
  replication @2 :UInt32;   # 0: the cluster's replication factor
  placement @3 :Placement;
  writer @4 :Text;          # the writer's computer; empty: outside the cluster
  scratchJob @5 :Text;      # non-empty: a scratch file of this job (replication 1)
  task @6 :UInt64;          # the writing task run (0: not a task)
  attempt @7 :UInt32;
  # Non-empty: an output file of this job (the job's root creates it, vertex
  # runs commit its partitions, OpenOutput finds it); invisible until the
  # master publishes the job's outputs.
  outputJob @8 :Text;
  # True: a program's upload into the program store (/.apps/..., `copse app
  # put`), the only way a file there is made.
  programStore @9 :Bool;
}

struct CreateFileReply {
  fileId @0 :UInt64;
  blockSize @1 :UInt64;
  replication @2 :UInt32;
  scratch @3 :Bool;         # a scratch file: its blocks are written with noSync
}

struct AllocateBlock {
  fileId @0 :UInt64;
  partition @1 :UInt32;
  exclude @2 :List(Text);   # computers that failed this writer
  task @3 :UInt64;          # the writing task run (0: not a task)
  attempt @4 :UInt32;
  writer @5 :Text;          # the writer's computer (an output file's first replica)
}

struct AllocateBlockReply {
  blockId @0 :UInt64;
  targets @1 :List(Endpoint);  # the pipeline, first replica first
}

struct CommittedBlock {
  blockId @0 :UInt64;
  size @1 :UInt64;
  replicas @2 :List(Text);  # computers that acknowledged the block
}

struct CommitPartition {
  fileId @0 :UInt64;
  partition @1 :UInt32;
  blocks @2 :List(CommittedBlock);
}

# Several partitions of one file at once, all or nothing (a writer of many
# buckets commits them in one round trip). Answered by CommitPartitionReply.
struct CommitPartitions {
  fileId @0 :UInt64;
  partitions @1 :List(PartitionBlocks);
}

struct PartitionBlocks {
  partition @0 :UInt32;
  blocks @1 :List(CommittedBlock);  # empty: an empty partition
}

struct CommitPartitionReply {
  fileVisible @0 :Bool;     # every partition is committed now
}

# A vertex run finds the pending output file it writes a partition of.
struct OpenOutput {
  path @0 :Text;
}

struct OpenOutputReply {
  fileId @0 :UInt64;
  partitions @1 :UInt32;
  blockSize @2 :UInt64;
  replication @3 :UInt32;
  job @4 :Text;
}

struct AbandonFile {
  fileId @0 :UInt64;
}

struct ListFiles {
  path @0 :Text;
}

struct ListEntry {
  path @0 :Text;
  isDir @1 :Bool;
  size @2 :UInt64;
  partitions @3 :UInt32;
  replication @4 :UInt32;
  scratchJob @5 :Text;
}

struct ListFilesReply {
  entries @0 :List(ListEntry);
}

struct StatFile {
  path @0 :Text;
  partition @1 :Int32 = -1;  # >= 0: only this partition lists its blocks
}

struct ReplicaInfo {
  computer @0 :Text;
  rack @1 :Text;
  host @2 :Text;
  dataPort @3 :UInt16;
  live @4 :Bool;
}

struct BlockInfo {
  blockId @0 :UInt64;
  size @1 :UInt64;
  replicas @2 :List(ReplicaInfo);
}

struct PartitionInfo {
  committed @0 :Bool;
  size @1 :UInt64;
  blocks @2 :List(BlockInfo);
}

struct FileInfo {
  path @0 :Text;
  fileId @1 :UInt64;
  size @2 :UInt64;
  replication @3 :UInt32;
  placement @4 :Text;
  scratchJob @5 :Text;
  blockSize @6 :UInt64;
  partitions @7 :List(PartitionInfo);
}

struct DeleteFile {
  path @0 :Text;
}

struct DeleteJobScratch {
  job @0 :Text;
}

struct DeleteReply {
  filesDeleted @0 :UInt32;
}

# A reader found a bad copy (a checksum mismatch) of a block on a computer.
struct ReportBadReplica {
  blockId @0 :UInt64;
  computer @1 :Text;
  reason @2 :Text;
}

struct Done {
  unused @0 :Void;
}

# ---- worker <-> master ---------------------------------------------------

struct StoredBlock {
  blockId @0 :UInt64;
  size @1 :UInt64;
}

# worker -> master: every committed block it holds, after each registration.
struct BlockReport {
  blocks @0 :List(StoredBlock);
}

# worker -> master: a block was committed here (written or copied).
struct BlockReceived {
  block @0 :StoredBlock;
}

# worker -> master: a stored copy failed its checksum; the worker dropped it.
struct BadReplica {
  blockId @0 :UInt64;
  reason @1 :Text;
}

# worker -> master: the outcome of a ReplicateBlock command.
struct ReplicationDone {
  blockId @0 :UInt64;
  ok @1 :Bool;
  message @2 :Text;
}

# master -> worker
struct DeleteBlocks {
  blockIds @0 :List(UInt64);
}

# master -> worker: copy this block from one of the sources.
struct ReplicateBlock {
  blockId @0 :UInt64;
  size @1 :UInt64;
  sources @2 :List(Endpoint);
}

# ---- the data port --------------------------------------------------------

struct ReadBlock {
  blockId @0 :UInt64;
  firstChunk @1 :UInt32;
  reader @2 :Text;          # the reading computer's name; empty: outside the cluster
}

struct ReadHeader {
  blockId @0 :UInt64;
  size @1 :UInt64;
  chunks @2 :UInt32;        # chunks in the whole block
  firstChunk @3 :UInt32;
}

struct WriteBlock {
  blockId @0 :UInt64;
  pipeline @1 :List(Endpoint);  # the replicas after this one, in order
  # Commit without a flush or sync (scratch data, which the engine can
  # regenerate); false, the default: as the worker's [dfs] sync_on_close says.
  noSync @2 :Bool;
}

struct ChunkAck {
  chunks @0 :UInt32;        # chunks 0 .. chunks-1 are stored here and downstream
}

struct WriteEnd {
  size @0 :UInt64;
  chunks @1 :UInt32;
}

struct WriteAck {
  blockId @0 :UInt64;
  size @1 :UInt64;
  stored @2 :List(Text);    # computers holding the committed block
  failures @3 :List(Text);  # "computer: why" for replicas that dropped out
}

struct DfsMessage {
  union {
    error @0 :Error;
    done @1 :Done;
    createFile @2 :CreateFile;
    createFileReply @3 :CreateFileReply;
    allocateBlock @4 :AllocateBlock;
    allocateBlockReply @5 :AllocateBlockReply;
    commitPartition @6 :CommitPartition;
    commitPartitionReply @7 :CommitPartitionReply;
    abandonFile @8 :AbandonFile;
    listFiles @9 :ListFiles;
    listFilesReply @10 :ListFilesReply;
    statFile @11 :StatFile;
    fileInfo @12 :FileInfo;
    deleteFile @13 :DeleteFile;
    deleteJobScratch @14 :DeleteJobScratch;
    deleteReply @15 :DeleteReply;
    reportBadReplica @16 :ReportBadReplica;
    blockReport @17 :BlockReport;
    blockReceived @18 :BlockReceived;
    badReplica @19 :BadReplica;
    replicationDone @20 :ReplicationDone;
    deleteBlocks @21 :DeleteBlocks;
    replicateBlock @22 :ReplicateBlock;
    readBlock @23 :ReadBlock;
    readHeader @24 :ReadHeader;
    writeBlock @25 :WriteBlock;
    chunkAck @26 :ChunkAck;
    writeEnd @27 :WriteEnd;
    writeAck @28 :WriteAck;
    commitPartitions @29 :CommitPartitions;
    openOutput @30 :OpenOutput;
    openOutputReply @31 :OpenOutputReply;
  }
}

# ---- the master's stored namespace (RocksDB values) -----------------------

struct PartitionRecord {
  committed @0 :Bool;
  blocks @1 :List(UInt64);
  targets @2 :List(Text);   # the partition's replica set, chosen at create
}

struct FileRecord {
  fileId @0 :UInt64;
  path @1 :Text;
  visible @2 :Bool;
  replication @3 :UInt32;
  placement @4 :Text;
  writer @5 :Text;
  scratchJob @6 :Text;
  partitions @7 :List(PartitionRecord);
  task @8 :UInt64;          # the task run that created it (0: none)
  attempt @9 :UInt32;
  outputJob @10 :Text;      # a pending output file of this job
}

struct BlockRecord {
  blockId @0 :UInt64;
  fileId @1 :UInt64;
  partition @2 :UInt32;
  size @3 :UInt64;
  committed @4 :Bool;
  replicas @5 :List(Text);
  task @6 :UInt64;          # the task run that allocated it (0: none)
  attempt @7 :UInt32;
}
