#include "client/job_commands.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "apps/catalog.h"
#include "client/command.h"
#include "client/fs_commands.h"
#include "client/master_client.h"
#include "client/terminal.h"
#include "common/net/auth.h"
#include "common/net/blocking_client.h"
#include "common/net/message.h"
#include "dfs/client.h"
#include "proto/job.capnp.h"

namespace copse::client {
namespace {

using Json = nlohmann::json;
constexpr auto kTimeout = std::chrono::seconds(30);
constexpr size_t kMaxSpecBytes = 1 << 20;

int Fail(const std::string& what, const Status& s) { return ReportFailure(what, s); }

std::string Bytes(int64_t n) {
  if (n < 10'000) return fmt::format("{} B", n);
  if (n < 10'000'000) return fmt::format("{:.1f} kB", n / 1e3);
  if (n < 10'000'000'000) return fmt::format("{:.1f} MB", n / 1e6);
  return fmt::format("{:.1f} GB", n / 1e9);
}

// A text field of a document from the master, as a terminal may show it.
std::string Str(const Json& j) { return j.is_string() ? Shown(j.get<std::string>()) : "-"; }

void PrintStatus(const Json& d) {
  std::cout << fmt::format("job {} ({}): {}", d["id"].get<uint64_t>(), Str(d["name"]),
                           Str(d["state"]));
  if (d["incarnation"].get<int>() > 0) {
    std::cout << fmt::format(", restarted {} time(s)", d["incarnation"].get<int>());
  }
  std::cout << "\n";
  std::cout << fmt::format("submitted {}  admitted {}  finished {}  elapsed {:.1f} s\n",
                           Str(d["submitted"]), Str(d["admitted"]), Str(d["finished"]),
                           d["elapsed_s"].get<double>());
  if (!Str(d["failure"]).empty()) std::cout << "failure: " << Str(d["failure"]) << "\n";
  std::cout << fmt::format("vertices: {} of {} done\n", d["vertices"]["done"].get<int>(),
                           d["vertices"]["total"].get<int>());
  if (!d["stages"].empty()) {
    std::cout << fmt::format("{:<16} {:>8} {:>8} {:>6} {:>9} {:>8} {:>6} {:>7} {:>11}\n", "STAGE",
                             "VERTICES", "WAITING", "READY", "SUBMITTED", "RUNNING", "DONE",
                             "FAILED", "FAILED RUNS");
    for (const Json& s : d["stages"]) {
      std::cout << fmt::format("{:<16} {:>8} {:>8} {:>6} {:>9} {:>8} {:>6} {:>7} {:>11}\n",
                               Str(s["name"]), s.value("vertices", 0), s.value("waiting", 0),
                               s.value("ready", 0), s.value("submitted", 0), s.value("running", 0),
                               s.value("done", 0), s.value("failed", 0), s.value("failed_runs", 0));
    }
  }
  const Json& r = d["runs"];
  std::cout << fmt::format(
      "runs: {} launched, {} completed, {} failed, {} preempted, {} lost, {} withdrawn, {} "
      "duplicates\n",
      r.value("launched", 0), r.value("completed", 0), r.value("failed", 0),
      r.value("preempted", 0), r.value("lost", 0), r.value("withdrawn", 0),
      d.value("duplicates", 0));
  const Json& b = d["bytes_read"];
  std::cout << fmt::format(
      "read: {} local, {} within the rack, {} across the core; wrote {} "
      "({} records)\n",
      Bytes(b.value("local", int64_t{0})), Bytes(b.value("rack", int64_t{0})),
      Bytes(b.value("core", int64_t{0})), Bytes(d.value("bytes_written", int64_t{0})),
      d.value("records_written", int64_t{0}));
}

bool Terminal(const std::string& state) {
  return state == "succeeded" || state == "failed" || state == "killed";
}

// Polls the job until it is over; a progress bar on a terminal, a line per
// change otherwise. 0 when it succeeded.
int Wait(MasterClient& master, uint64_t job) {
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  std::string last;
  // Asked often while the job moves, less while it does not: a job's end
  // is seen within a few tens of milliseconds of a change, and a long job
  // costs the master a request every half second.
  auto poll = std::chrono::milliseconds(20);
  while (true) {
    Result<std::string> doc = master.JobStatus(job);
    if (!doc.ok()) return Fail("job wait", doc.status());
    Json d = Json::parse(*doc);
    std::string state = d["state"];
    int done = d["vertices"]["done"], total = d["vertices"]["total"];
    double elapsed = d["elapsed_s"];
    std::string line = fmt::format("job {}: {}, {}/{} vertices", job, state, done, total);
    if (tty) {
      const int width = 30;
      int filled = total > 0 ? done * width / total : 0;
      std::cerr << fmt::format("\r[{}{}] {}, {:.1f} s  ", std::string(filled, '#'),
                               std::string(width - filled, '.'), line, elapsed)
                << std::flush;
    } else if (line != last) {
      std::cerr << line << "\n";
    }
    poll = line != last ? std::chrono::milliseconds(20)
                        : std::min(poll * 2, std::chrono::milliseconds(tty ? 200 : 500));
    last = line;
    if (Terminal(state)) {
      if (tty) std::cerr << "\n";
      if (state == "succeeded") {
        std::cerr << fmt::format("job {} succeeded in {:.1f} s\n", job, elapsed);
        return 0;
      }
      std::string why = Str(d["failure"]);
      std::cerr << fmt::format("job {} {}: {}\n", job, state, why.empty() ? "(no reason)" : why);
      return 1;
    }
    std::this_thread::sleep_for(poll);
  }
}

int SubmitAndMaybeWait(const ClusterConfig& config, const std::string& spec, const JobOptions& o,
                       const std::string& what) {
  auto master = ConnectMaster(config, o.master_wait);
  if (!master.ok()) return Fail(what, master.status());
  Result<uint64_t> id = (*master)->SubmitJob(spec);
  if (!id.ok()) return Fail(what, id.status());
  std::cout << *id << std::endl;
  if (!o.wait) return 0;
  return Wait(**master, *id);
}

// The log of one run, from the worker that ran it.
Result<std::string> FetchLog(const std::string& secret, const Json& run, uint64_t job) {
  std::string host = run["host"], computer = run["computer"];
  uint16_t port = run["control_port"];
  if (port == 0) return NotFound("no computer '" + computer + "' in the config");
  COPSE_ASSIGN_OR_RETURN(
      auto ch, net::BlockingChannel::Connect(host, port, secret, "copse client", kTimeout));
  capnp::MallocMessageBuilder msg;
  auto r = msg.initRoot<proto::JobMessage>().initTaskLog();
  r.setJobId(job);
  r.setTaskId(run["task"].get<uint64_t>());
  r.setAttempt(run["attempt"].get<uint32_t>());
  COPSE_RETURN_IF_ERROR(
      ch->Send(net::Protocol::kJob, net::PayloadKind::kMessage, net::EncodeMessage(msg), kTimeout));
  COPSE_ASSIGN_OR_RETURN(net::Frame f, ch->Receive(kTimeout));
  std::string out;
  COPSE_RETURN_IF_ERROR(net::GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(f));
    auto root = reader->getRoot<proto::JobMessage>();
    if (root.which() == proto::JobMessage::ERROR) {
      return NotFound(root.getError().getMessage());
    }
    if (root.which() != proto::JobMessage::TASK_LOG_REPLY) return Corruption("unexpected reply");
    auto data = root.getTaskLogReply().getData();
    out.assign(reinterpret_cast<const char*>(data.begin()), data.size());
    if (root.getTaskLogReply().getTruncated()) out = "[...]\n" + out;
    return Status::Ok();
  }));
  return out;
}

// "count[3] v2" matches "count" and "count[3]".
bool Matches(const std::string& label, bool root, const std::string& want) {
  if (want.empty()) return true;
  if (want == "root") return root;
  if (root) return false;
  if (want.find('[') != std::string::npos) return label.rfind(want + " ", 0) == 0;
  return label.rfind(want + "[", 0) == 0;
}

}  // namespace

