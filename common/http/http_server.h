// HttpServer: a read-only HTTP/1.1 server on threads of its own, through
// cpp-httplib (Debian libcpp-httplib-dev: its header, included only by
// http_server.cc, and its shared library). It serves the master's HTTP API
// and dashboard (docs/design.md §13) and a worker's metrics (docs/deploy.md
// "Metrics"). It answers GET and HEAD; every
// other method gets 405, an unknown path 404, a request line or header over 8 KiB 414/431
// (httplib's limits), a body over 16 KiB 413 — each with a JSON error. With a token, every request
// must carry "Authorization: Bearer TOKEN" (401 otherwise). A request whose Host header names
// neither the bound address nor an allowed name gets 403 (DNS rebinding of a loopback API). The
// listening socket is bound without SO_REUSEPORT, so a second master on the same port fails to
// start instead of sharing it. A client sends each read within 5 s, or its connection closes.
//
// Handlers run on the server's threads: they must only read state that is
// safe to read there (master/api.h hands them a snapshot), and so does
// Options::on_response.
// Thread-safety: Route before Start; Start and Stop from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "copse/status.h"

namespace copse::http {

struct HttpRequest {
  std::string path;
  std::vector<std::string> matches;                // the route's regex groups, whole path first
  std::multimap<std::string, std::string> params;  // the query string, decoded
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
};

// A JSON error body: {"error": message, "status": status}.
HttpResponse JsonError(int status, const std::string& message);

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

class HttpServer {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    uint16_t port = 0;  // 0: any free port (tests)
    int threads = 8;
    std::string token;  // empty: none required
    size_t max_body_bytes = 16 << 10;
    // Host header values besides `host` (and, for a loopback `host`,
    // localhost, 127.0.0.1 and ::1) that requests may name; others get 403.
    std::vector<std::string> allowed_hosts;
    // What error messages tell a client to look at: the config keys of the
    // allowed host names, of the token, and of the address and port.
    std::string hosts_hint = "[http] allowed_hosts lists the names it is reached by";
    std::string token_hint = "the token in the file [http] token_file names";
    std::string listen_hint = "set [http] port, or enabled = false";
    // Called after every response the server writes (its status), on the
    // server's threads: request counters. Not called for what the door in
    // front answers by itself (408, 503).
    std::function<void(int status)> on_response;
  };

  explicit HttpServer(Options options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // `pattern` is an ECMAScript regex matched against the whole path.
  void Get(const std::string& pattern, HttpHandler handler);

  // Binds and starts serving. kUnavailable naming the address when it is taken.
  Status Start();
  // The port it listens on (after Start).
  uint16_t port() const { return port_; }
  // Stops accepting and waits for the server's threads.
  void Stop();

 private:
  struct Impl;
  Options options_;
  std::unique_ptr<Impl> impl_;
  uint16_t port_ = 0;
};

}  // namespace copse::http
