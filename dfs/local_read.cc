#include "dfs/local_read.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "common/net/auth.h"

namespace copse::dfs {
namespace {

constexpr uint32_t kHelloMagic = 0x4c535043;    // "CPSL"
constexpr uint32_t kRequestMagic = 0x4b424452;  // "RDBK"
constexpr uint32_t kReplyMagic = 0x594c5052;    // "RPLY"
constexpr uint32_t kVersion = 1;
constexpr size_t kHelloSize = 8 + net::kNonceSize;
constexpr size_t kProofSize = 32;  // HMAC-SHA256
constexpr size_t kRequestSize = 16;
constexpr size_t kReplyHeaderSize = 32;
constexpr size_t kChunkRecordSize = 16;
constexpr size_t kMaxFilesPerReply = 250;  // below the kernel's SCM_MAX_FD
constexpr size_t kMaxErrorText = 4096;
constexpr size_t kKeySize = 12;
constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
constexpr auto kIdleTimeout = std::chrono::minutes(10);

void Put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void Put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t Get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
uint64_t Get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

void SetTimeouts(int fd, std::chrono::milliseconds t) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  (void)::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

Status Errno(const std::string& what, int err) {
  if (err == EAGAIN || err == EWOULDBLOCK) return DeadlineExceeded(what + ": timed out");
  return IoError(fmt::format("{}: {}", what, std::strerror(err)));
}

Status WriteAll(int fd, const uint8_t* p, size_t n, const char* what) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Errno(what, errno);
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

// Reads exactly n bytes; kDisconnected when the peer closes first.
Status ReadAll(int fd, uint8_t* p, size_t n, const char* what) {
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      return Errno(what, errno);
    }
    if (r == 0) return Disconnected(fmt::format("{}: the peer closed the connection", what));
    p += r;
    n -= static_cast<size_t>(r);
  }
  return Status::Ok();
}

Status BindPath(const std::filesystem::path& path, sockaddr_un* addr) {
  std::string s = path.string();
  if (s.size() >= sizeof(addr->sun_path)) {
    return InvalidArgument(fmt::format("local read socket path {} is longer than {} bytes", s,
                                       sizeof(addr->sun_path) - 1));
  }
  std::memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  std::memcpy(addr->sun_path, s.data(), s.size());
  return Status::Ok();
}

}  // namespace

std::filesystem::path LocalReadSocketPath(const std::filesystem::path& data_dir) {
  return data_dir / "dfs-local.sock";
}

void UniqueFd::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

