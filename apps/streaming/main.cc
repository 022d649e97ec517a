// copse-stream: the streaming adapter (docs/sdk.md "Streaming vertices"). A
// worker runs it in place of a stage's program that does not link the
// vertex runtime, with the program's path in the descriptor ("exec"). It
// runs the program once, as Hadoop Streaming does:
//   - the program's stdin gets the run's input records: every input piece
//     in order, or, when the stage sorts ("sort" in the descriptor's
//     "streaming"), all of them merged in key order (an external merge sort
//     that spills to the working directory past [streaming] sort_memory_mb);
//   - its stdout is read as records of the stage's format, each written to
//     the bucket its key's partition gives (hash, or the stage's range
//     bounds), or to the run's partition of the job's output; with a
//     combiner, each bucket's records are sorted and run through it first;
//   - its stderr goes to the run's log.
// A record over [streaming] max_record_bytes, a program that cannot be
// started (not executable, a bad interpreter line), or one that exits
// non-zero or by a signal fails the run with a reason that says which.
// The program gets no credential: only its records, its working directory
// and COPSE_* variables naming the run.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <asio/io_context.hpp>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apps/runtime/records.h"
#include "apps/runtime/sorter.h"
#include "apps/runtime/vertex_internal.h"
#include "common/subprocess.h"
#include "common/text.h"
#include "copse/vertex.h"

namespace copse::apps {
namespace {

using Settings = StreamingSettings;

// Why `exec` could not be started, in words a user can act on.
Status StartError(const std::string& name, const std::string& exec, const Status& s) {
  std::string why = s.message();
  std::ifstream in(exec, std::ios::binary);
  std::string first;
  std::getline(in, first);
  if (::access(exec.c_str(), X_OK) != 0) {
    why = fmt::format("it is not executable ({})", std::strerror(errno));
  } else if (first.rfind("#!", 0) == 0 && s.code() == StatusCode::kNotFound) {
    why = fmt::format("its interpreter line '{}' names no program that exists",
                      EscapeForLog(Excerpt(first)));
  } else if (s.message().find("Exec format error") != std::string::npos) {
    why = "it is neither a program for this machine nor a script with an interpreter line";
  }
  return InvalidArgument(fmt::format("streaming program '{}' cannot be started: {}", name, why));
}

// Writes all of `bytes` to `fd`; false when the reader went away (EPIPE).
Result<bool> WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) return false;
    if (n < 0) return IoError(std::string("writing to the program: ") + std::strerror(errno));
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// A program between a feeder (a thread writing its stdin) and a record sink
// (its stdout, parsed on this thread).
class Pipeline {
 public:
  // Feeds the program through `write`, which returns false once the program
  // stopped reading.
  using Feeder = std::function<Status(const std::function<Result<bool>(std::string_view)>& write)>;
  using Sink = std::function<Status(const Record& r, std::string_view raw)>;

  static Status Run(Vertex& v, const std::string& name, const std::string& exec, const Settings& s,
                    const Feeder& feed, const Sink& sink) {
    int in[2];
    if (::pipe2(in, O_CLOEXEC) != 0) return IoError(std::string("pipe: ") + std::strerror(errno));
    asio::io_context io;
    SpawnOptions o;
    o.program = exec;
    o.stdin_null = false;
    o.pass_fds = {{in[0], 0}};
    o.out = SpawnOptions::Output::kPipe;
    o.err = SpawnOptions::Output::kInherit;
    o.death_signal = SIGKILL;
    o.env = ChildEnvironment(v, exec);
    auto child = Subprocess::Spawn(io, std::move(o));
    ::close(in[0]);
    if (!child.ok()) {
      ::close(in[1]);
      return StartError(name, exec, child.status());
    }
    RecordParser parser(s.format, s.max_record,
                        fmt::format("the output of streaming program '{}'", name));
    Status out_error;
    (*child)->set_on_output(
        [&](std::string_view bytes) {
          if (!out_error.ok()) return;
          out_error = parser.Feed(std::span<const uint8_t>(
                                      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
                                  [&](const Record& r) { return sink(r, parser.raw()); });
          if (!out_error.ok()) (void)(*child)->Signal(SIGKILL);
        },
        nullptr);
    Status feed_error;
    std::atomic<bool> stop_feeding{false};
    std::thread feeder([&] {
      const int fd = in[1];
      feed_error = feed([&](std::string_view b) -> Result<bool> {
        if (stop_feeding.load()) return false;
        return WriteAll(fd, b);
      });
      ::close(fd);
    });
    io.run();
    stop_feeding = true;
    feeder.join();
    if (out_error.ok())
      out_error = parser.End([&](const Record& r) { return sink(r, parser.raw()); });
    if (!out_error.ok()) {
      // A record over the limit is the program's doing: retrying cannot help.
      if (out_error.code() == StatusCode::kResourceExhausted) {
        return InvalidArgument(out_error.message());
      }
      return out_error;
    }
    const ExitStatus& st = *(*child)->exit_status();
    if (!st.ok()) {
      return Status(StatusCode::kUnavailable,
                    fmt::format("streaming program '{}' failed: {}", name, st.ToString()));
    }
    if (!feed_error.ok()) return feed_error;
    return Status::Ok();
  }
};

// Input and output records over the limit are the data's or the program's
// doing: retrying cannot help, so they fail the job (kInvalidArgument).
Status NoRetryIfTooLong(Status s) {
  if (s.code() == StatusCode::kResourceExhausted) return InvalidArgument(s.message());
  return s;
}

class Adapter {
 public:
  Adapter(Vertex& v, Settings s) : v_(v), s_(std::move(s)) {
    partitioner_ = s_.bounds.empty() ? HashPartitioner() : RangePartitioner(s_.bounds);
    const size_t buckets = static_cast<size_t>(std::max(1, v_.buckets()));
    out_.resize(buckets);
    // What a bucket buffers before it is written: 16 MiB over all buckets.
    flush_at_ = std::clamp<size_t>((16u << 20) / buckets, 4u << 10, 256u << 10);
    dir_ = WorkingDir(v_);
  }

