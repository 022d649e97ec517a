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
#include "copse/status.h"

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

// True for what a dropped or refused connection gives (kDisconnected,
// kUnavailable): the peer may be back on a new connection.
bool ConnectionLost(const Status& s);

// A request-reply channel to a peer that may restart (the master): when
// the connection drops in the middle of a request that is safe to send
// twice (a read, or a write the peer recognises when it comes again), the
// request is sent again on a new connection, dialled as `retry` says, for
// at most `retry.wait` from the request's start. One mechanism for every
// client of the master (the `copse` tool, the DFS client, the SDK).
// Thread-safety: one thread at a time.
class RedialingChannel {
 public:
  // Makes a new connection, waiting for the peer at most as long as the
  // ConnectRetry it is given says.
  using Dial = std::function<Result<std::unique_ptr<BlockingChannel>>(const ConnectRetry&)>;
  // Dials the first connection.
  static Result<std::unique_ptr<RedialingChannel>> Connect(Dial dial, ConnectRetry retry,
                                                           std::chrono::milliseconds timeout);

  // Sends `request` and waits for the reply. With `resend`, a connection
  // lost on the way is dialled again and the request sent again, while
  // time is left; without, the loss is the answer.
  Result<Frame> Call(Protocol protocol, const std::vector<uint8_t>& request, bool resend);

 private:
  RedialingChannel(Dial dial, ConnectRetry retry, std::chrono::milliseconds timeout,
                   std::unique_ptr<BlockingChannel> channel)
      : dial_(std::move(dial)),
        retry_(std::move(retry)),
        timeout_(timeout),
        channel_(std::move(channel)) {}
  Dial dial_;
  ConnectRetry retry_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<BlockingChannel> channel_;  // null after a failed redial
};

}  // namespace copse::net
