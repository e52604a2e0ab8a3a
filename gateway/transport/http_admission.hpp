#pragma once
// The checks every request to the MCP endpoint passes before its method is
// looked at, as a chain of request filters: Host (DNS rebinding), Origin,
// credentials (static bearer tokens, OAuth JWTs), mode, scope; and each
// JSON-RPC request's limits (in flight, rate) as a chain of limit filters.
// The filters are in http_request_filters.cpp, in the gateway's one filter
// shape (util/filter_chain.hpp). Each refusal is a finished HTTP response
// (or JSON-RPC error), worded as the contract says, and goes through
// on_refused().
#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "auth/access.hpp"
#include "auth/rate_limit.hpp"
#include "auth/token_cache.hpp"
#include "transport/batch.hpp"
#include "transport/http_listener.hpp"
#include "transport/http_server.hpp"
#include "transport/jwks_source.hpp"
#include "util/filter_chain.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::transport {

/// A JSON-RPC error (null id) as an HTTP response with `status`.
http::Response json_error(int status, int code, const std::string& message);
/// A JSON body (`application/json`) with `status`.
http::Response json_response(int status, SplicedText body);
/// ASCII lower case.
std::string lower(std::string s);

/// The `auth` and `limits` in force; replaced whole on SIGHUP.
struct AccessState {
  auth::Verifier verifier;
  std::shared_ptr<JwksSource> jwks;  ///< null without auth.oauth
  std::shared_ptr<auth::TokenCache> tokens;  ///< JWTs checked already; null without auth.oauth
  auth::LimitSettings limits;
  std::shared_ptr<auth::RateLimiter> limiter;  ///< null without calls_per_s
  /// Request headers to copy into the client's context (the union of
  /// every server's forward_headers).
  std::vector<std::string> forward_headers;
};

/// Builds the state for `access` and `limits` (reading a jwks_file now);
/// `keep` (may be null) lends its rate buckets when the limits are the same
/// and its JWKS source when the oauth settings are (a jwks_file is re-read).
Result<std::shared_ptr<const AccessState>> make_access_state(Io& io, const auth::AccessSettings& access,
                                                             const auth::LimitSettings& limits,
                                                             std::vector<std::string> forward_headers,
                                                             const AccessState* keep);

/// One refusal, for the log (and, later, the audit trail).
struct Refused {
  std::string what;       ///< "auth", "scope", "origin", "host", "rate", "in_flight", "sessions"
  std::string principal;  ///< "" when unknown
  std::string reason;
  std::string mode;       ///< the mode the request asked for; "" = the default
  std::string tool = {};  ///< the tool a refused tools/call named, if any
};

/// A request to the MCP endpoint (or to an operator endpoint) on its way
/// through the request filters.
struct Arrival {
  const http::Request& req;
  /// The `auth` and `limits` the whole request is checked under.
  const AccessState& st;
  /// The mode the request asks for (/mcp/<mode>, "" = the default); null
  /// for an operator endpoint, which takes any token the MCP endpoint does.
  const std::string* mode;
  /// What the filters learn of the client: its principal, modes, token
  /// and forwarded headers.
  ClientContext& ctx;
  /// The credentials' verdict; set by the token filter.
  auth::Verdict verdict{};
};

class RequestFilter;
/// The request filters after the current one: nothing when the request
/// may go on, else the refusal to send.
using RequestNext = ChainNext<RequestFilter, Arrival, Task<std::optional<http::Response>>>;

/// One check of a request before its body is looked at.
class RequestFilter {
 public:
  virtual ~RequestFilter() = default;
  /// Checks `a`, passing it on with `next` or answering the refusal; the
  /// last filter of a chain admits.
  virtual Task<std::optional<http::Response>> on_call(Arrival& a, RequestNext next) = 0;
};

/// One JSON-RPC request of an admitted client on its way through the limit
/// filters.
struct Demand {
  const ClientContext& ctx;
  const jsonrpc::Message& m;
  /// The session's requests already running; -1 for a request without a session.
  int in_flight;
  const AccessState& st;
};

/// The JSON-RPC error code of a limit filter's refusal.
inline constexpr int kLimitRefused = -32000;

class LimitFilter;
/// The limit filters after the current one: nothing when the request may
/// run, else its JSON-RPC error. They never wait.
using LimitNext = ChainNext<LimitFilter, Demand, std::optional<std::string>>;

/// One limit on a client's requests.
class LimitFilter {
 public:
  virtual ~LimitFilter() = default;
  /// Checks `d`, passing it on with `next` or answering the error; the
  /// last filter of a chain lets the request run.
  virtual std::optional<std::string> on_call(Demand& d, LimitNext next) = 0;
};

/// Admission of MCP requests under one server's options.
class Admission {
 public:
  Admission(const HttpServerOptions& opts, Handler& handler, std::shared_ptr<const AccessState> state);
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;
  /// Nothing when `req` may go on (then `ctx` holds its mode, principal
  /// and forwarded headers); otherwise the refusal to send. Waits (without
  /// blocking) only when a token names a key the JWKS lacks.
  Task<std::optional<http::Response>> admit(const http::Request& req, const std::string& mode,
                                            ClientContext& ctx) const;
  /// For an operator endpoint (the status page's data): the Host and
  /// Origin checks and a token the MCP endpoint would accept (any mode);
  /// nothing when `req` may go on, else the refusal.
  Task<std::optional<http::Response>> admit_operator(const http::Request& req) const;
  /// The JSON-RPC error for request `m` when a limit refuses it (`in_flight`:
  /// the session's requests already running, -1 for none), else nothing.
  std::optional<std::string> limit_call(const ClientContext& ctx, const jsonrpc::Message& m, int in_flight) const;
  /// max_sessions (0 = none).
  int max_sessions() const;
  /// max_batch_size and batch_concurrency.
  BatchLimits batch_limits() const;
  /// The 503 for an initialize over max_sessions.
  http::Response sessions_full(const ClientContext& ctx) const;
  /// The RFC 9728 document when `path` is a protected-resource metadata
  /// path and auth.oauth is set.
  std::optional<http::Response> metadata(std::string_view path) const;
  /// The origin to grant CORS to: the request's Origin when it is in
  /// listen.allowed_origins.
  std::optional<std::string> cors_origin(const http::Request& req) const;
  /// Every refusal passes here (logged; the place for an audit record).
  void on_refused(const Refused& r) const;
  /// The answer to a verdict that does not admit, refused in `mode`.
  http::Response refuse(const auth::Verdict& v, const AccessState& st, const std::string& mode) const;
  /// The server's options, which the filters check against.
  const HttpServerOptions& options() const { return opts_; }
  /// The modes the gateway serves.
  std::vector<std::string> modes() const;

  std::shared_ptr<const AccessState> state() const;
  /// Applies a reloaded `auth`/`limits`: the next request is checked under it.
  void set_state(std::shared_ptr<const AccessState> s);

 private:
  /// Where the metadata of the resource is (RFC 9728 §3.1).
  std::string metadata_url(const AccessState& st) const;

  const HttpServerOptions& opts_;
  Handler& handler_;
  const Chain<RequestFilter> endpoint_chain_, operator_chain_;
  const Chain<LimitFilter> limit_chain_;
  /// Read by every request, replaced on reload: shared.
  mutable util::SharedMutex mu_;
  std::shared_ptr<const AccessState> state_ GUARDED_BY(mu_);
};

}  // namespace mcpgw::transport
