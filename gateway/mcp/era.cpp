#include "mcp/era.hpp"

#include <algorithm>

#include "mcp/protocol.hpp"
#include "util/base64.hpp"

namespace mcpgw::mcp {
namespace {

Refusal refusal(int code, std::string message) { return Refusal{code, std::move(message), json::Document()}; }

}  // namespace

int log_level_rank(std::string_view level) {
  static constexpr std::string_view kLevels[] = {"debug", "info", "notice", "warning",
                                                 "error", "critical", "alert", "emergency"};
  for (int i = 0; i < 8; ++i)
    if (kLevels[i] == level) return i;
  return -1;
}

bool is_stateless_version(std::string_view v) {
  return std::find(kStatelessVersions.begin(), kStatelessVersions.end(), v) != kStatelessVersions.end();
}

std::optional<std::string> claimed_version(const jsonrpc::Message& m) {
  const json::Value* p = m.params();
  const json::Value* meta = p ? json::find(*p, "_meta") : nullptr;
  const json::Value* v = meta ? json::find(*meta, kMetaVersion) : nullptr;
  if (!v) return std::nullopt;
  return v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : json::write(*v);
}

Refusal unsupported_version(std::string_view requested) {
  Refusal r = refusal(kUnsupportedVersion, "Unsupported protocol version: " + std::string(requested));
  r.data.SetObject();
  auto& a = r.data.GetAllocator();
  json::Value supported(rapidjson::kArrayType);
  for (auto v : kStatelessVersions) supported.PushBack(json::ref(v), a);
  for (auto v : kSessionVersions) supported.PushBack(json::ref(v), a);
  r.data.AddMember("supported", supported, a);
  r.data.AddMember("requested", json::str(requested, a), a);
  return r;
}

std::variant<Envelope, Refusal> read_envelope(const jsonrpc::Message& m,
                                              std::optional<std::string_view> header_version) {
  const json::Value* p = m.params();
  const json::Value* meta = p ? json::find(*p, "_meta") : nullptr;
  if (!meta || !meta->IsObject())
    return refusal(jsonrpc::kInvalidParams, "Invalid params: the request has no _meta envelope (" +
                                                std::string(kMetaVersion) + ", " + std::string(kMetaCapabilities) + ")");
  const json::Value* version = json::find(*meta, kMetaVersion);
  const json::Value* caps = json::find(*meta, kMetaCapabilities);
  std::string missing;
  if (!version) missing = std::string(kMetaVersion);
  if (!caps) missing += (missing.empty() ? "" : ", ") + std::string(kMetaCapabilities);
  if (!missing.empty()) return refusal(jsonrpc::kInvalidParams, "Invalid params: missing _meta keys: " + missing);
  if (!version->IsString()) return refusal(jsonrpc::kInvalidParams, "Invalid params: _meta " + std::string(kMetaVersion) + " must be a string");
  if (!caps->IsObject())
    return refusal(jsonrpc::kInvalidParams, "Invalid params: _meta " + std::string(kMetaCapabilities) + " must be an object");
  std::string_view v(version->GetString(), version->GetStringLength());
  if (header_version && *header_version != v)
    return refusal(kHeaderMismatch, "Header mismatch: the MCP-Protocol-Version header names " +
                                        std::string(*header_version) + " but _meta names " + std::string(v));
  if (!is_stateless_version(v)) return unsupported_version(v);
  Envelope e;
  e.version = std::string(v);
  e.capabilities.CopyFrom(*caps, e.capabilities.GetAllocator());
  if (const json::Value* info = json::find(*meta, kMetaClientInfo); info && info->IsObject())
    e.client_name = std::string(json::get_string(*info, "name").value_or(""));
  if (const json::Value* level = json::find(*meta, kMetaLogLevel)) {
    if (!level->IsString() || log_level_rank(level->GetString()) < 0)
      return refusal(jsonrpc::kInvalidParams, "Invalid params: _meta " + std::string(kMetaLogLevel) +
                                                  " must be one of debug, info, notice, warning, error, critical, "
                                                  "alert, emergency");
    e.log_level = level->GetString();
  }
  return e;
}

bool removed_in_stateless(std::string_view method) {
  return method == "initialize" || method == "ping" || method == "logging/setLevel" ||
         method == "resources/subscribe" || method == "resources/unsubscribe";
}

const char* named_param(std::string_view method) {
  if (method == "tools/call" || method == "prompts/get") return "name";
  if (method == "resources/read") return "uri";
  return nullptr;
}

int http_status(int code, bool envelope_stage) {
  if (code == jsonrpc::kMethodNotFound) return 404;
  if (code == kHeaderMismatch || code == kMissingClientCapability || code == kUnsupportedVersion) return 400;
  if (envelope_stage) return 400;
  return 200;
}

std::string encode_header_value(std::string_view value) {
  bool plain = !value.empty() && value.front() != ' ' && value.front() != '\t' && value.back() != ' ' &&
               value.back() != '\t' && !(value.substr(0, 9) == "=?base64?");
  for (unsigned char c : value)
    if (c < 0x20 || c > 0x7e) plain = false;
  return plain ? std::string(value) : "=?base64?" + base64(value) + "?=";
}

std::optional<std::string> decode_header_value(std::string_view header) {
  while (!header.empty() && (header.front() == ' ' || header.front() == '\t')) header.remove_prefix(1);
  while (!header.empty() && (header.back() == ' ' || header.back() == '\t')) header.remove_suffix(1);
  constexpr std::string_view open = "=?base64?", close = "?=";
  if (header.size() < open.size() + close.size() || header.substr(0, open.size()) != open ||
      header.substr(header.size() - close.size()) != close)
    return std::string(header);
  return unbase64(header.substr(open.size(), header.size() - open.size() - close.size()));
}

void stamp_result(json::Value& result, std::string_view method, std::string_view cache_scope, json::Allocator& a) {
  if (!result.IsObject()) return;
  if (!json::find(result, "resultType")) result.AddMember("resultType", "complete", a);
  bool cacheable = method == "server/discover" || method == "tools/list" || method == "prompts/list" ||
                   method == "resources/list" || method == "resources/templates/list" || method == "resources/read";
  if (!cacheable || json::get_string(result, "resultType") != "complete") return;
  // Lists change whenever an upstream's do; clients learn of it through
  // subscriptions/listen, so nothing is promised fresh for any time.
  if (!json::find(result, "ttlMs")) result.AddMember("ttlMs", 0, a);
  if (!json::find(result, "cacheScope")) result.AddMember("cacheScope", json::str(cache_scope, a), a);
}

}  // namespace mcpgw::mcp
