// The cluster's shared secret and the challenge-response proofs built from it
// (docs/design.md §3). Each side proves it holds the secret with an HMAC-SHA256
// over both sides' random nonces; the secret never crosses the wire.
// Thread-safety: free functions, thread-safe.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "copse/status.h"

namespace copse::net {

inline constexpr size_t kNonceSize = 32;
inline constexpr uint16_t kAuthVersion = 1;

// Reads the secret file (trailing whitespace ignored). NotFound names the file
// and says how to get one; InvalidArgument when it is too short (< 16 bytes).
Result<std::string> LoadSecret(const std::filesystem::path& path);

// Reads the secret a worker handed its task on descriptor `fd` until end of
// file, and closes it (docs/design.md §3: never in argv or the environment).
// FailedPrecondition when the descriptor holds none or too short a one.
Result<std::string> ReadSecretFd(int fd);

// Creates the secret file (mode 0600, 32 random bytes as hex) when it does not
// exist, then loads it. Returns true in *created when it made a new one.
Result<std::string> EnsureSecret(const std::filesystem::path& path, bool* created = nullptr);

// `n` cryptographically random bytes.
std::vector<uint8_t> RandomBytes(size_t n);
// `n` cryptographically random bytes as 2n lower-case hex digits.
std::string RandomHex(size_t n);

// The proof a client sends: HMAC(secret, "copse-auth-1 client" | server | client).
std::vector<uint8_t> ClientProof(const std::string& secret,
                                 const std::vector<uint8_t>& server_nonce,
                                 const std::vector<uint8_t>& client_nonce);
// The proof a server sends back: HMAC(secret, "copse-auth-1 server" | client | server).
std::vector<uint8_t> ServerProof(const std::string& secret,
                                 const std::vector<uint8_t>& server_nonce,
                                 const std::vector<uint8_t>& client_nonce);

// Constant-time comparison.
bool ProofsEqual(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b);

}  // namespace copse::net
