// BlockingChannel: a synchronous, authenticated connection for command-line
// tools (copse status, fs, job ...): connect, send frames, wait for replies
// with a deadline. It runs a private io_context only while a call waits.
// Thread-safety: one thread at a time.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/net/frame.h"
#include "common/status.h"

namespace copse::net {

// How a tool waits for a peer that is not there yet (a master that is
// restarting): connection attempts are retried with capped backoff while the
// peer refuses or drops them, for at most `wait`.
struct ConnectRetry {
  std::chrono::milliseconds wait{0};  // 0: one attempt
  // Told once, when the first attempt failed and retries follow: why, and
  // for how long.
  std::function<void(const Status& why, std::chrono::milliseconds wait)> on_wait;
};

class BlockingChannel {
 public:
  // Connects and authenticates within `timeout`. Errors say which address
  // failed and why (unreachable, refused: wrong secret, ...).
  static Result<std::unique_ptr<BlockingChannel>> Connect(const std::string& host, uint16_t port,
                                                          const std::string& secret,
                                                          const std::string& peer_name,
                                                          std::chrono::milliseconds timeout);
  // Connect, retried as `retry` says while the peer is unreachable
  // (kUnavailable) or drops the connection before the handshake ends
  // (kDisconnected); any other failure (a wrong secret) is final.
  static Result<std::unique_ptr<BlockingChannel>> Connect(const std::string& host, uint16_t port,
                                                          const std::string& secret,
                                                          const std::string& peer_name,
                                                          std::chrono::milliseconds timeout,
                                                          const ConnectRetry& retry);
  ~BlockingChannel();
  BlockingChannel(const BlockingChannel&) = delete;
  BlockingChannel& operator=(const BlockingChannel&) = delete;

  // Queues a frame and waits until it is written (or the deadline passes).
  Status Send(Protocol protocol, PayloadKind kind, std::vector<uint8_t> payload,
              std::chrono::milliseconds timeout);
  // Waits for the next frame.
  Result<Frame> Receive(std::chrono::milliseconds timeout);

 private:
  struct Impl;
  explicit BlockingChannel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace copse::net
