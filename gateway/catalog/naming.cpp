#include "catalog/naming.hpp"

#include <algorithm>

#include "util/hex.hpp"

namespace mcpgw::catalog {

std::string exposed_name(const config::Naming& n, std::string_view server, std::string_view tool, bool prefix) {
  if (!prefix) return std::string(tool);
  std::string out;
  out.reserve(server.size() + n.separator.size() + tool.size());
  out.append(server).append(n.separator).append(tool);
  return out;
}

std::string shorten(std::string_view name, int max_length) {
  if (max_length <= 0 || name.size() <= static_cast<std::size_t>(max_length)) return std::string(name);
  std::string suffix = "-" + sha256_hex(name, 5);
  std::string out(name.substr(0, static_cast<std::size_t>(max_length) - suffix.size()));
  return out + suffix;
}

std::string exposed_description(const config::Naming& n, std::string_view server,
                                std::string_view description) {
  std::string prefix;
  std::string_view p = n.description_prefix;
  for (std::size_t i = 0; i < p.size();) {
    if (p.compare(i, 8, "{server}") == 0) {
      prefix.append(server);
      i += 8;
    } else {
      prefix.push_back(p[i++]);
    }
  }
  if (description.empty()) {
    while (!prefix.empty() && prefix.back() == ' ') prefix.pop_back();
    return prefix;
  }
  return prefix.append(description);
}

namespace {
bool all_of_set(std::string_view s, std::size_t max, bool allow_dot) {
  if (s.empty() || s.size() > max) return false;
  return std::all_of(s.begin(), s.end(), [&](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || (allow_dot && c == '.');
  });
}
}  // namespace

bool mcp_recommended_name(std::string_view name) { return all_of_set(name, 128, true); }
bool strict_client_name(std::string_view name) { return all_of_set(name, 64, false); }

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matcher with single-star backtracking: linear in practice,
  // never exponential on hostile patterns.
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace mcpgw::catalog
