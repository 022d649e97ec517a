// The engine's task vocabulary, shared by the master, the workers and the
// root tasks (proto/scheduling.capnp carries it): launching and killing a
// task, how a run ended, what a worker runs, what a root is told about its
// tasks, and the preferred computers and racks a root submits a vertex with.
// Plain values, with their conversions to and from the wire in tasks.cc.
// Thread-safety: plain data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"

namespace copse {

// A program of the program store as a job pinned it at submission
// (docs/sdk.md): every run of the job runs exactly this content.
struct ProgramRef {
  std::string name;    // "NAME@VERSION", as the job's stages name it
  std::string sha256;  // 64 lower-case hex digits
  std::string path;    // its DFS file
  uint64_t size = 0;
  std::string entry;       // an archive's entry point; empty: one executable
  bool executable = true;  // a single file put with its execute bit
};

// master -> worker: run this task.
struct LaunchRequest {
  uint64_t task = 0;
  uint32_t attempt = 0;  // starts of this task so far, this one included
  uint64_t job = 0;
  uint32_t incarnation = 0;
  bool root = false;                 // the job's root task (copse-rootjob)
  std::string program;               // vertices: a name in the apps directory
  std::string descriptor;            // JSON object for the program
  Duration timeout{0};               // 0: the worker's own limit
  std::string label;                 // "count[3] v2"
  std::vector<ProgramRef> programs;  // the job's pinned programs (vertices)
};

// A vertex run's label, "STAGE[INDEX] vVERSION" (roots write it, the master
// and the HTTP API read it back).
struct VertexLabel {
  std::string stage;
  int index = 0;
  uint32_t version = 0;
};
std::string FormatVertexLabel(const VertexLabel& l);
// False for anything else (a root's "root", a malformed label).
bool ParseVertexLabel(const std::string& label, VertexLabel* out);

enum class ExitKind { kCompleted, kFailed, kKilled, kStartFailed };
const char* ExitKindName(ExitKind k);

// worker -> master: how a run ended.
struct TaskExitReport {
  uint64_t task = 0;
  uint32_t attempt = 0;
  uint64_t job = 0;
  bool root = false;
  ExitKind kind = ExitKind::kFailed;
  int exit_code = -1;
  int signal = 0;
  std::string reason;  // "exit code 3", "timed out after 30.0 s", ...
  std::string log_tail;
  std::string result;  // the vertex's result document (JSON), or empty
  Duration run{0};
  int64_t launch_us = -1;  // launch received -> the program's first line; -1 unknown
  int64_t spawn_us = -1;   // launch received -> the program exec'd (part of launch_us)
};

// worker -> master at registration: a task it runs.
struct RunningTaskReport {
  uint64_t task = 0;
  uint32_t attempt = 0;
  uint64_t job = 0;
  uint32_t incarnation = 0;
  bool root = false;
  Duration running{0};
  std::string label;
  // As launched, so that an adopting master can start it again.
  std::string program;
  std::string descriptor;
  Duration timeout{0};
};

// A vertex's input locality by computer and rack name (docs/design.md §5).
struct NamedLocality {
  struct Place {
    std::string name;
    int64_t rack_bytes = 0;
    int64_t core_bytes = 0;
  };
  int64_t worst_rack_bytes = 0;
  int64_t worst_core_bytes = 0;
  std::vector<Place> computers;
  std::vector<Place> racks;
};

// root -> master: a vertex to run.
struct VertexTaskRequest {
  std::string program;
  std::string descriptor;
  std::string label;
  NamedLocality locality;
  Duration timeout{0};  // 0: the worker's limit
};

enum class TaskEventKind { kStarted, kCompleted, kFailed, kPreempted, kLost, kWithdrawn };
const char* TaskEventKindName(TaskEventKind k);

// master -> root: what happened to one of its tasks.
struct TaskEvent {
  uint64_t task = 0;
  TaskEventKind kind = TaskEventKind::kStarted;
  uint32_t attempt = 0;
  std::string computer;
  std::string reason;
  std::string log_tail;
  std::string result;
  int exit_code = -1;
};

}  // namespace copse
