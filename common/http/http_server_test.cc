#include "common/http/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/http/http_front.h"

namespace copse::http {
namespace {

// What a gzip body inflates to ("" when it is not gzip).
std::string Gunzip(const std::string& in) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return "";
  std::string out(1 << 20, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&z, Z_FINISH);
  out.resize(z.total_out);
  inflateEnd(&z);
  return rc == Z_STREAM_END ? out : "";
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    big_ = "[";
    for (int i = 0; i < 5000; ++i) big_ += "{\"run\":" + std::to_string(i) + "},";
    big_ += "0]";
    server_.Get("/big", [this](const HttpRequest&) {
      HttpResponse r;
      r.body = big_;
      return r;
    });
    server_.Get("/small", [](const HttpRequest&) {
      HttpResponse r;
      r.body = "{\"ok\":true}";
      return r;
    });
    ASSERT_TRUE(server_.Start().ok());
  }

  httplib::Result Fetch(const std::string& path, const std::string& accept) {
    httplib::Client c("127.0.0.1", server_.port());
    c.set_decompress(false);  // see the bytes on the wire
    httplib::Headers h;
    if (!accept.empty()) h.emplace("Accept-Encoding", accept);
    return c.Get(path, h);
  }

  std::string big_;
  HttpServer server_{HttpServer::Options{}};
};

// Browsers offer brotli first; the server answers with fast gzip, never
// with httplib's slow brotli, and the body inflates to what the handler made.
TEST_F(HttpServerTest, LargeBodiesAreGzippedWhenTheClientTakesGzip) {
  auto r = Fetch("/big", "gzip, deflate, br");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Encoding"), "gzip");
  EXPECT_EQ(r->get_header_value("Vary"), "Accept-Encoding");
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json; charset=utf-8");
  EXPECT_LT(r->body.size(), big_.size() / 3);
  EXPECT_EQ(Gunzip(r->body), big_);
}

TEST_F(HttpServerTest, OtherwiseBodiesGoAsTheyAre) {
  for (const char* accept : {"", "br", "deflate", "gzip;q=0", "x-gzip2", "br, gzip ; q=0"}) {
    auto r = Fetch("/big", accept);
    ASSERT_TRUE(r) << accept;
    EXPECT_FALSE(r->has_header("Content-Encoding")) << accept;
    EXPECT_EQ(r->body, big_) << accept;
  }
  auto r = Fetch("/big", "br;q=1.0, gzip;q=0.5");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get_header_value("Content-Encoding"), "gzip");
  // Small bodies are not worth a compressor's header.
  r = Fetch("/small", "gzip, br");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->has_header("Content-Encoding"));
  EXPECT_EQ(r->body, "{\"ok\":true}");
}

// Errors the server makes by itself come out as JSON and uncompressed too.
TEST_F(HttpServerTest, UnknownPathsAndWritesGetJsonErrors) {
  auto r = Fetch("/nothing", "gzip, br");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_FALSE(r->has_header("Content-Encoding"));
  EXPECT_NE(r->body.find("\"status\":404"), std::string::npos) << r->body;
  httplib::Client c("127.0.0.1", server_.port());
  auto w = c.Post("/big", "x", "text/plain");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->status, 405);
  EXPECT_EQ(w->get_header_value("Allow"), "GET, HEAD");
}

// A connection to 127.0.0.1:`port`, or -1.
int Open(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Everything `fd` receives until the peer closes (or 10 s pass).
std::string ReadAll(int fd) {
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    got.append(buf, static_cast<size_t>(n));
  return got;
}

// Clients that open connections and trickle their requests never hold the
// server's threads: a whole request from someone else is still answered
// at once, and beyond the per-source cap a connection is refused with 503.
TEST_F(HttpServerTest, SlowAndManyClientsHoldNoThreads) {
  std::vector<int> slow;
  for (int i = 0; i < 30; ++i) {  // more than the server's 8 threads, within the cap of 32
    int fd = Open(server_.port());
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::send(fd, "GET /sm", 7, MSG_NOSIGNAL), 7);
    slow.push_back(fd);
  }
  auto start = std::chrono::steady_clock::now();
  auto r = Fetch("/small", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  std::vector<int> more;
  for (int i = 0; i < 4; ++i) more.push_back(Open(server_.port()));
  std::string refused = ReadAll(more.back());
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  for (int fd : slow) ::close(fd);
  for (int fd : more) ::close(fd);
}

// A client that sends its request and closes its sending side at once
// (curl does with --http1.0 and a body, netcat does) still gets its answer.
TEST_F(HttpServerTest, AHalfClosedRequestIsAnswered) {
  int fd = Open(server_.port());
  ASSERT_GE(fd, 0);
  std::string req = "GET /small HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  ::shutdown(fd, SHUT_WR);
  std::string got = ReadAll(fd);
  ::close(fd);
  EXPECT_EQ(got.rfind("HTTP/1.1 200", 0), 0u) << got;
  EXPECT_NE(got.find("{\"ok\":true}"), std::string::npos) << "[" << got << "]";
}

TEST(HttpFrontTest, AHeadThatDoesNotArriveInTimeIsAnswered408) {
  HttpFront::Options o;
  o.head_timeout = std::chrono::milliseconds(200);
  HttpFront front(o, /*backend_port=*/1);  // nothing is passed on
  ASSERT_TRUE(front.Start().ok());
  int fd = Open(front.port());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::send(fd, "GET / HTTP/1.1\r\nHost: x", 24, MSG_NOSIGNAL), 24);
  std::string got = ReadAll(fd);
  ::close(fd);
  EXPECT_EQ(got.rfind("HTTP/1.1 408", 0), 0u) << got;
  EXPECT_NE(got.find("\"status\":408"), std::string::npos) << got;
  front.Stop();
}

TEST_F(HttpServerTest, RequestsNamingAnotherHostAreRefused) {
  httplib::Client c("127.0.0.1", server_.port());
  auto ok = c.Get("/small", {{"Host", "localhost:1234"}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  auto bad = c.Get("/small", {{"Host", "rebound.example.com"}});
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 403);
  EXPECT_NE(bad->body.find("rebound.example.com"), std::string::npos) << bad->body;
}

// Every response the server writes is counted, whoever made it: a handler,
// the router (404), the write refusal (405) and the host check (403).
TEST(HttpServerHooksTest, OnResponseSeesEveryStatus) {
  std::mutex mu;
  std::map<int, int> seen;
  HttpServer::Options o;
  o.threads = 2;
  o.on_response = [&](int status) {
    std::lock_guard<std::mutex> lock(mu);
    ++seen[status];
  };
  HttpServer server(o);
  server.Get("/ok", [](const HttpRequest&) { return HttpResponse{}; });
  ASSERT_TRUE(server.Start().ok());
  httplib::Client c("127.0.0.1", server.port());
  ASSERT_TRUE(c.Get("/ok"));
  ASSERT_TRUE(c.Get("/ok"));
  ASSERT_TRUE(c.Get("/missing"));
  ASSERT_TRUE(c.Post("/ok", "x", "text/plain"));
  ASSERT_TRUE(c.Get("/ok", {{"Host", "elsewhere.example.com"}}));
  server.Stop();
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(seen, (std::map<int, int>{{200, 2}, {403, 1}, {404, 1}, {405, 1}}));
}

}  // namespace
}  // namespace copse::http
