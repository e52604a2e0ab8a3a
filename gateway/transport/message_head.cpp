#include "transport/message_head.hpp"

#include <boost/beast/http/status.hpp>

#include <array>
#include <string_view>
#include <utility>
#include <vector>

#include "util/ascii.hpp"

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
  return iequals(name, "Content-Length") || iequals(name, "Transfer-Encoding") ||
         iequals(name, "Connection");
}

/// Header fields, a name given again replacing the earlier value. The usual
/// message has well under 16 headers: they are gathered on the stack, and
/// only an unusual one falls back to a vector.
class Fields {
 public:
  void add(std::string_view name, std::string_view value) {
    for (std::size_t i = 0; i < n_; ++i) {
      Field& f = at(i);
      if (iequals(f.first, name)) {
        f.second = value;
        return;
      }
    }
    if (n_ < small_.size()) small_[n_] = {name, value};
    else more_.emplace_back(name, value);
    ++n_;
  }
  /// Adds `headers` but the framing ones; false when one would break the head.
  template <typename Headers>
  bool add_all(const Headers& headers) {
    for (const auto& h : headers) {
      auto [name, value] = std::pair<std::string_view, std::string_view>(name_of(h), value_of(h));
      if (name.empty() || !fits_head(name) || !fits_head(value)) return false;
      if (!framing(name)) add(name, value);
    }
    return true;
  }
  void write(std::string& head) const {
    for (std::size_t i = 0; i < n_; ++i) {
      const Field& f = at(i);
      head.append(f.first).append(": ").append(f.second).append("\r\n");
    }
  }

 private:
  static std::string_view name_of(const std::pair<std::string, std::string>& h) { return h.first; }
  static std::string_view value_of(const std::pair<std::string, std::string>& h) { return h.second; }
  static std::string_view name_of(const http::Header& h) { return h.name; }
  static std::string_view value_of(const http::Header& h) { return h.value; }
  Field& at(std::size_t i) { return i < small_.size() ? small_[i] : more_[i - small_.size()]; }
  const Field& at(std::size_t i) const { return i < small_.size() ? small_[i] : more_[i - small_.size()]; }

  std::array<Field, 16> small_;
  std::vector<Field> more_;
  std::size_t n_ = 0;
};

}  // namespace

std::optional<std::string> request_head(const Url& url, const HttpRequest& req) {
  Fields fields;
  fields.add("Host", url.host_header);
  fields.add("User-Agent", "mcpgw/" MCPGW_VERSION);
  if (!fields.add_all(req.headers)) return std::nullopt;
  const std::string& target = req.target.empty() ? url.target : req.target;
  if (!fits_head(target) || !fits_head(url.host_header)) return std::nullopt;
  std::string head;
  head.reserve(128 + req.headers.size() * 48);
  head.append(req.method).append(" ").append(target).append(" HTTP/1.1\r\n");
  fields.write(head);
  if (!req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH")
    head.append("Content-Length: ").append(std::to_string(req.body.size())).append("\r\n");
  head.append("\r\n");
  return head;
}

std::optional<std::string> response_head(const http::Response& r, bool keep_alive) {
  Fields fields;
  if (!fields.add_all(r.headers)) return std::nullopt;
  const auto status = static_cast<boost::beast::http::status>(r.status);
  std::string head;
  head.reserve(96 + r.headers.size() * 48);
  head.append("HTTP/1.1 ").append(std::to_string(r.status)).append(" ");
  head.append(boost::beast::http::obsolete_reason(status)).append("\r\n");
  fields.write(head);
  // A response that cannot have a body has no length either (RFC 9110 8.6).
  if (!(r.status < 200 || r.status == 204 || r.status == 304))
    head.append("Content-Length: ").append(std::to_string(r.body.size())).append("\r\n");
  if (!keep_alive) head.append("Connection: close\r\n");
  head.append("\r\n");
  return head;
}

}  // namespace mcpgw::transport
