// The vertex runtime (copse/vertex.h), over the DFS client.
#include "copse/vertex.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "apps/runtime/records.h"
#include "apps/runtime/vertex_internal.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/json.h"
#include "common/net/auth.h"
#include "common/process.h"
#include "dfs/bucket_writer.h"
#include "dfs/client.h"
#include "rootjob/vertex_io.h"

namespace copse {
namespace {

// A failure of an input read, as the reader should hear it.
Status InputError(const rootjob::InputRef& in, size_t i, const Status& s) {
  std::string what =
      in.from_file
          ? fmt::format("input {} (partition {} of {})", i, in.partition, in.path)
          : fmt::format("input {} (the output of {}[{}], {})", i, in.stage, in.index, in.path);
  return Status(s.code(), what + ": " + s.message());
}

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

class Hash final : public Partitioner {
 public:
  int Bucket(std::string_view key, int buckets) const override {
    return static_cast<int>(Fnv1a(key) % static_cast<uint64_t>(buckets));
  }
};

class Range final : public Partitioner {
 public:
  explicit Range(std::vector<std::string> bounds) : bounds_(std::move(bounds)) {}
  int Bucket(std::string_view key, int buckets) const override {
    auto it = std::upper_bound(bounds_.begin(), bounds_.end(), key,
                               [](std::string_view k, const std::string& b) { return k < b; });
    return std::min(static_cast<int>(it - bounds_.begin()), buckets - 1);
  }

 private:
  std::vector<std::string> bounds_;
};

bool ValidCounterName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
  });
}

constexpr size_t kMaxCounters = 64;

}  // namespace

std::unique_ptr<Partitioner> HashPartitioner() { return std::make_unique<Hash>(); }
std::unique_ptr<Partitioner> RangePartitioner(std::vector<std::string> bounds) {
  return std::make_unique<Range>(std::move(bounds));
}

// The DFS side of a vertex: what reads inputs. The Vertex owns one; each
// InputReader another, for its own thread.
class InputSource {
 public:
  InputSource(const rootjob::VertexDescriptor& d, const ClusterConfig& config,
              const std::string& secret)
      : d_(d), config_(config), secret_(secret) {}

  Result<dfs::DfsClient*> Client() {
    if (!dfs_) {
      dfs::DfsClientOptions o;
      o.computer = d_.computer;
      o.task_id = d_.task;
      o.attempt = d_.attempt;
      COPSE_ASSIGN_OR_RETURN(dfs_, dfs::DfsClient::Connect(config_, secret_, o));
    }
    return dfs_.get();
  }

  // Reads piece `i`; sets *lost when an upstream output is gone.
  Status Read(size_t i, const Vertex::ByteSink& sink, std::optional<int>* lost) {
    if (i >= d_.inputs.size()) return InvalidArgument(fmt::format("no input {}", i));
    const rootjob::InputRef& in = d_.inputs[i];
    bool stopped = false;  // the sink's own error: the program stopped reading
    auto reader = [&](std::span<const uint8_t> b) {
      Status r = sink(b);
      stopped = !r.ok();
      return r;
    };
    Status s = [&]() -> Status {
      COPSE_ASSIGN_OR_RETURN(const dfs::FileStatus* st, Stat(i));
      COPSE_ASSIGN_OR_RETURN(dfs::DfsClient * c, Client());
      if (in.partition >= 0) return c->ReadPartition(*st, in.partition, reader);
      for (int p = 0; p < static_cast<int>(st->partitions.size()); ++p) {
        COPSE_RETURN_IF_ERROR(c->ReadPartition(*st, p, reader));
      }
      return Status::Ok();
    }();
    if (s.ok() || stopped) return s;
    if (in.from_file && dfs_ && s.code() != StatusCode::kInvalidArgument) {
      // Deleted while this vertex read it: its blocks went with it. Say so
      // rather than report the missing block.
      Result<dfs::FileStatus> again = dfs_->Stat(in.path);
      if (!again.ok() && again.status().code() == StatusCode::kNotFound) {
        return InvalidArgument("input file " + in.path + " no longer exists");
      }
    }
    if (s.code() == StatusCode::kDataLoss && !in.from_file) *lost = static_cast<int>(i);
    return InputError(in, i, s);
  }

  dfs::LocalityCounters counters() const {
    return dfs_ ? dfs_->counters() : dfs::LocalityCounters{};
  }

