// copse/vertex.h: the vertex runtime, what a vertex program links to run on
// a Copse cluster (docs/sdk.md). This header states the vertex contract,
// version COPSE_VERTEX_CONTRACT.
//
// How a program is started. A worker runs a stage's program once per vertex
// run, as
//   PROGRAM TASK_JSON
// in a working directory of its own (where TASK_JSON, the descriptor, lies;
// the program may keep scratch files there), with the run's credential on
// descriptor 3. The credential is opaque: Vertex::Open reads it and presents
// it to the cluster, and a program never looks at it. stdout and stderr go
// to the run's log (`copse job logs`), whose last lines become the reason a
// failed run gives.
//
// What it is handed: the job, stage, vertex index and version, the attempt,
// the computer it runs on, the stage's parameters (a JSON object from the
// job spec), its input pieces (a partition of a DFS file, or one bucket of
// an upstream vertex's output) and where its output goes: B buckets, one
// for each downstream vertex (Write(b, ...), or Emit through a
// Partitioner), or one partition of the job's output file (Write(0, ...)).
//
// How it ends: Finish(status) commits what was written when the status is
// ok, writes the result document the job's root reads (counters, bucket
// sizes, a lost input) and returns the exit code for main() to return:
//   0   (kExitOk)          done;
//   65  (kExitDoNotRetry)  bad parameters or input data (a Status of
//                          kInvalidArgument): the job fails at once;
//   75  (kExitInputLost)   an upstream output is gone (Read says so): its
//                          producer runs again, then this vertex;
//   1   (kExitRetry)       anything else: the job's root retries the run.
// A run that is killed (preempted, a duplicate that lost, a job killed)
// gets SIGTERM and, after a grace period, SIGKILL; what it wrote is dropped.
// A run's output counts only once Finish committed it: another run of the
// same vertex may have committed first, and then this run's output is
// dropped silently (the first finisher wins).
//
//   #include <copse/vertex.h>
//   int main(int argc, char** argv) {
//     return copse::RunVertex(argc, argv, [](copse::Vertex& v) -> copse::Status {
//       for (size_t i = 0; i < v.inputs(); ++i) {
//         COPSE_RETURN_IF_ERROR(v.ReadLines(i, [&](std::string_view line) {
//           return v.Emit(line, "1");
//         }));
//       }
//       return copse::Status::Ok();
//     });
//   }
//
// Every program honours the reserved parameter "delay_s" (seconds to wait
// before Open returns; or {"index": I, "version": V, "seconds": S} for one
// vertex's run of one version): a way to make stragglers for tests.
//
// Thread-safety: a Vertex belongs to one thread, except that an InputReader
// (NewReader) may read on a second thread while the first writes.
#pragma once

#include <copse/status.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// The version of the vertex contract this header describes. A worker
// refuses to run a program built against another version, saying so.
#define COPSE_VERTEX_CONTRACT 1

namespace copse {

inline constexpr int kVertexContract = COPSE_VERTEX_CONTRACT;

inline constexpr int kExitOk = 0;
inline constexpr int kExitRetry = 1;
inline constexpr int kExitDoNotRetry = 65;
inline constexpr int kExitInputLost = 75;

namespace vertex_contract {
// Marks the binary of every program that includes this header with the
// contract it was built against; the worker reads the mark before it runs
// the program. A program without it runs as a streaming vertex.
#define COPSE_VERTEX_MARK_STR_(x) #x
#define COPSE_VERTEX_MARK_(x) "copse-vertex-contract=" COPSE_VERTEX_MARK_STR_(x) ";"
[[gnu::used, gnu::retain]] inline constexpr char kMark[] = COPSE_VERTEX_MARK_(COPSE_VERTEX_CONTRACT);
}  // namespace vertex_contract

// One input piece of a run.
struct VertexInput {
  int input = 0;          // which of the stage's inputs, in the spec's order
  bool from_file = true;  // a partition of a DFS file, else an upstream run's output
  std::string path;       // the DFS file (for an upstream run: its scratch file)
  int partition = 0;      // the file's partition, or the upstream bucket (-1: every bucket)
  std::string stage;      // the upstream stage and vertex, when !from_file
  int index = 0;
  int64_t bytes = 0;  // its size as the job's root knows it
};

// A record: a key and a value, both byte strings. Views into the reader's
// buffer, valid only during the callback that receives them.
struct Record {
  std::string_view key;
  std::string_view value;
};

// How records are laid out as bytes:
//   kText    one record per line: the key, then (when the value is not
//            empty) a TAB and the value, then '\n'. Reading, a line without
//            a TAB is a key with an empty value; a last line without '\n'
//            counts. Keys hold no TAB or '\n', values no '\n'.
//   kBinary  per record: the key's length (4 bytes, big-endian), the key,
//            the value's length (4 bytes, big-endian), the value.
enum class RecordFormat { kText, kBinary };

// Which bucket a key goes to. Implementations are pure functions of the key.
class Partitioner {
 public:
  virtual ~Partitioner() = default;
  // REQUIRES: buckets >= 1. Returns a bucket in [0, buckets).
  virtual int Bucket(std::string_view key, int buckets) const = 0;
};

// FNV-1a (64-bit) of the key modulo the bucket count.
std::unique_ptr<Partitioner> HashPartitioner();
// Bucket i takes the keys k with bounds[i-1] <= k < bounds[i] (byte order);
// bucket 0 everything below bounds[0], the last bucket everything from the
// last bound on. A key past the bucket count goes to the last bucket.
// REQUIRES: bounds sorted ascending.
std::unique_ptr<Partitioner> RangePartitioner(std::vector<std::string> bounds);

class Vertex {
 public:
  using ByteSink = std::function<Status(std::span<const uint8_t>)>;
  using LineSink = std::function<Status(std::string_view line)>;
  using RecordSink = std::function<Status(const Record&)>;

