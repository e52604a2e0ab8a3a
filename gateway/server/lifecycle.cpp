// Handlers of a session's life: initialize (session revisions) or
// server/discover (2026-07-28), ping, logging/setLevel, and the client's
// notifications about its own state.
#include <spdlog/spdlog.h>

#include "mcp/protocol.hpp"
#include "mcp/tasks.hpp"
#include "server/methods.hpp"

namespace mcpgw::server {
namespace {

using Clock = std::chrono::steady_clock;

/// Capabilities are the gateway's, not the upstreams' of the moment: an
/// upstream that connects later must not need a new session.
constexpr std::string_view kServerCapabilities =
    R"({"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},)"
    R"("prompts":{"listChanged":true},"completions":{},"logging":{},)"
    R"("experimental":{"mcpgw/sagas":{"methods":["tools/callSaga","tools/resumeSaga"],)"
    R"("stepTypes":["elicitation","sampling","roots"]}}})";

json::Value server_info(json::Allocator& a) {
  json::Value info(rapidjson::kObjectType);
  info.AddMember("name", "mcpgw", a);
  info.AddMember("title", "mcpgw MCP gateway", a);
  info.AddMember("version", MCPGW_VERSION, a);
  return info;
}

/// Tasks, as each generation declares them: 2025-11-25 in the base
/// protocol, 2026-07-28 as the extension (SEP-2663), never both at once.
constexpr std::string_view kTasks2025 = R"({"list":{},"cancel":{},"requests":{"tools":{"call":{}}}})";

/// The gateway's capabilities, with `extensions`: what its upstreams offer
/// at the moment (MCP Apps, Skills), each declared only when one does, and
/// tasks, when it makes them or an upstream runs some, in the form of the
/// era (`stateless`: 2026-07-28).
json::Value capabilities(Services& sv, json::Allocator& a, bool stateless) {
  auto caps = json::parse(kServerCapabilities);
  json::Value out(*caps, a);
  auto snap = sv.catalog.snapshot();
  auto parsed = json::parse(snap->extensions);
  json::Value extensions(rapidjson::kObjectType);
  if (parsed && parsed->IsObject()) extensions = json::copy(*parsed, a);
  if (snap->tasks && stateless)
    json::set(extensions, mcp::kTasksExtension, json::Value(rapidjson::kObjectType), a);
  else if (snap->tasks)
    out.AddMember("tasks", json::copy(*json::parse(kTasks2025), a), a);
  if (!extensions.ObjectEmpty()) out.AddMember("extensions", extensions, a);
  return out;
}

/// Calls the welcome tool of `s`'s mode; its text, or "" (none, failed).
Task<std::string> welcome_text(Services& sv, const McpSession& s, const config::Config& cfg) {
  auto snap = sv.catalog.snapshot();
  auto mode = snap->mode_index(s.mode());
  if (!mode || *mode >= snap->welcome_by_mode.size() || !snap->welcome_by_mode[*mode]) co_return std::string();
  const catalog::ExposedTool& tool = snap->tools[*snap->welcome_by_mode[*mode]];
  auto args = json::parse(cfg.welcome.arguments_json);
  // welcome.arguments name the exposed arguments (servers[].tools).
  if (args && tool.argument_map) args = catalog::to_upstream(*tool.argument_map, &*args);
  upstream::CallOptions o;
  o.deadline = std::min(Clock::now() + std::chrono::milliseconds(cfg.welcome.timeout_ms), tool.origin->deadline());
  upstream::Caller caller = caller_of(s);
  o.caller = &caller;
  auto reply = co_await tool.origin->call_tool(tool.upstream_name, args ? &*args : nullptr, nullptr, o);
  // A welcome that fails must not stop the session from starting.
  bool failed = reply.rpc_error || (json::find(reply.body, "isError") && reply.body["isError"].IsTrue());
  std::string text;
  if (const json::Value* content = json::find(reply.body, "content"); content && content->IsArray())
    for (const auto& item : content->GetArray())
      if (json::get_string(item, "type") == "text")
        if (auto t = json::get_string(item, "text")) text += (text.empty() ? "" : "\n") + std::string(*t);
  if (failed) {
    spdlog::warn("session {}: welcome tool {} failed, starting without it: {}", s.id().substr(0, 8), tool.name,
                 text.empty() ? json::write(reply.body) : text);
    co_return std::string();
  }
  spdlog::info("session {}: welcome tool {} gave {} characters of instructions", s.id().substr(0, 8), tool.name,
               text.size());
  co_return text;
}

