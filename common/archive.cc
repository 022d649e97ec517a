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
    return InvalidArgument(
        fmt::format("member '{}': not a relative name", EscapeForLog(Excerpt(name))));
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

// Skips the padding after `size` bytes of member data, up to the next block.
void SkipPadding(std::istream& in, uint64_t size) {
  in.ignore(static_cast<std::streamsize>((kBlock - size % kBlock) % kBlock));
}

// The data of an extended header (GNU long name, pax records).
Status ReadExtendedData(std::istream& in, uint64_t size, std::string* out) {
  if (size > (1u << 20)) return InvalidArgument("an extended header over 1 MiB");
  out->resize(size);
  if (!in.read(out->data(), static_cast<std::streamsize>(size))) {
    return InvalidArgument("the archive is cut short");
  }
  SkipPadding(in, size);
  return Status::Ok();
}

struct Header {
  char type;
  uint64_t size;
  uint64_t mode;
  std::string name;  // the prefix field joined to the name field
};

// Member `member`'s header block, checked: ustar, with the right checksum
// and a size.
Result<Header> ParseHeader(const std::array<char, kBlock>& h, int member) {
  if (std::memcmp(h.data() + 257, "ustar", 5) != 0) {
    return InvalidArgument("not a tar archive (no ustar header)");
  }
  unsigned sum = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(h[i]);
  }
  if (Octal(std::string_view(h.data() + 148, 8)) != sum) {
    return InvalidArgument(fmt::format("member {}: a header whose checksum is wrong", member));
  }
  Header m;
  m.type = h[156];
  m.size = Octal(std::string_view(h.data() + 124, 12));
  if (m.size == UINT64_MAX) return InvalidArgument(fmt::format("member {}: a bad size", member));
  m.mode = Octal(std::string_view(h.data() + 100, 8));
  m.name = Field(h.data(), 100);
  std::string prefix = Field(h.data() + 345, 155);
  if (!prefix.empty()) m.name = prefix + "/" + m.name;
  return m;
}

// Writes the `size` bytes of member `name` to `target`, a file that must
// not exist yet; read-only, executable when the member's owner may execute it.
Status WriteMember(std::istream& in, const std::string& name, const std::filesystem::path& target,
                   uint64_t size, uint64_t mode) {
  std::error_code ec;
  std::filesystem::create_directories(target.parent_path(), ec);
  if (ec) {
    return IoError(
        fmt::format("cannot create {}: {}", target.parent_path().string(), ec.message()));
  }
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
  SkipPadding(in, size);
  ::chmod(target.c_str(), (mode & 0100) ? 0555 : 0444);
  return Status::Ok();
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
  while (true) {
    if (!in.read(h.data(), kBlock)) {
      if (members == 0) return InvalidArgument("not a tar archive (shorter than one header)");
      return InvalidArgument("the archive is cut short");
    }
    if (AllZero(h.data())) break;  // the end
    ++members;
    COPSE_ASSIGN_OR_RETURN(Header m, ParseHeader(h, members));
    if (m.type == 'L' || m.type == 'x' || m.type == 'g') {
      std::string data;
      COPSE_RETURN_IF_ERROR(ReadExtendedData(in, m.size, &data));
      if (m.type == 'L') {
        long_name = std::string(data.c_str());
      } else if (m.type == 'x') {
        if (std::string p = PaxPath(data); !p.empty()) long_name = p;
      }  // 'g', a pax global header: nothing we use
      continue;
    }
    std::string name = long_name.empty() ? std::move(m.name) : std::move(long_name);
    long_name.clear();
    // `tar -C dir .` names members "./x".
    while (name.rfind("./", 0) == 0) name.erase(0, 2);
    if ((name.empty() || name == ".") && m.type == '5') continue;
    COPSE_RETURN_IF_ERROR(CheckName(name));
    std::filesystem::path target = dest / name;
    if (m.type == '5') {
      std::error_code ec;
      std::filesystem::create_directories(target, ec);
      if (ec) return IoError(fmt::format("cannot create {}: {}", target.string(), ec.message()));
      continue;
    }
    if (m.type != '0' && m.type != '\0' && m.type != '7') {
      return InvalidArgument(
          fmt::format("member '{}': only files and directories are taken (type '{}')",
                      EscapeForLog(Excerpt(name)), EscapeForLog(std::string(1, m.type))));
    }
    total += m.size;
    if (total > max_bytes) {
      return ResourceExhausted(fmt::format("the archive unpacks to more than {} bytes", max_bytes));
    }
    COPSE_RETURN_IF_ERROR(WriteMember(in, name, target, m.size, m.mode));
  }
  return total;
}

}  // namespace copse
