// copse/job.h: job graphs built in code, in Dryad's vocabulary (docs/sdk.md).
// A Stage is N copies of a program; graphs are composed from stages and
// smaller graphs by connecting one graph's outputs to another's inputs:
//   a >= b    pointwise: vertex i of each output stage of a feeds vertex i
//             of each input stage of b (Dryad's >=);
//   a >> b    all-to-all: every vertex of a writes one bucket for every
//             vertex of b (Dryad's complete bipartite >>);
//   Gather(a, b), Broadcast(a, b): every vertex of a into b's one vertex;
//             a's one vertex into every vertex of b;
//   a || b    both graphs side by side (Dryad's merge), stages of the same
//             name being the same stage.
// A graph's inputs are the stages with nothing upstream in it, its outputs
// the stages nothing reads from. Files enter with Input(path) and leave with
// WriteTo(path). A JobSpec names a graph and the job's settings, and turns
// it into the JSON job spec `copse job submit` takes: the one definition of
// a spec, checked by the same parser the master runs.
//
//   copse::Graph map = copse::Input("/logs") >= copse::Stage("match", "grep-count");
//   copse::Graph job = map >> (copse::Stage("sum", "grep-count") ^ 2);
//   copse::JobSpec spec("grep", job.WriteTo("/matches"));
//   copse::Result<std::string> json = spec.ToJson();
//
// Thread-safety: plain values.
#pragma once

#include <copse/status.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace copse {

class Graph;

enum class Connection { kPointwise, kAllToAll, kGather, kBroadcast };

// How a stage runs a program that does not link the vertex runtime
// (docs/sdk.md "Streaming vertices"); the spec's "streaming" object.
struct StreamingOptions {
  std::string format = "text";  // "text" or "binary" (RecordFormat)
  // "auto": sorted when an input comes from another stage through an
  // all-to-all or gather connection; "yes" or "no".
  std::string sort = "auto";
  std::string combiner;                    // a program run on each bucket, sorted; empty: none
  std::vector<std::string> range_bounds;   // a range partitioner's bounds; empty: hash
};

class Stage {
 public:
  // `name`: 1 to 64 of [A-Za-z0-9_.-]; `program`: NAME or NAME@VERSION.
  Stage(std::string name, std::string program);

  // How many vertices (0, the default: as many as its pointwise input has).
  Stage& Copies(int n);
  // A parameter of the stage's "params" object (replacing one of that name).
  Stage& Param(std::string_view name, std::string_view value);
  Stage& Param(std::string_view name, const char* value);
  Stage& Param(std::string_view name, double value);
  Stage& Param(std::string_view name, int64_t value);
  Stage& Param(std::string_view name, int value);
  Stage& Param(std::string_view name, bool value);
  Stage& Streaming(StreamingOptions options);

  const std::string& name() const { return name_; }

 private:
  friend class Graph;
  friend class JobSpec;
  friend Graph operator||(const Graph& a, const Graph& b);
  struct Input_ {
    std::string file;  // or
    std::string stage;
    Connection connection = Connection::kPointwise;
  };
  std::string name_, program_;
  int copies_ = 0;
  std::map<std::string, std::string> params_;  // name -> JSON text
  bool streaming_ = false;
  StreamingOptions streaming_options_;
  std::vector<Input_> inputs_;
  std::string output_;
};

// `copies` copies of a stage (Dryad's ^). C++ binds ^ more loosely than >=
// and >>: write `a >> (Stage(...) ^ 4)`.
Stage operator^(Stage stage, int copies);

class Graph {
 public:
  Graph(Stage stage);  // NOLINT(google-explicit-constructor): a stage is a graph of one
  // The graph's output stages write the DFS file `path`, one partition per
  // vertex. REQUIRES: the graph has one output stage.
  Graph WriteTo(std::string path) const;

  friend Graph operator>=(const Graph& a, const Graph& b);
  friend Graph operator>>(const Graph& a, const Graph& b);
  friend Graph operator||(const Graph& a, const Graph& b);
  friend Graph Gather(const Graph& a, const Graph& b);
  friend Graph Broadcast(const Graph& a, const Graph& b);
  friend Graph Input(std::string path);
  friend class JobSpec;

 private:
  Graph() = default;
  static Graph Connect(const Graph& a, const Graph& b, Connection c);
  std::vector<Stage> stages_;       // in the order they were added
  std::vector<std::string> files_;  // an Input(path) graph: the file, as its only output
  std::vector<std::string> Outputs() const;
  std::vector<std::string> Inputs() const;
  std::string error_;  // the first mistake made building it, reported by ToJson
};

Graph operator>=(const Graph& a, const Graph& b);
Graph operator>>(const Graph& a, const Graph& b);
Graph operator||(const Graph& a, const Graph& b);
// A DFS file as the input of a graph: `Input(p) >= s` gives each vertex of
// s one partition of p; `Gather(Input(p), s)` every partition to s's one
// vertex; `Broadcast(Input(p), s)` the whole file to every vertex. (A file
// is not read all-to-all.)
Graph Input(std::string path);
Graph Gather(const Graph& a, const Graph& b);
Graph Broadcast(const Graph& a, const Graph& b);

class JobSpec {
 public:
  JobSpec(std::string name, Graph graph);
  JobSpec& Attempts(int n);               // failed runs of a vertex before the job fails
  JobSpec& VertexTimeout(double seconds);  // wall-clock limit of each run
  JobSpec& Pool(std::string name);        // the fair-share pool (HFS)

  // The JSON job spec. kInvalidArgument naming the stage and the problem
  // for a graph the master would refuse (cycles, unknown programs' names,
  // connections that do not fit their vertex counts, a graph built wrong).
  Result<std::string> ToJson() const;

 private:
  std::string name_;
  Graph graph_;
  int attempts_ = 0;
  double vertex_timeout_s_ = 0;
  std::string pool_;
};

}  // namespace copse