 private:
  Result<const dfs::FileStatus*> Stat(size_t i) {
    const rootjob::InputRef& in = d_.inputs[i];
    const std::pair<std::string, int> key(in.path, std::max(in.partition, -1));
    auto it = stats_.find(key);
    if (it != stats_.end()) return &it->second;
    COPSE_ASSIGN_OR_RETURN(dfs::DfsClient * c, Client());
    Result<dfs::FileStatus> st = c->Stat(in.path, key.second);
    if (!st.ok()) {
      if (st.status().code() == StatusCode::kNotFound && in.from_file) {
        return InvalidArgument("input file " + in.path + " no longer exists");
      }
      if (st.status().code() == StatusCode::kNotFound) {
        // The producer's output is gone altogether: it must run again.
        return DataLoss(st.status().message());
      }
      return st.status();
    }
    return &(stats_[key] = std::move(*st));
  }

  const rootjob::VertexDescriptor& d_;
  const ClusterConfig& config_;
  const std::string& secret_;
  std::unique_ptr<dfs::DfsClient> dfs_;
  // By (path, partition): an input of one partition asks for that one only
  // (-1: the whole file).
  std::map<std::pair<std::string, int>, dfs::FileStatus> stats_;
};

struct Vertex::Impl {
  rootjob::VertexDescriptor d;
  nlohmann::json params;
  std::string params_text;
  std::vector<VertexInput> inputs;
  std::string secret;
  std::unique_ptr<ClusterConfig> config;
  std::unique_ptr<InputSource> source;  // reads on the Vertex's thread, and writes
  std::unique_ptr<dfs::BucketWriter> buckets;
  std::unique_ptr<Partitioner> partitioner = HashPartitioner();
  RecordFormat format = RecordFormat::kText;
  std::string record;  // Emit's buffer
  bool output_open = false;
  bool output_done = false;  // another run committed the partition
  rootjob::VertexResult result;
  std::mutex readers_mu;
  dfs::LocalityCounters reader_counters;  // GUARDED_BY(readers_mu): of finished InputReaders
  int open_readers = 0;                   // GUARDED_BY(readers_mu)
  std::optional<int> reader_lost;         // GUARDED_BY(readers_mu)

  Status LoadConfig() {
    if (config) return Status::Ok();
    COPSE_ASSIGN_OR_RETURN(ClusterConfig c, LoadClusterConfig(d.config));
    config = std::make_unique<ClusterConfig>(std::move(c));
    return Status::Ok();
  }
  Result<dfs::DfsClient*> Dfs() {
    COPSE_RETURN_IF_ERROR(LoadConfig());
    if (!source) source = std::make_unique<InputSource>(d, *config, secret);
    return source->Client();
  }
  void Delay();
  Status Commit();
};

