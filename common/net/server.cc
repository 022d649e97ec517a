#include "common/net/server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>

namespace copse::net {

Server::Server(asio::io_context& io, std::string secret, std::string service,
               TransportOptions options, ConnectionHandler* service_handler)
    : io_(io),
      acceptor_(io),
      secret_(std::move(secret)),
      service_(std::move(service)),
      options_(options),
      service_handler_(service_handler),
      accept_pause_(io) {}

Server::~Server() {
  Stop();
  for (auto& [id, conn] : conns_) conn->set_handler(nullptr);
}

Status Server::Listen(const std::string& host, uint16_t port) {
  asio::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  if (ec) return InvalidArgument(fmt::format("'{}' is not an IP address to listen on", host));
  asio::ip::tcp::endpoint ep(addr, port);
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    acceptor_.close();
    return Unavailable(
        fmt::format("cannot listen on {}:{} for {}: {}", host, port, service_, ec.message()));
  }
  port_ = acceptor_.local_endpoint().port();
  Accept();
  return Status::Ok();
}

void Server::Accept() {
  std::weak_ptr<int> alive = alive_;
  acceptor_.async_accept([this, alive](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    if (alive.expired() || stopped_) return;
    if (ec == asio::error::operation_aborted) return;
    if (ec == asio::error::no_descriptors || ec.value() == ENFILE) {
      // Out of descriptors: accepting again at once would fail again at once.
      if (pause_.count() == 0) {
        spdlog::error(
            "{}: cannot accept connections: {}; pausing accepts until descriptors free up",
            service_, ec.message());
      }
      pause_ = std::min(std::max(pause_ * 2, std::chrono::milliseconds(100)),
                        std::chrono::milliseconds(2000));
      accept_pause_.expires_after(pause_);
      accept_pause_.async_wait([this, alive](const asio::error_code& e) {
        if (!e && !alive.expired() && !stopped_) Accept();
      });
      return;
    }
    if (ec) {
      spdlog::warn("{}: accept failed: {}", service_, ec.message());
    } else {
      if (pause_.count() != 0) spdlog::info("{}: accepting connections again", service_);
      pause_ = std::chrono::milliseconds(0);
      asio::error_code e;
      auto ep = socket.remote_endpoint(e);
      std::string source = e ? "unknown" : ep.address().to_string();
      if (Admit(source)) {
        AuthParams auth{true, secret_, service_, ""};
        auto conn = Connection::Create(std::move(socket), auth, options_, this);
        conns_[conn->id()] = conn;
        unauthenticated_[conn->id()] = source;
        ++unauthenticated_by_source_[source];
        conn->Start();
      } else {
        socket.close(e);
      }
    }
    Accept();
  });
}

bool Server::Admit(const std::string& source) {
  auto it = unauthenticated_by_source_.find(source);
  size_t from_source = it == unauthenticated_by_source_.end() ? 0 : it->second;
  if (unauthenticated_.size() < options_.max_unauthenticated &&
      from_source < options_.max_unauthenticated_per_source) {
    return true;
  }
  // Logged at the first refusal and then at every thousandth, not per connection.
  if (refused_++ >= refused_logged_) {
    spdlog::warn(
        "{}: refusing connections from {}: {} of its connections ({} in all) are still "
        "authenticating, the limit; {} refused so far",
        service_, source, from_source, unauthenticated_.size(), refused_);
    refused_logged_ = refused_ + 999;
  }
  return false;
}

void Server::Release(const Connection& conn) {
  auto it = unauthenticated_.find(conn.id());
  if (it == unauthenticated_.end()) return;
  auto s = unauthenticated_by_source_.find(it->second);
  if (s != unauthenticated_by_source_.end() && --s->second == 0)
    unauthenticated_by_source_.erase(s);
  unauthenticated_.erase(it);
}

void Server::Stop() {
  if (stopped_) return;
  stopped_ = true;
  asio::error_code ec;
  acceptor_.close(ec);
  accept_pause_.cancel();
  auto conns = conns_;
  for (auto& [id, conn] : conns) conn->Close(Status::Ok());
}

void Server::OnOpen(Connection& conn) {
  Release(conn);
  if (service_handler_) service_handler_->OnOpen(conn);
}

void Server::OnFrame(Connection& conn, Frame frame) {
  if (service_handler_) service_handler_->OnFrame(conn, std::move(frame));
}

void Server::OnClose(Connection& conn, const Status& why) {
  auto keep = conns_[conn.id()];  // the connection lives until this returns
  conns_.erase(conn.id());
  Release(conn);
  // The service never saw connections that failed the handshake.
  if (service_handler_ && conn.authenticated()) service_handler_->OnClose(conn, why);
}

void Server::OnDrained(Connection& conn) {
  if (service_handler_) service_handler_->OnDrained(conn);
}

}  // namespace copse::net
