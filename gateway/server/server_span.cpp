#include "server/server_span.hpp"

namespace mcpgw::server {

std::shared_ptr<mcp::SpanTimer> start_server_span(mcp::SpanSink* sink, const jsonrpc::Message& m,
                                                  const McpSession& s, mcp::RequestContext& ctx) {
  if (!sink) return nullptr;
  auto parent = mcp::trace_of(m.params());
  mcp::TraceContext self = parent ? parent->child() : mcp::TraceContext::fresh();
  if (!parent) self.flags = sink->sample_new(self.trace_id) ? "01" : "00";
  ctx.span = self;
  const json::Value* p = m.params();
  std::string target;
  if (p && (m.method() == "tools/call" || m.method() == "prompts/get"))
    target = json::get_string(*p, "name").value_or("");
  bool named = !target.empty();
  std::string name = std::string(m.method()) + (named ? " " + target : "");
  auto span = std::make_shared<mcp::SpanTimer>(
      mcp::SpanTimer::with_ids(sink, self, parent ? parent->span_id : "", std::move(name), mcp::Span::Kind::Server));
  if (!span->recording()) return span;
  mcp::Span& sp = span->span();
  sp.set("mcp.method.name", std::string(m.method()));
  if (named && m.method() == "tools/call") {
    sp.set("gen_ai.tool.name", target);
    sp.set("gen_ai.operation.name", std::string("execute_tool"));
  } else if (named) {
    sp.set("gen_ai.prompt.name", target);
  }
  if (auto uri = p ? json::get_string(*p, "uri") : std::nullopt) sp.set("mcp.resource.uri", std::string(*uri));
  const json::Value& id = m.id();
  if (id.IsString()) sp.set("jsonrpc.request.id", std::string(id.GetString(), id.GetStringLength()));
  else if (id.IsInt64()) sp.set("jsonrpc.request.id", std::to_string(id.GetInt64()));
  if (!s.stateless()) sp.set("mcp.session.id", s.id());
  std::string version = ctx.stateless ? ctx.envelope.version : s.protocol_version();
  if (!version.empty()) sp.set("mcp.protocol.version", std::move(version));
  return span;
}

void end_server_span(const std::shared_ptr<mcp::SpanTimer>& span, Answer& answer) {
  if (!span || !span->recording()) return;
  mcp::set_outcome(span->span(), answer.is_error(), answer.body());
  span->finish();
}

}  // namespace mcpgw::server
