#pragma once
// Beast's HTTP/1.1 parser, keeping a message in the gateway's own types as
// it is parsed: Beast's message types hold a node per header (an
// allocation each), which the gateway then copied, and their body types
// need a buffer between the parser and whoever takes the body.
#include <boost/beast/http/basic_parser.hpp>

#include <cstdint>
#include <string>

#include "transport/http_listener.hpp"

namespace mcpgw::transport::http {

/// A Beast parser whose subclass takes the start line it parses, the fields
/// (on_field_impl) and the body (on_body_impl); the rest of what Beast
/// reports needs nothing done, and a chunked body's chunks are body like
/// any other.
template <bool isRequest>
class MessageParser : public boost::beast::http::basic_parser<isRequest> {
 protected:
  using error_code = boost::system::error_code;
  using string_view = boost::beast::string_view;

  void on_request_impl(boost::beast::http::verb, string_view, string_view, int, error_code&) override {}
  void on_response_impl(int, string_view, int, error_code&) override {}
  void on_header_impl(error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>&, error_code&) override {}
  void on_chunk_header_impl(std::uint64_t, string_view, error_code&) override {}
  std::size_t on_chunk_body_impl(std::uint64_t, string_view body, error_code& ec) override {
    return this->on_body_impl(body, ec);
  }
  void on_finish_impl(error_code&) override {}
};

/// Parses one request into `req`: its method, target and headers, and its
/// body up to `max_body` bytes; a longer body is only counted (`seen`), and
/// `req.body_too_large` says so.
class RequestParser final : public MessageParser<true> {
 public:
  RequestParser(Request& req, std::size_t max_body) : req_(req), max_body_(max_body) {}

  /// Body bytes parsed, kept or not.
  std::uint64_t seen() const { return seen_; }

 private:
  void on_request_impl(boost::beast::http::verb, string_view method, string_view target, int, error_code&) override {
    req_.method.assign(method.data(), method.size());
    req_.target.assign(target.data(), target.size());
    req_.headers.reserve(16);
  }
  void on_field_impl(boost::beast::http::field, string_view name, string_view value, error_code&) override {
    req_.headers.push_back({std::string(name.data(), name.size()), std::string(value.data(), value.size())});
  }
  void on_body_init_impl(const boost::optional<std::uint64_t>& length, error_code&) override {
    if (length && *length <= max_body_) req_.body.reserve(static_cast<std::size_t>(*length));
  }
  std::size_t on_body_impl(string_view body, error_code&) override {
    seen_ += body.size();
    if (!req_.body_too_large && req_.body.size() + body.size() > max_body_) {
      req_.body_too_large = true;
      std::string().swap(req_.body);
    }
    if (!req_.body_too_large) req_.body.append(body.data(), body.size());
    return body.size();
  }

  Request& req_;
  const std::size_t max_body_;
  std::uint64_t seen_ = 0;
};

}  // namespace mcpgw::transport::http
