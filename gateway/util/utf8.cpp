#include "util/utf8.hpp"

#include <cstdint>
#include <cstring>
#include <utility>

namespace mcpgw {
namespace {

/// What a lead byte starts: the length of its sequence (0: it starts none)
/// and the range of the byte after it, which excludes overlong forms,
/// surrogates and code points past U+10FFFF.
struct Lead {
  std::size_t length;
  unsigned char low, high;
};

Lead lead(unsigned char b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

/// The sequence at `s[i]`: its length and whether it is well formed; an
/// ill-formed one is as long as its maximal subpart (at least one byte).
std::pair<std::size_t, bool> sequence(std::string_view s, std::size_t i) {
  Lead l = lead(static_cast<unsigned char>(s[i]));
  if (l.length == 0) return {1, false};
  for (std::size_t n = 1; n < l.length; ++n) {
    if (i + n >= s.size()) return {n, false};
    auto c = static_cast<unsigned char>(s[i + n]);
    if (c < (n == 1 ? l.low : 0x80) || c > (n == 1 ? l.high : 0xBF)) return {n, false};
  }
  return {l.length, true};
}

/// The end of the ASCII run at `s[i]`, eight bytes at a time.
std::size_t skip_ascii(std::string_view s, std::size_t i) {
  for (std::uint64_t word; i + 8 <= s.size(); i += 8) {
    std::memcpy(&word, s.data() + i, 8);
    if (word & 0x8080808080808080ULL) break;
  }
  while (i < s.size() && static_cast<unsigned char>(s[i]) < 0x80) ++i;
  return i;
}

}  // namespace

bool valid_utf8(std::string_view s) {
  for (std::size_t i = skip_ascii(s, 0); i < s.size(); i = skip_ascii(s, i)) {
    auto [n, ok] = sequence(s, i);
    if (!ok) return false;
    i += n;
  }
  return true;
}

std::string repair_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (std::size_t i = 0; i < s.size();) {
    std::size_t ascii = skip_ascii(s, i);
    out.append(s.substr(i, ascii - i));
    if ((i = ascii) == s.size()) break;
    auto [n, ok] = sequence(s, i);
    if (ok) out.append(s.substr(i, n));
    else out.append("\xEF\xBF\xBD");
    i += n;
  }
  return out;
}

}  // namespace mcpgw
