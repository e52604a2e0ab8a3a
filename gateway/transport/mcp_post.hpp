#pragma once
// The MCP protocol's decisions about one POST to the MCP endpoint, apart
// from HTTP itself: which revision the POST speaks (a session revision,
// 2025-03-26 … 2025-11-25, or the stateless 2026-07-28), the version
// header, the initialize rule, and every 2026-07-28 check of a request
// before it runs (no batches, the envelope, Mcp-Method and Mcp-Name
// against the body) with the HTTP status its answer gets. http_post.cpp
// and http_stateless.cpp run these as steps, and so does the example
// servers' HTTP transport (examples/kit_http.cpp); the per-message decisions
// (which methods an era has, how a result looks in it) are the router's
// codec (mcp/codec.hpp).
#include <functional>
#include <optional>
#include <string_view>

#include "jsonrpc/message.hpp"
#include "mcp/era.hpp"
#include "transport/downstream.hpp"
#include "transport/http_listener.hpp"

namespace mcpgw::transport::mcp_post {

/// Whether POST `req` with body `parsed` speaks a session revision: it
/// names a session, or it neither claims 2026-07-28 in its `_meta` nor
/// names a version header other than a session revision's. Everything else
/// is a stateless request and gets that revision's precise errors.
bool speaks_sessions(const http::Request& req, const jsonrpc::Parsed& parsed);

/// A session revision's refusal (400) of an MCP-Protocol-Version header the
/// gateway does not speak; nothing when absent or supported.
std::optional<http::Response> unsupported_version(const http::Request& req);

/// Whether the body holds an initialize (it opens a session).
bool has_initialize(const jsonrpc::Parsed& parsed);

/// The refusal of an initialize that does not come alone.
std::optional<http::Response> initialize_alone(const jsonrpc::Parsed& parsed);

/// How screen_stateless checks a request where its caller is not the
/// gateway's front. The example servers (examples/kit_http.cpp) are test
/// doubles of an upstream: they must catch a gateway that forwards
/// anything but the body's values, and they read the envelope themselves,
/// since their refusal of a version lists only what their era speaks and a
/// call keeps what its envelope says.
struct Checks {
  /// Mcp-Method must be the body's method as sent, and Mcp-Name the body's
  /// name (or its =?base64?...?= form). The gateway's front also takes an
  /// encoded Mcp-Method, and an Mcp-Name that is the body's name
  /// percent-decoded (mcp::header_matches), since proxies in front of it
  /// may decode header values; a test double must not.
  bool exact_headers = false;
  /// Reads the envelope of a request given its MCP-Protocol-Version header
  /// (present): the refusal, or nothing when it is valid. Unset:
  /// mcp::read_envelope.
  std::function<std::optional<mcp::Refusal>(const jsonrpc::Message&, std::string_view)> envelope;
};

/// 2026-07-28: the answer to a body before anything runs, when it gets one
/// without running: a batch (400); a notification or response (202: its
/// clients cancel by closing the stream and answer nothing); a missing
/// version header, a bad envelope or headers that disagree with the body
/// (the error's status), in that order.
std::optional<http::Response> screen_stateless(const http::Request& req, const jsonrpc::Parsed& parsed,
                                               const Checks& checks = {});

/// 2026-07-28: marks `ctx` stateless, with the request's Mcp-Param-*
/// headers (lower-cased names) for the tool's checks.
void take_param_headers(const http::Request& req, ClientContext& ctx);

/// 2026-07-28: the HTTP status of a JSON answer carrying JSON-RPC error
/// code `error` (0 for a result: 200).
int answer_status(int error);

}  // namespace mcpgw::transport::mcp_post
