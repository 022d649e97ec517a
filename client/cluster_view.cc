#include "client/cluster_view.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/net/auth.h"

namespace copse::client {
namespace {

std::string HeartbeatAge(int64_t ms) {
  if (ms < 0) return "never";
  return fmt::format("{:.1f}s ago", static_cast<double>(ms) / 1000.0);
}

}  // namespace

// The last `lines` lines of the file at `path` (all of it when it has
// fewer), read backwards from its end so that a long log costs only its tail.
Result<std::string> LastLines(const std::filesystem::path& path, int lines) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(fmt::format("{}: cannot open", path.string()));
  in.seekg(0, std::ios::end);
  const int64_t size = in.tellg();
  if (size < 0) return IoError(fmt::format("{}: cannot read", path.string()));
  constexpr int64_t kChunk = 64 << 10;
  std::string text;
  int64_t start = size;
  int64_t newlines = 0;  // in `text`
  // Enough once `text` holds more than `lines` lines (its first may be cut).
  while (start > 0 && newlines - (text.empty() || text.back() == '\n' ? 1 : 0) < lines) {
    const int64_t n = std::min(kChunk, start);
    start -= n;
    std::string chunk(static_cast<size_t>(n), '\0');
    in.seekg(start);
    if (!in.read(chunk.data(), n)) return IoError(fmt::format("{}: cannot read", path.string()));
    newlines += std::count(chunk.begin(), chunk.end(), '\n');
    text.insert(0, chunk);
  }
  // Keep the last `lines` lines: back from the end (a final newline ends
  // the last line) to the newline before the first of them.
  size_t i = text.size();
  if (i > 0 && text[i - 1] == '\n') --i;
  for (int found = 0; i > 0; --i)
    if (text[i - 1] == '\n' && ++found == lines) break;
  text.erase(0, i);
  return text;
}

// The last `lines` lines of a file, indented, for error reports.
std::string Tail(const std::filesystem::path& path, int lines) {
  Result<std::string> text = LastLines(path, lines);
  if (!text.ok()) return "";
  std::string out;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) out += "    " + line + "\n";
  return out;
}

Result<ClusterStatus> FetchStatus(const ClusterConfig& config, net::ConnectRetry retry) {
  COPSE_ASSIGN_OR_RETURN(auto client,
                         MasterClient::Connect(config, std::chrono::seconds(5), std::move(retry)));
  return client->GetClusterStatus();
}

Result<ClusterStatus> PollStatus(const ClusterConfig& config,
                                 std::chrono::steady_clock::time_point deadline,
                                 std::chrono::milliseconds poll,
                                 const std::function<bool(const Result<ClusterStatus>&)>& stop) {
  while (true) {
    Result<ClusterStatus> st = FetchStatus(config);
    if (stop(st) || std::chrono::steady_clock::now() >= deadline) return st;
    std::this_thread::sleep_for(poll);
  }
}

void PrintStatusTable(const ClusterConfig& config, const ClusterStatus& st) {
  int slots = 0;
  for (const ComputerStatus& c : st.computers) slots += c.state == "live" ? c.slots : 0;
  std::cout << fmt::format(
      "cluster {}: {} of {} computers live, {} slots (master {}:{}, pid {}, "
      "up {:.0f}s)\n",
      st.cluster, st.LiveCount(), st.computers.size(), slots, config.master.host,
      config.master.port, st.master_pid, static_cast<double>(st.uptime_ms) / 1000.0);
  if (st.under_replicated_blocks > 0) {
    std::cout << fmt::format("{} DFS block(s) have fewer replicas than their factor\n",
                             st.under_replicated_blocks);
  }
  std::cout << fmt::format("{:<12} {:<8} {:<8} {:>5} {:>5} {:>8}  {:<16} {}\n", "COMPUTER", "RACK",
                           "STATE", "SLOTS", "BUSY", "PID", "LAST HEARTBEAT", "DRAIN");
  for (const ComputerStatus& c : st.computers) {
    std::string drain =
        c.draining ? fmt::format("draining, {} block(s) held nowhere else", c.sole_blocks) : "-";
    std::cout << fmt::format("{:<12} {:<8} {:<8} {:>5} {:>5} {:>8}  {:<16} {}\n", c.name, c.rack,
                             c.state, c.slots, c.busy_slots, c.pid ? std::to_string(c.pid) : "-",
                             HeartbeatAge(c.last_heartbeat_ago_ms), drain);
  }
}

nlohmann::json StatusJson(const ClusterConfig& config, const ClusterStatus& st) {
  nlohmann::json computers = nlohmann::json::array();
  for (const ComputerStatus& c : st.computers) {
    computers.push_back({{"name", c.name},
                         {"rack", c.rack},
                         {"state", c.state},
                         {"slots", c.slots},
                         {"busy_slots", c.busy_slots},
                         {"host", c.host},
                         {"pid", c.pid},
                         {"last_heartbeat_ms_ago", c.last_heartbeat_ago_ms},
                         {"draining", c.draining},
                         {"sole_blocks", c.draining ? nlohmann::json(c.sole_blocks) : nullptr},
                         {"short_blocks", c.draining ? nlohmann::json(c.short_blocks) : nullptr}});
  }
  return {{"cluster", st.cluster},
          {"master",
           {{"host", config.master.host},
            {"port", config.master.port},
            {"pid", st.master_pid},
            {"uptime_ms", st.uptime_ms}}},
          {"live", st.LiveCount()},
          {"under_replicated_blocks", st.under_replicated_blocks},
          {"computers", computers}};
}

Status EnsureSecrets(const ClusterConfig& config) {
  bool created = false;
  COPSE_RETURN_IF_ERROR(net::EnsureSecret(config.secret_file, &created).status());
  if (created) {
    std::cout << "created cluster secret " << config.secret_file.string()
              << " (keep it private; `cluster up` copies it to the hosts of a config on several)\n";
  }
  if (config.http.enabled && !config.http.token_file.empty()) {
    COPSE_RETURN_IF_ERROR(net::EnsureSecret(config.http.token_file, &created)
                              .status()
                              .WithContext("[http] token_file"));
    if (created) {
      std::cout << "created HTTP API token " << config.http.token_file.string()
                << " (clients send it as \"Authorization: Bearer TOKEN\")\n";
    }
  }
  return Status::Ok();
}

bool OnThisMachine(const std::string& address) {
  if (IsLoopbackAddress(address)) return true;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return false;
  bool found = false;
  for (ifaddrs* a = list; a != nullptr && !found; a = a->ifa_next) {
    if (a->ifa_addr == nullptr) continue;
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ifa_addr->sa_family == AF_INET) {
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text,
                  sizeof text);
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr, text,
                  sizeof text);
    }
    found = address == text;
  }
  ::freeifaddrs(list);
  return found;
}

bool AllDaemonsHere(const ClusterConfig& config) {
  if (!OnThisMachine(config.master.host)) return false;
  for (const ComputerConfig& c : config.computers)
    if (!OnThisMachine(c.host)) return false;
  return true;
}

}  // namespace copse::client
