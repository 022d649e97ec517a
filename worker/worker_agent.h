// WorkerAgent: the copse-worker's link to the master. It keeps a connection
// open (reconnecting with capped exponential backoff, so a restarted master
// gets its workers back by itself), registers this computer, sends heartbeats
// at the interval the master asks for, and registers again when the master
// says it no longer counts this worker as live. A refusal (unknown computer,
// another live worker on it, another protocol version) is fatal: the agent
// reports it and stops.
//
// The worker's parts that talk to the master over this connection (the DFS,
// the task manager) are Parts, each for one protocol: they add what they
// report to the registration, hear of every accepted registration, get the
// master's frames of their protocol and Send their own.
//
// The connection (net::Link) and the heartbeat timer (net::Timer) are
// interfaces: the daemon's agent makes its own over TCP and the io_context,
// and a test drives the agent through fakes of both.
// Thread-safety: everything runs on the io_context's thread.
#pragma once

#include <asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/net/link.h"
#include "proto/cluster.capnp.h"

namespace copse::worker {

class WorkerAgent final : public net::LinkHandler {
 public:
  using FatalCallback = std::function<void(const Status&)>;

  // The daemon's agent: connects to the config's master over TCP.
  // REQUIRES: io, config and computer outlive the agent.
  WorkerAgent(asio::io_context& io, const ClusterConfig& config, const ComputerConfig& computer,
              std::string secret, uint64_t incarnation, FatalCallback on_fatal);
  // An agent over `link` and `heartbeat_timer`, which report to it.
  // REQUIRES: every argument outlives the agent.
  WorkerAgent(const ClusterConfig& config, const ComputerConfig& computer, uint64_t incarnation,
              net::Link& link, net::Timer& heartbeat_timer, FatalCallback on_fatal);
  ~WorkerAgent() override;
  WorkerAgent(const WorkerAgent&) = delete;
  WorkerAgent& operator=(const WorkerAgent&) = delete;

  class Part {
   public:
    virtual ~Part() = default;
    // Adds what it reports when the worker registers.
    virtual void FillRegistration(proto::RegisterRequest::Builder r) { (void)r; }
    // After every accepted registration.
    virtual void OnRegistered() {}
    // A frame of its protocol from the master; an error closes the connection.
    virtual Status OnMasterFrame(const net::Frame& frame) = 0;
  };

  void Start();
  void Stop();
  bool registered() const { return registered_; }
  // Slots in use, reported in heartbeats.
  void set_busy_slots(std::function<int()> busy) { busy_slots_ = std::move(busy); }
  // Frames of `protocol` from the master go to `part`. REQUIRES: it outlives this.
  void AddPart(net::Protocol protocol, Part* part) { parts_[protocol] = part; }
  // Sends a frame to the master; false when not registered right now.
  bool Send(net::Protocol protocol, std::vector<uint8_t> payload);

  // net::LinkHandler. A frame the agent cannot take closes the connection.
  void OnLinkOpen(const std::string& remote) override;
  void OnLinkFrame(const net::Frame& frame) override;
  void OnLinkClose(const Status& why) override;

 private:
  void SendRegister();
  void SendHeartbeat();
  void ArmHeartbeat();
  Status Handle(const net::Frame& frame);

  const ClusterConfig& config_;
  const ComputerConfig& computer_;
  uint64_t incarnation_;
  FatalCallback on_fatal_;
  // The daemon's own link and timer (null when given them).
  std::unique_ptr<net::Link> own_link_;
  std::unique_ptr<net::Timer> own_timer_;
  net::Link& link_;
  net::Timer& heartbeat_timer_;
  std::chrono::milliseconds heartbeat_interval_;
  bool registered_ = false;
  std::function<int()> busy_slots_;
  std::map<net::Protocol, Part*> parts_;
};

}  // namespace copse::worker
