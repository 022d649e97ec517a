// MasterService: the copse-master daemon's server. It listens on the master
// port and routes each authenticated connection's frames, by protocol, to
// that protocol's service (ProtocolService); a service's error closes that
// connection only, with the reason logged, and the daemon carries on. Every
// service hears of every connection that closes. Daemon logic lives in the
// components behind the services; main() builds and wires them.
// Thread-safety: everything runs on the io_context's thread.
#pragma once

#include <asio/io_context.hpp>
#include <map>
#include <string>

#include "common/net/server.h"
#include "master/protocol_service.h"

namespace copse::master {

class MasterService final : public net::ConnectionHandler {
 public:
  // REQUIRES: io outlives the service.
  MasterService(asio::io_context& io, std::string secret);
  ~MasterService() override;

  // Frames of `protocol` go to `service`. REQUIRES: it outlives this.
  void Route(net::Protocol protocol, ProtocolService* service);
  Status Listen(const std::string& host, uint16_t port);
  void Stop();
  uint16_t port() const { return server_.port(); }

  void OnFrame(net::Connection& conn, net::Frame frame) override;
  void OnClose(net::Connection& conn, const Status& why) override;

 private:
  net::Server server_;
  std::map<net::Protocol, ProtocolService*> routes_;
  bool stopped_ = false;
};

}  // namespace copse::master
