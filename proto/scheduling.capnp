@0xc1d6a0e2b5f47a93;
# The scheduling protocol (frames with protocol id 3, scheduling). Two
# conversations use it:
#
#   master <-> worker  on the worker's registration connection: the master
#                      launches and kills tasks (a job's root task or a
#                      vertex); the worker reports each start and each exit,
#                      and keeps an exit until the master acknowledges it (a
#                      master that restarts hears of it when the worker
#                      registers again, cluster.capnp).
#   root   <-> master  a job's root task (copse-rootjob) on its own
#                      connection: it says hello, submits vertex tasks with
#                      their locality, withdraws them, reports its vertices'
#                      states and says when the job is over; the master tells
#                      it of every start and end of its tasks.
#
# Requests that expect an answer (RootHello, SubmitTasks, JobOver) get their
# reply or an Error; everything else is a notice.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("copse::proto");

# Bumped whenever a message changes meaning; a worker of another version is
# refused at registration.
const schedulingProtocolVersion :UInt32 = 1;

struct SchedError {
  code @0 :UInt16;          # a copse::StatusCode
  message @1 :Text;
}

# ---- master -> worker ----------------------------------------------------

struct LaunchTask {
  taskId @0 :UInt64;
  attempt @1 :UInt32;       # starts of this task so far, this one included
  jobId @2 :UInt64;
  incarnation @3 :UInt32;   # the job's restarts so far
  root @4 :Bool;            # the job's root task (program copse-rootjob)
  program @5 :Text;         # a name in the worker's apps directory (vertices)
  descriptor @6 :Text;      # JSON for the program; the worker adds its own fields
  timeoutMs @7 :UInt64;     # wall-clock limit asked by the job; 0: the worker's own
  label @8 :Text;           # "count[3] v2", for logs and status
  programs @9 :List(ProgramRef);  # the job's programs of the program store, as pinned
}

# A program of the program store as a job pinned it (docs/sdk.md).
struct ProgramRef {
  name @0 :Text;            # "NAME@VERSION", as the job's stages name it
  sha256 @1 :Text;          # of its content, 64 hex digits
  path @2 :Text;            # its DFS file (/.apps/NAME/VERSION)
  size @3 :UInt64;
  entry @4 :Text;           # a .tar archive's entry point; empty: one executable
  executable @5 :Bool;      # a single file put with its execute bit
}

struct KillTask {
  taskId @0 :UInt64;
  attempt @1 :UInt32;
  reason @2 :Text;          # "preempted", "withdrawn", "job killed", ...
}

struct ExitAck {
  taskId @0 :UInt64;
  attempt @1 :UInt32;
}

# A job is over: the worker keeps its tasks' logs and working directories for
# the configured time, then removes them.
struct JobEnded {
  jobId @0 :UInt64;
}

# ---- worker -> master ----------------------------------------------------

struct TaskStarted {
  taskId @0 :UInt64;
  attempt @1 :UInt32;
  pid @2 :UInt32;
}

enum ExitKind {
  completed @0;             # exit code 0
  failed @1;                # any other end the task caused (exit code, signal, a limit)
  killed @2;                # killed because the master asked
  startFailed @3;           # could not be started for a reason of this worker's
}

struct TaskExit {
  taskId @0 :UInt64;
  attempt @1 :UInt32;
  jobId @2 :UInt64;
  root @3 :Bool;
  kind @4 :ExitKind;
  exitCode @5 :Int32;       # -1 when it did not exit by itself
  signal @6 :Int32;
  reason @7 :Text;          # "exit code 3", "timed out after 30 s", "memory limit ..."
  logTail @8 :Text;         # the end of its stdout and stderr
  result @9 :Text;          # the vertex's result document (JSON), or empty
  runMs @10 :UInt64;        # from start to exit
  launchUs @11 :Int64;      # launch message received -> the program's first line ran; -1 unknown
  spawnUs @12 :Int64;       # launch message received -> the program exec'd (part of launchUs); -1 unknown
}

