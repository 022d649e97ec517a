#include "common/http/http_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "common/http/http_front.h"
#include "common/json.h"

namespace copse::http {
namespace {

// Bodies worth compressing: text the browser will parse, at least 1 KiB.
bool Compressible(const HttpResponse& r) {
  const std::string& t = r.content_type;
  return r.body.size() >= 1024 &&
         (t.rfind("application/json", 0) == 0 || t.rfind("text/", 0) == 0 ||
          t.rfind("application/javascript", 0) == 0 || t.rfind("image/svg+xml", 0) == 0);
}

// Whether the request's Accept-Encoding takes gzip: listed, without q=0.
bool AcceptsGzip(const std::string& accept) {
  for (size_t at = 0; at < accept.size();) {
    size_t end = std::min(accept.find(',', at), accept.size());
    std::string item;
    for (size_t i = at; i < end; ++i) {
      if (accept[i] != ' ' && accept[i] != '\t') item += accept[i];
    }
    at = end + 1;
    if (item != "gzip" && item.rfind("gzip;", 0) != 0) continue;
    size_t q = item.find(";q=");
    return q == std::string::npos || std::strtod(item.c_str() + q + 3, nullptr) > 0;
  }
  return false;
}

// gzip at zlib's fastest level: a 500 KB timeline in a few milliseconds, to
// about a tenth of its size. Empty on failure (the body goes uncompressed).
std::string Gzip(const std::string& in) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out(deflateBound(&z, in.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return rc == Z_STREAM_END ? out : std::string();
}

// `accept` is the request's Accept-Encoding. cpp-httplib would compress by
// itself, with brotli at its slowest quality when the browser offers "br"
// (1.2 s for a 500 KB timeline, measured): every content type goes out with
// a parameter, which its exact-match list never matches, and large bodies
// are gzipped here instead.
void Send(const HttpResponse& r, httplib::Response& res, const std::string& accept = "") {
  res.status = r.status;
  for (const auto& [k, v] : r.headers) res.set_header(k, v);
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Content-Type-Options", "nosniff");
  std::string type = r.content_type;
  if (type.find(';') == std::string::npos && type != "application/octet-stream") {
    type += "; charset=utf-8";
  }
  if (Compressible(r)) {
    res.set_header("Vary", "Accept-Encoding");
    if (AcceptsGzip(accept)) {
      std::string packed = Gzip(r.body);
      if (!packed.empty()) {
        res.set_header("Content-Encoding", "gzip");
        res.set_content(packed, type);
        return;
      }
    }
  }
  res.set_content(r.body, type);
}

// The host of a Host header: "h:port" -> "h", "[::1]:port" -> "::1".
std::string HostPart(const std::string& header) {
  if (!header.empty() && header[0] == '[') {
    size_t end = header.find(']');
    return end == std::string::npos ? header : header.substr(1, end - 1);
  }
  size_t colon = header.find(':');
  return colon == std::string::npos ? header : header.substr(0, colon);
}

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// Compares in time independent of where the strings differ.
bool SameToken(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string ReasonFor(int status) {
  switch (status) {
    case 400:
      return "bad request";
    case 404:
      return "no such path";
    case 405:
      return "the API is read-only: only GET and HEAD are served";
    case 413:
      return "request body too large";
    case 414:
      return "request line too long (at most 8 KiB)";
    case 431:
      return "request headers too large";
    default:
      return fmt::format("HTTP status {}", status);
  }
}

}  // namespace

HttpResponse JsonError(int status, const std::string& message) {
  HttpResponse r;
  r.status = status;
  r.body = DumpJson(nlohmann::json{{"error", message}, {"status", status}});
  return r;
}

struct HttpServer::Impl {
  httplib::Server server;
  std::thread thread;
  std::unique_ptr<HttpFront> front;
};

HttpServer::HttpServer(Options options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  httplib::Server& s = impl_->server;
  int threads = options_.threads;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  s.set_payload_max_length(options_.max_body_bytes);
  s.set_read_timeout(5, 0);
  s.set_write_timeout(5, 0);
  // One request per connection: the door in front (HttpFront) passes on a
  // connection once its request's head is whole, and a second request on
  // the same connection would arrive unwatched. On loopback a new
  // connection costs the door a few microseconds.
  s.set_keep_alive_max_count(1);
  s.set_keep_alive_timeout(1);
  // httplib's default sets SO_REUSEPORT, which would let two masters share a port.
  // TCP_NODELAY (inherited by accepted connections): a response's header and
  // body go out as separate writes, which Nagle's algorithm would hold for
  // the client's delayed ACK (40 ms a request).
  s.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
  });
  if (options_.on_response) {
    s.set_logger(
        [on_response = options_.on_response](
            const httplib::Request&, const httplib::Response& res) { on_response(res.status); });
  }
  std::string token = options_.token;
  std::set<std::string> hosts(options_.allowed_hosts.begin(), options_.allowed_hosts.end());
  hosts.insert(options_.host);
  if (IsLoopbackHost(options_.host)) hosts.insert({"localhost", "127.0.0.1", "::1"});
  s.set_pre_routing_handler(
      [token, hosts, hosts_hint = options_.hosts_hint, token_hint = options_.token_hint](
          const httplib::Request& req, httplib::Response& res) {
        if (req.has_header("Host")) {
          std::string host = HostPart(req.get_header_value("Host"));
          if (hosts.count(host) == 0) {
            Send(JsonError(403, fmt::format("this API does not answer to the host '{}' ({})", host,
                                            hosts_hint)),
                 res);
            return httplib::Server::HandlerResponse::Handled;
          }
        }
        if (token.empty()) return httplib::Server::HandlerResponse::Unhandled;
        std::string auth = req.get_header_value("Authorization");
        const std::string prefix = "Bearer ";
        if (auth.rfind(prefix, 0) == 0 && SameToken(auth.substr(prefix.size()), token)) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        HttpResponse r = JsonError(
            401, fmt::format("this API requires \"Authorization: Bearer TOKEN\" ({})", token_hint));
        r.headers.push_back({"WWW-Authenticate", "Bearer"});
        Send(r, res);
        return httplib::Server::HandlerResponse::Handled;
      });
  auto refuse = [](const httplib::Request&, httplib::Response& res) {
    HttpResponse r = JsonError(405, ReasonFor(405));
    r.headers.push_back({"Allow", "GET, HEAD"});
    Send(r, res);
  };
  s.Post(".*", refuse);
  s.Put(".*", refuse);
  s.Delete(".*", refuse);
  s.Patch(".*", refuse);
  s.Options(".*", refuse);
  s.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        Send(JsonError(res.status, ReasonFor(res.status)), res);
        return httplib::Server::HandlerResponse::Handled;
      }));
  s.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown error";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        spdlog::error("http: {}: {}", req.path, what);
        Send(JsonError(500, "internal error: " + what), res);
      });
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Get(const std::string& pattern, HttpHandler handler) {
  impl_->server.Get(
      pattern, [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
        HttpRequest r;
        r.path = req.path;
        for (const auto& m : req.matches) r.matches.push_back(m.str());
        r.params.insert(req.params.begin(), req.params.end());
        Send(handler(r), res, req.get_header_value("Accept-Encoding"));
      });
}

Status HttpServer::Start() {
  httplib::Server& s = impl_->server;
  // The server itself listens on loopback only, for its door.
  int inner = s.bind_to_any_port("127.0.0.1");
  if (inner <= 0) return Unavailable("http: cannot bind a loopback port for the server");
  HttpFront::Options fo;
  fo.host = options_.host;
  fo.port = options_.port;
  fo.listen_hint = options_.listen_hint;
  impl_->front = std::make_unique<HttpFront>(fo, static_cast<uint16_t>(inner));
  COPSE_RETURN_IF_ERROR(impl_->front->Start());
  port_ = impl_->front->port();
  impl_->thread = std::thread([this] { impl_->server.listen_after_bind(); });
  return Status::Ok();
}

void HttpServer::Stop() {
  if (impl_->front) impl_->front->Stop();
  if (!impl_->thread.joinable()) return;
  impl_->server.stop();
  impl_->thread.join();
}

}  // namespace copse::http
