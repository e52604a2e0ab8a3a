#pragma once
// The checks every request to the MCP endpoint passes before its method is
// looked at: Host (DNS rebinding), Origin, bearer token, mode. Each refusal
// is a finished HTTP response, worded as the contract says.
#include <optional>
#include <string>

#include "transport/http_listener.hpp"
#include "transport/http_server.hpp"

namespace mcpgw::transport {

/// A JSON-RPC error (null id) as an HTTP response with `status`.
http::Response json_error(int status, int code, const std::string& message);
/// A JSON body (`application/json`) with `status`.
http::Response json_response(int status, std::string body);
/// ASCII lower case.
std::string lower(std::string s);

/// Admission of MCP requests under one server's options.
class Admission {
 public:
  Admission(const HttpServerOptions& opts, Handler& handler) : opts_(opts), handler_(handler) {}
  /// Nothing when `req` may go on (then `ctx` holds its mode and
  /// principal); otherwise the refusal to send.
  std::optional<http::Response> admit(const http::Request& req, const std::string& mode, ClientContext& ctx) const;

 private:
  bool host_allowed(const http::Request& req) const;
  bool origin_allowed(const http::Request& req) const;
  /// The credential of the request; nullptr when auth is off. `ok` is false
  /// when auth is on and the token is missing or wrong.
  const BearerCredential* authenticate(const http::Request& req, bool& ok) const;

  const HttpServerOptions& opts_;
  Handler& handler_;
};

}  // namespace mcpgw::transport
