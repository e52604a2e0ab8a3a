#pragma once
// Spans of the gateway's work, named and attributed by the OpenTelemetry
// semantic conventions for MCP (span name `{mcp.method.name} {target}`,
// `mcp.*`, `gen_ai.tool.name`, `jsonrpc.request.id`, `error.type`). The
// modules that do the work record them into a SpanSink; the telemetry
// module exports them. Nothing here does I/O.
#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "jsonrpc/id.hpp"
#include "jsonrpc/json.hpp"
#include "mcp/trace.hpp"

namespace mcpgw::mcp {

/// An attribute value: OTLP's string, int, bool or double.
using AttrValue = std::variant<std::string, std::int64_t, bool, double>;

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
  /// Keys are string literals (the conventions' names): no copy per span.
  std::vector<std::pair<std::string_view, AttrValue>> attributes;
  /// Status ERROR (with `error.type` among the attributes) rather than UNSET.
  bool error = false;
  std::string status_message;

  void set(std::string_view key, AttrValue value) { attributes.emplace_back(key, std::move(value)); }
  /// Sets the ids from their W3C hex spelling ("" parent: a root span).
  void set_ids(std::string_view trace_hex, std::string_view span_hex, std::string_view parent_hex);
  bool has_parent() const;
  /// A string attribute (out of line: GCC 12 misreads the variant built inline).
  void set(std::string_view key, std::string value);
  /// Marks the span failed: `error.type` (a low-cardinality class such as
  /// `tool_error`, `timeout` or a JSON-RPC code) and the status message.
  void fail(std::string type, std::string message = {}) {
    set(kErrorType, std::move(type));
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
  /// Room made for attributes up front (one allocation for the usual set).
  static constexpr std::size_t kTypicalAttributes = 12;
  SpanTimer() = default;
  SpanTimer(SpanSink* sink, const TraceContext& parent, std::string name, Span::Kind kind)
      : sink_(sink && sink->sampled(parent) ? sink : nullptr), context_(parent.child()) {
    if (!sink_) return;
    span_.attributes.reserve(kTypicalAttributes);
    span_.set_ids(parent.trace_id.view(), context_.span_id.view(), parent.span_id.view());
    span_.name = std::move(name);
    span_.kind = kind;
    span_.start_unix_ns = unix_ns_now();
  }
  /// A span whose own ids are `self` (a server span whose id was chosen
  /// before it started), with parent `parent_span_id` ("" = root).
  static SpanTimer with_ids(SpanSink* sink, const TraceContext& self, std::string_view parent_span_id,
                            std::string name, Span::Kind kind) {
    SpanTimer t;
    t.sink_ = sink && sink->sampled(self) ? sink : nullptr;
    t.context_ = self;
    if (!t.sink_) return t;
    t.span_.attributes.reserve(kTypicalAttributes);
    t.span_.set_ids(self.trace_id.view(), self.span_id.view(), parent_span_id);
    t.span_.name = std::move(name);
    t.span_.kind = kind;
    t.span_.start_unix_ns = unix_ns_now();
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
  SpanSink* sink_ = nullptr;
  TraceContext context_;
  Span span_;
};

/// `{mcp.method.name} {target}`: the method, and the tool's or prompt's
/// name when `params` names one (a low-cardinality target).
std::string span_name(std::string_view method, const json::Value* params);

/// The attributes every span of MCP request `method` with `params` gets:
/// `mcp.method.name`, and `gen_ai.tool.name` with `gen_ai.operation.name`
/// (tools/call), `gen_ai.prompt.name` (prompts/get) or `mcp.resource.uri`.
void describe_request(Span& span, std::string_view method, const json::Value* params);

/// `jsonrpc.request.id`: a string id as is, a number as its sender wrote it.
void set_request_id(Span& span, const jsonrpc::Id& id);

/// Sets the outcome of `span` from what a request got: a JSON-RPC error
/// object (`rpc_error`: `error.type` and `rpc.response.status_code` are its
/// code, the status message its message), or a result, failed as
/// `tool_error` when it has `isError: true`.
void set_outcome(Span& span, bool rpc_error, const json::Value& body);

}  // namespace mcpgw::mcp
