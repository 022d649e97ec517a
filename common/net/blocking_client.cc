#include "common/net/blocking_client.h"

#include <fmt/format.h>

#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <deque>
#include <thread>

#include "common/net/backoff.h"
#include "common/net/connection.h"

namespace copse::net {

struct BlockingChannel::Impl final : ConnectionHandler {
  asio::io_context io;
  std::shared_ptr<Connection> conn;
  std::deque<Frame> inbox;
  bool opened = false;
  bool drained = true;
  Status closed_why;
  bool closed = false;
  std::string where;

  ~Impl() override {
    if (conn) {
      conn->set_handler(nullptr);
      conn->Close(Status::Ok());
    }
  }
  void OnOpen(Connection&) override { opened = true; }
  void OnFrame(Connection&, Frame frame) override { inbox.push_back(std::move(frame)); }
  void OnClose(Connection&, const Status& why) override {
    closed = true;
    closed_why = why.ok() ? Disconnected("connection closed") : why;
  }
  void OnDrained(Connection&) override { drained = true; }

  // Runs the loop until `done()` or the deadline.
  template <typename Done>
  bool RunUntil(Done done, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
      auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::nanoseconds(0)) return false;
      io.restart();
      io.run_one_for(left);
    }
    return true;
  }

  Status ClosedStatus() const {
    return closed_why.code() == StatusCode::kPermissionDenied
               ? closed_why
               : Status(closed_why.code(), where + ": " + closed_why.message());
  }
};

BlockingChannel::BlockingChannel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BlockingChannel::~BlockingChannel() = default;

Result<std::unique_ptr<BlockingChannel>> BlockingChannel::Connect(
    const std::string& host, uint16_t port, const std::string& secret, const std::string& peer_name,
    std::chrono::milliseconds timeout) {
  auto impl = std::make_unique<Impl>();
  impl->where = fmt::format("{}:{}", host, port);
  asio::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  if (ec) return InvalidArgument(fmt::format("'{}' is not an IP address", host));
  asio::ip::tcp::socket socket(impl->io);
  bool connected = false;
  asio::error_code connect_ec;
  socket.async_connect(asio::ip::tcp::endpoint(addr, port), [&](const asio::error_code& e) {
    connect_ec = e;
    connected = true;
  });
  if (!impl->RunUntil([&] { return connected; }, timeout)) {
    return Unavailable(fmt::format("cannot connect to {}: timed out", impl->where));
  }
  if (connect_ec) {
    return Unavailable(fmt::format("cannot connect to {}: {}", impl->where, connect_ec.message()));
  }
  TransportOptions options;
  options.handshake_timeout = timeout;
  impl->conn = Connection::Create(std::move(socket), AuthParams{false, secret, "", peer_name},
                                  options, impl.get());
  impl->conn->Start();
  Impl* p = impl.get();
  if (!impl->RunUntil([p] { return p->opened || p->closed; }, timeout)) {
    return DeadlineExceeded(fmt::format("{}: authentication did not finish in time", p->where));
  }
  if (!impl->opened) return impl->ClosedStatus();
  return std::unique_ptr<BlockingChannel>(new BlockingChannel(std::move(impl)));
}

Result<std::unique_ptr<BlockingChannel>> BlockingChannel::Connect(
    const std::string& host, uint16_t port, const std::string& secret, const std::string& peer_name,
    std::chrono::milliseconds timeout, const ConnectRetry& retry) {
  const auto deadline = std::chrono::steady_clock::now() + retry.wait;
  Backoff backoff(BackoffOptions{Duration{100'000}, Duration{2'000'000}, 2.0},
                  static_cast<uint64_t>(port));
  bool told = false;
  while (true) {
    auto ch = Connect(host, port, secret, peer_name, timeout);
    if (ch.ok()) return ch;
    StatusCode code = ch.status().code();
    auto now = std::chrono::steady_clock::now();
    if ((code != StatusCode::kUnavailable && code != StatusCode::kDisconnected) ||
        now >= deadline) {
      return ch;
    }
    if (!told && retry.on_wait) retry.on_wait(ch.status(), retry.wait);
    told = true;
    auto pause = std::chrono::duration_cast<std::chrono::steady_clock::duration>(backoff.Next());
    std::this_thread::sleep_for(std::min(pause, deadline - now));
  }
}

Status BlockingChannel::Send(Protocol protocol, PayloadKind kind, std::vector<uint8_t> payload,
                             std::chrono::milliseconds timeout) {
  Impl* p = impl_.get();
  if (p->closed) return p->ClosedStatus();
  p->drained = false;
  p->conn->Send(protocol, kind, std::move(payload));
  if (!p->RunUntil([p] { return p->drained || p->closed; }, timeout)) {
    return DeadlineExceeded(fmt::format("{}: send did not finish in time", p->where));
  }
  return p->closed ? p->ClosedStatus() : Status::Ok();
}

Result<Frame> BlockingChannel::Receive(std::chrono::milliseconds timeout) {
  Impl* p = impl_.get();
  if (!p->RunUntil([p] { return !p->inbox.empty() || p->closed; }, timeout)) {
    return DeadlineExceeded(fmt::format("{}: no reply in time", p->where));
  }
  if (p->inbox.empty()) return p->ClosedStatus();
  Frame f = std::move(p->inbox.front());
  p->inbox.pop_front();
  return f;
}

bool ConnectionLost(const Status& s) {
  return s.code() == StatusCode::kDisconnected || s.code() == StatusCode::kUnavailable;
}

Result<std::unique_ptr<RedialingChannel>> RedialingChannel::Connect(
    Dial dial, ConnectRetry retry, std::chrono::milliseconds timeout) {
  COPSE_ASSIGN_OR_RETURN(auto channel, dial(retry));
  return std::unique_ptr<RedialingChannel>(
      new RedialingChannel(std::move(dial), std::move(retry), timeout, std::move(channel)));
}

Result<Frame> RedialingChannel::Call(Protocol protocol, const std::vector<uint8_t>& request,
                                     bool resend) {
  const auto deadline = std::chrono::steady_clock::now() + retry_.wait;
  while (true) {
    Result<Frame> reply = Unavailable("not connected");
    if (channel_) {
      Status sent = channel_->Send(protocol, PayloadKind::kMessage, request, timeout_);
      reply = sent.ok() ? channel_->Receive(timeout_) : Result<Frame>(sent);
    }
    if (reply.ok() || !ConnectionLost(reply.status())) return reply;
    if (!resend || std::chrono::steady_clock::now() >= deadline) {
      channel_.reset();  // the next request dials again
      return reply;
    }
    // The peer went away in the middle of the request: ask again on a new
    // connection, waiting for it as long as there is time left.
    ConnectRetry again = retry_;
    again.wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    Result<std::unique_ptr<BlockingChannel>> dialled = dial_(again);
    if (!dialled.ok()) return dialled.status();
    channel_ = std::move(*dialled);
  }
}

}  // namespace copse::net
