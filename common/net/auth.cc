#include "common/net/auth.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace copse::net {
namespace {

std::vector<uint8_t> Hmac(const std::string& secret, std::string_view label,
                          const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  std::vector<uint8_t> msg(label.begin(), label.end());
  msg.insert(msg.end(), a.begin(), a.end());
  msg.insert(msg.end(), b.begin(), b.end());
  std::vector<uint8_t> out(EVP_MAX_MD_SIZE);
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), msg.data(), msg.size(),
            out.data(), &len)) {
    throw std::runtime_error("HMAC-SHA256 failed");  // a broken libcrypto: a bug, not input
  }
  out.resize(len);
  return out;
}

// Trailing whitespace dropped from `s`; at least 16 bytes. (It returns a
// Status, not the string: GCC 12 at -O3, knowing the size is at least 16,
// reports false buffer overflows in the string's move into a Result.)
Status CheckSecret(std::string& s, const std::string& where, Status (*error)(std::string)) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  if (s.size() < 16) {
    return error(fmt::format("{} holds {} bytes; at least 16 are needed", where, s.size()));
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> LoadSecret(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return NotFound(fmt::format(
        "cluster secret file {} not found (`copse cluster up` creates it; on other hosts copy it "
        "from the master's host)",
        path.string()));
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  if (Status st = CheckSecret(s, "cluster secret file " + path.string(), InvalidArgument);
      !st.ok()) {
    return st;
  }
  return s;
}

Result<std::string> ReadSecretFd(int fd) {
  std::string s;
  char buf[256];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
  ::close(fd);
  if (Status st = CheckSecret(s, "descriptor " + std::to_string(fd), FailedPrecondition);
      !st.ok()) {
    return st;
  }
  return s;
}

std::string RandomHex(size_t n) {
  std::string hex;
  for (uint8_t b : RandomBytes(n)) hex += fmt::format("{:02x}", b);
  return hex;
}

Result<std::string> EnsureSecret(const std::filesystem::path& path, bool* created) {
  if (created) *created = false;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {
      std::string hex = RandomHex(32) + '\n';
      bool ok = ::write(fd, hex.data(), hex.size()) == static_cast<ssize_t>(hex.size());
      ok = (::fsync(fd) == 0) && ok;
      ::close(fd);
      if (!ok) {
        std::filesystem::remove(path, ec);
        return IoError(fmt::format("cannot write cluster secret file {}", path.string()));
      }
      if (created) *created = true;
    } else if (errno != EEXIST) {
      return IoError(fmt::format("cannot create cluster secret file {}: {}", path.string(),
                                 std::strerror(errno)));
    }
  }
  return LoadSecret(path);
}

std::vector<uint8_t> RandomBytes(size_t n) {
  std::vector<uint8_t> out(n);
  if (RAND_bytes(out.data(), static_cast<int>(n)) != 1) {
    throw std::runtime_error("RAND_bytes failed");  // no entropy source: cannot continue safely
  }
  return out;
}

std::vector<uint8_t> ClientProof(const std::string& secret,
                                 const std::vector<uint8_t>& server_nonce,
                                 const std::vector<uint8_t>& client_nonce) {
  return Hmac(secret, "copse-auth-1 client", server_nonce, client_nonce);
}

std::vector<uint8_t> ServerProof(const std::string& secret,
                                 const std::vector<uint8_t>& server_nonce,
                                 const std::vector<uint8_t>& client_nonce) {
  return Hmac(secret, "copse-auth-1 server", client_nonce, server_nonce);
}

bool ProofsEqual(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace copse::net
