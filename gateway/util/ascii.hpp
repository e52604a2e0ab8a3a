#pragma once
// Case-insensitive ASCII, as HTTP compares header names, media types and
// schemes: only A-Z fold, whatever the locale, and without a libc call per
// character (header lookups run a few hundred times a request).
#include <algorithm>
#include <string>
#include <string_view>

namespace mcpgw {

/// `c` in lower case when it is an ASCII capital, as it is otherwise.
constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

/// Whether `a` and `b` are equal ignoring ASCII case.
constexpr bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return ascii_lower(x) == ascii_lower(y); });
}

/// Whether `s` starts with `prefix`, ignoring ASCII case.
constexpr bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

/// Whether `needle` occurs in `s`, ignoring ASCII case.
constexpr bool icontains(std::string_view s, std::string_view needle) {
  for (std::size_t i = 0; i + needle.size() <= s.size(); ++i)
    if (iequals(s.substr(i, needle.size()), needle)) return true;
  return false;
}

/// `s` with its ASCII capitals in lower case.
inline std::string ascii_lowered(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), ascii_lower);
  return s;
}

}  // namespace mcpgw
