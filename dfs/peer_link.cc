#include "dfs/peer_link.h"

#include <fmt/format.h>

#include <asio/post.hpp>

namespace copse::dfs {

PeerLink::PeerLink(asio::io_context& io, Endpoint to, std::string secret, std::string self_name,
                   Callbacks callbacks)
    : io_(io),
      to_(std::move(to)),
      secret_(std::move(secret)),
      self_name_(std::move(self_name)),
      callbacks_(std::move(callbacks)),
      timer_(io) {}

PeerLink::~PeerLink() {
  timer_.cancel();
  if (socket_) {
    asio::error_code ec;
    socket_->close(ec);
  }
  if (conn_) {
    conn_->set_handler(nullptr);
    conn_->Close(Status::Ok());
  }
}

void PeerLink::Start() {
  asio::error_code ec;
  auto addr = asio::ip::make_address(to_.host, ec);
  if (ec) {
    std::weak_ptr<int> alive = alive_;
    asio::post(io_, [this, alive] {
      if (!alive.expired())
        Fail(InvalidArgument(
            fmt::format("'{}' of {} is not an IP address", to_.host, to_.computer)));
    });
    return;
  }
  socket_ = std::make_shared<asio::ip::tcp::socket>(io_);
  std::weak_ptr<int> alive = alive_;
  timer_.expires_after(std::chrono::seconds(5));
  timer_.async_wait([this, alive](const asio::error_code& tec) {
    if (tec || alive.expired() || !socket_) return;
    asio::error_code cec;
    socket_->close(cec);  // the connect fails with operation_aborted
  });
  auto socket = socket_;
  socket_->async_connect(
      asio::ip::tcp::endpoint(addr, to_.data_port),
      [this, alive, socket](const asio::error_code& cec) {
        if (alive.expired() || closed_) return;
        timer_.cancel();
        socket_.reset();
        if (cec) {
          Fail(Unavailable(
              fmt::format("cannot connect to {} ({}:{}): {}", to_.computer, to_.host, to_.data_port,
                          cec == asio::error::operation_aborted ? "timed out" : cec.message())));
          return;
        }
        conn_ = net::Connection::Create(std::move(*socket),
                                        net::AuthParams{false, secret_, "", self_name_},
                                        net::TransportOptions{}, this);
        conn_->Start();
      });
}

void PeerLink::Send(net::PayloadKind kind, std::vector<uint8_t> payload) {
  if (closed_) return;
  if (conn_ && conn_->open()) {
    conn_->Send(net::Protocol::kDfs, kind, std::move(payload));
    return;
  }
  waiting_bytes_ += payload.size();
  waiting_.emplace_back(kind, std::move(payload));
}

size_t PeerLink::queued_bytes() const {
  return waiting_bytes_ + (conn_ ? conn_->queued_bytes() : 0);
}

void PeerLink::OnOpen(net::Connection& conn) {
  for (auto& [kind, payload] : waiting_) conn.Send(net::Protocol::kDfs, kind, std::move(payload));
  waiting_.clear();
  waiting_bytes_ = 0;
}

void PeerLink::OnFrame(net::Connection& conn, net::Frame frame) {
  if (frame.protocol != net::Protocol::kDfs) {
    conn.Close(InvalidArgument(fmt::format("{} sent a {} frame on its data port", to_.computer,
                                           net::ProtocolName(frame.protocol))));
    return;
  }
  auto cb = callbacks_.on_frame;  // the callback may destroy this link
  if (cb) cb(std::move(frame));
}

void PeerLink::OnClose(net::Connection& /*conn*/, const Status& why) {
  Fail(why.ok() ? Disconnected(fmt::format("{} closed the connection", to_.computer))
                : Status(why.code(), fmt::format("{}: {}", to_.computer, why.message())));
}

void PeerLink::OnDrained(net::Connection& /*conn*/) {
  auto cb = callbacks_.on_drained;
  if (cb) cb();
}

void PeerLink::Fail(const Status& why) {
  if (closed_) return;
  closed_ = true;
  waiting_.clear();
  waiting_bytes_ = 0;
  auto cb = callbacks_.on_close;
  if (cb) cb(why);
}

}  // namespace copse::dfs
