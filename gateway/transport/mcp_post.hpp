#pragma once
// The MCP protocol's decisions about one POST to the MCP endpoint, apart
// from HTTP itself: which revision the POST speaks (a session revision,
// 2025-03-26 … 2025-11-25, or the stateless 2026-07-28), the version
// header, the initialize rule, and every 2026-07-28 check of a request
// before it runs (no batches, the envelope, Mcp-Method and Mcp-Name
// against the body) with the HTTP status its answer gets. http_post.cpp
// and http_stateless.cpp run these as steps; the per-message decisions
// (which methods an era has, how a result looks in it) are the router's
// codec (mcp/codec.hpp).
#include <optional>
#include <string_view>

#include "jsonrpc/message.hpp"
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

/// 2026-07-28: the answer to a body before anything runs, when it gets one
/// without running: a batch (400); a notification or response (202: its
/// clients cancel by closing the stream and answer nothing); a bad
/// envelope or headers that disagree with the body (the error's status).
std::optional<http::Response> screen_stateless(const http::Request& req, const jsonrpc::Parsed& parsed);

/// 2026-07-28: marks `ctx` stateless, with the request's Mcp-Param-*
/// headers (lower-cased names) for the tool's checks.
void take_param_headers(const http::Request& req, ClientContext& ctx);

/// 2026-07-28: the HTTP status of a JSON answer carrying JSON-RPC error
/// code `error` (0 for a result: 200).
int answer_status(int error);

}  // namespace mcpgw::transport::mcp_post
