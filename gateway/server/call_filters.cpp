// The filters of a tools/call, outermost first. Admission: the tool named
// (ResolveFilter), the Mcp-Param-* headers (HeaderFilter), whether it runs
// as a task (TaskPlanFilter), and its work, streamed, suspended or as a
// task (WorkFilter). The work's call filters: the nextTool chain a result
// starts (ChainFilter), the policies (server/policies.cpp), the call's
// audit line (AuditFilter), the secrets masked or refused in its arguments
// and answer (RedactFilter), its metrics (MetricsFilter), and the call of
// the tool's origin (OriginFilter).
#include "server/call_filter.hpp"

#include <spdlog/spdlog.h>

#include <cctype>
#include <charconv>
#include <tuple>

#include "catalog/tool_search.hpp"
#include "chain/chain.hpp"
#include "mcp/era.hpp"
#include "server/apps.hpp"
#include "server/argument_filters.hpp"
#include "server/redaction.hpp"
#include "server/policies.hpp"

namespace mcpgw::server {
namespace {

using Clock = std::chrono::steady_clock;

/// The `_meta` of a client's request as an upstream may see it: without the
/// stateless envelope (the upstream gets the gateway's own), the progress
/// token (the gateway's replaces it) and the view tag (the gateway's own).
std::shared_ptr<json::Document> upstream_meta(const json::Value* meta) {
  if (!meta || !meta->IsObject()) return nullptr;
  auto out = std::make_shared<json::Document>(rapidjson::kObjectType);
  for (const auto& m : meta->GetObject()) {
    std::string_view key(m.name.GetString(), m.name.GetStringLength());
    if (key.rfind("io.modelcontextprotocol/", 0) == 0 || key == "progressToken" || key == kViewServerKey) continue;
    out->AddMember(json::str(key, out->GetAllocator()), json::copy(m.value, out->GetAllocator()), out->GetAllocator());
  }
  return out->ObjectEmpty() ? nullptr : out;
}

/// Why the `Mcp-Param-*` headers of a stateless HTTP call disagree with its
/// arguments, per the `x-mcp-header` properties of the tool's inputSchema;
/// "" when they agree.
std::string param_header_mismatch(const catalog::ExposedTool& tool, const json::Value* args,
                                  const transport::ClientContext& ctx) {
  if (!ctx.has_param_headers) return {};
  auto def = json::parse(tool.definition);
  const json::Value* schema = def ? json::find(*def, "inputSchema") : nullptr;
  const json::Value* props = schema ? json::find(*schema, "properties") : nullptr;
  if (!props || !props->IsObject()) return {};
  for (const auto& p : props->GetObject()) {
    auto header = json::get_string(p.value, "x-mcp-header");
    if (!header) continue;
    std::string name = "Mcp-Param-" + std::string(*header);
    std::string lowered;
    for (char c : *header) lowered.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    const std::string* raw = nullptr;
    for (const auto& [n, v] : ctx.param_headers)
      if (n == lowered) raw = &v;
    const json::Value* value = args ? json::find(*args, std::string_view(p.name.GetString(), p.name.GetStringLength())) : nullptr;
    if (value && value->IsNull()) value = nullptr;
    if (!value && !raw) continue;
    if (!raw) return "the body carries " + std::string(p.name.GetString()) + " but the " + name + " header is absent";
    auto decoded = mcp::decode_header_value(*raw);
    if (!decoded) return "the " + name + " header is not valid =?base64?...?=";
    if (!value) return "the " + name + " header is present but the body has no " + std::string(p.name.GetString());
    std::string expected = value->IsString() ? std::string(value->GetString(), value->GetStringLength()) : json::write(*value);
    bool same = mcp::header_matches(*decoded, expected);
    // Integers compare as numbers: "042" and 42 agree.
    if (!same && value->IsInt64()) {
      std::int64_t n = 0;
      auto [end, ec] = std::from_chars(decoded->data(), decoded->data() + decoded->size(), n);
      same = ec == std::errc() && end == decoded->data() + decoded->size() && n == value->GetInt64();
    }
    if (!same) return "the " + name + " header says \"" + *decoded + "\" but the body says " + json::write(*value);
  }
  return {};
}

/// An answer known before the chain's work (a refusal), as the chain's
/// answer.
Task<Answer> answered(Answer a) { co_return a; }

/// The request calls search_tools (tool search's meta tool).
bool searches(const Request& r) {
  const json::Value* p = r.params();
  return p && p->IsObject() && json::get_string(*p, "name") == catalog::kSearchTools;
}

/// The tool the request names, in the client's mode (resolve_called: params,
/// search_tools answered here, a tool hidden or unknown, an upstream still
/// connecting waited for); what ends the call here is the answer, audited
/// as refused.
class ResolveFilter final : public AdmitFilter {
 public:
  Task<Answer> on_call(CallRequest& call, AdmitNext next) override {
    std::optional<Answer> ended;
    // A search answers from the whole catalog: at start-up, once it is whole.
    if (call.sv.catalog.starting() && searches(call.r)) co_await after_startup(call.sv, call.r);
    auto how = resolve_called(call.sv, call.r, call.called, ended);
    if (how == Resolution::Connecting)
      how = co_await resolve_called_after_connecting(call.sv, call.r, call.called, ended);
    if (how == Resolution::Answered) co_return std::move(*ended);
    co_return co_await next(call);
  }
};

/// Mcp-Param-* headers repeat the arguments of the tool the request names
/// (call_tool's, which declares none); when they disagree the call is
/// refused. Not a coroutine: it has nothing to do on the way back.
class HeaderFilter final : public AdmitFilter {
 public:
  Task<Answer> on_call(CallRequest& call, AdmitNext next) override {
    const CalledTool& c = call.called;
    if (c.through_call_tool || !c.tool) return next(call);
    std::string why = param_header_mismatch(*c.tool, c.args, call.r.session->context());
    if (why.empty()) return next(call);
    return answered(refuse_call(call.sv, call.r, "header_mismatch", c.name, c.args, mcp::kHeaderMismatch,
                                "Header mismatch: " + why));
  }
};

/// Whether the call becomes a task is decided before anything runs: a
/// refusal (a task the tool cannot be, a client without the extension, the
/// principal's tasks) reaches no upstream. A tool its OAuth server has not
/// listed yet never becomes one (nothing says the tool supports it).
class TaskPlanFilter final : public AdmitFilter {
 public:
  Task<Answer> on_call(CallRequest& call, AdmitNext next) override {
    const CalledTool& c = call.called;
    if (c.unlisted || call.saga) return next(call);
    auto planned = plan_task(call.sv, call.r, *c.tool);
    if (auto* refused = std::get_if<PlanRefusal>(&planned))
      return answered(refused_call(call.sv, call.r, refused->reason, c.name, c.args, std::move(refused->answer)));
    call.plan = std::move(std::get<TaskPlan>(planned));
    return next(call);
  }
};

/// The call's work (the call filters, or for a tool its OAuth server has
/// not listed yet the consent step first), streamed to the client or
/// suspended (execute), run as a task, or as a saga (tools/callSaga). Not
/// a coroutine: the answer is the work's.
class WorkFilter final : public AdmitFilter {
 public:
  Task<Answer> on_call(CallRequest& call, AdmitNext) override {
    Services& sv = call.sv;
    Request& r = call.r;
    const CalledTool& c = call.called;
    if (call.saga) return run_saga(sv, r, c);
    auto arguments = std::make_shared<json::Document>(c.args ? json::clone(*c.args) : json::Document());
    auto meta = upstream_meta(json::find(*r.params(), "_meta"));
    std::string target = "tools/call " + c.name;
    // A session's call answered at once is relayed; a stateless client's
    // may be suspended for MRTR and answered from the saga's store.
    const bool relay = !r.context.stateless;
    // The arguments as the client wrote them, while those are what it calls with.
    auto raw = c.args && c.args == json::find(*r.params(), "arguments") ? r.message.raw_arguments() : nullptr;
    if (!call.plan)
      return execute(sv, r, std::move(target), c.args,
                     called_work(sv, r, c, arguments, std::move(meta), relay, std::move(raw)));
    TaskPlan& plan = *call.plan;
    auto task = plan.kind == TaskPlan::Kind::Upstream ? std::make_shared<const json::Document>(json::clone(plan.task))
                                                       : nullptr;
    Work work = tool_work(sv, *r.session, c.snap, c.mode, *c.tool, std::move(arguments), std::move(meta),
                          r.context.span, std::move(task), relay && plan.kind == TaskPlan::Kind::None, std::move(raw));
    if (plan.kind == TaskPlan::Kind::None) return execute(sv, r, std::move(target), c.args, std::move(work));
    return run_as_task(sv, r, std::move(plan), *c.tool, c.args, std::move(work));
  }
};

/// `_meta.nextTool`: a result that asks for another tool is followed here,
/// hop by hop, each hop a full call by the same client (its mode,
/// timeouts, cancellation, progress) through the filters after this one,
/// and the client gets the merged result. Hops never start chains of
/// their own: the resolver follows them.
class ChainFilter final : public CallFilter {
 public:
  Task<upstream::Reply> on_call(ServerCall& call, CallNext next) override {
    upstream::Reply reply = co_await next(call);
    const ToolCallRun& run = call.run;
    const ToolCallContext& c = run.c;
    if (reply.rpc_error || !c.cfg->chain.resolve || !chain::has_next_tool(reply.body)) co_return reply;
    // What the resolver's callbacks share, reached through one pointer so
    // that none of them allocates.
    struct Hops {
      const ToolCallRun& run;
      CallNext next;
      int n = 0;  ///< the hop under way
    } hops{run, next};
    // A hop may name a tool of a server still in its first connection
    // attempt: the chain is resolved in the catalog after start-up.
    std::shared_ptr<const catalog::Snapshot> snap = c.snap;
    std::size_t mode = c.mode;
    if (c.catalog->starting()) {
      auto later = co_await c.catalog->started(std::chrono::steady_clock::time_point::max(), &run.cancel);
      if (auto m = later->mode_index(c.caller.mode)) std::tie(snap, mode) = std::make_pair(std::move(later), *m);
    }
    chain::Context ctx{*snap, mode, c.cfg->chain, nullptr, nullptr, nullptr, &run.cancel};
    ctx.call = [&hops](const catalog::ExposedTool& t, const json::Value* arguments) -> Task<upstream::Reply> {
      ServerCall step(hops.run, t, arguments, nullptr, hops.n);
      co_return co_await hops.next(step);
    };
    ctx.before_hop = [&hops](int n, const catalog::ExposedTool& t) {
      hops.n = n;
      if (hops.run.progress) hops.run.progress->step("chain hop " + std::to_string(n) + ": " + t.name);
    };
    ctx.after_hop = [&c](int n, const catalog::ExposedTool& t, bool is_error, double hop_ms) {
      spdlog::info("chain hop {} of {}: {} principal={} session={} trace={} {:.1f} ms {}", n, c.tool->name, t.name,
                   c.caller.principal.empty() ? "-" : c.caller.principal, c.session.substr(0, 8), c.trace.trace_id.view(),
                   hop_ms, is_error ? "error" : "ok");
    };
    json::Document merged = co_await chain::resolve(ctx, call.tool, call.arguments, std::move(reply.body), call.ms);
    co_return upstream::Reply{false, std::move(merged)};
  }
};

/// The audit line of an upstream call: the tool's (`call`), a hop's
/// (`chain_hop`), or one a plugin made for them (`plugin_call`); only
/// failures unless the audit log wants every call. And the call's debug
/// line.
class AuditFilter final : public CallFilter {
 public:
  Task<upstream::Reply> on_call(ServerCall& call, CallNext next) override {
    upstream::Reply reply = co_await next(call);
    const ToolCallContext& c = call.run.c;
    const catalog::ExposedTool& t = call.tool;
    record(call, call.hop ? "chain_hop" : "call", t.origin->name(), t.upstream_name, call.arguments, call.outcome,
           call.ms, t.origin.get());
    spdlog::debug("call {} principal={} session={} trace={} {:.1f} ms {}", t.name,
                  c.caller.principal.empty() ? "-" : c.caller.principal, c.session.substr(0, 8), c.trace.trace_id.view(),
                  call.ms, call.outcome);
    co_return reply;
  }

