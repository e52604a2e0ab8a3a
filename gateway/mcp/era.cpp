#include "mcp/era.hpp"

#include <algorithm>
#include <functional>
#include <set>

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
  e.capabilities = json::clone(*caps);
  if (const json::Value* info = json::find(*meta, kMetaClientInfo); info && info->IsObject()) {
    e.client_name = std::string(json::get_string(*info, "name").value_or(""));
    e.client_version = std::string(json::get_string(*info, "version").value_or(""));
  }
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
  // tasks/result and tasks/list: the tasks extension (SEP-2663) inlines
  // results in tasks/get and has no listing.
  return method == "initialize" || method == "ping" || method == "logging/setLevel" ||
         method == "resources/subscribe" || method == "resources/unsubscribe" || method == "tasks/result" ||
         method == "tasks/list";
}

const char* named_param(std::string_view method) {
  if (method == "tools/call" || method == "prompts/get") return "name";
  if (method == "resources/read") return "uri";
  // SEP-2663: the task id routes the task's requests to where it lives.
  if (method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel") return "taskId";
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

namespace {

/// Calls `fn(property schema, name, path)` for every property reached from
/// `schema` through `properties` chains.
void walk_properties(const json::Value& schema, const std::function<void(const json::Value&, const std::string&)>& fn,
                     const std::string& path = {}) {
  const json::Value* props = json::find(schema, "properties");
  if (!props || !props->IsObject()) return;
  for (const auto& p : props->GetObject()) {
    std::string here = path.empty() ? p.name.GetString() : path + "." + p.name.GetString();
    fn(p.value, here);
    walk_properties(p.value, fn, here);
  }
}

/// How many `x-mcp-header` keys `v` holds anywhere.
std::size_t count_declarations(const json::Value& v) {
  std::size_t n = 0;
  if (v.IsObject()) {
    for (const auto& m : v.GetObject()) {
      if (std::string_view(m.name.GetString()) == "x-mcp-header") ++n;
      n += count_declarations(m.value);
    }
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray()) n += count_declarations(e);
  }
  return n;
}

bool is_token(std::string_view s) {
  static constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           kExtra.find(c) != std::string_view::npos;
  });
}

std::string lowered(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

std::string x_mcp_header_problem(const json::Value& tool) {
  const json::Value* schema = json::find(tool, "inputSchema");
  if (!schema) return {};
  std::string problem;
  std::set<std::string> seen;
  std::size_t reached = 0;
  walk_properties(*schema, [&](const json::Value& prop, const std::string& path) {
    const json::Value* h = json::find(prop, "x-mcp-header");
    if (!h || !problem.empty()) return;
    ++reached;
    if (!h->IsString() || !is_token(std::string_view(h->GetString(), h->GetStringLength()))) {
      problem = "property " + path + ": x-mcp-header " + json::write(*h) + " is not an HTTP header token";
      return;
    }
    if (!seen.insert(lowered(h->GetString())).second) {
      problem = "property " + path + ": x-mcp-header \"" + std::string(h->GetString()) + "\" is declared twice";
      return;
    }
    auto type = json::get_string(prop, "type");
    if (type != "string" && type != "integer" && type != "boolean")
      problem = "property " + path + ": x-mcp-header needs a string, integer or boolean property";
  });
  if (problem.empty() && count_declarations(*schema) != reached)
    problem = "x-mcp-header is declared outside a chain of properties";
  return problem;
}

std::vector<std::pair<std::string, std::string>> param_headers(const json::Value& tool, const json::Value* args) {
  std::vector<std::pair<std::string, std::string>> out;
  const json::Value* schema = json::find(tool, "inputSchema");
  if (!schema || !args) return out;
  walk_properties(*schema, [&](const json::Value& prop, const std::string& path) {
    auto h = json::get_string(prop, "x-mcp-header");
    if (!h) return;
    const json::Value* v = args;
    std::size_t start = 0;
    while (v && start <= path.size()) {
      auto dot = path.find('.', start);
      v = json::find(*v, std::string_view(path).substr(start, dot == std::string::npos ? dot : dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    if (!v || v->IsNull()) return;
    std::string value = v->IsString() ? std::string(v->GetString(), v->GetStringLength())
                        : v->IsBool() ? (v->IsTrue() ? "true" : "false")
                                      : json::write(*v);
    out.emplace_back("Mcp-Param-" + std::string(*h), encode_header_value(value));
  });
  return out;
}

bool header_matches(std::string_view header, std::string_view body) {
  if (header == body) return true;
  std::string decoded;
  decoded.reserve(body.size());
  auto hex = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
  };
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '%' && i + 2 < body.size() && hex(body[i + 1]) >= 0 && hex(body[i + 2]) >= 0) {
      decoded.push_back(static_cast<char>(hex(body[i + 1]) * 16 + hex(body[i + 2])));
      i += 2;
    } else {
      decoded.push_back(body[i]);
    }
  }
  return header == decoded;
}

void stamp_result(json::Value& result, std::string_view method, std::string_view cache_scope, json::Allocator& a) {
  if (!result.IsObject()) return;
  if (!json::find(result, "resultType")) result.AddMember("resultType", "complete", a);
  bool cacheable = method == "server/discover" || method == "tools/list" || method == "prompts/list" ||
                   method == "resources/list" || method == "resources/templates/list" || method == "resources/read" ||
                   method == "skills/list" || method == "skills/get";
  if (!cacheable || json::get_string(result, "resultType") != "complete") return;
  // Lists change whenever an upstream's do; clients learn of it through
  // subscriptions/listen, so nothing is promised fresh for any time.
  if (!json::find(result, "ttlMs")) result.AddMember("ttlMs", 0, a);
  if (!json::find(result, "cacheScope")) result.AddMember("cacheScope", json::str(cache_scope, a), a);
}

}  // namespace mcpgw::mcp
