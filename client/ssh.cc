#include "client/ssh.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <thread>

namespace copse::client {
namespace {

constexpr const char* kSsh = "/usr/bin/ssh";
constexpr const char* kRsync = "/usr/bin/rsync";

Result<RemoteResult> Run(const std::string& program, std::vector<std::string> args,
                         std::chrono::milliseconds deadline) {
  SpawnOptions o;
  o.program = program;
  o.args = std::move(args);
  o.new_session = true;  // a deadline kills ssh with whatever it started here
  COPSE_ASSIGN_OR_RETURN(ProcessResult p, RunProcess(std::move(o), deadline, 4u << 20));
  RemoteResult r;
  r.exit_code = p.status.known && p.status.signal == 0 ? p.status.code : -1;
  r.out = std::move(p.out);
  r.err = std::move(p.err);
  r.timed_out = p.timed_out;
  return r;
}

}  // namespace

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string RsyncQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string ShellCommand(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    out += ShellQuote(a);
  }
  return out;
}

std::string SshDestination(const DeployConfig& deploy, const std::string& host) {
  return deploy.ssh_user.empty() ? host : deploy.ssh_user + "@" + host;
}

std::vector<std::string> SshOptions(const DeployConfig& deploy,
                                    std::chrono::seconds connect_timeout) {
  std::vector<std::string> args = {"-o", "BatchMode=yes",
                                   "-o", fmt::format("ConnectTimeout={}", connect_timeout.count()),
                                   "-p", std::to_string(deploy.ssh_port)};
  args.insert(args.end(), deploy.ssh_options.begin(), deploy.ssh_options.end());
  return args;
}

Result<RemoteResult> RunRemote(const DeployConfig& deploy, const std::string& host,
                               const std::vector<std::string>& argv,
                               std::chrono::milliseconds deadline) {
  return RunRemoteCommands(deploy, host, {argv}, deadline);
}

Result<RemoteResult> RunRemoteCommands(const DeployConfig& deploy, const std::string& host,
                                       const std::vector<std::vector<std::string>>& commands,
                                       std::chrono::milliseconds deadline) {
  std::vector<std::string> args = SshOptions(
      deploy, std::chrono::seconds(std::max<int64_t>(
                  1, std::chrono::duration_cast<std::chrono::seconds>(deadline).count())));
  // ssh joins the words after the destination with spaces for the remote
  // shell: one word, already quoted.
  std::string line;
  for (const auto& argv : commands) line += (line.empty() ? "" : "; ") + ShellCommand(argv);
  args.push_back("--");
  args.push_back(SshDestination(deploy, host));
  args.push_back(line);
  return Run(kSsh, std::move(args), deadline);
}

Result<RemoteResult> RsyncTo(const DeployConfig& deploy, const std::string& host,
                             const std::vector<std::string>& sources,
                             const std::filesystem::path& target_dir,
                             const std::vector<std::string>& extra,
                             std::chrono::milliseconds deadline) {
  // rsync splits -e at spaces and honours quotes (a quote doubled inside
  // is itself): each ssh word quoted its way.
  std::string ssh = RsyncQuote(kSsh);
  for (const std::string& a : SshOptions(deploy, std::chrono::seconds(10)))
    ssh += " " + RsyncQuote(a);
  // Not --archive: files get the ssh user as owner on the host, never this
  // machine's uid or group (which may be someone else's there).
  std::vector<std::string> args = {"--recursive", "--links",    "--perms", "--times", "--checksum",
                                   "--no-owner",  "--no-group", "-e",      ssh};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("--");
  args.insert(args.end(), sources.begin(), sources.end());
  // rsync (3.2.4 and later) protects the remote path from the remote shell
  // itself; install_dir is validated to plain characters anyway.
  std::string target = target_dir.string();
  if (target.back() != '/') target += '/';
  args.push_back(SshDestination(deploy, host) + ":" + target);
  return Run(kRsync, std::move(args), deadline);
}

SshConnections::SshConnections(DeployConfig& deploy, std::vector<std::string> hosts)
    : deploy_(deploy), hosts_(std::move(hosts)) {
  // Short: a socket's path has room for about 100 bytes.
  char dir[] = "/tmp/copse-ssh-XXXXXX";
  if (::mkdtemp(dir) == nullptr) return;
  dir_ = dir;
  deploy_.ssh_options.insert(deploy_.ssh_options.end(),
                             {"-o", "ControlMaster=auto", "-o",
                              "ControlPath=" + (dir_ / "%C").string(), "-o", "ControlPersist=60"});
}

SshConnections::~SshConnections() {
  if (dir_.empty()) return;
  std::vector<std::thread> threads;
  for (const std::string& host : hosts_) {
    threads.emplace_back([this, host] {
      std::vector<std::string> args = SshOptions(deploy_, std::chrono::seconds(5));
      args.insert(args.end(), {"-O", "exit", "--", SshDestination(deploy_, host)});
      (void)Run(kSsh, std::move(args), std::chrono::seconds(10));
    });
  }
  for (std::thread& t : threads) t.join();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string SshError(const RemoteResult& r) {
  if (r.timed_out) return "timed out";
  std::string last;
  size_t start = 0;
  while (start < r.err.size()) {
    size_t end = r.err.find('\n', start);
    if (end == std::string::npos) end = r.err.size();
    std::string line = r.err.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) last = line;
    start = end + 1;
  }
  return last.empty() ? fmt::format("exit code {}", r.exit_code) : last;
}

}  // namespace copse::client
