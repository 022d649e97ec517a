#include "master/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <zlib.h>

#include <string>

namespace copse::master {
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

}  // namespace
}  // namespace copse::master
