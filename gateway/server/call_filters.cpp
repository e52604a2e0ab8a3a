// The call filters, outermost first: the nextTool chain a result starts
// (ChainFilter), the call's audit line (AuditFilter), its metrics
// (MetricsFilter), and the call of the tool's origin (OriginFilter).
#include "server/call_filter.hpp"

#include <spdlog/spdlog.h>

#include "chain/chain.hpp"

namespace mcpgw::server {
namespace {

using Clock = std::chrono::steady_clock;

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
    chain::Context ctx{*c.snap, c.mode, c.cfg->chain, nullptr, nullptr, nullptr, &run.cancel};
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
                   c.caller.principal.empty() ? "-" : c.caller.principal, c.session.substr(0, 8), c.trace.trace_id,
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
                  c.caller.principal.empty() ? "-" : c.caller.principal, c.session.substr(0, 8), c.trace.trace_id,
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
    a.chain_id = call.run.span.span_id;
    a.hop = call.hop;
    a.trace_id = c.trace.trace_id;
    c.audit->record(a);
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
    return t.origin->call_tool(t.upstream_name, call.arguments, call.meta, call.opts);
  }
};

ChainFilter chain_filter;
AuditFilter audit_filter;
MetricsFilter metrics_filter;
OriginFilter origin_filter;
CallFilter* const order[] = {&chain_filter, &audit_filter, &metrics_filter, &origin_filter};

}  // namespace

std::span<CallFilter* const> call_filters() { return order; }

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
  opts.on_upstream_call = [this](const upstream::UpstreamCall& u) {
    for (const CallFilter* f : order) f->on_upstream_call(*this, u);
  };
}

}  // namespace mcpgw::server
