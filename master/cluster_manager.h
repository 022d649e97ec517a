// ClusterManager: the master's membership table. It knows the computers the
// cluster config names, accepts or refuses worker registrations, records
// heartbeats, and declares a computer dead when its heartbeats stop for the
// configured timeout. It also keeps the computers an operator is draining
// (`copse cluster drain`): up or not, they take no new work and their blocks
// are copied elsewhere; the set is kept in the master's store, so a
// restarted master drains them still. Pure logic: time is passed in,
// sessions are opaque ids (the master uses connection ids), so tests drive
// it with a manual clock.
// Thread-safety: not thread-safe; the master owns it on its event loop.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "copse/status.h"
#include "dfs/meta_store.h"

namespace copse::master {

enum class ComputerState { kUnknown, kLive, kDead };
const char* ComputerStateName(ComputerState s);

// What a worker says about itself when it registers.
struct WorkerRegistration {
  std::string computer;
  std::string rack;
  int slots = 0;
  std::string host;
  uint16_t control_port = 0;
  uint16_t data_port = 0;
  uint64_t incarnation = 0;
  uint32_t pid = 0;
  std::string remote;             // the connection's address, for messages
  uint32_t protocol_version = 0;  // the scheduling protocol it speaks
};

struct ComputerView {
  std::string name;
  std::string rack;
  int slots = 0;
  ComputerState state = ComputerState::kUnknown;
  std::string host;
  int64_t last_heartbeat_ago_ms = -1;
  uint32_t pid = 0;
  int busy_slots = 0;
  bool draining = false;
};

// Told when computers become live or dead, or begin or stop draining (the
// name service and the scheduling service subscribe).
class MembershipListener {
 public:
  virtual ~MembershipListener() = default;
  virtual void OnComputerUp(const std::string& computer) = 0;
  virtual void OnComputerDown(const std::string& computer) = 0;
  // `computer` began (`draining`) or stopped draining; with `move_tasks`
  // its running tasks are to be moved rather than left to finish.
  virtual void OnComputerDraining(const std::string& computer, bool draining, bool move_tasks) {
    (void)computer;
    (void)draining;
    (void)move_tasks;
  }
};

class ClusterManager {
 public:
  // `protocol_version`: the scheduling protocol a worker must speak.
  ClusterManager(const ClusterConfig& config, Duration timeout, uint32_t protocol_version = 0);

  // Adds a listener, told of changes in the order listeners were added, and
  // at once of the computers already draining.
  // REQUIRES: it outlives the manager.
  void AddListener(MembershipListener* listener);

  // Keeps the drained computers in `store` from now on, and loads those it
  // holds (a restarted master). Names no longer in the config are dropped.
  // REQUIRES: `store` outlives the manager; called before AddListener.
  Status LoadDrains(dfs::MetaStore& store);
  // Begins (`draining`) or ends draining `computer` and tells the
  // listeners. kNotFound when the config does not name it;
  // kFailedPrecondition when no computer would be left that is not
  // draining. Draining a computer again (for instance with `move_tasks`
  // after a drain without) tells the listeners again; undraining one that
  // is not draining changes nothing. Returns a warning to show the
  // operator, or "" (fewer live computers left than the replication
  // factor: blocks cannot all keep their factor meanwhile).
  Result<std::string> SetDraining(const std::string& computer, bool draining, bool move_tasks);
  bool IsDraining(const std::string& computer) const { return draining_.count(computer) != 0; }

  struct Decision {
    bool accepted = false;
    std::string reason;  // set when refused
  };
  // A worker on `session` claims a computer. Refused when it speaks another
  // scheduling protocol version, when the config does not name it, when its
  // rack or slots differ from the config, or when another live worker still
  // serves it on an open session.
  Decision Register(uint64_t session, const WorkerRegistration& reg, Timestamp now);

  // Records a heartbeat. Returns false when the session does not hold a live
  // computer (never registered, superseded, or timed out): it must register.
  bool Heartbeat(uint64_t session, int busy_slots, Timestamp now);

  // The session's connection closed. Its computer stays live until it times
  // out, so a quick worker restart does not count as a failure.
  void SessionClosed(uint64_t session);

  // Declares dead every live computer whose last heartbeat is older than the
  // timeout; returns their names.
  std::vector<std::string> CheckTimeouts(Timestamp now);

  std::vector<ComputerView> Snapshot(Timestamp now) const;
  int LiveCount() const;
  // The computer a live worker registered on `session`, or "" for other
  // sessions (clients, tools).
  std::string ComputerOfSession(uint64_t session) const;

 private:
  struct Entry {
    const ComputerConfig* config = nullptr;
    ComputerState state = ComputerState::kUnknown;
    uint64_t session = 0;  // 0: no open session
    WorkerRegistration worker;
    Timestamp last_heartbeat{0};
    int busy_slots = 0;
  };
  void MarkDead(Entry& e);

  const ClusterConfig& config_;
  Duration timeout_;
  uint32_t protocol_version_;
  std::map<std::string, Entry> computers_;
  std::map<uint64_t, std::string> sessions_;  // open session -> computer
  std::vector<MembershipListener*> listeners_;
  std::set<std::string> draining_;
  dfs::MetaStore* store_ = nullptr;  // where drains are kept; null in tests that need none
};

}  // namespace copse::master
