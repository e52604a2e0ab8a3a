#pragma once
// Spans of the gateway's work, named and attributed by the OpenTelemetry
// semantic conventions for MCP (span name `{mcp.method.name} {target}`,
// `mcp.*`, `gen_ai.tool.name`, `jsonrpc.request.id`, `error.type`). The
// modules that do the work record them into a SpanSink; the telemetry
// module exports them. Nothing here does I/O.
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <boost/container/small_vector.hpp>

#include "jsonrpc/id.hpp"
#include "jsonrpc/json.hpp"
#include "mcp/trace.hpp"

namespace mcpgw::mcp {

inline constexpr std::string_view kErrorType = "error.type";

/// One finished span.
struct Span {
  /// OTLP's SpanKind values.
  enum class Kind { Internal = 1, Server = 2, Client = 3 };

  // Ids as the bytes OTLP sends: a span costs no allocation for them.
  std::array<std::uint8_t, 16> trace_id{};
  std::array<std::uint8_t, 8> span_id{};
  std::array<std::uint8_t, 8> parent_span_id{};  ///< all zero for a root span (W3C forbids a zero id)
  std::string name;
  Kind kind = Kind::Internal;
  std::uint64_t start_unix_ns = 0;
  std::uint64_t end_unix_ns = 0;
  /// The attributes (all strings) as OTLP sends them: each a `KeyValue` as
  /// field 9 of the Span message, back to back. A span is built on every
  /// call, and an attribute written once as it is set, in room held in
  /// place, costs a fraction of one stored and encoded later.
  boost::container::small_vector<char, 384> attributes;
  /// Status ERROR (with `error.type` among the attributes) rather than UNSET.
  bool error = false;
  std::string status_message;

  /// Sets the ids from their W3C hex spelling ("" parent: a root span).
  void set_ids(std::string_view trace_hex, std::string_view span_hex, std::string_view parent_hex);
  bool has_parent() const;
  /// Adds string attribute `key` (a name of the conventions).
  void set(std::string_view key, std::string_view value);
  /// The value of attribute `key`, if set.
  std::optional<std::string_view> attribute(std::string_view key) const;
  /// Marks the span failed: `error.type` (a low-cardinality class such as
  /// `tool_error`, `timeout` or a JSON-RPC code) and the status message.
  void fail(std::string_view type, std::string message = {}) {
    set(kErrorType, type);
    error = true;
    status_message = std::move(message);
  }
};

/// Nanoseconds since the Unix epoch, now.
inline std::uint64_t unix_ns_now() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

/// Where finished spans go. record() is called on the call path: it must
/// not block (a full sink drops and counts).
class SpanSink {
 public:
  virtual ~SpanSink() = default;
  /// Whether spans of this trace are recorded at all (sampling); the same
  /// answer for every span of one trace.
  virtual bool sampled(const TraceContext& trace) const = 0;
  /// The sampling decision for a trace the gateway starts itself (a
  /// request without a traceparent); carried on in its flags.
  virtual bool sample_new(std::string_view trace_id) const = 0;
  /// Takes what it needs of `span` before returning (the caller frees it
  /// on its own thread).
  virtual void record(const Span& span) = 0;
};

/// A span being timed: started now as a child of `parent` (its own ids in
/// `context`), handed to `sink` by finish(). Does nothing without a sink or
/// when the trace is not sampled.
class SpanTimer {
 public:
  SpanTimer() = default;
  /// Named `{method} {target}` (`target` may be empty), the name made only
  /// when the span is recorded.
  SpanTimer(SpanSink* sink, const TraceContext& parent, std::string_view method, std::string_view target,
            Span::Kind kind)
      : sink_(sink && sink->sampled(parent) ? sink : nullptr), context_(parent.child()) {
    if (sink_) begin(parent.trace_id.view(), parent.span_id.view(), method, target, kind);
  }
  /// A span whose own ids are `self` (a server span whose id was chosen
  /// before it started), with parent `parent_span_id` ("" = root).
  static SpanTimer with_ids(SpanSink* sink, const TraceContext& self, std::string_view parent_span_id,
                            std::string_view method, std::string_view target, Span::Kind kind) {
    SpanTimer t;
    t.sink_ = sink && sink->sampled(self) ? sink : nullptr;
    t.context_ = self;
    if (t.sink_) t.begin(self.trace_id.view(), parent_span_id, method, target, kind);
    return t;
  }

  /// Whether finish() will record anything (attributes need not be built otherwise).
  bool recording() const { return sink_ != nullptr; }
  /// This span's trace context: what its children and the traceparent it
  /// sends descend from.
  const TraceContext& context() const { return context_; }
  Span& span() { return span_; }
  /// Ends the span now and records it (once).
  void finish() {
    if (!sink_) return;
    span_.end_unix_ns = unix_ns_now();
    std::exchange(sink_, nullptr)->record(span_);
  }

 private:
  void begin(std::string_view trace_id, std::string_view parent_span_id, std::string_view method,
             std::string_view target, Span::Kind kind);

  SpanSink* sink_ = nullptr;
  TraceContext context_;
  Span span_;
};

/// The tool or prompt request `method` with `params` names (tools/call,
/// prompts/get): the target of its span's name. A view into `params`.
std::string_view target_of(std::string_view method, const json::Value* params);

/// The attributes every span of MCP request `method` gets: `mcp.method.name`,
/// and `gen_ai.tool.name` with `gen_ai.operation.name` (tools/call) or
/// `gen_ai.prompt.name` (prompts/get) for its `target` (target_of), and
/// `mcp.resource.uri` of a `resources/` method from `params` (may be null).
void describe_request(Span& span, std::string_view method, std::string_view target, const json::Value* params);

/// `jsonrpc.request.id`: a string id as is, a number as its sender wrote it.
void set_request_id(Span& span, const jsonrpc::Id& id);

/// Sets the outcome of `span` from what a request got: a JSON-RPC error
/// object (`rpc_error`: `error.type` and `rpc.response.status_code` are its
/// code, the status message its message), or a result, failed as
/// `tool_error` when it has `isError: true`.
void set_outcome(Span& span, bool rpc_error, const json::Value& body);
/// The outcome of a tool result known only by its `isError` (a relayed one).
void set_tool_outcome(Span& span, bool is_error);

}  // namespace mcpgw::mcp
