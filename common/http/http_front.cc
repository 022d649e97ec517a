#include "common/http/http_front.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "common/json.h"

namespace copse::http {
namespace {

using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// The longest request line the server behind takes (cpp-httplib's 8 KiB).
constexpr size_t kMaxRequestLine = 8 << 10;

// A whole answer from the door itself, for a request it does not pass on.
std::string Answer(int status, const char* reason, const std::string& message) {
  std::string body = DumpJson(nlohmann::json{{"error", message}, {"status", status}});
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\n"
      "Connection: close\r\nCache-Control: no-store\r\n\r\n{}",
      status, reason, body.size(), body);
}

}  // namespace

struct HttpFront::Impl {
  class Conn;

  Impl(Options o, uint16_t backend) : options(std::move(o)), backend_port(backend) {}

  void Accept();
  void Release(Conn* c);

  Options options;
  uint16_t backend_port;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::thread thread;
  std::map<Conn*, std::shared_ptr<Conn>> conns;
  std::map<std::string, size_t> by_source;
  uint64_t refused = 0;
};

class HttpFront::Impl::Conn : public std::enable_shared_from_this<Conn> {
 public:
  Conn(Impl& door, tcp::socket client, std::string source)
      : door_(door),
        client_(std::move(client)),
        backend_(door.io),
        timer_(door.io),
        source_(std::move(source)) {}

  const std::string& source() const { return source_; }

  void Start() {
    deadline_ = Clock::now() + door_.options.head_timeout;
    Watch();
    ReadHead();
  }

  // Answers `text` and closes.
  void Refuse(std::string text) {
    auto self = shared_from_this();
    out_ = std::move(text);
    asio::async_write(client_, asio::buffer(out_),
                      [self](const asio::error_code&, size_t) { self->Close(); });
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    asio::error_code ec;
    timer_.cancel();
    client_.shutdown(tcp::socket::shutdown_both, ec);
    client_.close(ec);
    backend_.close(ec);
    door_.Release(this);
  }

 private:
  void Touch() { deadline_ = Clock::now() + door_.options.idle_timeout; }

  void Watch() {
    auto self = shared_from_this();
    timer_.expires_at(deadline_);
    timer_.async_wait([self](const asio::error_code& ec) {
      if (ec || self->closed_) return;
      if (Clock::now() < self->deadline_) {
        self->Watch();  // moved on since
        return;
      }
      if (!self->passed_) {
        self->Refuse(Answer(408, "Request Timeout",
                            fmt::format("the request's head did not arrive within {} ms",
                                        self->door_.options.head_timeout.count())));
      } else {
        self->Close();
      }
    });
  }

  void ReadHead() {
    auto self = shared_from_this();
    client_.async_read_some(asio::buffer(up_), [self](const asio::error_code& ec, size_t n) {
      if (self->closed_) return;
      if (ec) {
        self->Close();
        return;
      }
      self->head_.append(self->up_.data(), n);
      self->OnHeadBytes();
    });
  }

  void OnHeadBytes() {
    size_t line_end = head_.find("\r\n");
    if ((line_end == std::string::npos ? head_.size() : line_end) > kMaxRequestLine) {
      Refuse(Answer(414, "URI Too Long", "request line too long (at most 8 KiB)"));
      return;
    }
    if (head_.find("\r\n\r\n") != std::string::npos) {
      PassOn();
      return;
    }
    if (head_.size() > door_.options.max_head_bytes) {
      Refuse(Answer(431, "Request Header Fields Too Large",
                    fmt::format("request headers too large (at most {} KiB)",
                                door_.options.max_head_bytes >> 10)));
      return;
    }
    ReadHead();
  }

  void PassOn() {
    passed_ = true;
    Touch();
    auto self = shared_from_this();
    tcp::endpoint to(asio::ip::make_address("127.0.0.1"), door_.backend_port);
    backend_.async_connect(to, [self](const asio::error_code& ec) {
      if (self->closed_) return;
      if (ec) {
        self->Refuse(Answer(503, "Service Unavailable", "the API is not serving; try again"));
        return;
      }
      asio::async_write(self->backend_, asio::buffer(self->head_),
                        [self](const asio::error_code& e, size_t) {
                          if (self->closed_) return;
                          if (e) {
                            self->Close();
                            return;
                          }
                          self->head_.clear();
                          self->Up();
                          self->Down();
                        });
    });
  }

