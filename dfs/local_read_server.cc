#include "dfs/local_read_server.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "common/net/auth.h"
#include "dfs/local_read_wire.h"

namespace copse::dfs {
namespace {

using local_read_wire::BindPath;
using local_read_wire::Errno;
using local_read_wire::Get32;
using local_read_wire::Get64;
using local_read_wire::kChunkRecordSize;
using local_read_wire::kHelloMagic;
using local_read_wire::kHelloSize;
using local_read_wire::kMaxErrorText;
using local_read_wire::kMaxFilesPerReply;
using local_read_wire::kProofSize;
using local_read_wire::kReplyHeaderSize;
using local_read_wire::kReplyMagic;
using local_read_wire::kRequestMagic;
using local_read_wire::kRequestSize;
using local_read_wire::kVersion;
using local_read_wire::Put32;
using local_read_wire::Put64;
using local_read_wire::ReadAll;
using local_read_wire::SetTimeouts;
using local_read_wire::WriteAll;

constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
constexpr auto kIdleTimeout = std::chrono::minutes(10);

}  // namespace

LocalReadServer::LocalReadServer(BlockStore& store, std::string secret, std::string computer)
    : store_(store), secret_(std::move(secret)), computer_(std::move(computer)) {}

LocalReadServer::~LocalReadServer() { Stop(); }

Status LocalReadServer::Listen(const std::filesystem::path& path) {
  sockaddr_un addr{};
  COPSE_RETURN_IF_ERROR(BindPath(path, &addr));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return Errno("local read socket", errno);
  ::unlink(path.c_str());  // a stale socket of an earlier run of this worker
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    return Errno(fmt::format("binding {}", path.string()), errno);
  if (::chmod(path.c_str(), 0600) != 0) return Errno(fmt::format("chmod {}", path.string()), errno);
  if (::listen(fd.get(), 64) != 0) return Errno(fmt::format("listen on {}", path.string()), errno);
  path_ = path;
  listen_fd_ = std::move(fd);
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return Status::Ok();
}

void LocalReadServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (listen_fd_.get() >= 0) ::shutdown(listen_fd_.get(), SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  listen_fd_.Reset();
  if (!path_.empty()) ::unlink(path_.c_str());
  std::list<std::unique_ptr<Conn>> conns;
  {
    std::lock_guard<std::mutex> lock(mu_);
    conns.swap(conns_);
  }
  for (auto& c : conns) ::shutdown(c->fd.get(), SHUT_RDWR);
  for (auto& c : conns) {
    if (c->thread.joinable()) c->thread.join();
  }
}

void LocalReadServer::AcceptLoop() {
  for (;;) {
    int fd = ::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      std::lock_guard<std::mutex> lock(mu_);
      if (!stopping_) spdlog::error("local read socket {}: accept: {}", path_.string(), errno);
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    // Reap finished connections.
    for (auto it = conns_.begin(); it != conns_.end();) {
      if ((*it)->done.load()) {
        (*it)->thread.join();
        it = conns_.erase(it);
      } else {
        ++it;
      }
    }
    if (stopping_ || conns_.size() >= kMaxConnections) {
      ::close(fd);  // the client reads through the data port instead
      continue;
    }
    auto conn = std::make_unique<Conn>();
    conn->fd = UniqueFd(fd);
    Conn* raw = conn.get();
    conns_.push_back(std::move(conn));
    raw->thread = std::thread([this, raw] { Serve(raw); });
  }
}

Status LocalReadServer::Handshake(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    return Errno("reading the peer's credentials", errno);
  if (cred.uid != ::geteuid()) {
    return PermissionDenied(
        fmt::format("local reader pid {} runs as uid {}, not as the worker's {}", cred.pid,
                    cred.uid, ::geteuid()));
  }
  std::vector<uint8_t> nonce = net::RandomBytes(net::kNonceSize);
  uint8_t hello[kHelloSize];
  Put32(hello, kHelloMagic);
  Put32(hello + 4, kVersion);
  std::memcpy(hello + 8, nonce.data(), net::kNonceSize);
  COPSE_RETURN_IF_ERROR(WriteAll(fd, hello, sizeof(hello), "sending the local read hello"));
  uint8_t answer[net::kNonceSize + kProofSize];
  COPSE_RETURN_IF_ERROR(ReadAll(fd, answer, sizeof(answer), "reading the local reader's proof"));
  std::vector<uint8_t> client_nonce(answer, answer + net::kNonceSize);
  std::vector<uint8_t> proof(answer + net::kNonceSize, answer + sizeof(answer));
  if (!net::ProofsEqual(proof, net::ClientProof(secret_, nonce, client_nonce))) {
    return PermissionDenied(
        fmt::format("local reader pid {} does not hold the cluster secret", cred.pid));
  }
  std::vector<uint8_t> mine = net::ServerProof(secret_, nonce, client_nonce);
  return WriteAll(fd, mine.data(), mine.size(), "sending the worker's proof");
}

void LocalReadServer::Serve(Conn* conn) {
  int fd = conn->fd.get();
  SetTimeouts(fd, kHandshakeTimeout);
  Status s = Handshake(fd);
  if (!s.ok()) {
    spdlog::warn("local read on {} refused: {}", computer_, s.ToString());
  } else {
    SetTimeouts(fd, std::chrono::duration_cast<std::chrono::milliseconds>(kIdleTimeout));
    for (;;) {
      uint8_t req[kRequestSize];
      s = ReadAll(fd, req, sizeof(req), "reading a local read request");
      if (!s.ok()) break;  // the client closed or idled out
      if (Get32(req) != kRequestMagic) {
        spdlog::warn("local read on {}: bad request magic {:08x}; closing", computer_, Get32(req));
        break;
      }
      s = Answer(fd, Get64(req + 8), Get32(req + 4));
      if (!s.ok()) break;
    }
  }
  ::shutdown(fd, SHUT_RDWR);
  conn->done.store(true);
}

Status LocalReadServer::Answer(int fd, BlockId block, uint32_t first) {
  uint8_t header[kReplyHeaderSize] = {};
  Put32(header, kReplyMagic);
  auto fail = [&](const Status& why) {
    std::string text = why.message().substr(0, kMaxErrorText);
    Put32(header + 4, static_cast<uint32_t>(why.code()));
    Put32(header + 28, static_cast<uint32_t>(text.size()));
    COPSE_RETURN_IF_ERROR(WriteAll(fd, header, sizeof(header), "sending a local read reply"));
    return WriteAll(fd, reinterpret_cast<const uint8_t*>(text.data()), text.size(),
                    "sending a local read reply");
  };
  auto info = store_.Stat(block);
  if (!info.ok()) return fail(info.status());
  auto where = store_.LocateChunks(block, first);
  if (!where.ok()) return fail(where.status());
  uint64_t bytes = 0;
  for (const ChunkLocation& c : *where)
    bytes += c.size >= kChunkTrailer ? c.size - kChunkTrailer : 0;
  std::map<uint64_t, uint32_t> file_index;
  std::vector<UniqueFd> files;
  std::vector<uint8_t> records(where->size() * kChunkRecordSize);
  for (size_t i = 0; i < where->size(); ++i) {
    const ChunkLocation& c = (*where)[i];
    auto [it, added] = file_index.emplace(c.file, static_cast<uint32_t>(files.size()));
    if (added) {
      if (files.size() == kMaxFilesPerReply) {
        return fail(
            Unavailable(fmt::format("block {} spans more than {} files", block, files.size())));
      }
      UniqueFd f(::open(store_.BlockFilePath(c.file).c_str(), O_RDONLY | O_CLOEXEC));
      if (f.get() < 0) {
        // The block was deleted since.
        return fail(
            Unavailable(fmt::format("the file of block {}: {}", block, std::strerror(errno))));
      }
      files.push_back(std::move(f));
    }
    uint8_t* r = records.data() + i * kChunkRecordSize;
    Put32(r, it->second);
    Put32(r + 4, static_cast<uint32_t>(c.size));
    Put64(r + 8, c.offset);
  }
  Put32(header + 4, 0);
  Put64(header + 8, info->size);
  Put32(header + 16, info->chunks);
  Put32(header + 20, first);
  Put32(header + 24, static_cast<uint32_t>(files.size()));
  Put32(header + 28, static_cast<uint32_t>(where->size()));
  iovec iov{header, sizeof(header)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * std::max<size_t>(files.size(), 1)));
  if (!files.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * files.size());
    cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * files.size());
    int* fds = reinterpret_cast<int*>(CMSG_DATA(cm));
    for (size_t i = 0; i < files.size(); ++i) fds[i] = files[i].get();
  }
  ssize_t sent;
  do {
    sent = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) return Errno("sending a local read reply", errno);
  // The descriptors went with the first byte; the rest of the header is plain.
  COPSE_RETURN_IF_ERROR(WriteAll(fd, header + sent, sizeof(header) - static_cast<size_t>(sent),
                                 "sending a local read reply"));
  COPSE_RETURN_IF_ERROR(WriteAll(fd, records.data(), records.size(), "sending a local read reply"));
  if (on_served_) on_served_(bytes);
  return Status::Ok();
}

}  // namespace copse::dfs
