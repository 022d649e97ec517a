// ReconnectingClient: keeps one authenticated connection to a server open,
// reconnecting with capped exponential backoff whenever it drops (the worker's
// link to the master). Events go to a ConnectionHandler as with Server.
// Thread-safety: use from the io_context's thread only.
#pragma once

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <memory>
#include <string>

#include "common/net/backoff.h"
#include "common/net/connection.h"

namespace copse::net {

class ReconnectingClient final : public ConnectionHandler {
 public:
  // REQUIRES: `handler` outlives the client.
  ReconnectingClient(asio::io_context& io, std::string host, uint16_t port, AuthParams auth,
                     TransportOptions options, BackoffOptions backoff, uint64_t seed,
                     ConnectionHandler* handler);
  ~ReconnectingClient() override;
  ReconnectingClient(const ReconnectingClient&) = delete;
  ReconnectingClient& operator=(const ReconnectingClient&) = delete;

  // Connects now, and again after every drop, until Stop().
  void Start();
  // Closes the connection and stops reconnecting.
  void Stop();
  // The open connection, or nullptr while (re)connecting.
  Connection* connection() const { return conn_ && conn_->open() ? conn_.get() : nullptr; }

  void OnOpen(Connection& conn) override;
  void OnFrame(Connection& conn, Frame frame) override;
  void OnClose(Connection& conn, const Status& why) override;
  void OnDrained(Connection& conn) override;

 private:
  void Connect();
  void ScheduleReconnect(const Status& why);

  asio::io_context& io_;
  std::string host_;
  uint16_t port_;
  AuthParams auth_;
  TransportOptions options_;
  Backoff backoff_;
  ConnectionHandler* handler_;
  asio::steady_timer timer_;
  std::shared_ptr<asio::ip::tcp::socket> connecting_;
  std::shared_ptr<Connection> conn_;
  bool stopped_ = true;
  uint64_t attempt_ = 0;
  // Pending Asio handlers hold a weak_ptr to this and do nothing once it expires.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace copse::net