  // Client -> server. Its end (or a failed write) ends only this direction,
  // and is not passed on: the server answers a request whose client closed
  // its sending side with nothing (cpp-httplib takes it for a dead peer),
  // and it closes the connection itself after one answer.
  void Up() {
    auto self = shared_from_this();
    client_.async_read_some(asio::buffer(up_), [self](const asio::error_code& ec, size_t n) {
      if (self->closed_ || ec) return;
      self->Touch();
      asio::async_write(self->backend_, asio::buffer(self->up_.data(), n),
                        [self](const asio::error_code& e, size_t) {
                          if (self->closed_ || e) return;
                          self->Up();
                        });
    });
  }

  // Server -> client; its end closes the connection.
  void Down() {
    auto self = shared_from_this();
    backend_.async_read_some(asio::buffer(down_), [self](const asio::error_code& ec, size_t n) {
      if (self->closed_) return;
      if (ec) {
        self->Close();
        return;
      }
      self->Touch();
      asio::async_write(self->client_, asio::buffer(self->down_.data(), n),
                        [self](const asio::error_code& e, size_t) {
                          if (self->closed_) return;
                          if (e) {
                            self->Close();
                            return;
                          }
                          self->Down();
                        });
    });
  }

  Impl& door_;
  tcp::socket client_;
  tcp::socket backend_;
  asio::steady_timer timer_;
  std::string source_;
  Clock::time_point deadline_;
  std::string head_;
  std::string out_;
  std::array<char, 16 << 10> up_{};
  std::array<char, 16 << 10> down_{};
  bool passed_ = false;
  bool closed_ = false;
};

void HttpFront::Impl::Accept() {
  acceptor.async_accept([this](const asio::error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    if (ec) {
      // Out of descriptors, most likely: try again in a moment, not at once.
      auto pause = std::make_shared<asio::steady_timer>(io, std::chrono::milliseconds(200));
      pause->async_wait([this, pause](const asio::error_code&) { Accept(); });
      return;
    }
    asio::error_code e;
    tcp::no_delay nodelay(true);
    socket.set_option(nodelay, e);
    auto remote = socket.remote_endpoint(e);
    std::string source = e ? "unknown" : remote.address().to_string();
    auto conn = std::make_shared<Conn>(*this, std::move(socket), source);
    size_t& from = by_source[source];
    ++from;
    conns[conn.get()] = conn;
    if (conns.size() > options.max_connections || from > options.max_per_source) {
      if (refused++ % 1000 == 0) {
        spdlog::warn("http: refusing a connection from {}: {} open from it, {} in all ({} refused)",
                     source, from - 1, conns.size() - 1, refused);
      }
      conn->Refuse(Answer(503, "Service Unavailable",
                          "too many connections to this API from your address, or in all; try "
                          "again later"));
    } else {
      conn->Start();
    }
    Accept();
  });
}

void HttpFront::Impl::Release(Conn* c) {
  auto it = conns.find(c);
  if (it == conns.end()) return;
  auto s = by_source.find(c->source());
  if (s != by_source.end() && --s->second == 0) by_source.erase(s);
  // The connection's handlers hold it alive until they have run.
  conns.erase(it);
}

HttpFront::HttpFront(Options options, uint16_t backend_port)
    : options_(std::move(options)), backend_port_(backend_port) {}

HttpFront::~HttpFront() { Stop(); }

Status HttpFront::Start() {
  impl_ = std::make_unique<Impl>(options_, backend_port_);
  asio::error_code ec;
  auto addr = asio::ip::make_address(options_.host, ec);
  if (ec) return InvalidArgument(fmt::format("http: '{}' is not an address", options_.host));
  tcp::endpoint ep(addr, options_.port);
  tcp::acceptor& a = impl_->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    impl_.reset();
    return Unavailable(
        fmt::format("http: cannot listen on {}:{} ({}){}", options_.host, options_.port,
                    ec.message(), options_.listen_hint.empty() ? "" : "; " + options_.listen_hint));
  }
  port_ = a.local_endpoint().port();
  impl_->Accept();
  impl_->thread = std::thread([impl = impl_.get()] { impl->io.run(); });
  return Status::Ok();
}

void HttpFront::Stop() {
  if (!impl_) return;
  Impl* impl = impl_.get();
  asio::post(impl->io, [impl] {
    asio::error_code ec;
    impl->acceptor.close(ec);
    auto conns = impl->conns;
    for (auto& [p, c] : conns) c->Close();
    impl->io.stop();
  });
  if (impl->thread.joinable()) impl->thread.join();
  impl_.reset();
}

}  // namespace copse::http