  Status Run() {
    if (s_.sort) COPSE_RETURN_IF_ERROR(NoRetryIfTooLong(SortInputs()));
    if (!s_.combiner.empty() && v_.buckets() > 0) {
      // One sort for every bucket, the bucket first in each key: the
      // combiner's memory is the stage's, however many buckets it writes.
      combine_ = std::make_unique<ExternalSorter>(dir_, s_.sort_memory, "combine");
    }
    Status s = Pipeline::Run(
        v_, s_.program, s_.exec, s_, [this](const auto& write) { return Feed(write); },
        [this](const Record& r, std::string_view raw) { return Output(r, raw); });
    COPSE_RETURN_IF_ERROR(NoRetryIfTooLong(s));
    COPSE_RETURN_IF_ERROR(v_.Count("stream.records_in", static_cast<int64_t>(records_in_)));
    COPSE_RETURN_IF_ERROR(v_.Count("stream.records_out", static_cast<int64_t>(records_out_)));
    uint64_t spilled =
        (sorter_ ? sorter_->spilled_bytes() : 0) + (combine_ ? combine_->spilled_bytes() : 0);
    if (spilled > 0) {
      COPSE_RETURN_IF_ERROR(v_.Count("stream.spilled_bytes", static_cast<int64_t>(spilled)));
    }
    if (combine_) COPSE_RETURN_IF_ERROR(Combine());
    return FlushAll();
  }

 private:
  // Every input record, into the sorter (before the program starts).
  Status SortInputs() {
    sorter_ = std::make_unique<ExternalSorter>(dir_, s_.sort_memory, "input");
    uint64_t bytes = 0;
    for (size_t i = 0; i < v_.inputs(); ++i)
      bytes += static_cast<uint64_t>(std::max<int64_t>(v_.input(i).bytes, 0));
    sorter_->Expect(bytes);
    for (size_t i = 0; i < v_.inputs(); ++i) {
      RecordParser parser(s_.format, s_.max_record, fmt::format("input {}", i));
      auto add = [&](const Record& r) {
        ++records_in_;
        return sorter_->Add(r.key, r.value);
      };
      COPSE_RETURN_IF_ERROR(
          v_.Read(i, [&](std::span<const uint8_t> b) { return parser.Feed(b, add); }));
      COPSE_RETURN_IF_ERROR(parser.End(add));
    }
    return Status::Ok();
  }

  // On the feeder thread: the sorted records, or every piece as it is.
  Status Feed(const std::function<Result<bool>(std::string_view)>& write) {
    if (sorter_) {
      COPSE_ASSIGN_OR_RETURN(auto reader, sorter_->Sorted());
      std::string buf;
      Record r;
      while (true) {
        COPSE_ASSIGN_OR_RETURN(bool more, reader->Next(&r));
        if (!more) break;
        AppendParsedRecord(s_.format, r.key, r.value, &buf);
        if (buf.size() >= (1 << 16)) {
          COPSE_ASSIGN_OR_RETURN(bool open, write(buf));
          if (!open) return Status::Ok();  // the program stopped reading
          buf.clear();
        }
      }
      return buf.empty() ? Status::Ok() : write(buf).status();
    }
    std::unique_ptr<Vertex::InputReader> reader = v_.NewReader();
    bool open = true;
    for (size_t i = 0; i < v_.inputs() && open; ++i) {
      RecordParser count(s_.format, s_.max_record, fmt::format("input {}", i));
      auto none = [](const Record&) { return Status::Ok(); };
      char last = '\n';
      Status s = reader->Read(i, [&](std::span<const uint8_t> b) -> Status {
        if (b.empty()) return Status::Ok();
        COPSE_RETURN_IF_ERROR(count.Feed(b, none));
        last = static_cast<char>(b.back());
        COPSE_ASSIGN_OR_RETURN(
            open, write(std::string_view(reinterpret_cast<const char*>(b.data()), b.size())));
        return open ? Status::Ok() : Cancelled("the program stopped reading");
      });
      if (!s.ok() && s.code() != StatusCode::kCancelled) return NoRetryIfTooLong(s);
      COPSE_RETURN_IF_ERROR(count.End(none));
      records_in_ += count.records();
      // Pieces of text are lines: one that ends without '\n' gets one.
      if (open && s_.format == RecordFormat::kText && last != '\n') {
        COPSE_ASSIGN_OR_RETURN(open, write("\n"));
      }
    }
    return Status::Ok();
  }

