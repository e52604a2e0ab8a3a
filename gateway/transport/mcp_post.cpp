#include "transport/mcp_post.hpp"

#include <algorithm>

#include "mcp/era.hpp"
#include "mcp/protocol.hpp"
#include "transport/http_admission.hpp"

namespace mcpgw::transport::mcp_post {
namespace {

/// Request `m` refused with JSON-RPC error `code`, in the HTTP status the
/// revision gives that code before any method runs.
http::Response refusal(const jsonrpc::Message& m, int code, const std::string& message,
                       const json::Value* data = nullptr) {
  return json_response(mcp::http_status(code, true), jsonrpc::make_error(m.id(), code, message, data));
}

/// How the Mcp-Name header disagrees with the name `m` carries in its
/// params (`method` names one), if it does.
std::optional<std::string> name_mismatch(const http::Request& req, const jsonrpc::Message& m,
                                         const std::string& method, bool exact) {
  const char* key = mcp::named_param(method);
  auto body_name = key && m.params() ? json::get_string(*m.params(), key) : std::nullopt;
  if (!body_name) return std::nullopt;
  if (!req.has("Mcp-Name"))
    return "Header mismatch: the body carries params." + std::string(key) + "=\"" + std::string(*body_name) +
           "\" but the Mcp-Name header is absent";
  auto name = mcp::decode_header_value(req.get("Mcp-Name"));
  if (!name) return "Header mismatch: the Mcp-Name header is not valid =?base64?...?=";
  if (exact ? *name != *body_name : !mcp::header_matches(*name, *body_name))
    return "Header mismatch: the Mcp-Name header names \"" + *name + "\" but the body carries params." + key +
           "=\"" + std::string(*body_name) + "\"";
  return std::nullopt;
}

/// Whether Mcp-Method header value `header` names `method`.
bool method_matches(std::string_view header, const std::string& method, bool exact) {
  if (exact) return header == method;
  auto decoded = mcp::decode_header_value(header);
  return decoded && *decoded == method;
}

/// The refusal of `m`'s envelope, read by `checks.envelope` or else
/// mcp::read_envelope, given MCP-Protocol-Version header `version`.
std::optional<mcp::Refusal> envelope_refusal(const jsonrpc::Message& m, std::string_view version,
                                             const Checks& checks) {
  if (checks.envelope) return checks.envelope(m, version);
  auto envelope = mcp::read_envelope(m, version);
  if (auto* r = std::get_if<mcp::Refusal>(&envelope)) return std::move(*r);
  return std::nullopt;
}

/// The refusal of request `m` when its envelope is wrong or the headers
/// disagree with its body.
std::optional<http::Response> header_mismatch(const http::Request& req, const jsonrpc::Message& m,
                                              const Checks& checks) {
  std::string method(m.method());
  if (!req.has("MCP-Protocol-Version"))
    return refusal(m, mcp::kHeaderMismatch, "Header mismatch: the MCP-Protocol-Version header is required");
  const std::string_view version = req.get("MCP-Protocol-Version");
  if (auto r = envelope_refusal(m, version, checks))
    return refusal(m, r->code, r->message, r->data.IsNull() ? nullptr : &r->data);
  if (!req.has("Mcp-Method"))
    return refusal(m, mcp::kHeaderMismatch,
                   "Header mismatch: the body names method " + method + " but the Mcp-Method header is absent");
  if (!method_matches(req.get("Mcp-Method"), method, checks.exact_headers))
    return refusal(m, mcp::kHeaderMismatch,
                   "Header mismatch: the Mcp-Method header names '" + std::string(req.get("Mcp-Method")) +
                       "' but the body names " + method);
  if (auto why = name_mismatch(req, m, method, checks.exact_headers)) return refusal(m, mcp::kHeaderMismatch, *why);
  return std::nullopt;
}

}  // namespace

bool speaks_sessions(const http::Request& req, const jsonrpc::Parsed& parsed) {
  bool claims = !parsed.batch && parsed.messages.size() == 1 && mcp::claimed_version(parsed.messages.front());
  bool has_version = req.has("MCP-Protocol-Version");
  return req.has("Mcp-Session-Id") || (!claims && (!has_version || mcp::is_supported(req.get("MCP-Protocol-Version"))));
}

std::optional<http::Response> unsupported_version(const http::Request& req) {
  if (!req.has("MCP-Protocol-Version")) return std::nullopt;
  std::string_view version = req.get("MCP-Protocol-Version");
  if (mcp::is_supported(version)) return std::nullopt;
  return json_error(400, jsonrpc::kInvalidRequest,
                    "Bad Request: unsupported MCP-Protocol-Version " + std::string(version));
}

bool has_initialize(const jsonrpc::Parsed& parsed) {
  return std::any_of(parsed.messages.begin(), parsed.messages.end(),
                     [](const jsonrpc::Message& m) { return m.method() == "initialize"; });
}

std::optional<http::Response> initialize_alone(const jsonrpc::Parsed& parsed) {
  if (parsed.messages.size() == 1 && !parsed.batch) return std::nullopt;
  return json_error(400, jsonrpc::kInvalidRequest, "Invalid Request: initialize must be sent alone");
}

std::optional<http::Response> screen_stateless(const http::Request& req, const jsonrpc::Parsed& parsed,
                                               const Checks& checks) {
  if (parsed.batch || parsed.messages.size() != 1)
    return json_error(400, jsonrpc::kInvalidRequest, "Bad Request: MCP 2026-07-28 does not allow JSON-RPC batches");
  const jsonrpc::Message& m = parsed.messages.front();
  if (!m.is_request()) return http::Response{202, {}, {}};
  return header_mismatch(req, m, checks);
}

void take_param_headers(const http::Request& req, ClientContext& ctx) {
  ctx.stateless = true;
  ctx.has_param_headers = true;
  for (const auto& [name, value] : req.headers) {
    std::string n = lower(name);
    if (n.rfind("mcp-param-", 0) == 0) ctx.param_headers.emplace_back(n.substr(10), value);
  }
}

int answer_status(int error) { return error ? mcp::http_status(error, false) : 200; }

}  // namespace mcpgw::transport::mcp_post