  void on_upstream_call(const ServerCall& call, const upstream::UpstreamCall& u) const override {
    record(call, "plugin_call", u.server, u.tool, u.arguments, u.outcome, u.ms);
  }

 private:
  static void record(const ServerCall& call, std::string_view event, const std::string& server,
                     const std::string& upstream_tool, const json::Value* arguments, std::string_view outcome,
                     double ms, const upstream::ToolOrigin* origin = nullptr) {
    const ToolCallContext& c = call.run.c;
    if (!c.audit->wants(outcome)) return;
    AuditRecord a;
    if (auto id = origin ? origin->identity_for(&c.caller) : std::nullopt) {
      a.upstream_grant = std::move(id->grant);
      a.upstream_identity = std::move(id->identity);
    }
    a.event = event;
    a.principal = c.caller.principal;
    a.session = c.caller.session;
    a.mode = c.caller.mode;
    a.tool = c.tool->name;
    a.server = server;
    a.upstream_tool = upstream_tool;
    a.arguments = arguments;
    a.outcome = outcome;
    a.ms = ms;
    a.chain_id = call.run.span.span_id.str();
    a.hop = call.hop;
    a.trace_id = c.trace.trace_id.str();
    if (event != "plugin_call") {
      a.redactions = call.redactions;
      if (call.redaction_refused) a.reason = "redaction";
    }
    c.audit->record(a);
  }
};

/// redact: the call's arguments on their way to the origin and its answer
/// on the way back (and a composite's own upstream answers on their way to
/// its plugin), with what the detectors find masked (redact.in), or the
/// call refused naming them (action: refuse); a refused call never reaches
/// the origin with its arguments. Counted by detector, and a refusal in
/// mcpgw_refused_total; what was found is told to the audit line.
class RedactFilter final : public CallFilter {
 public:
  Task<upstream::Reply> on_call(ServerCall& call, CallNext next) override {
    if (!call.run.c.cfg->redact.enabled) return next(call);
    return redacted(call, next);
  }