int JobSubmit(const ClusterConfig& config, const JobOptions& o) {
  std::string spec;
  if (o.spec_file == "-") {
    std::stringstream s;
    s << std::cin.rdbuf();
    spec = s.str();
  } else {
    std::ifstream in(o.spec_file, std::ios::binary);
    if (!in) {
      return Fail("job submit", NotFound("cannot read the spec file '" + o.spec_file + "'"));
    }
    std::stringstream s;
    s << in.rdbuf();
    spec = s.str();
  }
  if (spec.size() > kMaxSpecBytes) {
    return Fail("job submit", InvalidArgument(fmt::format("{}: {} bytes is over the 1 MiB limit "
                                                          "for a job spec",
                                                          o.spec_file, spec.size())));
  }
  return SubmitAndMaybeWait(config, spec, o, "job submit");
}

int JobStatus(const ClusterConfig& config, const JobOptions& o) {
  auto master = ConnectMaster(config, o.master_wait);
  if (!master.ok()) return Fail("job status", master.status());
  Result<std::string> doc = (*master)->JobStatus(o.job);
  if (!doc.ok()) return Fail("job status", doc.status());
  if (o.json) {
    std::cout << *doc << "\n";
  } else {
    PrintStatus(Json::parse(*doc));
  }
  return 0;
}