  // A record of the program's output.
  Status Output(const Record& r, std::string_view raw) {
    ++records_out_;
    int bucket = 0;
    if (!v_.writes_output() && v_.buckets() > 0) bucket = partitioner_->Bucket(r.key, v_.buckets());
    if (combine_) {
      std::string key = BucketKey(bucket, r.key);
      return combine_->Add(key, r.value);
    }
    return Append(bucket, raw);
  }

  static std::string BucketKey(int bucket, std::string_view key) {
    std::string k(4, '\0');
    const auto b = static_cast<uint32_t>(bucket);
    k[0] = static_cast<char>(b >> 24);
    k[1] = static_cast<char>(b >> 16);
    k[2] = static_cast<char>(b >> 8);
    k[3] = static_cast<char>(b);
    k.append(key);
    return k;
  }
  static int BucketOf(std::string_view key) {
    const auto* u = reinterpret_cast<const unsigned char*>(key.data());
    return static_cast<int>((uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) |
                            (uint32_t{u[2]} << 8) | u[3]);
  }

  Status Append(int bucket, std::string_view raw) {
    std::string& o = out_[static_cast<size_t>(bucket)];
    o.append(raw);
    if (s_.format == RecordFormat::kText) o.push_back('\n');
    if (o.size() >= flush_at_) return Flush(bucket);
    return Status::Ok();
  }

  Status Flush(int bucket) {
    std::string& o = out_[static_cast<size_t>(bucket)];
    if (o.empty()) return Status::Ok();
    Status s = v_.Write(bucket, o);
    o.clear();
    return s;
  }

  Status FlushAll() {
    for (int b = 0; b < static_cast<int>(out_.size()); ++b) COPSE_RETURN_IF_ERROR(Flush(b));
    v_.CountRecords(records_out_);
    return Status::Ok();
  }

  // Each bucket's records, sorted, through the combiner into the bucket.
  Status Combine() {
    COPSE_ASSIGN_OR_RETURN(auto reader, combine_->Sorted());
    uint64_t combined = 0;
    Record pending;
    bool have_pending = false;
    while (true) {
      if (!have_pending) {
        COPSE_ASSIGN_OR_RETURN(bool more, reader->Next(&pending));
        if (!more) break;
        have_pending = true;
      }
      const int bucket = BucketOf(pending.key);
      // The combiner sees keys without their bucket.
      COPSE_RETURN_IF_ERROR(NoRetryIfTooLong(Pipeline::Run(
          v_, s_.combiner, s_.combiner_exec, s_,
          [&](const auto& write) -> Status {
            std::string buf;
            bool open = true;
            while (have_pending && BucketOf(pending.key) == bucket) {
              if (open) {
                AppendParsedRecord(s_.format, pending.key.substr(4), pending.value, &buf);
                if (buf.size() >= (1 << 16)) {
                  COPSE_ASSIGN_OR_RETURN(open, write(buf));
                  buf.clear();
                }
              }
              COPSE_ASSIGN_OR_RETURN(bool more, reader->Next(&pending));
              have_pending = more;
            }
            if (open && !buf.empty()) COPSE_RETURN_IF_ERROR(write(buf).status());
            return Status::Ok();
          },
          [&](const Record&, std::string_view raw) -> Status {
            ++combined;
            return Append(bucket, raw);
          })));
      COPSE_RETURN_IF_ERROR(Flush(bucket));
    }
    records_out_ = combined;
    return Status::Ok();
  }

  Vertex& v_;
  Settings s_;
  std::unique_ptr<Partitioner> partitioner_;
  std::filesystem::path dir_;
  std::unique_ptr<ExternalSorter> sorter_;   // the inputs, when the stage sorts
  std::unique_ptr<ExternalSorter> combine_;  // the output, when a combiner runs
  std::vector<std::string> out_;             // by bucket
  size_t flush_at_ = 256u << 10;
  uint64_t records_in_ = 0, records_out_ = 0;
};

}  // namespace
}  // namespace copse::apps

int main(int argc, char** argv) {
  const int64_t started = copse::apps::MarkStart();
  ::signal(SIGPIPE, SIG_IGN);  // a program that stops reading is seen as EPIPE
  auto v = copse::Vertex::Open(argc, argv, started);
  if (!v.ok()) return copse::Vertex::FailEarly(v.status());
  copse::Result<copse::apps::StreamingSettings> settings = copse::apps::StreamingOf(**v);
  if (!settings.ok()) return (*v)->Finish(settings.status());
  copse::apps::Adapter adapter(**v, std::move(*settings));
  return (*v)->Finish(adapter.Run());
}
