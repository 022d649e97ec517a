// Link and Timer: the seams of a component that keeps a connection to a
// server and acts on timers (the worker's agent, a job's root). In the
// daemons a ReconnectingLink keeps the connection (reconnecting with capped
// exponential backoff, net/client.h) and an AsioTimer runs on the
// io_context; a unit test gives the component fakes of both, plays the
// server's part with the frames it hands the LinkHandler, and fires the
// timers itself, with no socket and no time passing.
// Thread-safety: use from the io_context's thread only.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/net/backoff.h"
#include "common/net/client.h"
#include "common/net/connection.h"
#include "common/net/frame.h"
#include "copse/status.h"

namespace copse::net {

// What a link tells its user.
class LinkHandler {
 public:
  virtual ~LinkHandler() = default;
  // A connection to the server at `remote` opened (authenticated).
  virtual void OnLinkOpen(const std::string& remote) = 0;
  // A frame arrived on the open connection.
  virtual void OnLinkFrame(const Frame& frame) = 0;
  // The open connection closed, once; the link connects again.
  virtual void OnLinkClose(const Status& why) = 0;
};

// A connection to one server, kept open (reconnecting) between Start and Stop.
class Link {
 public:
  virtual ~Link() = default;
  virtual void Start() = 0;
  virtual void Stop() = 0;
  // Queues a message frame on the open connection; false while there is none.
  virtual bool Send(Protocol protocol, std::vector<uint8_t> payload) = 0;
  // Closes the open connection, if any (the link connects again).
  virtual void Close(const Status& why) = 0;
};

class ReconnectingLink final : public Link, public ConnectionHandler {
 public:
  // REQUIRES: `handler` outlives the link.
  ReconnectingLink(asio::io_context& io, std::string host, uint16_t port, AuthParams auth,
                   uint64_t seed, LinkHandler& handler)
      : handler_(handler),
        client_(io, std::move(host), port, std::move(auth), TransportOptions{}, BackoffOptions{},
                seed, this) {}

  void Start() override { client_.Start(); }
  void Stop() override { client_.Stop(); }
  bool Send(Protocol protocol, std::vector<uint8_t> payload) override {
    Connection* conn = client_.connection();
    if (conn == nullptr) return false;
    conn->Send(protocol, PayloadKind::kMessage, std::move(payload));
    return true;
  }
  void Close(const Status& why) override {
    if (Connection* conn = client_.connection()) conn->Close(why);
  }

  void OnOpen(Connection& conn) override { handler_.OnLinkOpen(conn.remote()); }
  void OnFrame(Connection&, Frame frame) override { handler_.OnLinkFrame(frame); }
  void OnClose(Connection&, const Status& why) override { handler_.OnLinkClose(why); }

 private:
  LinkHandler& handler_;
  ReconnectingClient client_;
};

// Calls a function once, after a delay; Arm replaces what is pending, and
// Cancel drops it.
class Timer {
 public:
  virtual ~Timer() = default;
  virtual void Arm(Duration after, std::function<void()> fn) = 0;
  virtual void Cancel() = 0;
};

class AsioTimer final : public Timer {
 public:
  explicit AsioTimer(asio::io_context& io) : timer_(io) {}
  void Arm(Duration after, std::function<void()> fn) override {
    timer_.expires_after(std::chrono::microseconds(after.count()));
    timer_.async_wait([fn = std::move(fn)](const asio::error_code& ec) {
      if (!ec) fn();
    });
  }
  void Cancel() override { timer_.cancel(); }

 private:
  asio::steady_timer timer_;
};

}  // namespace copse::net
