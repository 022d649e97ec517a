// Wide: a 128-bit signed integer for sums and scaled costs that could
// overflow int64 (GCC/Clang extension), with the few helpers Copse needs.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace copse::flow {

__extension__ typedef __int128 Wide;
__extension__ typedef unsigned __int128 UWide;

inline bool FitsInt64(Wide v) {
  return v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max();
}

inline std::string WideToString(Wide v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  UWide u = neg ? -static_cast<UWide>(v) : static_cast<UWide>(v);
  std::string s;
  while (u > 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

}  // namespace copse::flow