  // Reads the descriptor named by argv[1] and the credential on descriptor
  // 3, and honours "delay_s". `started_ns` (CLOCK_MONOTONIC, 0: now) is
  // when the program's own code began, for the launch latency the job
  // reports. kInvalidArgument for a program not started by a worker, a
  // descriptor of another contract version or parameters that are not a
  // JSON object.
  static Result<std::unique_ptr<Vertex>> Open(int argc, char** argv, int64_t started_ns = 0);
  // For a program whose Open failed: prints why on stderr, returns the exit
  // code (kExitDoNotRetry for kInvalidArgument, else kExitRetry).
  static int FailEarly(const Status& s);
  ~Vertex();
  Vertex(const Vertex&) = delete;
  Vertex& operator=(const Vertex&) = delete;

  // ---- who this run is
  uint64_t job() const;
  const std::string& job_name() const;
  const std::string& stage() const;
  int index() const;    // the vertex's index in its stage
  int version() const;  // 0 for its first execution; more when re-executed
  uint32_t attempt() const;
  const std::string& computer() const;
  const std::string& program() const;  // as the spec names it
  // Where the descriptor asks the result document to go (the working
  // directory's result.json).
  const std::string& result_file() const;

  // ---- parameters: the stage's "params" object
  const std::string& params_json() const;
  // The parameter `name` when it is a string (number, boolean); nullopt
  // when it is absent or of another type.
  std::optional<std::string> StringParam(std::string_view name) const;
  std::optional<double> NumberParam(std::string_view name) const;
  std::optional<bool> BoolParam(std::string_view name) const;

  // ---- inputs
  // The run's input pieces. A piece the root knows to be empty is left out,
  // so tell pieces apart by input(i).input and .index, not by position.
  size_t inputs() const;
  const VertexInput& input(size_t i) const;

  // Streams piece `i` into `sink` as it arrives, in order, cut anywhere. A
  // sink that returns an error stops the read, and Read returns that error
  // (how a program reads only part of a piece). kDataLoss: an upstream
  // output is gone (Finish then exits kExitInputLost); kInvalidArgument: an
  // input file no longer exists.
  Status Read(size_t i, const ByteSink& sink);
  Status ReadAll(size_t i, std::string* out);
  // Piece `i` line by line, without the '\n' (a last line without one
  // counts). kResourceExhausted for a line over max_record_bytes().
  Status ReadLines(size_t i, const LineSink& sink);
  // Piece `i` as records of `format`. kInvalidArgument for a truncated
  // binary record; kResourceExhausted for one over max_record_bytes().
  Status ReadRecords(size_t i, RecordFormat format, const RecordSink& sink);
  // The longest record or line the readers accept (1 MiB).
  static constexpr size_t max_record_bytes() { return size_t{1} << 20; }

  // Reads the inputs on another thread: while it does, this Vertex may
  // write on its own thread. Every reader's byte counts go into the result.
  // REQUIRES: the reader is destroyed before Finish.
  class InputReader {
   public:
    virtual ~InputReader() = default;
    virtual Status Read(size_t i, const ByteSink& sink) = 0;
  };
  std::unique_ptr<InputReader> NewReader();

  // ---- outputs
  // Buckets to write (0 when the run writes the job's output, or nothing).
  int buckets() const;
  bool writes_output() const;
  // Appends bytes to bucket `bucket`, or (bucket 0) to the run's partition
  // of the job's output. kInvalidArgument for a bucket out of range.
  Status Write(int bucket, std::string_view bytes);
  // Appends one record in the output format to the bucket the partitioner
  // gives its key (or to the output partition), and counts it.
  // kInvalidArgument for a record the text format cannot hold.
  Status Emit(std::string_view key, std::string_view value);
  // Defaults: HashPartitioner(), RecordFormat::kText.
  void set_partitioner(std::unique_ptr<Partitioner> partitioner);
  void set_output_format(RecordFormat format);

  // ---- counters
  // Adds `delta` to the counter `name` (1 to 64 of [a-z0-9_.-]); the job's
  // status shows every counter summed over its completed runs. At most 64
  // names per run; kInvalidArgument otherwise.
  Status Count(std::string_view name, int64_t delta = 1);
  // Records written (Emit counts its own).
  void CountRecords(uint64_t n);

  // Commits what was written when `s` is ok, writes the result document,
  // returns the exit code (see the top of this file).
  int Finish(const Status& s);

 private:
  struct Impl;
  friend struct VertexInternals;  // the engine's own programs; not part of the contract
  explicit Vertex(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Open, then `body`, then Finish: main() in one call.
int RunVertex(int argc, char** argv, const std::function<Status(Vertex&)>& body);

}  // namespace copse
