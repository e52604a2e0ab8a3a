#pragma once
// OTLP trace export's wire format: an ExportTraceServiceRequest
// (opentelemetry/proto/collector/trace/v1) in binary protobuf, written by
// hand for the few messages and fields the gateway sends: no protobuf
// library, no generated code.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcp/span.hpp"

namespace mcpgw::telemetry {

/// What every exported span is about: the resource's attributes.
struct Resource {
  std::vector<std::pair<std::string, std::string>> attributes;
};

/// Appends `span` to `spans` as one entry of ScopeSpans' repeated `spans`
/// field: a batch is these entries back to back, built as spans finish.
void append_span(std::string& spans, const mcp::Span& span);

/// The body of POST <endpoint>/v1/traces (Content-Type
/// application/x-protobuf) into `out` (its capacity reused from one batch
/// to the next): `spans` (append_span's entries) under one resource and one
/// instrumentation scope (`scope_name`, `scope_version`).
void encode_export_request(std::string_view spans, const Resource& resource, std::string_view scope_name,
                           std::string_view scope_version, std::string& out);
/// The same for a list of spans.
std::string encode_export_request(const std::vector<mcp::Span>& spans, const Resource& resource,
                                  std::string_view scope_name, std::string_view scope_version);

/// The TraceIdRatioBased decision for a new trace: true for the share
/// `ratio` (0 to 1) of trace ids, read from their lower 8 bytes, so every
/// process decides a trace alike.
bool sampled_by_ratio(std::string_view trace_id, double ratio);

/// The sampled bit of W3C trace flags ("01": sampled, "00": not).
bool sampled_flag(std::string_view flags);

}  // namespace mcpgw::telemetry
