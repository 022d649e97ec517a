#include "master/cluster_manager.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace copse::master {

const char* ComputerStateName(ComputerState s) {
  switch (s) {
    case ComputerState::kUnknown:
      return "unknown";
    case ComputerState::kLive:
      return "live";
    case ComputerState::kDead:
      return "dead";
  }
  return "unknown";
}

ClusterManager::ClusterManager(const ClusterConfig& config, Duration timeout,
                               uint32_t protocol_version)
    : config_(config), timeout_(timeout), protocol_version_(protocol_version) {
  for (const ComputerConfig& c : config.computers) computers_[c.name].config = &c;
}

namespace {

constexpr char kDrainPrefix[] = "cluster/draining/";

}  // namespace

void ClusterManager::AddListener(MembershipListener* listener) {
  listeners_.push_back(listener);
  for (const std::string& c : draining_) listener->OnComputerDraining(c, true, false);
}

Status ClusterManager::LoadDrains(dfs::MetaStore& store) {
  store_ = &store;
  COPSE_ASSIGN_OR_RETURN(dfs::MetaStore::Entries entries, store.Scan(kDrainPrefix));
  for (const auto& [key, value] : entries) {
    std::string name = key.substr(sizeof(kDrainPrefix) - 1);
    if (!computers_.count(name)) {
      spdlog::warn("forgetting the drain of {}: the config no longer names it", name);
      COPSE_RETURN_IF_ERROR(store.Apply({{key, std::nullopt}}));
      continue;
    }
    draining_.insert(name);
    spdlog::info("computer {} is draining (since before this master started)", name);
  }
  return Status::Ok();
}

Result<std::string> ClusterManager::SetDraining(const std::string& computer, bool draining,
                                                bool move_tasks) {
  if (!computers_.count(computer)) {
    return NotFound(fmt::format("computer '{}' is not in this cluster's config ({})", computer,
                                config_.source.string()));
  }
  if (!draining && !IsDraining(computer)) return std::string();
  std::string warning;
  if (draining) {
    int staying = 0, live = 0;
    for (const auto& [name, e] : computers_) {
      if (name == computer || IsDraining(name)) continue;
      ++staying;
      live += e.state == ComputerState::kLive ? 1 : 0;
    }
    if (staying == 0) {
      return FailedPrecondition(fmt::format(
          "draining {} would leave no computer that is not draining to run tasks and hold "
          "blocks; undrain another first",
          computer));
    }
    if (live < config_.replication) {
      warning = fmt::format(
          "only {} live computer(s) would be left that are not draining, fewer than the "
          "replication factor {}: blocks keep fewer copies until more computers are back",
          live, config_.replication);
    }
  }
  if (store_ != nullptr) {
    std::string key = kDrainPrefix + computer;
    COPSE_RETURN_IF_ERROR(
        store_->Apply({{key, draining ? std::optional<std::string>("1") : std::nullopt}})
            .WithContext("recording the drain of " + computer));
  }
  if (draining) {
    draining_.insert(computer);
  } else {
    draining_.erase(computer);
  }
  spdlog::info("computer {} {}", computer,
               draining ? (move_tasks ? "is draining; its tasks are moved" : "is draining")
                        : "is no longer draining");
  for (MembershipListener* l : listeners_) l->OnComputerDraining(computer, draining, move_tasks);
  return warning;
}

