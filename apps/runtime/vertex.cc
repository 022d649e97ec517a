#include "apps/runtime/vertex.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "common/clock.h"
#include "common/net/auth.h"

namespace copse::apps {
namespace {

// A failure of an input read, as the reader should hear it.
Status InputError(const rootjob::InputRef& in, size_t i, const Status& s) {
  std::string what =
      in.from_file
          ? fmt::format("input {} (partition {} of {})", i, in.partition, in.path)
          : fmt::format("input {} (the output of {}[{}], {})", i, in.stage, in.index, in.path);
  return Status(s.code(), what + ": " + s.message());
}

}  // namespace

int64_t MarkStart() { return MonotonicNs(); }

int Vertex::FailEarly(const Status& s) {
  std::cerr << "vertex: " << s.ToString() << "\n";
  return s.code() == StatusCode::kInvalidArgument ? rootjob::kExitDoNotRetry : 1;
}

Vertex::Vertex(rootjob::VertexDescriptor d, int64_t started_ns) : d_(std::move(d)) {
  result_.started_ns = started_ns;
}

Vertex::~Vertex() = default;

Result<std::unique_ptr<Vertex>> Vertex::Open(int argc, char** argv, int64_t started_ns) {
  if (argc != 2) return InvalidArgument("usage: PROGRAM TASK_JSON (started by a worker)");
  std::ifstream in(argv[1]);
  if (!in) return NotFound(std::string("cannot read the task descriptor ") + argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  COPSE_ASSIGN_OR_RETURN(rootjob::VertexDescriptor d, rootjob::ParseDescriptor(text.str()));
  std::unique_ptr<Vertex> v(new Vertex(std::move(d), started_ns));
  v->params_ = nlohmann::json::parse(v->d_.params, nullptr, /*allow_exceptions=*/false);
  if (!v->params_.is_object()) return InvalidArgument("the stage's params are not an object");
  COPSE_ASSIGN_OR_RETURN(v->secret_, net::ReadSecretFd(v->d_.secret_fd));
  v->Delay();
  return v;
}

void Vertex::Delay() {
  auto it = params_.find("delay_s");
  if (it == params_.end()) return;
  double seconds = 0;
  if (it->is_number()) {
    seconds = it->get<double>();
  } else if (it->is_object() && it->value("index", -1) == d_.index &&
             it->value("version", d_.version) == d_.version) {
    seconds = it->value("seconds", 0.0);
  }
  if (seconds > 0) {
    std::cerr << fmt::format("delaying {:.1f} s as the parameters ask\n", seconds);
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
}

Status Vertex::Connect() {
  if (dfs_) return Status::Ok();
  COPSE_ASSIGN_OR_RETURN(ClusterConfig c, LoadClusterConfig(d_.config));
  config_ = std::make_unique<ClusterConfig>(std::move(c));
  dfs::DfsClientOptions o;
  o.computer = d_.computer;
  o.task_id = d_.task;
  o.attempt = d_.attempt;
  COPSE_ASSIGN_OR_RETURN(dfs_, dfs::DfsClient::Connect(*config_, secret_, o));
  return Status::Ok();
}

Result<const dfs::FileStatus*> Vertex::StatInput(size_t i) {
  const rootjob::InputRef& in = d_.inputs[i];
  const std::pair<std::string, int> key(in.path, std::max(in.partition, -1));
  auto it = stats_.find(key);
  if (it != stats_.end()) return &it->second;
  COPSE_RETURN_IF_ERROR(Connect());
  Result<dfs::FileStatus> st = dfs_->Stat(in.path, key.second);
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

Status Vertex::Read(size_t i, const std::function<Status(std::span<const uint8_t>)>& sink) {
  if (i >= d_.inputs.size()) return InvalidArgument(fmt::format("no input {}", i));
  const rootjob::InputRef& in = d_.inputs[i];
  bool stopped = false;  // the sink's own error: the program stopped reading
  auto reader = [&](std::span<const uint8_t> b) {
    Status r = sink(b);
    stopped = !r.ok();
    return r;
  };
  Status s = [&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(const dfs::FileStatus* st, StatInput(i));
    if (in.partition >= 0) return dfs_->ReadPartition(*st, in.partition, reader);
    for (int p = 0; p < static_cast<int>(st->partitions.size()); ++p) {
      COPSE_RETURN_IF_ERROR(dfs_->ReadPartition(*st, p, reader));
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
  if (s.code() == StatusCode::kDataLoss && !in.from_file) result_.input_lost = static_cast<int>(i);
  return InputError(in, i, s);
}

Status Vertex::ReadAll(size_t i, std::string* out) {
  return Read(i, [out](std::span<const uint8_t> b) {
    out->append(reinterpret_cast<const char*>(b.data()), b.size());
    return Status::Ok();
  });
}

Status Vertex::Write(int bucket, std::string_view bytes) {
  COPSE_RETURN_IF_ERROR(Connect());
  std::span<const uint8_t> data(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  result_.bytes_written += bytes.size();
  if (writes_output()) {
    if (output_done_) return Status::Ok();
    if (!output_open_) {
      COPSE_RETURN_IF_ERROR(dfs_->OpenOutputPartition(d_.output, d_.output_partition));
      output_open_ = true;
    }
    Status s = dfs_->Append(data);
    if (s.code() == StatusCode::kAlreadyExists) {
      // Another run of this vertex committed the partition first: this
      // run's output is not needed.
      output_done_ = true;
      return Status::Ok();
    }
    return s;
  }
  if (bucket < 0 || bucket >= d_.buckets) {
    return InvalidArgument(fmt::format("no bucket {} (this vertex writes {})", bucket, d_.buckets));
  }
  if (!buckets_) {
    COPSE_ASSIGN_OR_RETURN(buckets_, dfs::BucketWriter::Open(
                                         *dfs_, rootjob::ScratchFile(d_.scratch_prefix, d_.attempt),
                                         d_.buckets, d_.scratch_job));
  }
  return buckets_->Append(bucket, data);
}

Status Vertex::Commit() {
  if (writes_output()) {
    if (output_done_) return Status::Ok();
    if (!output_open_) {  // nothing written: the partition is empty, and committed all the same
      COPSE_RETURN_IF_ERROR(Connect());
      COPSE_RETURN_IF_ERROR(dfs_->OpenOutputPartition(d_.output, d_.output_partition));
      output_open_ = true;
    }
    Result<bool> r = dfs_->EndPartition();
    // Another run of this vertex committed the partition first: it is done.
    if (!r.ok() && r.status().code() != StatusCode::kAlreadyExists) return r.status();
    return Status::Ok();
  }
  if (d_.buckets == 0) return Status::Ok();
  if (!buckets_) {  // empty buckets still make the file its consumers look for
    COPSE_RETURN_IF_ERROR(Connect());
    COPSE_ASSIGN_OR_RETURN(buckets_, dfs::BucketWriter::Open(
                                         *dfs_, rootjob::ScratchFile(d_.scratch_prefix, d_.attempt),
                                         d_.buckets, d_.scratch_job));
  }
  COPSE_ASSIGN_OR_RETURN(std::vector<uint64_t> sizes, buckets_->Close());
  for (uint64_t b : sizes) result_.buckets.push_back(static_cast<int64_t>(b));
  return Status::Ok();
}

int Vertex::Finish(const Status& s) {
  Status end = s.ok() ? Commit() : s;
  if (dfs_) {
    result_.read_local = dfs_->counters().local;
    result_.read_rack = dfs_->counters().rack;
    result_.read_core = dfs_->counters().core;
  }
  int code = 0;
  if (!end.ok()) {
    result_.error = end.message();
    std::cerr << "vertex " << d_.stage << "[" << d_.index << "]: " << end.ToString() << "\n";
    if (result_.input_lost) {
      code = rootjob::kExitInputLost;
    } else if (end.code() == StatusCode::kInvalidArgument) {
      code = rootjob::kExitDoNotRetry;
    } else {
      code = 1;
    }
  }
  // The exit code says what the root should do even when the result cannot
  // be written (a full disk): the reason then goes to stderr, the task log.
  std::ofstream out(d_.result_file);
  out << rootjob::ResultToJson(result_) << "\n";
  out.close();
  if (!out) {
    std::cerr << "vertex " << d_.stage << "[" << d_.index << "]: cannot write its result file "
              << d_.result_file << ": " << std::strerror(errno) << "\n";
  }
  return code;
}

}  // namespace copse::apps
