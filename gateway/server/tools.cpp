// Handlers of tools/list and tools/call (a run of the admission filters,
// server/call_filter.hpp), the tool a call names and its refusals, and the
// work of a tool call that tools/callSaga shares (a run of the call
// filters).
#include "server/tools.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <variant>

#include "catalog/tool_search.hpp"
#include "mcp/protocol.hpp"
#include "server/apps.hpp"
#include "server/call_filter.hpp"
#include "server/policies.hpp"
#include "server/tool_search.hpp"

namespace mcpgw::server {
namespace {

/// The OAuth server a tool name not (yet) in the catalog belongs to: one
/// whose tools may be unknown because of OAuth (a principal who has not
/// consented; a provider that kept the server from connecting), where the
/// call gets that reason rather than -32602.
std::shared_ptr<upstream::Upstream> unlisted_oauth_server(const catalog::Snapshot& snap, const config::Config& cfg,
                                                          std::string_view name) {
  auto sep = name.find(cfg.naming.separator);
  if (sep == std::string_view::npos || sep == 0) return nullptr;
  auto it = snap.servers.find(std::string(name.substr(0, sep)));
  if (it == snap.servers.end() || !it->second->config().oauth) return nullptr;
  if (!it->second->per_principal() && it->second->ready()) return nullptr;
  return it->second;
}

/// The work of a call of `name`, not in the catalog, of such a server: the
/// OAuth step (consent) first, then, once the principal's connection has
/// listed the server and the catalog has the tool, the call itself.
Work unlisted_work(Services& sv, std::shared_ptr<McpSession> s, std::shared_ptr<upstream::Upstream> u,
                   std::string name, std::size_t mode, std::shared_ptr<json::Document> arguments,
                   std::shared_ptr<json::Document> meta) {
  return [&sv, s, u, name, mode, arguments, meta, caller = caller_of(*s)](
             std::shared_ptr<ClientCall> client, CancelSignal& cancel, Progress* progress) -> Task<upstream::Reply> {
    upstream::CallOptions opts = options_for(*u, cancel, caller, client);
    if (!u->per_principal() && !co_await u->wait_settled(opts.deadline))
      co_return upstream::Reply{false, mcp::tool_error("mcpgw: upstream '" + u->name() + "' is not connected (" +
                                                       u->status() + ")")};
    if (auto instead = co_await u->authorize(opts)) co_return std::move(*instead);
    co_await u->prepare(opts);
    const std::string own = name.substr(u->name().size() + sv.settings.config()->naming.separator.size());
    if (u->has_tool(own)) {
      // The listing is the server's now; the catalog follows it shortly.
      for (;;) {
        auto snap = sv.catalog.snapshot();
        if (const catalog::ExposedTool* tool = snap->find_tool(name, mode)) {
          Work work = tool_work(sv, *s, snap, mode, *tool, arguments, meta);
          co_return co_await work(client, cancel, progress);
        }
        // Listed but not in this client's mode: as unknown as any other.
        if (snap->tool_index.count(name) || !co_await sv.catalog.wait_newer(snap->generation, opts.deadline, &cancel))
          break;
      }
    }
    co_return upstream::Reply::error(jsonrpc::kInvalidParams, "Unknown tool: " + name);
  };
}

/// A snapshot that lists `name` (visible in `mode`), once the servers still
/// connecting for the first time that may list it are up, waited for within
/// startup_wait_ms of their start and the call's deadline; or the isError
/// naming a server it came too late from. The snapshot it returns may still
/// not list `name`.
Task<std::variant<std::shared_ptr<const catalog::Snapshot>, Answer>> after_connecting(
    Services& sv, Request& r, std::shared_ptr<const catalog::Snapshot> snap, std::string_view name,
    std::size_t mode) {
  auto candidates = snap->pending_for(name);
  if (candidates.empty()) co_return snap;
  auto deadline = std::min(candidates.front()->deadline(), snap->starting_until(name));
  spdlog::debug("tools/call {} waits for upstream {} (connecting)", name, candidates.front()->name());
  CancelSignal* cancel = r.exchange ? &r.exchange->cancel_signal() : nullptr;
  while (!snap->find_tool(name, mode) && !snap->pending_for(name).empty()) {
    if (!co_await sv.catalog.wait_newer(snap->generation, deadline, cancel)) break;
    snap = sv.catalog.snapshot();
  }
  if (snap->find_tool(name, mode)) co_return snap;
  for (const auto& u : candidates) {
    if (u->ready()) continue;
    std::string why = u->state() == upstream::Upstream::State::Connecting
                          ? "is still connecting; tools/call " + std::string(name) +
                                " waited for it as long as startup_wait_ms and the call's deadline allow"
                          : "is not connected (" + u->status() + ")";
    co_return Answer::relay(upstream::Reply{false, mcp::tool_error("mcpgw: upstream '" + u->name() + "' " + why)});
  }
  co_return snap;
}

}  // namespace

Answer list_tools(Services& sv, Request& r) {
  auto snap = sv.catalog.snapshot();
  auto mode = snap->mode_index(r.session->mode());
  if (lists_meta_tools(*snap, mode))
    return list_meta_tools(r, static_cast<std::size_t>(sv.settings.config()->listen.page_size));
  static const std::vector<std::size_t> kNone;
  const auto& visible = mode && *mode < snap->mode_tools.size() ? snap->mode_tools[*mode] : kNone;
  auto cfg = sv.settings.config();
  const std::vector<std::size_t>* listed = &visible;
  // A tool no policy rule can allow this client is not listed to it.
  std::vector<std::size_t> permitted;
  if (!cfg->policies.empty() && mode) {
    auto who = policy_subject(*r.session, *cfg);
    auto mask = permitted_tools(*snap, *mode, who.get(), *cfg);
    for (std::size_t i : visible)
      if (mask[i]) permitted.push_back(i);
    listed = &permitted;
  }
  return page_of(
      r, "tools", listed->size(), [&](std::size_t i) -> std::string_view { return snap->tools[(*listed)[i]].definition; },
      static_cast<std::size_t>(cfg->listen.page_size), snap);
}

AuditRecord audit_record(const McpSession& s, std::string_view tool, const json::Value* args, const json::Value* params) {
  upstream::Caller who = caller_of(s);
  AuditRecord a;
  a.principal = who.principal;
  a.session = who.session;
  a.mode = who.mode;
  a.tool = std::string(tool);
  a.arguments = args;
  if (auto trace = mcp::trace_of(params)) a.trace_id = trace->trace_id.str();
  return a;
}

Answer refuse_call(Services& sv, Request& r, std::string_view reason, std::string_view tool, const json::Value* args,
                   int code, const std::string& message) {
  return refused_call(sv, r, reason, tool, args, Answer::error(code, message));
}

Answer refused_call(Services& sv, Request& r, std::string_view reason, std::string_view tool, const json::Value* args,
                    Answer answer) {
  AuditRecord a = audit_record(*r.session, tool, args, r.params());
  a.reason = json::get_string(answer.body(), "message").value_or("");
  sv.audit.refused(reason, std::move(a));
  return answer;
}

namespace {

/// The audit line of a meta tool's answer (search_tools, a call_tool
/// refused before it names a tool).
void audit_meta_answer(Services& sv, Request& r, std::string_view name, const json::Value* args, Answer& answered) {
  AuditRecord a = audit_record(*r.session, name, args, r.params());
  if (answered.is_error()) {
    auto message = json::get_string(answered.body(), "message");
    a.reason = message ? std::string(*message) : "refused";
    sv.audit.refused("invalid_params", std::move(a));
  } else if (sv.audit.enabled()) {
    a.event = "call";
    a.outcome = "ok";
    sv.audit.record(a);
  }
}

/// resolve_called against `snap`. After the wait (`may_wait` false) a tool
/// still missing is unknown or hidden. Not a coroutine: its locals (audit
/// records, messages) would otherwise sit in a frame on every call.
Resolution resolve_in(Services& sv, Request& r, std::shared_ptr<const catalog::Snapshot> snap, bool may_wait,
                      CalledTool& called, std::optional<Answer>& answer) {
  auto end = [&](Answer a) {
    answer = std::move(a);
    return Resolution::Answered;
  };
  const json::Value* p = r.params();
  auto invalid = [&](std::string_view tool, const json::Value* args, const std::string& why) {
    return end(refuse_call(sv, r, "invalid_params", tool, args, jsonrpc::kInvalidParams, "Invalid params: " + why));
  };
  if (!p || !p->IsObject()) return invalid("", nullptr, std::string(r.message.method()) + " needs params");
  auto name = json::get_string(*p, "name");
  if (!name) return invalid("", nullptr, "name must be a string");
  const json::Value* args = json::find(*p, "arguments");
  if (args && !args->IsObject() && !args->IsNull()) return invalid(*name, nullptr, "arguments must be an object");
  if (args && args->IsNull()) args = nullptr;

  called = CalledTool{};
  called.snap = std::move(snap);
  const auto& s = *called.snap;
  auto mode = s.mode_index(r.session->mode());
  // What search_tools may find: what the policies let this client see.
  std::vector<bool> permitted;
  if (*name == catalog::kSearchTools && lists_meta_tools(s, mode)) {
    auto cfg = sv.settings.config();
    permitted = permitted_tools(s, *mode, policy_subject(*r.session, *cfg).get(), *cfg);
  }
  auto meta = resolve_meta_tool(s, mode, *name, args, permitted.empty() ? nullptr : &permitted);
  if (auto* answered = std::get_if<Answer>(&meta)) {
    audit_meta_answer(sv, r, *name, args, *answered);
    return end(std::move(*answered));
  }
  const auto& target = std::get<ToolTarget>(meta);
  // A tool hidden from this client's mode is as unknown as one that does not
  // exist. A view's bare name is an alias: everything below is the same.
  if (mode) {
    auto resolved = resolve_tool(s, *mode, target.name, view_server(s, p));
    if (auto* refused = std::get_if<Answer>(&resolved)) {
      auto message = json::get_string(refused->body(), "message");
      return end(refuse_call(sv, r, "invalid_params", target.name, target.args, jsonrpc::kInvalidParams,
                             message ? std::string(*message) : "Invalid params"));
    }
    called.tool = std::get<const catalog::ExposedTool*>(resolved);
    // Its server may not have listed it yet: the gateway serves while
    // upstreams connect.
    if (!called.tool && may_wait && !s.pending_for(target.name).empty()) {
      called.name = std::string(target.name);
      called.mode = *mode;
      return Resolution::Connecting;
    }
  }
  if (!called.tool && mode && !names_some_tool(s, target.name))
    called.unlisted = unlisted_oauth_server(s, *sv.settings.config(), target.name);
  if (!called.tool && !called.unlisted) {
    // Withheld by integrity.pins: block; the client is told why and what
    // accepts it, as a tool error the model can read.
    if (const integrity::ToolReport* w = s.integrity.withheld_tool(target.name)) {
      AuditRecord a = audit_record(*r.session, target.name, target.args, p);
      a.reason = w->refusal();
      sv.audit.refused("integrity", std::move(a));
      return end(Answer::relay(upstream::Reply{false, mcp::tool_error(w->refusal())}));
    }
    std::string message = "Unknown tool: " + std::string(target.name);
    if (!names_some_tool(s, target.name))
      return end(refuse_call(sv, r, "unknown_tool", target.name, target.args, jsonrpc::kInvalidParams, message));
    AuditRecord a = audit_record(*r.session, target.name, target.args, p);
    a.reason = "tool not visible in mode " + r.session->mode();
    sv.audit.refused("tool_hidden", std::move(a));
    return end(Answer::error(jsonrpc::kInvalidParams, message));
  }
  called.mode = *mode;
  called.name = called.tool ? called.tool->name : std::string(target.name);
  called.args = target.args;
  called.through_call_tool = target.through_call_tool;
  called.by_upstream_name = called.tool && target.name != called.tool->name;
  return Resolution::Called;
}

}  // namespace

Resolution resolve_called(Services& sv, Request& r, CalledTool& called, std::optional<Answer>& answer) {
  return resolve_in(sv, r, sv.catalog.snapshot(), true, called, answer);
}

Task<Resolution> resolve_called_after_connecting(Services& sv, Request& r, CalledTool& called,
                                                 std::optional<Answer>& answer) {
  auto settled = co_await after_connecting(sv, r, called.snap, called.name, called.mode);
  if (auto* answered = std::get_if<Answer>(&settled)) {
    answer = std::move(*answered);
    co_return Resolution::Answered;
  }
  co_return resolve_in(sv, r, std::get<std::shared_ptr<const catalog::Snapshot>>(std::move(settled)), false, called,
                       answer);
}

Task<Answer> call_tool(Services& sv, Request& r) {
  CallRequest call{sv, r};
  co_return co_await AdmitNext(admit_filters())(call);
}

Work called_work(Services& sv, Request& r, const CalledTool& c, std::shared_ptr<json::Document> arguments,
                 std::shared_ptr<json::Document> meta, bool relay,
                 std::shared_ptr<const jsonrpc::RawArguments> raw_arguments) {
  if (c.unlisted) return unlisted_work(sv, r.session, c.unlisted, c.name, c.mode, std::move(arguments), std::move(meta));
  return tool_work(sv, *r.session, c.snap, c.mode, *c.tool, std::move(arguments), std::move(meta), r.context.span,
                   nullptr, relay, std::move(raw_arguments));
}

Work tool_work(Services& sv, const McpSession& s, std::shared_ptr<const catalog::Snapshot> snap, std::size_t mode,
               const catalog::ExposedTool& tool, std::shared_ptr<json::Document> arguments,
               std::shared_ptr<json::Document> meta, std::optional<mcp::TraceContext> request_span,
               std::shared_ptr<const json::Document> task, bool relay,
               std::shared_ptr<const jsonrpc::RawArguments> raw_arguments) {
  // The client's trace goes on (a fresh one when it sent none); the
  // traceparent it sent is not forwarded as is: each upstream request
  // carries a child span of it.
  std::optional<mcp::TraceContext> sent;
  if (meta) {
    if (auto tp = json::get_string(*meta, mcp::kMetaTraceparent)) sent = mcp::TraceContext::parse(*tp);
    meta->RemoveMember(mcp::kMetaTraceparent.data());
    if (meta->ObjectEmpty()) meta.reset();
  }
  // The request's span, when spans are recorded, is of the same trace.
  mcp::TraceContext trace = request_span ? *request_span : sent ? *sent : mcp::TraceContext::fresh();
  auto cfg = sv.settings.config();
  auto subject = policy_subject(s, *cfg);
  ToolCallContext context{.catalog = &sv.catalog,
                          .metrics = &sv.metrics,
                          .audit = &sv.audit,
                          .spans = sv.spans,
                          .snap = std::move(snap),
                          .mode = mode,
                          .tool = &tool,
                          .arguments = std::move(arguments),
                          .meta = std::move(meta),
                          .task = std::move(task),
                          .cfg = std::move(cfg),
                          .caller = caller_of(s),
                          .session = s.id(),
                          .trace = std::move(trace),
                          .request_span = std::move(request_span),
                          .subject = std::move(subject),
                          .relay = relay,
                          .raw_arguments = std::move(raw_arguments)};
  return [c = std::move(context)](std::shared_ptr<ClientCall> client, CancelSignal& cancel,
                                  Progress* progress) -> Task<upstream::Reply> {
    ToolCallRun run{c, std::move(client), cancel, progress};
    ServerCall call(run, *c.tool, c.arguments->IsNull() ? nullptr : &*c.arguments, c.meta ? &*c.meta : nullptr, 0);
    co_return co_await CallNext(call_filters())(call);
  };
}

}  // namespace mcpgw::server
