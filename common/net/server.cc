#include "common/net/server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace copse::net {

Server::Server(asio::io_context& io, std::string secret, std::string service,
               TransportOptions options, ConnectionHandler* service_handler)
    : io_(io),
      acceptor_(io),
      secret_(std::move(secret)),
      service_(std::move(service)),
      options_(options),
      service_handler_(service_handler) {}

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
    if (ec) {
      if (ec == asio::error::operation_aborted) return;
      spdlog::warn("{}: accept failed: {}", service_, ec.message());
    } else {
      AuthParams auth{true, secret_, service_, ""};
      auto conn = Connection::Create(std::move(socket), auth, options_, this);
      conns_[conn->id()] = conn;
      conn->Start();
    }
    Accept();
  });
}

void Server::Stop() {
  if (stopped_) return;
  stopped_ = true;
  asio::error_code ec;
  acceptor_.close(ec);
  auto conns = conns_;
  for (auto& [id, conn] : conns) conn->Close(Status::Ok());
}

void Server::OnOpen(Connection& conn) {
  if (service_handler_) service_handler_->OnOpen(conn);
}

void Server::OnFrame(Connection& conn, Frame frame) {
  if (service_handler_) service_handler_->OnFrame(conn, std::move(frame));
}

void Server::OnClose(Connection& conn, const Status& why) {
  auto keep = conns_[conn.id()];  // the connection lives until this returns
  conns_.erase(conn.id());
  // The service never saw connections that failed the handshake.
  if (service_handler_ && conn.authenticated()) service_handler_->OnClose(conn, why);
}

void Server::OnDrained(Connection& conn) {
  if (service_handler_) service_handler_->OnDrained(conn);
}

}  // namespace copse::net
