#include "dfs/local_read.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/net/auth.h"
#include "dfs/chunk.h"
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

}  // namespace

std::filesystem::path LocalReadSocketPath(const std::filesystem::path& data_dir) {
  return data_dir / "dfs-local.sock";
}

void UniqueFd::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

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
    if (c.file >= files || c.length != expect + kChunkTrailer || c.offset < kChunkKeySize) {
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
  size_t need = kChunkKeySize + c.length;
  if (buffer->size() < need)
    buffer->resize(std::max(need, kChunkKeySize + kChunkSize + kChunkTrailer));
  int fd = b.files[c.file].get();
  size_t done = 0;
  off_t at = static_cast<off_t>(c.offset - kChunkKeySize);
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
  if (std::memcmp(buffer->data(), key.data(), kChunkKeySize) != 0) {
    return Corruption(
        fmt::format("chunk {} of block {}: the block file holds another key there", index, block));
  }
  std::span<const uint8_t> framed(buffer->data() + kChunkKeySize, c.length);
  COPSE_RETURN_IF_ERROR(
      VerifyFramedChunk(framed, fmt::format("chunk {} of block {} (local read)", index, block)));
  return framed.first(c.length - kChunkTrailer);
}

}  // namespace copse::dfs
