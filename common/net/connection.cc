#include "common/net/connection.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <asio/post.hpp>
#include <asio/write.hpp>
#include <atomic>

#include "common/net/auth.h"
#include "common/net/message.h"
#include "proto/auth.capnp.h"

namespace copse::net {
namespace {

std::atomic<uint64_t> next_connection_id{1};
constexpr size_t kReadChunk = 64 * 1024;
// Room of a large payload offered per direct read: zero-filled just before
// the read, so it is still in the cache when the kernel copies into it.
constexpr size_t kDirectPiece = 256 * 1024;

std::vector<uint8_t> ToVector(capnp::Data::Reader d) { return {d.begin(), d.end()}; }
kj::ArrayPtr<const kj::byte> ToData(const std::vector<uint8_t>& v) {
  return kj::arrayPtr(v.data(), v.size());
}

std::string RemoteOf(const asio::ip::tcp::socket& s) {
  asio::error_code ec;
  auto ep = s.remote_endpoint(ec);
  if (ec) return "unknown peer";
  return fmt::format("{}:{}", ep.address().to_string(), ep.port());
}

}  // namespace

std::shared_ptr<Connection> Connection::Create(asio::ip::tcp::socket socket, AuthParams auth,
                                               TransportOptions options,
                                               ConnectionHandler* handler) {
  return std::shared_ptr<Connection>(
      new Connection(std::move(socket), std::move(auth), options, handler));
}

Connection::Connection(asio::ip::tcp::socket socket, AuthParams auth, TransportOptions options,
                       ConnectionHandler* handler)
    : socket_(std::move(socket)),
      handshake_timer_(socket_.get_executor()),
      auth_(std::move(auth)),
      options_(options),
      handler_(handler),
      decoder_(options.max_handshake_frame_bytes),
      read_buf_(kReadChunk),
      id_(next_connection_id.fetch_add(1)),
      remote_(RemoteOf(socket_)) {
  asio::error_code ec;
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
}

Connection::~Connection() = default;

void Connection::Start() {
  auto self = shared_from_this();
  handshake_timer_.expires_after(options_.handshake_timeout);
  handshake_timer_.async_wait([self](const asio::error_code& ec) {
    if (!ec && !self->authenticated_ && !self->closed_) {
      self->Close(DeadlineExceeded("authentication handshake did not finish in time"));
    }
  });
  if (auth_.server) {
    server_nonce_ = RandomBytes(kNonceSize);
    capnp::MallocMessageBuilder msg;
    auto c = msg.initRoot<proto::AuthMessage>().initChallenge();
    c.setVersion(kAuthVersion);
    c.setNonce(ToData(server_nonce_));
    c.setService(auth_.service);
    SendAuth(EncodeMessage(msg));
  }
  ReadMore();
}

void Connection::ReadMore() {
  if (closed_) return;
  auto self = shared_from_this();
  std::span<uint8_t> missing = decoder_.MissingPayload(kDirectPiece);
  if (missing.size() >= kReadChunk) {
    // A large payload (a DFS chunk) is read straight into its frame rather
    // than copied out of read_buf_. Only a frame whose header passed the
    // decoder's checks and size limit gets here (before authentication the
    // limit is max_handshake_frame_bytes, below kReadChunk).
    socket_.async_read_some(asio::buffer(missing.data(), missing.size()),
                            [self](const asio::error_code& ec, size_t n) {
                              if (self->closed_) return;
                              if (ec) {
                                self->OnRead(ec, 0);
                                return;
                              }
                              std::vector<Frame> frames;
                              self->decoder_.PayloadArrived(n, &frames);
                              for (Frame& f : frames) {
                                if (self->closed_) break;
                                self->Dispatch(std::move(f));
                              }
                              self->ReadMore();
                            });
    return;
  }
  socket_.async_read_some(asio::buffer(read_buf_),
                          [self](const asio::error_code& ec, size_t n) { self->OnRead(ec, n); });
}

void Connection::OnRead(const asio::error_code& ec, size_t n) {
  if (closed_) return;
  if (ec) {
    if (decoder_.HasPartialFrame()) {
      Close(Corruption(decoder_.PartialDescription()));
    } else if (ec == asio::error::eof) {
      Close(Disconnected("peer closed the connection"));
    } else {
      Close(Disconnected("read failed: " + ec.message()));
    }
    return;
  }
  std::vector<Frame> frames;
  Status s = decoder_.Feed(std::span<const uint8_t>(read_buf_.data(), n), &frames);
  for (Frame& f : frames) {
    if (closed_) break;
    Dispatch(std::move(f));
  }
  if (!s.ok()) {
    Close(s);
    return;
  }
  ReadMore();
}

void Connection::Dispatch(Frame frame) {
  if (!authenticated_) {
    HandleAuthFrame(frame);
    return;
  }
  if (frame.protocol == Protocol::kAuth) {
    Close(Corruption("unexpected auth frame after the handshake"));
    return;
  }
  if (handler_) handler_->OnFrame(*this, std::move(frame));
}

void Connection::HandleAuthFrame(const Frame& frame) {
  if (frame.protocol != Protocol::kAuth) {
    Close(PermissionDenied(
        fmt::format("{} frame before authentication", ProtocolName(frame.protocol))));
    return;
  }
  if (auth_.server) {
    ServerCheckResponse(frame);
  } else if (auth_step_ == 0) {
    ClientAnswerChallenge(frame);
  } else {
    ClientCheckOutcome(frame);
  }
}

void Connection::ServerCheckResponse(const Frame& frame) {
  Status s = GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, DecodeMessage(frame));
    auto root = reader->getRoot<proto::AuthMessage>();
    if (root.which() != proto::AuthMessage::RESPONSE)
      return Corruption("expected an authentication response");
    auto r = root.getResponse();
    client_nonce_ = ToVector(r.getNonce());
    peer_name_ = r.getPeer();
    if (client_nonce_.size() != kNonceSize) return Corruption("bad client nonce");
    bool good =
        ProofsEqual(ToVector(r.getMac()), ClientProof(auth_.secret, server_nonce_, client_nonce_));
    capnp::MallocMessageBuilder msg;
    auto out = msg.initRoot<proto::AuthMessage>().initOutcome();
    out.setAccepted(good);
    if (good) {
      out.setMac(ToData(ServerProof(auth_.secret, server_nonce_, client_nonce_)));
    } else {
      out.setReason(
          fmt::format("authentication refused by {}: the peer does not hold this "
                      "cluster's shared secret",
                      auth_.service));
    }
    SendAuth(EncodeMessage(msg));
    if (!good) {
      return PermissionDenied(fmt::format("refused {} ({}): wrong cluster secret",
                                          peer_name_.empty() ? "peer" : peer_name_, remote_));
    }
    return Status::Ok();
  });
  if (!s.ok()) {
    CloseAfterFlush(s);
    return;
  }
  Authenticated();
}

