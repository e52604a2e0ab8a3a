#pragma once
// The server side of one call of a tool, past its admission: a chain of
// filters, each doing one concern of the call (the nextTool chain it
// starts, its audit line, its metrics) around the rest of the chain, the
// last one calling the tool's origin, which runs the upstream's own filters
// (upstream/send_filter.hpp). The same interface as the upstream's chains:
// `Task<upstream::Reply> on_call(ServerCall&, CallNext)`. tool_work
// (server/tools.cpp) builds the call and runs the chain; the filters and
// their order are in server/call_filters.cpp; a new concern of every call
// is a new filter, not a branch in the work.
#include <memory>
#include <optional>
#include <span>

#include "server/calls.hpp"
#include "upstream/send_filter.hpp"

namespace mcpgw::server {

/// What the work of a tool call keeps of the call: the tool with its
/// arguments and `_meta`, its caller, and the trace it goes on. The work
/// owns it, so it outlives the request (a suspended call, a task).
struct ToolCallContext {
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
};

/// One run of that work by a client call (a suspended call resumed runs it
/// anew): the way back to the client, the cancellation, the progress.
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
};

class CallFilter;
/// The call filters after the current one.
using CallNext = upstream::ChainNext<CallFilter, ServerCall, upstream::Reply>;

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

}  // namespace mcpgw::server
