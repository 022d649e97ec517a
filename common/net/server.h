// Server: accepts TCP connections on one port, authenticates each as the
// server side of the handshake, and forwards every connection's events to one
// ConnectionHandler (the daemon's service), which tells connections apart by
// Connection::id(). Stop() closes the port and every connection.
//
// Limits: connections still in the handshake are capped in all and per
// source address (TransportOptions), so a flood of half-open connections
// cannot exhaust the daemon's descriptors; beyond a cap a connection is
// closed as soon as it is accepted. When the process is out of descriptors
// (EMFILE, ENFILE) the server stops accepting for a while (100 ms, doubling
// to 2 s) instead of spinning; each such episode is logged once.
// Thread-safety: use from the io_context's thread only.
#pragma once

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
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
  // Connections accepted and closed at once because a cap was reached.
  uint64_t refused_count() const { return refused_; }

  // ConnectionHandler: forwards to the service handler.
  void OnOpen(Connection& conn) override;
  void OnFrame(Connection& conn, Frame frame) override;
  void OnClose(Connection& conn, const Status& why) override;
  void OnDrained(Connection& conn) override;

 private:
  void Accept();
  // Whether a new connection from `source` stays within the caps.
  bool Admit(const std::string& source);
  void Release(const Connection& conn);

  asio::io_context& io_;
  asio::ip::tcp::acceptor acceptor_;
  std::string secret_;
  std::string service_;
  TransportOptions options_;
  ConnectionHandler* service_handler_;
  std::map<uint64_t, std::shared_ptr<Connection>> conns_;
  // Connections in the handshake: by id (with their source), and per source.
  std::map<uint64_t, std::string> unauthenticated_;
  std::map<std::string, size_t> unauthenticated_by_source_;
  uint64_t refused_ = 0;
  uint64_t refused_logged_ = 0;  // refusals logged about so far
  asio::steady_timer accept_pause_;
  std::chrono::milliseconds pause_{0};  // the current out-of-descriptors pause
  uint16_t port_ = 0;
  bool stopped_ = false;
  // Pending Asio handlers hold a weak_ptr to this and do nothing once it expires.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace copse::net
