// HttpFront: the door of an HTTP server's port (common/http/http_server.h). It accepts connections
// itself and passes each on to the HTTP server behind it (cpp-httplib, on a
// loopback port of its own, one request per connection) only once the
// request's head — its request line and headers — has arrived whole. A
// client that trickles its request byte by byte, or opens connection after
// connection, so holds none of the server's threads:
//   - at most `max_connections` connections are open, and `max_per_source`
//     from one address; one beyond is answered 503 and closed;
//   - a head must arrive within `head_timeout` (else 408 and closed); one
//     larger than `max_head_bytes` is passed on as it is, for the server to
//     refuse (431, 414);
//   - a connection quiet for `idle_timeout` either way is closed.
// Bytes are relayed as they are in both directions; nothing is parsed but
// the blank line that ends a head.
// Thread-safety: Start and Stop from one thread; the door runs on a thread
// of its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "copse/status.h"

namespace copse::http {

class HttpFront {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    uint16_t port = 0;  // 0: any free port
    size_t max_connections = 128;
    size_t max_per_source = 32;
    std::chrono::milliseconds head_timeout{10'000};
    std::chrono::milliseconds idle_timeout{30'000};
    size_t max_head_bytes = 16 << 10;
    std::string listen_hint;  // what a failure to listen tells the operator to change
  };

  // Requests go on to the server listening on 127.0.0.1:`backend_port`.
  HttpFront(Options options, uint16_t backend_port);
  ~HttpFront();
  HttpFront(const HttpFront&) = delete;
  HttpFront& operator=(const HttpFront&) = delete;

  // Binds (without SO_REUSEPORT) and starts accepting. kUnavailable naming
  // the address when it is taken.
  Status Start();
  uint16_t port() const { return port_; }
  // Closes the port and every connection, and waits for the thread.
  void Stop();

 private:
  struct Impl;
  Options options_;
  uint16_t backend_port_;
  uint16_t port_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace copse::http