int JobList(const ClusterConfig& config, const JobOptions& o) {
  auto master = ConnectMaster(config, o.master_wait);
  if (!master.ok()) return Fail("job list", master.status());
  Result<std::string> doc = (*master)->ListJobs();
  if (!doc.ok()) return Fail("job list", doc.status());
  if (o.json) {
    std::cout << *doc << "\n";
    return 0;
  }
  Json d = Json::parse(*doc);
  std::cout << fmt::format("{:>5}  {:<20} {:<10} {:<24} {:>9} {:>11}\n", "ID", "NAME", "STATE",
                           "SUBMITTED", "ELAPSED", "VERTICES");
  for (const Json& j : d["jobs"]) {
    std::cout << fmt::format("{:>5}  {:<20} {:<10} {:<24} {:>8.1f}s {:>5}/{:<5}\n",
                             j["id"].get<uint64_t>(), Str(j["name"]), Str(j["state"]),
                             Str(j["submitted"]), j["elapsed_s"].get<double>(),
                             j["vertices"]["done"].get<int>(), j["vertices"]["total"].get<int>());
  }
  return 0;
}

int JobWait(const ClusterConfig& config, const JobOptions& o) {
  auto master = ConnectMaster(config, o.master_wait);
  if (!master.ok()) return Fail("job wait", master.status());
  return Wait(**master, o.job);
}

int JobKill(const ClusterConfig& config, const JobOptions& o) {
  auto master = ConnectMaster(config, o.master_wait);
  if (!master.ok()) return Fail("job kill", master.status());
  auto k = (*master)->KillJob(o.job);
  if (!k.ok()) return Fail("job kill", k.status());
  if (k->already_over) {
    std::cout << fmt::format("job {} was already over ({}); nothing to kill\n", o.job, k->state);
  } else {
    std::cout << fmt::format("job {} killed\n", o.job);
  }
  return 0;
}

int JobLogs(const ClusterConfig& config, const JobOptions& o) {
  auto master = ConnectMaster(config, o.master_wait);
  if (!master.ok()) return Fail("job logs", master.status());
  Result<std::string> doc = (*master)->LogIndex(o.job);
  if (!doc.ok()) return Fail("job logs", doc.status());
  auto secret = net::LoadSecret(config.secret_file);
  if (!secret.ok()) return Fail("job logs", secret.status());
  Json index = Json::parse(*doc);
  int shown = 0;
  for (const Json& run : index["runs"]) {
    std::string label = run["label"];
    if (!Matches(label, run["root"], o.vertex)) continue;
    ++shown;
    std::string reason = Str(run["reason"]);
    std::cout << fmt::format("==> {} (task {} attempt {}) on {}: {}{} <==\n", Shown(label),
                             run["task"].get<uint64_t>(), run["attempt"].get<uint32_t>(),
                             Str(run["computer"]), Str(run["state"]),
                             reason.empty() ? "" : " (" + reason + ")");
    Result<std::string> log = FetchLog(*secret, run, o.job);
    if (log.ok()) {
      std::cout << ForStdout(*log);
      if (!log->empty() && log->back() != '\n') std::cout << "\n";
    } else {
      std::cout << "(" << Shown(log.status().message()) << ")\n";
    }
  }
  if (shown == 0 && !o.vertex.empty()) {
    return Fail("job logs", NotFound(fmt::format("job {} has no run of '{}'", o.job, o.vertex)));
  }
  return 0;
}

int JobHistory(const ClusterConfig& config, const JobOptions& o) {
  auto master = ConnectMaster(config, o.master_wait);
  if (!master.ok()) return Fail("job history", master.status());
  Result<std::string> doc = (*master)->LogIndex(o.job);
  if (!doc.ok()) return Fail("job history", doc.status());
  if (o.json) {
    std::cout << *doc << "\n";
    return 0;
  }
  Json index = Json::parse(*doc);
  std::cout << fmt::format("{:<24} {:>7} {:>7} {:<10} {:<10} {}\n", "RUN", "TASK", "ATTEMPT",
                           "COMPUTER", "STATE", "REASON");
  for (const Json& run : index["runs"]) {
    std::cout << fmt::format("{:<24} {:>7} {:>7} {:<10} {:<10} {}\n", Str(run["label"]),
                             run["task"].get<uint64_t>(), run["attempt"].get<uint32_t>(),
                             Str(run["computer"]), Str(run["state"]), Str(run["reason"]));
  }
  return 0;
}