# A task this worker runs, as it re-registers.
struct RunningTask {
  taskId @0 :UInt64;
  attempt @1 :UInt32;
  jobId @2 :UInt64;
  incarnation @3 :UInt32;
  root @4 :Bool;
  runningMs @5 :UInt64;     # how long it has been running
  label @6 :Text;
  # What it was launched with, so that a master that adopts it can start it
  # again (after a preemption) as it was.
  program @7 :Text;
  descriptor @8 :Text;
  timeoutMs @9 :UInt64;
}

# ---- root <-> master -----------------------------------------------------

# root -> master, first on its connection (and again after reconnecting).
struct RootHello {
  jobId @0 :UInt64;
  incarnation @1 :UInt32;
  taskId @2 :UInt64;        # the root's own task id
  liveTasks @3 :List(UInt64);  # tasks it submitted that have not ended, as far as it knows
}

enum TaskStateOnMaster {
  waiting @0;               # submitted, not started
  running @1;
  unknown @2;               # the master does not know it (lost in a master restart): submit again
}

struct TaskState {
  taskId @0 :UInt64;
  state @1 :TaskStateOnMaster;
  attempt @2 :UInt32;
  computer @3 :Text;
}

# master -> root
struct RootWelcome {
  spec @0 :Text;            # the job spec (JSON)
  jobName @1 :Text;
  tasks @2 :List(TaskState);  # what became of liveTasks
}

struct PreferredComputer {
  computer @0 :Text;
  rackBytes @1 :Int64;      # read across its rack switch if placed there
  coreBytes @2 :Int64;      # read across the core switch if placed there
}

struct PreferredRack {
  rack @0 :Text;
  rackBytes @1 :Int64;
  coreBytes @2 :Int64;
}

struct Locality {
  worstRackBytes @0 :Int64;
  worstCoreBytes @1 :Int64;
  computers @2 :List(PreferredComputer);
  racks @3 :List(PreferredRack);
}

struct VertexTask {
  program @0 :Text;
  descriptor @1 :Text;      # JSON: the vertex, its parameters, inputs and outputs
  label @2 :Text;           # "count[3] v2"
  locality @3 :Locality;
  timeoutMs @4 :UInt64;     # the job's wall-clock limit per run; 0: the worker's
}

struct SubmitTasks {
  tasks @0 :List(VertexTask);
}

struct SubmitTasksReply {
  taskIds @0 :List(UInt64); # one per submitted task, in order
}

# The loser of a duplicate race, or a consumer whose input was lost: removed
# if it waits, killed if it runs. A TaskEvent (withdrawn, or its end) follows.
struct WithdrawTask {
  taskId @0 :UInt64;
}

# root -> master: its vertices' states, for `copse job status` (JSON).
struct JobProgress {
  json @0 :Text;
}

# root -> master: the job is over; the master publishes its outputs (on
# success) and answers JobOverReply, then the root exits.
struct JobOver {
  succeeded @0 :Bool;
  reason @1 :Text;          # why it failed
  progress @2 :Text;        # the final JobProgress document
}

struct JobOverReply {
  unused @0 :Void;
}

enum TaskEventKind {
  started @0;
  completed @1;
  failed @2;
  preempted @3;             # killed by the scheduler; it waits to start again
  lost @4;                  # gone without a verdict (its computer died)
  withdrawn @5;             # a withdrawal took effect
}

# master -> root: what happened to one of its tasks.
struct TaskEvent {
  taskId @0 :UInt64;
  kind @1 :TaskEventKind;
  attempt @2 :UInt32;
  computer @3 :Text;
  reason @4 :Text;
  logTail @5 :Text;
  result @6 :Text;          # the vertex's result document (completed, failed)
  exitCode @7 :Int32;
}

struct SchedulingMessage {
  union {
    error @0 :SchedError;
    launchTask @1 :LaunchTask;
    killTask @2 :KillTask;
    exitAck @3 :ExitAck;
    jobEnded @4 :JobEnded;
    taskStarted @5 :TaskStarted;
    taskExit @6 :TaskExit;
    rootHello @7 :RootHello;
    rootWelcome @8 :RootWelcome;
    submitTasks @9 :SubmitTasks;
    submitTasksReply @10 :SubmitTasksReply;
    withdrawTask @11 :WithdrawTask;
    jobProgress @12 :JobProgress;
    jobOver @13 :JobOver;
    jobOverReply @14 :JobOverReply;
    taskEvent @15 :TaskEvent;
  }
}
