// Server: accepts TCP connections on one port, authenticates each as the
// server side of the handshake, and forwards every connection's events to one
// ConnectionHandler (the daemon's service), which tells connections apart by
// Connection::id(). Stop() closes the port and every connection.
// Thread-safety: use from the io_context's thread only.
#pragma once

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <map>
#include <memory>
#include <string>

#include "common/net/connection.h"

namespace copse::net {

class Server final : public ConnectionHandler {
 public:
  // REQUIRES: `service_handler` outlives the server.
  Server(asio::io_context& io, std::string secret, std::string service, TransportOptions options,
         ConnectionHandler* service_handler);
  ~Server() override;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens; port 0 picks a free port (see port()). Fails with
  // kUnavailable when the address is in use.
  Status Listen(const std::string& host, uint16_t port);
  // Stops accepting and closes every connection (each gets OnClose).
  void Stop();
  uint16_t port() const { return port_; }
  size_t connection_count() const { return conns_.size(); }

  // ConnectionHandler: forwards to the service handler.
  void OnOpen(Connection& conn) override;
  void OnFrame(Connection& conn, Frame frame) override;
  void OnClose(Connection& conn, const Status& why) override;
  void OnDrained(Connection& conn) override;

 private:
  void Accept();

  asio::io_context& io_;
  asio::ip::tcp::acceptor acceptor_;
  std::string secret_;
  std::string service_;
  TransportOptions options_;
  ConnectionHandler* service_handler_;
  std::map<uint64_t, std::shared_ptr<Connection>> conns_;
  uint16_t port_ = 0;
  bool stopped_ = false;
  // Pending Asio handlers hold a weak_ptr to this and do nothing once it expires.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace copse::net
