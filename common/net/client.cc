#include "common/net/client.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <asio/connect.hpp>

namespace copse::net {

ReconnectingClient::ReconnectingClient(asio::io_context& io, std::string host, uint16_t port,
                                       AuthParams auth, TransportOptions options,
                                       BackoffOptions backoff, uint64_t seed,
                                       ConnectionHandler* handler)
    : io_(io),
      host_(std::move(host)),
      port_(port),
      auth_(std::move(auth)),
      options_(options),
      backoff_(backoff, seed),
      handler_(handler),
      timer_(io) {}

ReconnectingClient::~ReconnectingClient() {
  Stop();
  if (conn_) conn_->set_handler(nullptr);
}

void ReconnectingClient::Start() {
  if (!stopped_) return;
  stopped_ = false;
  Connect();
}

void ReconnectingClient::Stop() {
  stopped_ = true;
  timer_.cancel();
  if (connecting_) {
    asio::error_code ec;
    connecting_->close(ec);
    connecting_.reset();
  }
  if (conn_) conn_->Close(Status::Ok());
}

void ReconnectingClient::Connect() {
  if (stopped_) return;
  asio::error_code ec;
  auto addr = asio::ip::make_address(host_, ec);
  if (ec) {
    ScheduleReconnect(InvalidArgument(fmt::format("'{}' is not an IP address", host_)));
    return;
  }
  auto socket = std::make_shared<asio::ip::tcp::socket>(io_);
  connecting_ = socket;
  uint64_t attempt = ++attempt_;
  timer_.expires_after(options_.connect_timeout);
  std::weak_ptr<int> alive = alive_;
  timer_.async_wait([this, alive, socket, attempt](const asio::error_code& tec) {
    if (alive.expired()) return;
    if (!tec && attempt == attempt_ && connecting_ == socket) {
      asio::error_code cec;
      socket->close(cec);  // the pending connect fails with operation_aborted
    }
  });
  socket->async_connect(asio::ip::tcp::endpoint(addr, port_), [this, alive, socket, attempt](
                                                                  const asio::error_code& cec) {
    if (alive.expired() || stopped_ || attempt != attempt_) return;
    connecting_.reset();
    timer_.cancel();
    if (cec) {
      ScheduleReconnect(Unavailable(
          fmt::format("cannot connect to {}:{}: {}", host_, port_,
                      cec == asio::error::operation_aborted ? "timed out" : cec.message())));
      return;
    }
    conn_ = Connection::Create(std::move(*socket), auth_, options_, this);
    conn_->Start();
  });
}

void ReconnectingClient::ScheduleReconnect(const Status& why) {
  if (stopped_) return;
  Duration delay = backoff_.Next();
  spdlog::debug("{}; retrying in {} ms", why.ToString(), delay.count() / 1000);
  timer_.expires_after(delay);
  std::weak_ptr<int> alive = alive_;
  timer_.async_wait([this, alive](const asio::error_code& ec) {
    if (!ec && !alive.expired()) Connect();
  });
}

void ReconnectingClient::OnOpen(Connection& conn) {
  backoff_.Reset();
  if (handler_) handler_->OnOpen(conn);
}

void ReconnectingClient::OnFrame(Connection& conn, Frame frame) {
  if (handler_) handler_->OnFrame(conn, std::move(frame));
}

void ReconnectingClient::OnClose(Connection& conn, const Status& why) {
  auto keep = conn_;
  if (conn_.get() == &conn) conn_.reset();
  if (why.code() == StatusCode::kPermissionDenied) {
    spdlog::error("{}:{} refused us: {}", host_, port_, why.message());
  }
  if (handler_ && conn.authenticated()) handler_->OnClose(conn, why);
  ScheduleReconnect(why.ok() ? Disconnected("connection closed") : why);
}

void ReconnectingClient::OnDrained(Connection& conn) {
  if (handler_) handler_->OnDrained(conn);
}

}  // namespace copse::net