/// The configured instructions, followed by the welcome tool's text.
Task<> add_instructions(Services& sv, const McpSession& s, json::Document& r) {
  auto cfg = sv.settings.config();
  std::string instructions = cfg->instructions;
  std::string welcome = co_await welcome_text(sv, s, *cfg);
  if (!welcome.empty()) instructions += (instructions.empty() ? "" : "\n\n") + welcome;
  if (!instructions.empty()) r.AddMember("instructions", json::str(instructions, r.GetAllocator()), r.GetAllocator());
}

}  // namespace

Task<Answer> initialize(Services& sv, Request& r) {
  const json::Value* p = r.params();
  if (!p || !p->IsObject()) co_return Answer::invalid_params("initialize needs params");
  auto requested = json::get_string(*p, "protocolVersion");
  if (!requested) co_return Answer::invalid_params("protocolVersion must be a string");
  std::string_view version = mcp::negotiate(*requested);
  McpSession& s = *r.session;
  std::string client_name, client_version;
  if (const auto* info = json::find(*p, "clientInfo")) {
    client_name = json::get_string(*info, "name").value_or("");
    client_version = json::get_string(*info, "version").value_or("");
  }
  s.initialize(std::string(version), json::find(*p, "capabilities"), client_name, std::move(client_version));
  json::Document result(rapidjson::kObjectType);
  auto& a = result.GetAllocator();
  result.AddMember("protocolVersion", json::str(version, a), a);
  result.AddMember("capabilities", capabilities(sv, a, false), a);
  result.AddMember("serverInfo", server_info(a), a);
  co_await add_instructions(sv, s, result);
  spdlog::info("session {}: initialized by {} (protocol {}, mode {})", s.id().substr(0, 8),
               client_name.empty() ? "unnamed client" : client_name, version, s.mode());
  co_return Answer::result(std::move(result));
}

Task<Answer> discover(Services& sv, Request& r) {
  json::Document result(rapidjson::kObjectType);
  auto& a = result.GetAllocator();
  json::Value versions(rapidjson::kArrayType);
  for (auto v : mcp::kStatelessVersions) versions.PushBack(json::ref(v), a);
  for (auto v : mcp::kSessionVersions) versions.PushBack(json::ref(v), a);
  result.AddMember("supportedVersions", versions, a);
  result.AddMember("capabilities", capabilities(sv, a, true), a);
  co_await add_instructions(sv, *r.session, result);
  json::Value meta(rapidjson::kObjectType);
  meta.AddMember(json::ref(mcp::kMetaServerInfo), server_info(a), a);
  result.AddMember("_meta", meta, a);
  co_return Answer::result(std::move(result));
}

Answer ping(Services&, Request&) { return Answer::empty(); }

Answer set_log_level(Services& sv, Request& r) {
  auto level = r.params() ? json::get_string(*r.params(), "level") : std::nullopt;
  if (!level || mcp::log_level_rank(*level) < 0)
    return Answer::invalid_params(
        "level must be one of debug, info, notice, warning, error, critical, alert, emergency");
  r.session->set_log_level(std::string(*level));
  sv.sessions.update_log_level();
  if (sv.cluster && !r.session->stateless()) sv.cluster->share_log_level(r.session->id(), std::string(*level));
  return Answer::empty();
}

void on_initialized(Services&, McpSession& s, const jsonrpc::Message&) { s.mark_initialized(); }

void on_cancelled(Services&, McpSession& s, const jsonrpc::Message& m) {
  const json::Value* id = m.params() ? json::find(*m.params(), "requestId") : nullptr;
  if (!id) return;
  if (auto target = s.in_flight(json::write(*id))) target->cancel();
}

}  // namespace mcpgw::server