 private:
  static Task<upstream::Reply> redacted(ServerCall& call, CallNext next) {
    const config::Redact& cfg = call.run.c.cfg->redact;
    Metrics& metrics = *call.run.c.metrics;
    const json::Value* given = call.arguments;
    std::unique_ptr<json::Document> masked;
    redact::Tally found;
    if (given) {
      Redaction in = redact_arguments(cfg, *given, masked, metrics);
      if (in.refused) co_return refuse(call, in, refused_arguments(cfg, in));
      if (masked) call.arguments = masked.get();
      found = std::move(in.tally);
    }
    auto inner = call.tool.composite ? std::make_shared<CompositeTally>() : nullptr;
    if (inner) screen_composite_calls(call.run.c.cfg, metrics, call.opts, inner);
    upstream::Reply reply = co_await next(call);
    // The audit line outside says what the client sent (masked as it is written).
    call.arguments = given;
    Redaction out = redact_reply(cfg, Relayed::ToolResult, reply, metrics);
    out.tally.merge(found);
    if (inner) out.tally.merge(inner->get());
    if (out.tally.total() == 0) co_return reply;
    if (out.refused) co_return refuse(call, out, std::move(reply));
    call.redactions = out.counts_json(cfg);
    co_return reply;
  }

  static upstream::Reply refuse(ServerCall& call, const Redaction& r, upstream::Reply answer) {
    call.run.c.metrics->refused("redaction");
    call.redactions = r.counts_json(call.run.c.cfg->redact);
    call.redaction_refused = true;
    call.outcome = "refused";
    return answer;
  }
};

/// The origin's calls in flight while the call runs; on the way back its
/// duration and outcome are counted (mcpgw_tool_calls_total and its
/// histogram, by how it was made: call, chain_hop, plugin) and kept in the
/// call for the filters outside this one.
class MetricsFilter final : public CallFilter {
 public:
  Task<upstream::Reply> on_call(ServerCall& call, CallNext next) override {
    Metrics& metrics = *call.run.c.metrics;
    const catalog::ExposedTool& t = call.tool;
    const std::string& origin = t.origin->name();
    metrics.call_in_flight(origin, 1);
    auto started = Clock::now();
    upstream::Reply reply = co_await next(call);
    double secs = std::chrono::duration<double>(Clock::now() - started).count();
    metrics.call_in_flight(origin, -1);
    call.outcome = upstream::outcome_of(reply, call.opts);
    call.ms = secs * 1000;
    metrics.tool_call(origin, t.upstream_name, call.hop ? "chain_hop" : "call", call.outcome, secs);
    co_return reply;
  }

