// SHA-256 digests as lower-case hex, over bytes fed in pieces or over a
// file (OpenSSL's implementation). The program store pins programs by it.
// Thread-safety: a Sha256 belongs to one thread; the functions are pure.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "copse/status.h"

namespace copse {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(std::string_view bytes);
  // 64 lower-case hex digits. REQUIRES: called once.
  std::string HexDigest();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

std::string Sha256Hex(std::string_view bytes);
// kIoError naming the file when it cannot be read.
Result<std::string> Sha256OfFile(const std::filesystem::path& path);

}  // namespace copse
