// PeerLink: an outgoing authenticated connection from a worker to another
// worker's data port (the next replica of a write pipeline, or the source of
// a block copy). It connects asynchronously; frames sent before the
// connection opens wait in order and go out once it does. Events arrive
// through callbacks; destroying the link closes the connection and silences
// every callback.
// Thread-safety: use from the io_context's thread only.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/net/connection.h"
#include "dfs/dfs_types.h"

namespace copse::dfs {

class PeerLink final : public net::ConnectionHandler {
 public:
  struct Callbacks {
    std::function<void(net::Frame)> on_frame;
    // Once, when the connection fails or closes (ok: closed by this side).
    std::function<void(const Status&)> on_close;
    std::function<void()> on_drained;
  };

  // REQUIRES: `io` outlives the link.
  PeerLink(asio::io_context& io, Endpoint to, std::string secret, std::string self_name,
           Callbacks callbacks);
  ~PeerLink() override;
  PeerLink(const PeerLink&) = delete;
  PeerLink& operator=(const PeerLink&) = delete;

  void Start();
  void Send(net::PayloadKind kind, std::vector<uint8_t> payload);
  // Bytes queued and not yet written (including frames waiting for the open).
  size_t queued_bytes() const;
  bool closed() const { return closed_; }
  const Endpoint& to() const { return to_; }

  void OnOpen(net::Connection& conn) override;
  void OnFrame(net::Connection& conn, net::Frame frame) override;
  void OnClose(net::Connection& conn, const Status& why) override;
  void OnDrained(net::Connection& conn) override;

 private:
  void Fail(const Status& why);

  asio::io_context& io_;
  Endpoint to_;
  std::string secret_;
  std::string self_name_;
  Callbacks callbacks_;
  asio::steady_timer timer_;
  std::shared_ptr<asio::ip::tcp::socket> socket_;
  std::shared_ptr<net::Connection> conn_;
  std::vector<std::pair<net::PayloadKind, std::vector<uint8_t>>> waiting_;
  size_t waiting_bytes_ = 0;
  bool closed_ = false;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace copse::dfs
