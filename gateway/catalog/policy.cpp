#include "catalog/policy.hpp"

#include <algorithm>

#include "catalog/naming.hpp"

namespace mcpgw::catalog {
namespace {

bool any_glob(const std::vector<std::string>& globs, std::string_view text) {
  return globs.empty() ||
         std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return glob_match(g, text); });
}

expr::Env env_of(const Subject& who, const ToolView& tool) {
  expr::Env e;
  e.principal_name = who.principal;
  e.claims = who.claims.get();
  e.scopes = who.scopes;
  e.tool_name = tool.name;
  e.tool_server = tool.server;
  e.tool_upstream_name = tool.upstream_name;
  e.annotations = tool.annotations;
  e.slices = tool.slices;
  e.mode = who.mode;
  e.client_name = who.client_name;
  e.client_version = who.client_version;
  return e;
}

/// Whether rule `p`, given its expression's outcome, lets the call through.
bool lets_through(const config::Policy& p, expr::Truth t) {
  return p.kind == config::Policy::Kind::Allow ? t == expr::Truth::True : t == expr::Truth::False;
}

}  // namespace

ToolView view_of(const ExposedTool& t) {
  return ToolView{t.name, t.origin->name(), t.upstream_name, t.annotations.get(), t.slices};
}

const config::Policy* first_match(std::span<const config::Policy> rules, const Subject& who, std::string_view tool) {
  for (const config::Policy& p : rules) {
    if (!any_glob(p.tools, tool)) continue;
    if (!p.modes.empty() && std::find(p.modes.begin(), p.modes.end(), who.mode) == p.modes.end()) continue;
    if (!any_glob(p.principals, who.principal)) continue;
    return &p;
  }
  return nullptr;
}

Decision decide(std::span<const config::Policy> rules, const Subject& who, const ToolView& tool,
                const json::Value* args) {
  const config::Policy* p = first_match(rules, who, tool.name);
  if (!p) return {};
  expr::Env e = env_of(who, tool);
  e.args = args;
  expr::Outcome o = p->program->eval(e);
  if (lets_through(*p, o.truth)) return {};
  Decision d{p, {}, 0};
  if (o.truth == expr::Truth::Error) {
    d.error = o.error;
    d.column = o.column;
  }
  return d;
}

bool may_allow(std::span<const config::Policy> rules, const Subject& who, const ToolView& tool) {
  const config::Policy* p = first_match(rules, who, tool.name);
  if (!p) return true;
  expr::Env e = env_of(who, tool);
  e.args_unknown = true;
  expr::Truth t = p->program->eval(e).truth;
  return t == expr::Truth::Unknown || lets_through(*p, t);
}

std::string refusal_text(const config::Policy& p) { return "mcpgw: refused by policy " + p.name + ": " + p.message; }

}  // namespace mcpgw::catalog