// ---- server -------------------------------------------------------------------------

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
  std::map<uint64_t, uint32_t> file_index;
  std::vector<UniqueFd> files;
  std::vector<uint8_t> records(where->size() * kChunkRecordSize);
  for (size_t i = 0; i < where->size(); ++i) {
    const ChunkLocation& c = (*where)[i];
    auto [it, added] = file_index.emplace(c.blob_file, static_cast<uint32_t>(files.size()));
    if (added) {
      if (files.size() == kMaxFilesPerReply) {
        return fail(Unavailable(
            fmt::format("block {} spans more than {} blob files", block, files.size())));
      }
      UniqueFd f(::open(store_.BlobFilePath(c.blob_file).c_str(), O_RDONLY | O_CLOEXEC));
      if (f.get() < 0) {
        // Blob GC relocated the chunk and removed the file since.
        return fail(Unavailable(
            fmt::format("blob file {} of block {}: {}", c.blob_file, block, std::strerror(errno))));
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
  return WriteAll(fd, records.data(), records.size(), "sending a local read reply");
}

// ---- client -------------------------------------------------------------------------

Result<std::unique_ptr<LocalReadChannel>> LocalReadChannel::Connect(
    const std::filesystem::path& path, const std::string& secret,
    std::chrono::milliseconds timeout) {
  sockaddr_un addr{};
  COPSE_RETURN_IF_ERROR(BindPath(path, &addr));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return Errno("local read socket", errno);
  SetTimeouts(fd.get(), timeout);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Unavailable(
        fmt::format("no local read socket at {}: {}", path.string(), std::strerror(errno)));
  }
  uint8_t hello[kHelloSize];
  Status s = ReadAll(fd.get(), hello, sizeof(hello), "reading the worker's local read hello");
  if (!s.ok()) return Unavailable(fmt::format("{}: {}", path.string(), s.message()));
  if (Get32(hello) != kHelloMagic || Get32(hello + 4) != kVersion) {
    return Unavailable(
        fmt::format("{} is not a Copse local read socket of version {}", path.string(), kVersion));
  }
  std::vector<uint8_t> server_nonce(hello + 8, hello + kHelloSize);
  std::vector<uint8_t> nonce = net::RandomBytes(net::kNonceSize);
  std::vector<uint8_t> answer = nonce;
  std::vector<uint8_t> proof = net::ClientProof(secret, server_nonce, nonce);
  answer.insert(answer.end(), proof.begin(), proof.end());
  COPSE_RETURN_IF_ERROR(WriteAll(fd.get(), answer.data(), answer.size(), "sending our proof"));
  std::vector<uint8_t> theirs(kProofSize);
  s = ReadAll(fd.get(), theirs.data(), theirs.size(), "reading the worker's proof");
  if (!s.ok()) {
    return PermissionDenied(fmt::format(
        "the worker at {} refused the local read (wrong secret?): {}", path.string(), s.message()));
  }
  if (!net::ProofsEqual(theirs, net::ServerProof(secret, server_nonce, nonce))) {
    return PermissionDenied(
        fmt::format("the worker at {} does not hold the cluster secret", path.string()));
  }
  return std::unique_ptr<LocalReadChannel>(new LocalReadChannel(std::move(fd)));
}

Result<LocalBlock> LocalReadChannel::Open(BlockId block, uint32_t first) {
  int fd = fd_.get();
  uint8_t req[kRequestSize];
  Put32(req, kRequestMagic);
  Put32(req + 4, first);
  Put64(req + 8, block);
  COPSE_RETURN_IF_ERROR(WriteAll(fd, req, sizeof(req), "sending a local read request"));

  LocalBlock b;
  uint8_t header[kReplyHeaderSize];
  std::vector<char> control(CMSG_SPACE(sizeof(int) * kMaxFilesPerReply));
  iovec iov{header, sizeof(header)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  ssize_t got;
  do {
    got = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  if (got < 0) return Errno("reading a local read reply", errno);
  if (got == 0) return Disconnected("the worker closed the local read connection");
  for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
    size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    const int* fds = reinterpret_cast<const int*>(CMSG_DATA(cm));
    for (size_t i = 0; i < n; ++i) b.files.emplace_back(fds[i]);
  }
  if (msg.msg_flags & MSG_CTRUNC) return IoError("local read reply: descriptors were truncated");
  COPSE_RETURN_IF_ERROR(ReadAll(fd, header + got, sizeof(header) - static_cast<size_t>(got),
                                "reading a local read reply"));
  if (Get32(header) != kReplyMagic) return IoError("local read reply: bad magic");
  uint32_t code = Get32(header + 4);
  uint32_t n = Get32(header + 28);
  if (code != 0) {
    if (n > kMaxErrorText) return IoError(fmt::format("local read error text of {} bytes", n));
    std::string text(n, '\0');
    COPSE_RETURN_IF_ERROR(
        ReadAll(fd, reinterpret_cast<uint8_t*>(text.data()), n, "reading a local read error"));
    if (code > static_cast<uint32_t>(StatusCode::kInternal))
      code = static_cast<uint32_t>(StatusCode::kInternal);
    return Status(static_cast<StatusCode>(code), text);
  }
  b.size = Get64(header + 8);
  b.chunks = Get32(header + 16);
  b.first = Get32(header + 20);
  uint32_t files = Get32(header + 24);
  if (b.chunks != ChunkCount(b.size) || b.first != first || first > b.chunks ||
      n != b.chunks - first || files != b.files.size()) {
    return IoError(fmt::format(
        "local read reply for block {} does not add up: {} bytes, {} chunks, from {}, {} "
        "places, {} of {} files",
        block, b.size, b.chunks, b.first, n, b.files.size(), files));
  }
  std::vector<uint8_t> records(static_cast<size_t>(n) * kChunkRecordSize);
  COPSE_RETURN_IF_ERROR(ReadAll(fd, records.data(), records.size(), "reading a local read reply"));
  b.chunk_at.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t* r = records.data() + static_cast<size_t>(i) * kChunkRecordSize;
    LocalBlock::Chunk& c = b.chunk_at[i];
    c.file = Get32(r);
    c.length = Get32(r + 4);
    c.offset = Get64(r + 8);
    uint32_t index = first + i;
    uint64_t expect = index + 1 < b.chunks ? kChunkSize : b.size - uint64_t{index} * kChunkSize;
    if (c.file >= files || c.length != expect + kChunkTrailer || c.offset < kKeySize) {
      return IoError(
          fmt::format("local read reply for block {}: bad place of chunk {}", block, index));
    }
  }
  return b;
}

Result<std::span<const uint8_t>> LocalReadChannel::ReadChunk(const LocalBlock& b, size_t i,
                                                             BlockId block,
                                                             std::vector<uint8_t>* buffer) {
  const LocalBlock::Chunk& c = b.chunk_at[i];
  uint32_t index = b.first + static_cast<uint32_t>(i);
  size_t need = kKeySize + c.length;
  if (buffer->size() < need) buffer->resize(std::max(need, kKeySize + kChunkSize + kChunkTrailer));
  int fd = b.files[c.file].get();
  size_t done = 0;
  off_t at = static_cast<off_t>(c.offset - kKeySize);
  while (done < need) {
    ssize_t r = ::pread(fd, buffer->data() + done, need - done, at + static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Errno(fmt::format("reading chunk {} of block {}", index, block), errno);
    if (r == 0) {
      return IoError(
          fmt::format("reading chunk {} of block {}: {} of {} bytes", index, block, done, need));
    }
    done += static_cast<size_t>(r);
  }
  std::string key = ChunkKey(block, index);
  if (std::memcmp(buffer->data(), key.data(), kKeySize) != 0) {
    return Corruption(
        fmt::format("chunk {} of block {}: the blob file holds another key there", index, block));
  }
  std::span<const uint8_t> framed(buffer->data() + kKeySize, c.length);
  COPSE_RETURN_IF_ERROR(
      VerifyFramedChunk(framed, fmt::format("chunk {} of block {} (local read)", index, block)));
  return framed.first(c.length - kChunkTrailer);
}

}  // namespace copse::dfs