void Connection::ClientAnswerChallenge(const Frame& frame) {
  Status s = GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, DecodeMessage(frame));
    auto root = reader->getRoot<proto::AuthMessage>();
    if (root.which() != proto::AuthMessage::CHALLENGE)
      return Corruption("expected an authentication challenge");
    auto c = root.getChallenge();
    if (c.getVersion() != kAuthVersion) {
      return FailedPrecondition(fmt::format("server speaks handshake version {}, we speak {}",
                                            c.getVersion(), kAuthVersion));
    }
    server_nonce_ = ToVector(c.getNonce());
    peer_name_ = c.getService();
    if (server_nonce_.size() != kNonceSize) return Corruption("bad server nonce");
    client_nonce_ = RandomBytes(kNonceSize);
    capnp::MallocMessageBuilder msg;
    auto r = msg.initRoot<proto::AuthMessage>().initResponse();
    r.setNonce(ToData(client_nonce_));
    r.setMac(ToData(ClientProof(auth_.secret, server_nonce_, client_nonce_)));
    r.setPeer(auth_.peer_name);
    SendAuth(EncodeMessage(msg));
    auth_step_ = 1;
    return Status::Ok();
  });
  if (!s.ok()) Close(s);
}

void Connection::ClientCheckOutcome(const Frame& frame) {
  Status s = GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, DecodeMessage(frame));
    auto root = reader->getRoot<proto::AuthMessage>();
    if (root.which() != proto::AuthMessage::OUTCOME)
      return Corruption("expected an authentication outcome");
    auto o = root.getOutcome();
    if (!o.getAccepted()) return PermissionDenied(std::string(o.getReason().cStr()));
    if (!ProofsEqual(ToVector(o.getMac()),
                     ServerProof(auth_.secret, server_nonce_, client_nonce_))) {
      return PermissionDenied(fmt::format(
          "{} at {} could not prove it holds this cluster's shared secret", peer_name_, remote_));
    }
    return Status::Ok();
  });
  if (!s.ok()) {
    Close(s);
    return;
  }
  Authenticated();
}