  void on_upstream_call(const ServerCall& call, const upstream::UpstreamCall& u) const override {
    // Only tools the server lists name a series: the labels stay bounded.
    call.run.c.metrics->tool_call(u.server, u.known_tool ? u.tool : "other", "plugin", u.outcome, u.ms / 1000);
  }
};

/// The call of the tool's origin (an upstream's own call filters, or a
/// plugin). Not a coroutine: it has nothing to do on the way back.
class OriginFilter final : public CallFilter {
 public:
  Task<upstream::Reply> on_call(ServerCall& call, CallNext) override {
    const catalog::ExposedTool& t = call.tool;
    // Still the client's own arguments (no override or redaction gave the
    // call others): they go upstream as the client wrote them.
    const ToolCallContext& c = call.run.c;
    if (call.hop == 0 && c.raw_arguments && call.arguments == c.arguments.get())
      call.opts.raw_arguments = c.raw_arguments;
    return t.origin->call_tool(t.upstream_name, call.arguments, call.meta, call.opts);
  }
};

ResolveFilter resolve_filter;
HeaderFilter header_filter;
TaskPlanFilter task_plan_filter;
WorkFilter work_filter;
AdmitFilter* const admission[] = {&resolve_filter, &override_admit_filter(), &header_filter, &task_plan_filter,
                                  &work_filter};

ChainFilter chain_filter;
AuditFilter audit_filter;
RedactFilter redact_filter;
MetricsFilter metrics_filter;
OriginFilter origin_filter;
// The policies come after the chain, so that each hop is decided on its own.
CallFilter* const order[] = {&chain_filter,   &policy_filter(),        &audit_filter, &redact_filter,
                             &metrics_filter, &override_call_filter(), &origin_filter};

}  // namespace

std::span<CallFilter* const> call_filters() { return order; }

std::span<AdmitFilter* const> admit_filters() { return admission; }

ServerCall::ServerCall(const ToolCallRun& run, const catalog::ExposedTool& tool, const json::Value* arguments,
                       const json::Value* meta, int hop)
    : run(run),
      tool(tool),
      arguments(arguments),
      meta(meta),
      hop(hop),
      opts(options_for(*tool.origin, run.cancel, run.c.caller, run.client)) {
  if (run.progress) opts.on_progress = [progress = run.progress](json::Value& params) { progress->forward(params); };
  opts.trace = run.span;
  opts.spans = run.c.spans;
  if (run.c.task && hop == 0) opts.task = &*run.c.task;
  opts.relay = run.c.relay && hop == 0;
  opts.on_upstream_call = [this](const upstream::UpstreamCall& u) {
    for (const CallFilter* f : order) f->on_upstream_call(*this, u);
  };
}

}  // namespace mcpgw::server
