#include "common/archive.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <array>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include "common/text.h"

namespace copse {
namespace {

constexpr size_t kBlock = 512;

uint64_t Octal(std::string_view field) {
  uint64_t v = 0;
  for (char c : field) {
    if (c == '\0' || c == ' ') {
      if (v != 0) break;
      continue;
    }
    if (c < '0' || c > '7') return UINT64_MAX;
    v = v * 8 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

std::string Field(const char* p, size_t n) { return std::string(p, strnlen(p, n)); }

bool AllZero(const char* p) {
  for (size_t i = 0; i < kBlock; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

Status CheckName(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.find('\0') != std::string::npos ||
      !IsValidUtf8(name)) {
    return InvalidArgument(fmt::format("member '{}': not a relative name", EscapeForLog(Excerpt(name))));
  }
  size_t start = 0;
  std::string_view n(name);
  while (!n.empty() && n.back() == '/') n.remove_suffix(1);
  while (start <= n.size()) {
    size_t end = n.find('/', start);
    if (end == std::string_view::npos) end = n.size();
    std::string_view part = n.substr(start, end - start);
    if (part == ".." || part == ".") {
      return InvalidArgument(
          fmt::format("member '{}': a name with '.' or '..' in it", EscapeForLog(Excerpt(name))));
    }
    start = end + 1;
  }
  return Status::Ok();
}

// The "path" record of a pax extended header, if it has one.
std::string PaxPath(const std::string& data) {
  size_t pos = 0;
  std::string path;
  while (pos < data.size()) {
    size_t sp = data.find(' ', pos);
    if (sp == std::string::npos) break;
    uint64_t len = 0;
    for (size_t i = pos; i < sp; ++i) {
      if (data[i] < '0' || data[i] > '9') return path;
      len = len * 10 + static_cast<uint64_t>(data[i] - '0');
    }
    if (len == 0 || pos + len > data.size()) break;
    std::string rec = data.substr(sp + 1, pos + len - sp - 2);  // without the '\n'
    if (rec.rfind("path=", 0) == 0) path = rec.substr(5);
    pos += len;
  }
  return path;
}

}  // namespace

Result<uint64_t> ExtractTar(const std::filesystem::path& archive, const std::filesystem::path& dest,
                            uint64_t max_bytes) {
  std::ifstream in(archive, std::ios::binary);
  if (!in) return IoError("cannot read " + archive.string());
  std::array<char, kBlock> h{};
  uint64_t total = 0;
  std::string long_name;  // from a GNU 'L' or a pax 'x' member, for the next one
  int members = 0;
  auto read_data = [&](uint64_t size, std::string* out) -> Status {
    if (size > (1u << 20)) return InvalidArgument("an extended header over 1 MiB");
    out->resize(size);
    if (!in.read(out->data(), static_cast<std::streamsize>(size))) {
      return InvalidArgument("the archive is cut short");
    }
    in.ignore(static_cast<std::streamsize>((kBlock - size % kBlock) % kBlock));
    return Status::Ok();
  };
  while (true) {
    if (!in.read(h.data(), kBlock)) {
      if (members == 0) return InvalidArgument("not a tar archive (shorter than one header)");
      return InvalidArgument("the archive is cut short");
    }
    if (AllZero(h.data())) break;  // the end
    ++members;
    if (std::memcmp(h.data() + 257, "ustar", 5) != 0) {
      return InvalidArgument("not a tar archive (no ustar header)");
    }
    unsigned sum = 0;
    for (size_t i = 0; i < kBlock; ++i) {
      sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(h[i]);
    }
    if (Octal(std::string_view(h.data() + 148, 8)) != sum) {
      return InvalidArgument(fmt::format("member {}: a header whose checksum is wrong", members));
    }
    const char type = h[156];
    const uint64_t size = Octal(std::string_view(h.data() + 124, 12));
    if (size == UINT64_MAX) return InvalidArgument(fmt::format("member {}: a bad size", members));
    std::string name = Field(h.data(), 100);
    std::string prefix = Field(h.data() + 345, 155);
    if (!prefix.empty()) name = prefix + "/" + name;
    if (type == 'L' || type == 'x') {
      std::string data;
      COPSE_RETURN_IF_ERROR(read_data(size, &data));
      if (type == 'L') {
        long_name = std::string(data.c_str());
      } else if (std::string p = PaxPath(data); !p.empty()) {
        long_name = p;
      }
      continue;
    }
    if (type == 'g') {  // pax global header: nothing we use
      std::string data;
      COPSE_RETURN_IF_ERROR(read_data(size, &data));
      continue;
    }
    if (!long_name.empty()) name = std::move(long_name);
    long_name.clear();
    // `tar -C dir .` names members "./x".
    while (name.rfind("./", 0) == 0) name.erase(0, 2);
    if ((name.empty() || name == ".") && type == '5') continue;
    COPSE_RETURN_IF_ERROR(CheckName(name));
    const uint64_t mode = Octal(std::string_view(h.data() + 100, 8));
    std::filesystem::path target = dest / name;
    std::error_code ec;
    if (type == '5') {
      std::filesystem::create_directories(target, ec);
      if (ec) return IoError(fmt::format("cannot create {}: {}", target.string(), ec.message()));
      continue;
    }
    if (type != '0' && type != '\0' && type != '7') {
      return InvalidArgument(fmt::format(
          "member '{}': only files and directories are taken (type '{}')",
          EscapeForLog(Excerpt(name)), EscapeForLog(std::string(1, type))));
    }
    total += size;
    if (total > max_bytes) {
      return ResourceExhausted(
          fmt::format("the archive unpacks to more than {} bytes", max_bytes));
    }
    std::filesystem::create_directories(target.parent_path(), ec);
    if (ec) return IoError(fmt::format("cannot create {}: {}", target.parent_path().string(), ec.message()));
    if (std::filesystem::exists(target, ec)) {
      return InvalidArgument(fmt::format("member '{}' appears twice", EscapeForLog(Excerpt(name))));
    }
    std::ofstream out(target, std::ios::binary);
    if (!out) return IoError("cannot write " + target.string());
    std::string buf(1 << 16, '\0');
    for (uint64_t left = size; left > 0;) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(left, buf.size()));
      if (!in.read(buf.data(), static_cast<std::streamsize>(n))) {
        return InvalidArgument("the archive is cut short");
      }
      out.write(buf.data(), static_cast<std::streamsize>(n));
      left -= n;
    }
    out.close();
    if (!out) return IoError("cannot write " + target.string());
    in.ignore(static_cast<std::streamsize>((kBlock - size % kBlock) % kBlock));
    ::chmod(target.c_str(), (mode & 0100) ? 0555 : 0444);
  }
  return total;
}

}  // namespace copse
