#include "server/policies.hpp"

#include <spdlog/spdlog.h>

#include "mcp/protocol.hpp"

namespace mcpgw::server {
namespace {

Task<upstream::Reply> replied(upstream::Reply r) { co_return r; }

/// Audits and counts call `call`'s refusal by `d` (of `server`'s tool
/// `upstream_tool` with `args`: the tool itself, or a composite's upstream
/// call), and returns the isError the caller gets.
upstream::Reply refuse(const ServerCall& call, const catalog::Decision& d, std::string_view server,
                       std::string_view upstream_tool, const json::Value* args) {
  const ToolCallContext& c = call.run.c;
  const config::Policy& p = *d.refused_by;
  AuditRecord a;
  a.principal = c.caller.principal;
  a.session = c.caller.session;
  a.mode = c.caller.mode;
  a.tool = c.tool->name;
  a.server = std::string(server);
  a.upstream_tool = std::string(upstream_tool);
  a.arguments = args;
  a.chain_id = call.run.span.span_id.str();
  a.hop = call.hop;
  a.trace_id = c.trace.trace_id.str();
  a.policy = p.name;
  a.reason = "policy " + p.name + ": " + p.message;
  // Fail closed: the rule's expression could not be evaluated.
  if (!d.error.empty()) a.reason += " (expression failed at column " + std::to_string(d.column) + ": " + std::string(d.error) + ")";
  spdlog::info("refused by policy {}: {} {}/{} principal={} session={} trace={}{}", p.name, c.tool->name, server,
               upstream_tool, c.caller.principal.empty() ? "-" : c.caller.principal, c.caller.session.substr(0, 8),
               c.trace.trace_id.view(), d.error.empty() ? "" : " (expression failed: " + std::string(d.error) + ")");
  c.audit->refused("policy", std::move(a));
  return upstream::Reply{false, mcp::tool_error(catalog::refusal_text(p))};
}

/// The tool a composite's upstream call reaches, as the policies see it:
/// its exposed form when the catalog has it, else `<server><sep><tool>`.
struct UpstreamTarget {
  std::string name;
  catalog::ToolView view;
};

UpstreamTarget target_of(const ToolCallContext& c, std::string_view server, std::string_view tool) {
  const catalog::Snapshot& s = *c.snap;
  if (auto it = s.upstream_tool_index.find(std::string(tool)); it != s.upstream_tool_index.end()) {
    for (std::size_t i : it->second) {
      const catalog::ExposedTool& t = s.tools[i];
      if (t.origin->name() == server) return {{}, catalog::view_of(t)};
    }
  }
  UpstreamTarget out;
  out.name = std::string(server) + c.cfg->naming.separator + std::string(tool);
  out.view.name = out.name;
  out.view.server = server;
  out.view.upstream_name = tool;
  return out;
}

class PolicyFilter final : public CallFilter {
 public:
  /// Not a coroutine: it has nothing to do on the way back.
  Task<upstream::Reply> on_call(ServerCall& call, CallNext next) override {
    const ToolCallContext& c = call.run.c;
    if (!c.subject) return next(call);
    const catalog::ExposedTool& t = call.tool;
    auto d = catalog::decide(c.cfg->policies, *c.subject, catalog::view_of(t), call.arguments);
    if (!d.allowed()) return replied(refuse(call, d, t.origin->name(), t.upstream_name, call.arguments));
    if (t.composite) {
      call.opts.vet_upstream_call = [&call](std::string_view server, std::string_view tool,
                                            const json::Value* args) -> std::optional<upstream::Reply> {
        const ToolCallContext& c = call.run.c;
        UpstreamTarget target = target_of(c, server, tool);
        if (!target.name.empty()) target.view.name = target.name;
        auto d = catalog::decide(c.cfg->policies, *c.subject, target.view, args);
        if (d.allowed()) return std::nullopt;
        return refuse(call, d, server, tool, args);
      };
    }
    return next(call);
  }
};

}  // namespace

std::shared_ptr<const catalog::Subject> policy_subject(const McpSession& s, const config::Config& cfg) {
  if (cfg.policies.empty()) return nullptr;
  auto who = std::make_shared<catalog::Subject>();
  const transport::ClientContext& ctx = s.context();
  who->principal = ctx.principal;
  who->claims = ctx.claims;
  who->scopes = ctx.scopes;
  who->mode = s.mode();
  who->client_name = s.client_name();
  who->client_version = s.client_version();
  return who;
}

CallFilter& policy_filter() {
  static PolicyFilter filter;
  return filter;
}

std::vector<bool> permitted_tools(const catalog::Snapshot& snap, std::size_t mode, const catalog::Subject* who,
                                  const config::Config& cfg) {
  std::vector<bool> out;
  if (cfg.policies.empty() || !who) return out;
  out.resize(snap.tools.size(), false);
  for (std::size_t i = 0; i < snap.tools.size(); ++i) {
    const catalog::ExposedTool& t = snap.tools[i];
    if (mode < t.in_mode.size() && t.in_mode[mode]) out[i] = catalog::may_allow(cfg.policies, *who, catalog::view_of(t));
  }
  return out;
}

}  // namespace mcpgw::server