int Run(const ClusterConfig& config, const JobOptions& o) {
  apps::RunOptions r;
  r.inputs = o.inputs;
  r.output = o.output;
  r.partitions = o.partitions;
  r.name = o.name;
  r.streaming.mapper = o.mapper;
  r.streaming.reducer = o.reducer;
  r.streaming.combiner = o.combiner;
  r.streaming.reducers = o.reducers;
  r.streaming.format = o.format;
  r.streaming.range_bounds = o.range_bounds;
  // The builders size some stages by their inputs' partitions: ask the name
  // service (a missing input is reported here, before anything is submitted).
  auto dfs = ConnectDfs(config, "", o.master_wait);
  if (!dfs.ok()) return Fail("run", dfs.status());
  for (const std::string& input : r.inputs) {
    Result<dfs::FileStatus> st = (*dfs)->Stat(input);
    if (!st.ok()) return Fail("run " + o.app, st.status().WithContext("--input " + input));
    r.input_partitions.push_back(static_cast<int>(st->partitions.size()));
  }
  Result<std::string> spec = apps::BuildJobSpec(o.app, r);
  if (!spec.ok()) return Fail("run", spec.status());
  return SubmitAndMaybeWait(config, *spec, o, "run " + o.app);
}

void AddJobCommands(CLI::App& app, Commands& commands) {
  JobOptions& o = commands.Own<JobOptions>();
  const GlobalOptions& g = commands.global();
  auto add = [&](CLI::App* c, int (*run)(const ClusterConfig&, const JobOptions&)) {
    commands.Add(c, [&o, &g, run] {
      o.master_wait = g.master_wait();
      return WithConfig(g, "", true, [&](const ClusterConfig& cfg) { return run(cfg, o); });
    });
  };
  auto* job = app.add_subcommand("job", "submit, inspect and manage jobs");
  job->require_subcommand(1);
  job->fallthrough();
  auto* submit = job->add_subcommand("submit", "submit a job spec (JSON); prints its id");
  submit->add_option("SPEC", o.spec_file, "the job spec file ('-': stdin)")->required();
  submit->add_flag("--wait", o.wait, "wait for the job to end (exit 1 if it fails)");
  submit->fallthrough();
  add(submit, JobSubmit);
  auto add_id = [&](CLI::App* c) {
    c->add_option("ID", o.job, "the job id")->required();
    c->fallthrough();
  };
  auto* status = job->add_subcommand("status", "a job's state, stages, runs and bytes");
  add_id(status);
  status->add_flag("--json", o.json, "print one JSON document");
  add(status, JobStatus);
  auto* list = job->add_subcommand("list", "every job the master keeps");
  list->add_flag("--json", o.json, "print one JSON document");
  list->fallthrough();
  add(list, JobList);
  auto* wait = job->add_subcommand("wait", "wait for a job to end (exit 1 if it fails)");
  add_id(wait);
  add(wait, JobWait);
  auto* kill = job->add_subcommand("kill", "kill a job and every process of it");
  add_id(kill);
  add(kill, JobKill);
  auto* history = job->add_subcommand(
      "history", "every run of a job: vertex and version, attempt, computer, how it ended");
  add_id(history);
  history->add_flag("--json", o.json, "print one JSON document");
  add(history, JobHistory);
  auto* logs = job->add_subcommand("logs", "the logs of a job's runs");
  add_id(logs);
  logs->add_option("--vertex", o.vertex, "only STAGE, STAGE[INDEX] or root (default: every run)");
  add(logs, JobLogs);

  auto* run = app.add_subcommand("run", "run a sample app on DFS files (prints the job id)");
  run->add_option("APP", o.app,
                  "databasejoin, pagerank, prime, sort, wordcount, or streaming (with --mapper "
                  "and --reducer)")
      ->required();
  run->add_option("--input", o.inputs, "input DFS file(s), comma-separated")
      ->required()
      ->delimiter(',');
  run->add_option("--output", o.output, "the DFS file to write")->required();
  run->add_option("--partitions", o.partitions, "the output's partitions")
      ->check(CLI::Range(1, 100000));
  run->add_option("--name", o.name, "the job's name (default: the app's)");
  run->add_flag("--wait", o.wait, "wait for the job to end (exit 1 if it fails)");
  run->add_option("--mapper", o.mapper, "streaming: the map stage's program (NAME[@VERSION])");
  run->add_option("--reducer", o.reducer, "streaming: the reduce stage's program");
  run->add_option("--combiner", o.combiner,
                  "streaming: a program each map vertex's buckets run through, sorted");
  run->add_option("--reducers", o.reducers, "streaming: reduce vertices (default: 1)")
      ->check(CLI::Range(1, 100000));
  run->add_option("--format", o.format, "streaming: text (default) or binary records");
  run->add_option("--range", o.range_bounds,
                  "streaming: range-partition the reducers' keys at these sorted bounds "
                  "(comma-separated; one fewer than --reducers)")
      ->delimiter(',');
  run->fallthrough();
  add(run, Run);
}

}  // namespace copse::client
