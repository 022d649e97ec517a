// Connection: one authenticated TCP connection carrying frames (frame.h) on an
// Asio io_context. It first runs the challenge-response handshake (auth.h,
// proto/auth.capnp), as the server or the client side, then hands every frame
// to its ConnectionHandler. A malformed, oversized or truncated frame, a
// failed handshake or an I/O error closes this connection only, with the
// reason logged and passed to OnClose.
//
// Thread-safety: a Connection belongs to the thread running its io_context;
// call its methods only from there. Handlers are called on that thread.
#pragma once

#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "common/net/frame.h"
#include "copse/status.h"

namespace copse::net {

struct TransportOptions {
  size_t max_frame_bytes = 16u << 20;       // limit for authenticated peers
  size_t max_handshake_frame_bytes = 4096;  // limit before authentication
  std::chrono::milliseconds handshake_timeout{5000};
  std::chrono::milliseconds connect_timeout{5000};
  // A server accepts at most this many connections that have not finished
  // the handshake, in all and from one address; more are closed at once.
  size_t max_unauthenticated = 256;
  size_t max_unauthenticated_per_source = 32;
};

class Connection;

// Receives a connection's events, on its io_context thread.
class ConnectionHandler {
 public:
  virtual ~ConnectionHandler() = default;
  // Authentication succeeded; frames may be sent from now on.
  virtual void OnOpen(Connection& /*conn*/) {}
  // A frame arrived. Auth frames are consumed by the connection itself.
  virtual void OnFrame(Connection& conn, Frame frame) = 0;
  // The connection closed, once. `why` is ok when this side closed it cleanly.
  virtual void OnClose(Connection& conn, const Status& why) = 0;
  // Everything queued has been written to the socket.
  virtual void OnDrained(Connection& /*conn*/) {}
};

struct AuthParams {
  bool server = false;
  std::string secret;
  std::string service;    // server side: "master", "worker-control", ...
  std::string peer_name;  // client side: how this process introduces itself
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // REQUIRES: `handler` outlives the connection or is cleared by set_handler.
  static std::shared_ptr<Connection> Create(asio::ip::tcp::socket socket, AuthParams auth,
                                            TransportOptions options, ConnectionHandler* handler);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts the handshake and the read loop.
  void Start();

  // Queues a frame. Ignored when the connection is closed.
  // REQUIRES: open() (authenticated), except for the connection's own auth frames.
  void Send(Protocol protocol, PayloadKind kind, std::vector<uint8_t> payload);

  // Closes now; OnClose(why) follows (posted, never re-entrant). A non-ok
  // reason is logged. Idempotent.
  void Close(const Status& why);
  // Closes once every queued frame has been written.
  void CloseAfterFlush(const Status& why);

  void set_handler(ConnectionHandler* handler) { handler_ = handler; }
  bool open() const { return authenticated_ && !closed_; }
  // True once the handshake succeeded (stays true after closing).
  bool authenticated() const { return authenticated_; }
  bool closed() const { return closed_; }
  size_t queued_bytes() const { return queued_bytes_; }
  uint64_t id() const { return id_; }
  // "ip:port" of the other end.
  const std::string& remote() const { return remote_; }
  // The name the client gave in the handshake (server side), or the service
  // the server announced (client side).
  const std::string& peer_name() const { return peer_name_; }

 private:
  struct OutFrame {
    std::array<uint8_t, kFrameHeaderSize> header;
    std::vector<uint8_t> payload;
  };

  Connection(asio::ip::tcp::socket socket, AuthParams auth, TransportOptions options,
             ConnectionHandler* handler);
  void ReadMore();
  void OnRead(const asio::error_code& ec, size_t n);
  void Dispatch(Frame frame);
  void HandleAuthFrame(const Frame& frame);
  void ServerCheckResponse(const Frame& frame);
  void ClientAnswerChallenge(const Frame& frame);
  void ClientCheckOutcome(const Frame& frame);
  void SendAuth(std::vector<uint8_t> payload);
  void Authenticated();
  void WriteNext();

  asio::ip::tcp::socket socket_;
  asio::steady_timer handshake_timer_;
  AuthParams auth_;
  TransportOptions options_;
  ConnectionHandler* handler_;
  FrameDecoder decoder_;
  std::vector<uint8_t> read_buf_;
  std::deque<OutFrame> out_;
  size_t queued_bytes_ = 0;
  bool writing_ = false;
  bool authenticated_ = false;
  bool closed_ = false;
  bool close_after_flush_ = false;
  Status close_reason_;
  std::vector<uint8_t> server_nonce_;
  std::vector<uint8_t> client_nonce_;
  int auth_step_ = 0;
  uint64_t id_;
  std::string remote_;
  std::string peer_name_;
};

}  // namespace copse::net
