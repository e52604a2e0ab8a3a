#pragma once
// Downstream MCP Streamable HTTP server: POST (JSON or SSE answers), GET
// (server-to-client SSE stream with heartbeats), DELETE (end session), with
// Host/Origin checks, bearer auth and body limits. The HTTP itself (sockets,
// TLS, keep-alive, deadlines) is http::Listener's; this adds MCP on top. No
// thread waits for anything: an open stream is a coroutine on the I/O loop.
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "auth/access.hpp"
#include "auth/rate_limit.hpp"
#include "transport/address_policy.hpp"
#include "transport/downstream.hpp"
#include "transport/http_listener.hpp"
#include "transport/io.hpp"

namespace mcpgw::transport {

/// A bearer token and the principal it authenticates.
using BearerCredential = auth::BearerCredential;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                 ///< 0 = any free port
  std::string path = "/mcp";
  std::vector<std::string> allowed_origins;
  std::vector<std::string> allowed_hosts;
  std::size_t max_body_bytes = 4 * 1024 * 1024;
  int heartbeat_ms = 15000;
  int session_idle_s = 3600;
  /// `auth`: bearer tokens and the OAuth resource server.
  auth::AccessSettings access;
  auth::LimitSettings limits;
  /// Request headers copied into the client's context for upstreams
  /// (the union of every server's forward_headers).
  std::vector<std::string> forward_headers;
  bool reuse_port = false;      ///< SO_REUSEPORT
  std::string tls_cert_file;    ///< both set: serve HTTPS
  std::string tls_key_file;
  /// Messages (and bytes) waiting for one client's stream; past either the
  /// client is too slow: its stream is closed and its calls cancelled.
  std::size_t stream_max_messages = 1024;
  std::size_t stream_max_bytes = 16 << 20;
  /// Slowloris bound: complete request headers within this.
  int header_timeout_ms = 10000;
  /// A keep-alive connection without a request is closed after this.
  int idle_timeout_ms = 60000;
};

/// A plain response for the small non-MCP endpoints.
struct SimpleResponse {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  ///< any others
};

/// Who may GET an endpoint outside the MCP path.
enum class GetAccess {
  Open,   ///< anyone who reaches the listener (health, metrics)
  Token,  ///< with `auth` set, only a request with a token the MCP endpoint accepts
};

/// An endpoint outside the MCP path that reads its request (query,
/// headers, body) and answers in its own time: runs on the connection's
/// strand and must not block.
using Route = std::function<Task<http::Response>(const http::Request&)>;

/// The MCP endpoint (`path`, `path/<mode>`) plus small GET endpoints.
class HttpServer {
 public:
  /// Serves on `io`'s threads; `handler` answers the MCP messages.
  HttpServer(HttpServerOptions opts, Handler& handler, Io& io);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Adds a GET endpoint outside the MCP path (health, metrics); `fn` runs
  /// on an I/O thread and must not block. Call before bind().
  void add_get(const std::string& path, std::function<SimpleResponse()> fn, GetAccess access = GetAccess::Open);
  /// Adds an endpoint at `path` for any method (it checks). Call before bind().
  void add_route(const std::string& path, Route fn);
  /// Who sends `req`, checked as a request to the MCP endpoint would be
  /// (Host, Origin, credentials): the principal ("" without auth), or the
  /// refusal to send.
  Task<std::variant<std::string, http::Response>> authenticate(const http::Request& req) const;
  /// Serves sessions shared with other replicas (cluster): sealed ids, a
  /// cluster-wide DELETE. `shared` outlives this server. Call before bind().
  void share_sessions(SharedSessions& shared);
  /// Reads the access settings (a jwks_file) and binds the socket; returns
  /// the bound port, or what is wrong ("cannot listen on HOST:PORT: why").
  Result<int> bind();
  /// Applies reloaded `auth` and `limits` (after bind()): the next request
  /// is checked under them, sessions stay. On an error nothing changes.
  Result<void> set_access(const auth::AccessSettings& access, const auth::LimitSettings& limits,
                          std::vector<std::string> forward_headers);
  /// True when serving HTTPS (after bind()).
  bool tls() const;
  /// Serves on the I/O threads, blocking the caller until stop() and until
  /// every connection has closed (in-flight requests answered).
  void serve();
  /// Stops accepting, ends the GET streams and listens, lets in-flight
  /// requests finish; serve() then returns. Safe from any thread.
  void stop();
  /// Number of live sessions.
  std::size_t session_count() const;
  /// Number of open GET (server-to-client) streams.
  std::size_t open_streams() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcpgw::transport