void Vertex::Impl::Delay() {
  auto it = params.find("delay_s");
  if (it == params.end()) return;
  double seconds = 0;
  if (it->is_number()) {
    seconds = it->get<double>();
  } else if (it->is_object() && it->value("index", -1) == d.index &&
             it->value("version", d.version) == d.version) {
    seconds = it->value("seconds", 0.0);
  }
  if (seconds > 0) {
    std::cerr << fmt::format("delaying {:.1f} s as the parameters ask\n", seconds);
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
}

Vertex::Vertex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Vertex::~Vertex() = default;

int Vertex::FailEarly(const Status& s) {
  std::cerr << "vertex: " << s.ToString() << "\n";
  return s.code() == StatusCode::kInvalidArgument ? kExitDoNotRetry : kExitRetry;
}

Result<std::unique_ptr<Vertex>> Vertex::Open(int argc, char** argv, int64_t started_ns) {
  if (started_ns == 0) started_ns = MonotonicNs();
  if (argc != 2) return InvalidArgument("usage: PROGRAM TASK_JSON (started by a worker)");
  std::ifstream in(argv[1]);
  if (!in) return NotFound(std::string("cannot read the task descriptor ") + argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  auto impl = std::make_unique<Impl>();
  impl->result.started_ns = started_ns;
  COPSE_ASSIGN_OR_RETURN(impl->d, rootjob::ParseDescriptor(text.str()));
  if (impl->d.contract != 0 && impl->d.contract != kVertexContract) {
    return InvalidArgument(fmt::format(
        "this program was built for vertex contract {}, but its worker speaks contract {}",
        kVertexContract, impl->d.contract));
  }
  impl->params = nlohmann::json::parse(impl->d.params, nullptr, /*allow_exceptions=*/false);
  if (!impl->params.is_object()) return InvalidArgument("the stage's params are not an object");
  impl->params_text = impl->d.params;
  for (const rootjob::InputRef& r : impl->d.inputs) {
    impl->inputs.push_back({r.input, r.from_file, r.path, r.partition, r.stage, r.index, r.bytes});
  }
  COPSE_ASSIGN_OR_RETURN(impl->secret, net::ReadSecretFd(impl->d.secret_fd));
  impl->Delay();
  return std::unique_ptr<Vertex>(new Vertex(std::move(impl)));
}

uint64_t Vertex::job() const { return impl_->d.job; }
const std::string& Vertex::job_name() const { return impl_->d.job_name; }
const std::string& Vertex::stage() const { return impl_->d.stage; }
int Vertex::index() const { return impl_->d.index; }
int Vertex::version() const { return impl_->d.version; }
uint32_t Vertex::attempt() const { return impl_->d.attempt; }
const std::string& Vertex::computer() const { return impl_->d.computer; }
const std::string& Vertex::program() const { return impl_->d.program; }
const std::string& Vertex::result_file() const { return impl_->d.result_file; }
const std::string& Vertex::params_json() const { return impl_->params_text; }

std::optional<std::string> Vertex::StringParam(std::string_view name) const {
  auto it = impl_->params.find(name);
  if (it == impl_->params.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}
std::optional<double> Vertex::NumberParam(std::string_view name) const {
  auto it = impl_->params.find(name);
  if (it == impl_->params.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}
std::optional<bool> Vertex::BoolParam(std::string_view name) const {
  auto it = impl_->params.find(name);
  if (it == impl_->params.end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

size_t Vertex::inputs() const { return impl_->inputs.size(); }
const VertexInput& Vertex::input(size_t i) const { return impl_->inputs.at(i); }

Status Vertex::Read(size_t i, const ByteSink& sink) {
  COPSE_RETURN_IF_ERROR(impl_->Dfs().status());
  return impl_->source->Read(i, sink, &impl_->result.input_lost);
}

Status Vertex::ReadAll(size_t i, std::string* out) {
  return Read(i, [out](std::span<const uint8_t> b) {
    out->append(reinterpret_cast<const char*>(b.data()), b.size());
    return Status::Ok();
  });
}

Status Vertex::ReadLines(size_t i, const LineSink& sink) {
  apps::RecordParser p(RecordFormat::kText, max_record_bytes(), fmt::format("input {}", i));
  auto each = [&](const Record&) { return sink(p.raw()); };
  COPSE_RETURN_IF_ERROR(Read(i, [&](std::span<const uint8_t> b) { return p.Feed(b, each); }));
  return p.End(each);
}

Status Vertex::ReadRecords(size_t i, RecordFormat format, const RecordSink& sink) {
  apps::RecordParser p(format, max_record_bytes(), fmt::format("input {}", i));
  COPSE_RETURN_IF_ERROR(Read(i, [&](std::span<const uint8_t> b) { return p.Feed(b, sink); }));
  return p.End(sink);
}

namespace {
class Reader final : public Vertex::InputReader {
 public:
  Reader(const rootjob::VertexDescriptor& d, const ClusterConfig& config, const std::string& secret,
         std::mutex& mu, dfs::LocalityCounters& counters, int& open, std::optional<int>& lost)
      : source_(d, config, secret), mu_(mu), counters_(counters), open_(open), lost_(lost) {}
  ~Reader() override {
    std::lock_guard<std::mutex> l(mu_);
    dfs::LocalityCounters c = source_.counters();
    counters_.local += c.local;
    counters_.rack += c.rack;
    counters_.core += c.core;
    if (lost_in_) lost_ = lost_in_;
    --open_;
  }
  Status Read(size_t i, const Vertex::ByteSink& sink) override {
    return source_.Read(i, sink, &lost_in_);
  }

 private:
  InputSource source_;
  std::mutex& mu_;
  dfs::LocalityCounters& counters_;
  int& open_;
  std::optional<int>& lost_;
  std::optional<int> lost_in_;
};
}  // namespace

std::unique_ptr<Vertex::InputReader> Vertex::NewReader() {
  Status s = impl_->LoadConfig();
  if (!s.ok()) {
    // Every read reports why.
    class Failing final : public InputReader {
     public:
      explicit Failing(Status s) : s_(std::move(s)) {}
      Status Read(size_t, const ByteSink&) override { return s_; }

     private:
      Status s_;
    };
    return std::make_unique<Failing>(s);
  }
  std::lock_guard<std::mutex> l(impl_->readers_mu);
  ++impl_->open_readers;
  return std::make_unique<Reader>(impl_->d, *impl_->config, impl_->secret, impl_->readers_mu,
                                  impl_->reader_counters, impl_->open_readers, impl_->reader_lost);
}

int Vertex::buckets() const { return impl_->d.buckets; }
bool Vertex::writes_output() const { return !impl_->d.output.empty(); }
void Vertex::set_partitioner(std::unique_ptr<Partitioner> p) { impl_->partitioner = std::move(p); }
void Vertex::set_output_format(RecordFormat f) { impl_->format = f; }
void Vertex::CountRecords(uint64_t n) { impl_->result.records_written += n; }

Status Vertex::Count(std::string_view name, int64_t delta) {
  if (!ValidCounterName(name)) {
    return InvalidArgument(fmt::format(
        "counter name '{}': use 1 to 64 of a-z, 0-9, '_', '.' and '-'", std::string(name)));
  }
  auto& c = impl_->result.counters;
  auto it = c.find(std::string(name));
  if (it == c.end()) {
    if (c.size() >= kMaxCounters) {
      return InvalidArgument(fmt::format("more than {} counters in one run", kMaxCounters));
    }
    it = c.emplace(std::string(name), 0).first;
  }
  it->second += delta;
  return Status::Ok();
}

Status Vertex::Write(int bucket, std::string_view bytes) {
  COPSE_ASSIGN_OR_RETURN(dfs::DfsClient * dfs, impl_->Dfs());
  Impl& m = *impl_;
  std::span<const uint8_t> data(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  m.result.bytes_written += bytes.size();
  if (writes_output()) {
    if (m.output_done) return Status::Ok();
    if (!m.output_open) {
      COPSE_RETURN_IF_ERROR(dfs->OpenOutputPartition(m.d.output, m.d.output_partition));
      m.output_open = true;
    }
    Status s = dfs->Append(data);
    if (s.code() == StatusCode::kAlreadyExists) {
      // Another run of this vertex committed the partition first: this
      // run's output is not needed.
      m.output_done = true;
      return Status::Ok();
    }
    return s;
  }
  if (bucket < 0 || bucket >= m.d.buckets) {
    return InvalidArgument(
        fmt::format("no bucket {} (this vertex writes {})", bucket, m.d.buckets));
  }
  if (!m.buckets) {
    COPSE_ASSIGN_OR_RETURN(
        m.buckets,
        dfs::BucketWriter::Open(*dfs, rootjob::ScratchFile(m.d.scratch_prefix, m.d.attempt),
                                m.d.buckets, m.d.scratch_job));
  }
  return m.buckets->Append(bucket, data);
}

Status Vertex::Emit(std::string_view key, std::string_view value) {
  Impl& m = *impl_;
  m.record.clear();
  if (Status s = apps::AppendRecord(m.format, key, value, &m.record, "Emit"); !s.ok()) {
    return s.WithContext(fmt::format("record {}", m.result.records_written + 1));
  }
  int bucket = 0;
  if (!writes_output() && m.d.buckets > 0) bucket = m.partitioner->Bucket(key, m.d.buckets);
  COPSE_RETURN_IF_ERROR(Write(bucket, m.record));
  ++m.result.records_written;
  return Status::Ok();
}

Status Vertex::Impl::Commit() {
  if (!d.output.empty()) {
    if (output_done) return Status::Ok();
    COPSE_ASSIGN_OR_RETURN(dfs::DfsClient * dfs, Dfs());
    if (!output_open) {  // nothing written: the partition is empty, and committed all the same
      COPSE_RETURN_IF_ERROR(dfs->OpenOutputPartition(d.output, d.output_partition));
      output_open = true;
    }
    Result<bool> r = dfs->EndPartition();
    // Another run of this vertex committed the partition first: it is done.
    if (!r.ok() && r.status().code() != StatusCode::kAlreadyExists) return r.status();
    return Status::Ok();
  }
  if (d.buckets == 0) return Status::Ok();
  if (!buckets) {  // empty buckets still make the file its consumers look for
    COPSE_ASSIGN_OR_RETURN(dfs::DfsClient * dfs, Dfs());
    COPSE_ASSIGN_OR_RETURN(
        buckets, dfs::BucketWriter::Open(*dfs, rootjob::ScratchFile(d.scratch_prefix, d.attempt),
                                         d.buckets, d.scratch_job));
  }
  COPSE_ASSIGN_OR_RETURN(std::vector<uint64_t> sizes, buckets->Close());
  for (uint64_t b : sizes) result.buckets.push_back(static_cast<int64_t>(b));
  return Status::Ok();
}

int Vertex::Finish(const Status& s) {
  Impl& m = *impl_;
  Status end = s.ok() ? m.Commit() : s;
  dfs::LocalityCounters c = m.source ? m.source->counters() : dfs::LocalityCounters{};
  {
    std::lock_guard<std::mutex> l(m.readers_mu);
    c.local += m.reader_counters.local;
    c.rack += m.reader_counters.rack;
    c.core += m.reader_counters.core;
    if (!m.result.input_lost) m.result.input_lost = m.reader_lost;
  }
  m.result.read_local = c.local;
  m.result.read_rack = c.rack;
  m.result.read_core = c.core;
  int code = kExitOk;
  if (!end.ok()) {
    m.result.error = end.message();
    std::cerr << "vertex " << m.d.stage << "[" << m.d.index << "]: " << end.ToString() << "\n";
    if (m.result.input_lost) {
      code = kExitInputLost;
    } else if (end.code() == StatusCode::kInvalidArgument) {
      code = kExitDoNotRetry;
    } else {
      code = kExitRetry;
    }
  }
  // The exit code says what the root should do even when the result cannot
  // be written (a full disk): the reason then goes to stderr, the task log.
  std::ofstream out(m.d.result_file);
  out << rootjob::ResultToJson(m.result) << "\n";
  out.close();
  if (!out) {
    std::cerr << "vertex " << m.d.stage << "[" << m.d.index << "]: cannot write its result file "
              << m.d.result_file << ": " << std::strerror(errno) << "\n";
  }
  return code;
}

int RunVertex(int argc, char** argv, const std::function<Status(Vertex&)>& body) {
  const int64_t started = MonotonicNs();
  Result<std::unique_ptr<Vertex>> v = Vertex::Open(argc, argv, started);
  if (!v.ok()) return Vertex::FailEarly(v.status());
  return (*v)->Finish(body(**v));
}

// ---- what the engine's own programs know besides -------------------------

struct VertexInternals {
  static Vertex::Impl& Of(const Vertex& v) { return *v.impl_; }
};

namespace apps {

int64_t MarkStart() { return MonotonicNs(); }

const rootjob::VertexDescriptor& DescriptorOf(const Vertex& v) { return VertexInternals::Of(v).d; }
const nlohmann::json& ParamsOf(const Vertex& v) { return VertexInternals::Of(v).params; }

std::filesystem::path WorkingDir(const Vertex& v) {
  return std::filesystem::path(VertexInternals::Of(v).d.result_file).parent_path();
}

Result<StreamingSettings> StreamingOf(Vertex& v) {
  auto& m = VertexInternals::Of(v);
  if (m.d.exec.empty()) {
    return InvalidArgument("the descriptor names no program to stream (started by hand?)");
  }
  COPSE_RETURN_IF_ERROR(m.LoadConfig());
  StreamingSettings s;
  s.program = m.d.program;
  s.exec = m.d.exec;
  s.combiner = m.d.streaming.combiner;
  s.combiner_exec = m.d.combiner_exec;
  if (!s.combiner.empty() && s.combiner_exec.empty()) {
    return InvalidArgument(fmt::format("combiner '{}' was not found on this computer", s.combiner));
  }
  if (m.d.streaming.format == "binary") {
    s.format = RecordFormat::kBinary;
  } else if (m.d.streaming.format != "text") {
    return InvalidArgument(fmt::format("unknown streaming format '{}'", m.d.streaming.format));
  }
  s.sort = m.d.streaming.sort;
  s.bounds = m.d.streaming.bounds;
  s.sort_memory = m.config->streaming.sort_memory_bytes;
  s.max_record = m.config->streaming.max_record_bytes;
  return s;
}

std::vector<std::string> ChildEnvironment(const Vertex& v, const std::string& exec) {
  // What a program needs of the worker's environment to find its tools and
  // speak its language; nothing else of the shell that started the worker
  // (a PYTHONUNBUFFERED there made every record a write of its own).
  std::vector<std::string> env = ProgramEnvironment();
  const rootjob::VertexDescriptor& d = VertexInternals::Of(v).d;
  env.push_back("COPSE_JOB=" + std::to_string(d.job));
  env.push_back("COPSE_JOB_NAME=" + d.job_name);
  env.push_back("COPSE_STAGE=" + d.stage);
  env.push_back("COPSE_INDEX=" + std::to_string(d.index));
  env.push_back("COPSE_VERSION=" + std::to_string(d.version));
  env.push_back("COPSE_ATTEMPT=" + std::to_string(d.attempt));
  env.push_back("COPSE_COMPUTER=" + d.computer);
  env.push_back("COPSE_PARAMS=" + VertexInternals::Of(v).params_text);
  env.push_back("COPSE_PROGRAM_DIR=" + std::filesystem::path(exec).parent_path().string());
  return env;
}

}  // namespace apps
}  // namespace copse
