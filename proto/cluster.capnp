@0xe3735d7d3ba855e9;
# Cluster membership: workers register with the master and send heartbeats on
# the connection they opened; clients ask the master for the cluster's state.
# Frames carry protocol id 2 (cluster).

using Cxx = import "/capnp/c++.capnp";
using Sched = import "scheduling.capnp";
$Cxx.namespace("copse::proto");

# worker -> master, first message after authentication (and again whenever
# the master asks the worker to re-register).
struct RegisterRequest {
  computer @0 :Text;       # the computer's name in the cluster config
  rack @1 :Text;
  slots @2 :UInt32;
  host @3 :Text;
  controlPort @4 :UInt16;
  dataPort @5 :UInt16;
  incarnation @6 :UInt64;  # random per worker process; tells restarts apart
  pid @7 :UInt32;
  # The scheduling protocol it speaks (Sched.schedulingProtocolVersion); a
  # worker of another version is refused with a reason saying so.
  protocolVersion @8 :UInt32;
  runningTasks @9 :List(Sched.RunningTask);  # tasks it runs now (a master re-adopts them)
  endedTasks @10 :List(Sched.TaskExit);      # exits the master has not acknowledged
}

# master -> worker
struct RegisterReply {
  accepted @0 :Bool;
  reason @1 :Text;                 # why it was refused
  heartbeatIntervalMs @2 :UInt32;  # how often to send heartbeats
}

# worker -> master, every heartbeat interval once registered.
struct Heartbeat {
  incarnation @0 :UInt64;
  busySlots @1 :UInt32;
}

# master -> worker, only when the master no longer counts this worker as live
# (it timed out): reregister is set and the worker must register again. A
# heartbeat of a live worker gets no reply.
struct HeartbeatReply {
  reregister @0 :Bool;
}

# client -> master
struct StatusRequest {
  unused @0 :Void;
}

struct ComputerStatus {
  name @0 :Text;
  rack @1 :Text;
  slots @2 :UInt32;
  state @3 :Text;                  # "live", "dead", "unknown" (never registered)
  host @4 :Text;
  lastHeartbeatAgoMs @5 :Int64;    # -1 when none was ever received
  pid @6 :UInt32;                  # the worker process, when known
  busySlots @7 :UInt32;
  draining @8 :Bool;               # being drained (copse cluster drain)
  # While draining: committed DFS blocks it holds that no live computer
  # that is not draining holds (lost if it died now), and those with fewer
  # than their factor of such copies (the sole ones included).
  soleBlocks @9 :UInt32;
  shortBlocks @10 :UInt32;
}

# master -> client
struct ClusterStatus {
  clusterName @0 :Text;
  masterPid @1 :UInt32;
  uptimeMs @2 :Int64;
  computers @3 :List(ComputerStatus);
  # Committed DFS blocks with fewer live replicas than their factor.
  underReplicatedBlocks @4 :UInt32;
}

# client -> master: begin (drain) or end (not drain) draining a computer.
# Safe to send twice.
struct DrainRequest {
  computer @0 :Text;
  drain @1 :Bool;
  moveTasks @2 :Bool;  # kill its running worker tasks so that they run elsewhere
}

# master -> client
struct DrainReply {
  code @0 :UInt16;   # 0: done; else the StatusCode of the refusal
  message @1 :Text;  # why it was refused, or a warning when done
}

struct ClusterMessage {
  union {
    register @0 :RegisterRequest;
    registerReply @1 :RegisterReply;
    heartbeat @2 :Heartbeat;
    heartbeatReply @3 :HeartbeatReply;
    statusRequest @4 :StatusRequest;
    status @5 :ClusterStatus;
    drainRequest @6 :DrainRequest;
    drainReply @7 :DrainReply;
  }
}
