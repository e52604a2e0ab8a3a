#include "transport/request_head.hpp"

#include <boost/beast/core/string.hpp>

#include <array>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpgw::transport {
namespace {

using Field = std::pair<std::string_view, std::string_view>;

/// A plain loop: find_first_of would call memchr on the three characters
/// for every byte of every header.
bool fits_head(std::string_view s) {
  for (char c : s)
    if (c == '\r' || c == '\n' || c == '\0') return false;
  return true;
}

/// Headers whose value the exchange decides (framing and keep-alive).
bool framing(std::string_view name) {
  return boost::beast::iequals(name, "Content-Length") || boost::beast::iequals(name, "Transfer-Encoding") ||
         boost::beast::iequals(name, "Connection");
}

}  // namespace

std::optional<std::string> request_head(const Url& url, const HttpRequest& req) {
  // The usual request has well under 16 headers: they are gathered on the
  // stack, and only an unusual one falls back to a vector.
  std::array<Field, 16> small;
  std::vector<Field> more;
  std::size_t n = 0;
  auto add = [&](std::string_view name, std::string_view value) {
    for (std::size_t i = 0; i < n; ++i) {
      Field& f = i < small.size() ? small[i] : more[i - small.size()];
      if (boost::beast::iequals(f.first, name)) {
        f.second = value;
        return;
      }
    }
    if (n < small.size()) small[n] = {name, value};
    else more.emplace_back(name, value);
    ++n;
  };
  add("Host", url.host_header);
  add("User-Agent", "mcpgw/" MCPGW_VERSION);
  for (const auto& [name, value] : req.headers) {
    if (name.empty() || !fits_head(name) || !fits_head(value)) return std::nullopt;
    if (!framing(name)) add(name, value);
  }
  const std::string& target = req.target.empty() ? url.target : req.target;
  if (!fits_head(target) || !fits_head(url.host_header)) return std::nullopt;
  std::string head;
  head.reserve(128 + req.headers.size() * 48);
  head.append(req.method).append(" ").append(target).append(" HTTP/1.1\r\n");
  for (std::size_t i = 0; i < n; ++i) {
    const Field& f = i < small.size() ? small[i] : more[i - small.size()];
    head.append(f.first).append(": ").append(f.second).append("\r\n");
  }
  if (!req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH")
    head.append("Content-Length: ").append(std::to_string(req.body.size())).append("\r\n");
  head.append("\r\n");
  return head;
}

}  // namespace mcpgw::transport
