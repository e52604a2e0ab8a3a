#pragma once
// The server side of a client's tools/call, as two chains of filters of
// the gateway's one shape (util/filter_chain.hpp): `on_call(item, next)`,
// each filter doing one concern around the rest of the chain.
// - The admission filters (AdmitFilter over a CallRequest, answering the
//   request): which tool, whether it may run and how (streamed or
//   suspended, as a task); the last one runs the call's work.
// - The call filters (CallFilter over a ServerCall, inside that work, once
//   per call of the tool's origin): the nextTool chain a result starts, the
//   audit line, the metrics; the last one calls the origin, which runs the
//   upstream's own filters.
// call_tool and tool_work (server/tools.cpp) build the items and run the
// chains; the filters and their order are in server/call_filters.cpp; a new
// concern of every call is a new filter, not a branch in the handler or
// the work.
#include <memory>
#include <optional>
#include <span>

#include "catalog/policy.hpp"
#include "server/calls.hpp"
#include "server/tasks.hpp"
#include "server/tools.hpp"
#include "upstream/send_filter.hpp"

namespace mcpgw::server {

/// What the work of a tool call keeps of the call: the tool with its
/// arguments and `_meta`, its caller, and the trace it goes on. The work
/// owns it, so it outlives the request (a suspended call, a task).
struct ToolCallContext {
  /// Where a chain looks its hops up again when servers were starting up.
  catalog::Catalog* catalog;
  Metrics* metrics;
  Audit* audit;
  mcp::SpanSink* spans;
  std::shared_ptr<const catalog::Snapshot> snap;
  std::size_t mode;
  const catalog::ExposedTool* tool;
  std::shared_ptr<json::Document> arguments, meta;
  std::shared_ptr<const json::Document> task;
  std::shared_ptr<const config::Config> cfg;
  upstream::Caller caller;
  std::string session;
  mcp::TraceContext trace;
  std::optional<mcp::TraceContext> request_span;
  /// Who the caller is to the policies; null when none are configured.
  std::shared_ptr<const catalog::Subject> subject;
  /// The call's answer goes to its client as it is (a session's own call,
  /// not a task, saga or MRTR round): the tool's result may stay the bytes
  /// the upstream sent (upstream::CallOptions::relay).
  bool relay = false;
  /// The client's arguments as the bytes it sent, when `arguments` is a
  /// copy of them: the tool's call sends these on unless a filter changed
  /// the arguments (upstream::CallOptions::raw_arguments). May be null.
  std::shared_ptr<const jsonrpc::RawArguments> raw_arguments;
};

/// One run of that work: the way back to the client, the cancellation,
/// the progress.
struct ToolCallRun {
  const ToolCallContext& c;
  std::shared_ptr<ClientCall> client;
  CancelSignal& cancel;
  Progress* progress;
  /// This client call's span in the trace (the request's server span when
  /// spans are recorded); its id also names the chain.
  const mcp::TraceContext span = c.request_span ? *c.request_span : c.trace.child();
};

/// One call of a tool's origin within a run: the tool itself (hop 0) or a
/// hop of the chain its result starts; the item of the call filters.
struct ServerCall {
  /// A call of `tool` with `arguments` (may be null) and the `_meta` the
  /// origin may see (may be null) as hop `hop` of `run`.
  ServerCall(const ToolCallRun& run, const catalog::ExposedTool& tool, const json::Value* arguments,
             const json::Value* meta, int hop);
  // opts reports back to this object: it stays where it was made.
  ServerCall(const ServerCall&) = delete;
  ServerCall& operator=(const ServerCall&) = delete;

  const ToolCallRun& run;
  const catalog::ExposedTool& tool;
  const json::Value* arguments;
  const json::Value* meta;
  const int hop;  ///< 0: the call itself, n: the chain's n-th hop
  /// What the origin is called with: the deadline, cancellation, progress,
  /// trace and (hop 0) task of the run; a plugin's own upstream calls are
  /// told to each filter (CallFilter::on_upstream_call).
  upstream::CallOptions opts;
  /// Set by MetricsFilter on the way back: the call's outcome word and
  /// duration, for the filters outside it.
  std::string_view outcome;
  double ms = 0;
  /// Set by RedactFilter: the secrets masked or refused in this call's
  /// arguments and answer, as detector counts ({"jwt":1}), and whether
  /// that refused it; for the audit line.
  std::string redactions;
  bool redaction_refused = false;
};

class CallFilter;
/// The call filters after the current one.
using CallNext = ChainNext<CallFilter, ServerCall, Task<upstream::Reply>>;

/// One concern of a tool call on the server's side.
class CallFilter {
 public:
  virtual ~CallFilter() = default;
  /// Does this filter's part of `call`, with `next` for the rest; the last
  /// filter calls the origin and does not call `next`.
  virtual Task<upstream::Reply> on_call(ServerCall& call, CallNext next) = 0;
  /// A composite (plugin) tool's origin made upstream call `u` during
  /// `call`; by default nothing to do.
  virtual void on_upstream_call(const ServerCall& call, const upstream::UpstreamCall& u) const {
    (void)call;
    (void)u;
  }
};

/// The call filters, outermost first; the same for every call.
std::span<CallFilter* const> call_filters();

/// A client's tools/call on its way through the admission filters, before
/// anything runs upstream.
struct CallRequest {
  Services& sv;
  Request& r;
  /// The tool called; set by ResolveFilter.
  CalledTool called{};
  /// How it runs; set by TaskPlanFilter (unset: a tool its OAuth server has
  /// not listed yet, or a saga: never a task).
  std::optional<TaskPlan> plan{};
  /// tools/callSaga: once admitted, the tool runs as a saga (its questions
  /// handed out as steps) instead of a call.
  bool saga = false;
};

class AdmitFilter;
/// The admission filters after the current one.
using AdmitNext = ChainNext<AdmitFilter, CallRequest, Task<Answer>>;

/// One concern of admitting a tools/call: a filter may refuse it (its
/// answer, audited and counted as refused) or note in the request what
/// the filters after it need.
class AdmitFilter {
 public:
  virtual ~AdmitFilter() = default;
  /// Does this filter's part of `call`, with `next` for the rest; the last
  /// filter runs the call's work and does not call `next`.
  virtual Task<Answer> on_call(CallRequest& call, AdmitNext next) = 0;
};

/// The admission filters of tools/call, outermost first.
std::span<AdmitFilter* const> admit_filters();

}  // namespace mcpgw::server