void Connection::Authenticated() {
  authenticated_ = true;
  handshake_timer_.cancel();
  decoder_.set_max_payload(options_.max_frame_bytes);
  if (handler_) handler_->OnOpen(*this);
}

void Connection::SendAuth(std::vector<uint8_t> payload) {
  OutFrame f{EncodeFrameHeader(Protocol::kAuth, PayloadKind::kMessage,
                               static_cast<uint32_t>(payload.size())),
             std::move(payload)};
  queued_bytes_ += f.payload.size() + kFrameHeaderSize;
  out_.push_back(std::move(f));
  WriteNext();
}

void Connection::Send(Protocol protocol, PayloadKind kind, std::vector<uint8_t> payload) {
  if (closed_ || close_after_flush_) return;
  if (payload.size() > options_.max_frame_bytes) {
    Close(Internal(fmt::format("refusing to send a {}-byte frame (limit {})", payload.size(),
                               options_.max_frame_bytes)));
    return;
  }
  OutFrame f{EncodeFrameHeader(protocol, kind, static_cast<uint32_t>(payload.size())),
             std::move(payload)};
  queued_bytes_ += f.payload.size() + kFrameHeaderSize;
  out_.push_back(std::move(f));
  WriteNext();
}

void Connection::WriteNext() {
  if (writing_ || closed_) return;
  if (out_.empty()) {
    if (close_after_flush_) {
      Close(close_reason_);
    } else if (handler_ && authenticated_) {
      handler_->OnDrained(*this);
    }
    return;
  }
  writing_ = true;
  auto self = shared_from_this();
  const OutFrame& f = out_.front();
  std::array<asio::const_buffer, 2> bufs{asio::buffer(f.header), asio::buffer(f.payload)};
  asio::async_write(socket_, bufs, [self](const asio::error_code& ec, size_t) {
    self->writing_ = false;
    if (self->closed_) return;
    if (ec) {
      self->Close(Disconnected("write failed: " + ec.message()));
      return;
    }
    self->queued_bytes_ -= self->out_.front().payload.size() + kFrameHeaderSize;
    self->out_.pop_front();
    self->WriteNext();
  });
}

void Connection::CloseAfterFlush(const Status& why) {
  if (closed_ || close_after_flush_) return;
  close_after_flush_ = true;
  close_reason_ = why;
  WriteNext();
}

void Connection::Close(const Status& why) {
  if (closed_) return;
  closed_ = true;
  handshake_timer_.cancel();
  asio::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  if (!why.ok() && why.code() != StatusCode::kDisconnected) {
    spdlog::warn("closing connection {} with {}{}: {}", id_, remote_,
                 peer_name_.empty() ? "" : " (" + peer_name_ + ")", why.ToString());
  }
  auto self = shared_from_this();
  asio::post(socket_.get_executor(), [self, why]() {
    if (self->handler_) self->handler_->OnClose(*self, why);
  });
}

}  // namespace copse::net
