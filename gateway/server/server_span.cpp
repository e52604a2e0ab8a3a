#include "server/server_span.hpp"

namespace mcpgw::server {

std::shared_ptr<mcp::SpanTimer> start_server_span(mcp::SpanSink* sink, const jsonrpc::Message& m,
                                                  const McpSession& s, mcp::RequestContext& ctx) {
  if (!sink) return nullptr;
  auto parent = mcp::trace_of(m.params());
  mcp::TraceContext self = parent ? parent->child() : mcp::TraceContext::fresh();
  if (!parent) self.flags = sink->sample_new(self.trace_id.view()) ? "01" : "00";
  ctx.span = self;
  const std::string_view method = m.method(), target = mcp::target_of(method, m.params());
  auto span = std::make_shared<mcp::SpanTimer>(mcp::SpanTimer::with_ids(
      sink, self, parent ? parent->span_id.view() : std::string_view(), method, target, mcp::Span::Kind::Server));
  if (!span->recording()) return span;
  mcp::Span& sp = span->span();
  mcp::describe_request(sp, method, target, m.params());
  mcp::set_request_id(sp, m.id());
  if (!s.stateless()) sp.set("mcp.session.id", s.id());
  std::string version = ctx.stateless ? ctx.envelope.version : s.protocol_version();
  if (!version.empty()) sp.set("mcp.protocol.version", std::move(version));
  return span;
}

void end_server_span(const std::shared_ptr<mcp::SpanTimer>& span, Answer& answer) {
  if (!span || !span->recording()) return;
  if (const jsonrpc::RawResult* raw = answer.raw()) mcp::set_tool_outcome(span->span(), raw->facts.is_error);
  else mcp::set_outcome(span->span(), answer.is_error(), answer.body());
  span->finish();
}

}  // namespace mcpgw::server
