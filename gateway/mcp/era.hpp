#pragma once
// MCP 2026-07-28, the stateless revision: no initialize and no session; each
// request carries the client's version, capabilities and identity in
// `_meta`, results carry `resultType`, and over HTTP the method and the
// addressed name are repeated in headers. This file holds what both sides of
// the gateway need to speak it.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "jsonrpc/message.hpp"

namespace mcpgw::mcp {

/// Stateless revisions this build speaks, newest first.
inline constexpr std::array<std::string_view, 1> kStatelessVersions = {"2026-07-28"};
inline constexpr std::string_view kStatelessVersion = kStatelessVersions[0];

/// Reserved `_meta` keys of the per-request envelope.
inline constexpr std::string_view kMetaVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kMetaCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr std::string_view kMetaClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr std::string_view kMetaLogLevel = "io.modelcontextprotocol/logLevel";
inline constexpr std::string_view kMetaServerInfo = "io.modelcontextprotocol/serverInfo";
inline constexpr std::string_view kMetaSubscriptionId = "io.modelcontextprotocol/subscriptionId";

/// Error codes the revision adds.
inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kMissingClientCapability = -32021;
inline constexpr int kUnsupportedVersion = -32022;

/// Severity rank of an MCP log level (RFC 5424 order, debug = 0), -1 when
/// `level` is not one.
int log_level_rank(std::string_view level);

/// True for a version in kStatelessVersions.
bool is_stateless_version(std::string_view v);

/// The version a request claims in its `_meta`, if it has that key.
std::optional<std::string> claimed_version(const jsonrpc::Message& m);

/// What a stateless request says about its client.
struct Envelope {
  std::string version;
  json::Document capabilities{rapidjson::kObjectType};
  std::string client_name;  ///< "" when clientInfo is absent (it is optional)
  std::string client_version;  ///< clientInfo.version, "" when absent
  std::string log_level;    ///< "" when absent: the client wants no log messages
};

/// A request refused before any method runs: its JSON-RPC error.
struct Refusal {
  int code;
  std::string message;
  json::Document data;  ///< null when the error has no data
};

/// Reads and checks the envelope of `m` in the revision's order: required
/// keys present (-32602), the version supported (-32022). `header_version`
/// is the HTTP MCP-Protocol-Version header, when the transport has one: it
/// must equal the claim (-32020).
std::variant<Envelope, Refusal> read_envelope(const jsonrpc::Message& m,
                                              std::optional<std::string_view> header_version);

/// The -32022 refusal of `requested`, listing every version this build speaks.
Refusal unsupported_version(std::string_view requested);

/// Methods the stateful revisions have and 2026-07-28 removed.
bool removed_in_stateless(std::string_view method);

/// The params member an `Mcp-Name` header repeats for `method` ("name",
/// "uri", "taskId"), or nullptr for methods without one.
const char* named_param(std::string_view method);

/// HTTP status of a stateless reply carrying JSON-RPC error `code`: 400 for
/// envelope and header errors, 404 for an unknown method, 200 (an in-band
/// error) for everything a handler decides.
int http_status(int code, bool envelope_stage);

/// The `Mcp-Name` / `Mcp-Param-*` form of `value`: as is when it is plain
/// printable ASCII, else `=?base64?...?=`.
std::string encode_header_value(std::string_view value);
/// The value an `Mcp-Name` / `Mcp-Param-*` header stands for, after trimming
/// spaces and tabs and decoding the base64 form; nullopt when that form is
/// malformed.
std::optional<std::string> decode_header_value(std::string_view header);

/// Why the `x-mcp-header` declarations in `tool`'s inputSchema are invalid
/// (SEP-2243: a token, unique ignoring case, on a string, integer or
/// boolean property reached through `properties` only), or "" when valid.
std::string x_mcp_header_problem(const json::Value& tool);

/// The `Mcp-Param-<name>` headers a call of `tool` with `args` carries.
std::vector<std::pair<std::string, std::string>> param_headers(const json::Value& tool, const json::Value* args);

/// True when header value `header` stands for `body`: equal, or equal to
/// the body's value percent-decoded, since HTTP stacks in front of the
/// gateway (proxies, client libraries) may percent-decode header values.
bool header_matches(std::string_view header, std::string_view body);

/// `result` with `resultType` (default "complete") and, for methods whose
/// results clients may cache, `ttlMs` / `cacheScope` added when missing.
void stamp_result(json::Value& result, std::string_view method, std::string_view cache_scope, json::Allocator& a);

}  // namespace mcpgw::mcp