ClusterManager::Decision ClusterManager::Register(uint64_t session, const WorkerRegistration& reg,
                                                  Timestamp now) {
  if (reg.protocol_version != protocol_version_) {
    return {false, fmt::format("the worker for '{}' speaks scheduling protocol version {}, this "
                               "master version {} (run workers and master of the same build)",
                               reg.computer, reg.protocol_version, protocol_version_)};
  }
  auto it = computers_.find(reg.computer);
  if (it == computers_.end()) {
    return {false, fmt::format("computer '{}' is not in this cluster's config ({})", reg.computer,
                               config_.source.string())};
  }
  Entry& e = it->second;
  if (reg.rack != e.config->rack || reg.slots != e.config->slots) {
    return {false, fmt::format("computer '{}' is in rack '{}' with {} slot(s) in {}, but the "
                               "worker says rack '{}' with {} slot(s) (different configs?)",
                               reg.computer, e.config->rack, e.config->slots,
                               config_.source.string(), reg.rack, reg.slots)};
  }
  bool other_live_session =
      e.state == ComputerState::kLive && e.session != 0 && e.session != session;
  if (other_live_session) {
    return {false, fmt::format("computer '{}' is already served by a live worker (pid {}, from "
                               "{}); stop it first",
                               reg.computer, e.worker.pid, e.worker.remote)};
  }
  if (e.session != 0 && e.session != session) sessions_.erase(e.session);
  // A session that held another computer gives it up.
  if (auto s = sessions_.find(session); s != sessions_.end() && s->second != reg.computer) {
    computers_[s->second].session = 0;
  }
  bool was_live = e.state == ComputerState::kLive;
  e.session = session;
  e.worker = reg;
  e.state = ComputerState::kLive;
  e.last_heartbeat = now;
  e.busy_slots = 0;
  sessions_[session] = reg.computer;
  spdlog::info("computer {} (rack {}, {} slot(s)) registered: pid {} from {}", reg.computer,
               reg.rack, reg.slots, reg.pid, reg.remote);
  if (!was_live) {
    for (MembershipListener* l : listeners_) l->OnComputerUp(reg.computer);
  }
  return {true, ""};
}

bool ClusterManager::Heartbeat(uint64_t session, int busy_slots, Timestamp now) {
  auto s = sessions_.find(session);
  if (s == sessions_.end()) return false;
  Entry& e = computers_[s->second];
  if (e.session != session || e.state != ComputerState::kLive) return false;
  e.last_heartbeat = now;
  e.busy_slots = busy_slots;
  return true;
}

void ClusterManager::SessionClosed(uint64_t session) {
  auto s = sessions_.find(session);
  if (s == sessions_.end()) return;
  Entry& e = computers_[s->second];
  if (e.session == session) e.session = 0;
  sessions_.erase(s);
}

std::string ClusterManager::ComputerOfSession(uint64_t session) const {
  auto s = sessions_.find(session);
  return s == sessions_.end() ? std::string() : s->second;
}

void ClusterManager::MarkDead(Entry& e) {
  e.state = ComputerState::kDead;
  if (e.session != 0) sessions_.erase(e.session);
  e.session = 0;
  e.busy_slots = 0;
  for (MembershipListener* l : listeners_) l->OnComputerDown(e.config->name);
}

std::vector<std::string> ClusterManager::CheckTimeouts(Timestamp now) {
  std::vector<std::string> dead;
  for (auto& [name, e] : computers_) {
    if (e.state == ComputerState::kLive && now - e.last_heartbeat > timeout_) {
      spdlog::warn("computer {} is dead: no heartbeat for {} ms (timeout {} ms)", name,
                   (now - e.last_heartbeat).count() / 1000, timeout_.count() / 1000);
      MarkDead(e);
      dead.push_back(name);
    }
  }
  return dead;
}

std::vector<ComputerView> ClusterManager::Snapshot(Timestamp now) const {
  std::vector<ComputerView> out;
  for (const ComputerConfig& c : config_.computers) {
    const Entry& e = computers_.at(c.name);
    ComputerView v;
    v.name = c.name;
    v.rack = c.rack;
    v.slots = c.slots;
    v.state = e.state;
    v.host = c.host;
    if (e.state != ComputerState::kUnknown) {
      v.last_heartbeat_ago_ms = (now - e.last_heartbeat).count() / 1000;
      v.pid = e.worker.pid;
    }
    v.busy_slots = e.busy_slots;
    v.draining = IsDraining(c.name);
    out.push_back(std::move(v));
  }
  return out;
}

int ClusterManager::LiveCount() const {
  int n = 0;
  for (const auto& [name, e] : computers_) n += e.state == ComputerState::kLive;
  return n;
}

}  // namespace copse::master
