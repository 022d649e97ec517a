@0xd48f7a3c92e1b605;
# The job protocol (frames with protocol id 5, job): what `copse job ...`
# asks. Every request gets its reply or a JobError.
#
#   client -> master         submit, status, list, kill, where a job's logs are,
#                            the engine's latency samples (copse bench engine),
#                            the program store (copse app put|ls|show|rm)
#   client -> worker control a task's log
#
# Job documents travel as JSON: the master builds each once, and
# `copse job status --json` prints the same document the HTTP API serves.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("copse::proto");

struct JobError {
  code @0 :UInt16;          # a copse::StatusCode
  message @1 :Text;
}

struct SubmitJob {
  spec @0 :Text;            # the job spec, JSON (docs/jobs.md), at most 1 MiB
  requestId @1 :Text;       # the client's id for this submission (at most 64 bytes): a second
                            # submission with the same id gets the first one's job, so a
                            # client whose answer was lost can ask again
}

struct SubmitJobReply {
  jobId @0 :UInt64;
}

struct JobStatusRequest {
  jobId @0 :UInt64;
}

struct ListJobsRequest {
  unused @0 :Void;
}

struct KillJob {
  jobId @0 :UInt64;
}

struct KillJobReply {
  state @0 :Text;           # the job's state after the request
  alreadyOver @1 :Bool;     # it had finished already: nothing was killed
}

# Where a job's logs are: the document lists every run of its root and its
# vertices with the computer that ran it.
struct LogIndexRequest {
  jobId @0 :UInt64;
}

# The master's own measurements (scheduling decision latencies), for
# `copse bench engine`.
struct EngineStatsRequest {
  reset @0 :Bool;           # clear them after answering
}

# A document: status, list, log index or engine stats (JSON).
struct JobDocument {
  json @0 :Text;
}

# client -> worker control port: the log of one run of a task.
struct TaskLogRequest {
  jobId @0 :UInt64;
  taskId @1 :UInt64;
  attempt @2 :UInt32;
  maxBytes @3 :UInt64;      # the last maxBytes of it; 0: all (up to the frame limit)
}

struct TaskLogReply {
  data @0 :Data;
  truncated @1 :Bool;       # only the end of it
}

# `copse app put`, in two steps around the upload (docs/sdk.md): prepare
# (commit false) checks the put and answers the record to upload for (its
# version and path); commit records the uploaded file with its SHA-256.
struct AppPutRequest {
  name @0 :Text;
  version @1 :Text;         # empty (prepare): the next whole number
  size @2 :UInt64;
  entry @3 :Text;           # a .tar archive's entry point; empty: one executable
  shadow @4 :Bool;          # take the place of the apps directory's program
  sha256 @5 :Text;          # commit only
  commit @6 :Bool;
  executable @7 :Bool;      # a single file with its execute bit
}

struct AppListRequest {
  name @0 :Text;            # empty: every program
}

struct AppRemoveRequest {
  name @0 :Text;
  version @1 :Text;         # empty: every version
}

struct JobMessage {
  union {
    error @0 :JobError;
    submit @1 :SubmitJob;
    submitReply @2 :SubmitJobReply;
    status @3 :JobStatusRequest;
    list @4 :ListJobsRequest;
    kill @5 :KillJob;
    killReply @6 :KillJobReply;
    logIndex @7 :LogIndexRequest;
    document @8 :JobDocument;
    taskLog @9 :TaskLogRequest;
    taskLogReply @10 :TaskLogReply;
    engineStats @11 :EngineStatsRequest;
    appPut @12 :AppPutRequest;        # answered with a document: the record
    appList @13 :AppListRequest;      # {"programs": [...]}
    appRemove @14 :AppRemoveRequest;  # {"removed": [...]}
  }
}
