#include "server/redaction.hpp"

#include "jsonrpc/message.hpp"
#include "mcp/protocol.hpp"
#include "redact/json.hpp"
#include "server/methods.hpp"
#include "util/protobuf.hpp"

namespace mcpgw::server {
namespace {

void count(const redact::Redactor& r, const redact::Tally& tally, Metrics& metrics) {
  for (std::size_t i = 0; i < tally.size(); ++i)
    if (tally[i]) metrics.redacted(r.name(i), tally[i]);
}

const char* what_of(Relayed what) {
  switch (what) {
    case Relayed::ToolResult: return "the tool's answer";
    case Relayed::Resource: return "the resource";
    case Relayed::Prompt: return "the prompt";
    case Relayed::Completion: return "the completion";
  }
  return "the answer";
}

std::string refusal(const redact::Redactor& r, const redact::Tally& tally, std::string_view what) {
  return "Refused by redaction: a secret in " + std::string(what) + " (detector " + r.names_of(tally) + ")";
}

/// Calls `fn(key, value)` for each string attribute of `span`.
template <typename Fn>
void for_each_attribute(const mcp::Span& span, Fn&& fn) {
  protobuf::Reader kvs({span.attributes.data(), span.attributes.size()});
  while (auto kv = kvs.field()) {
    protobuf::Reader fields(kv->second);
    auto key = fields.field(), value = fields.field();
    auto text = value ? protobuf::Reader(value->second).field() : std::nullopt;
    if (key && text) fn(key->second, text->second);
  }
}

}  // namespace

std::string Redaction::counts_json(const config::Redact& cfg) const {
  return cfg.detectors ? cfg.detectors->counts_json(tally) : std::string();
}

Redaction redact_reply(const config::Redact& cfg, Relayed what, upstream::Reply& reply, Metrics& metrics) {
  Redaction out;
  if (!cfg.enabled || !cfg.results || !cfg.detectors) return out;
  const redact::Redactor& r = *cfg.detectors;
  out.tally = r.tally();
  reply.materialize();
  // Under refuse the masked body is dropped: masking it is how its
  // secrets are counted.
  if (!redact::mask_json(r, reply.body, reply.body.GetAllocator(), out.tally)) return out;
  count(r, out.tally, metrics);
  if (cfg.action != config::Redact::Action::Refuse) return out;
  out.refused = true;
  std::string message = refusal(r, out.tally, what_of(what));
  if (what == Relayed::ToolResult) {
    reply = upstream::Reply{false, mcp::tool_error(message)};
  } else {
    reply = upstream::Reply::error(jsonrpc::kInternalError, message);
  }
  return out;
}

Redaction redact_arguments(const config::Redact& cfg, const json::Value& arguments,
                           std::unique_ptr<json::Document>& masked, Metrics& metrics) {
  Redaction out;
  if (!cfg.enabled || !cfg.arguments || !cfg.detectors) return out;
  const redact::Redactor& r = *cfg.detectors;
  out.tally = r.tally();
  auto copy = std::make_unique<json::Document>(json::clone(arguments));
  if (!redact::mask_json(r, *copy, copy->GetAllocator(), out.tally)) return out;
  count(r, out.tally, metrics);
  if (cfg.action == config::Redact::Action::Refuse) out.refused = true;
  else masked = std::move(copy);
  return out;
}

upstream::Reply refused_arguments(const config::Redact& cfg, const Redaction& r) {
  return upstream::Reply{false, mcp::tool_error(refusal(*cfg.detectors, r.tally, "the call's arguments"))};
}

void redact_answer(const config::Redact& cfg, Relayed what, std::string_view target, const upstream::Caller& caller,
                   upstream::Reply& reply, Metrics& metrics, Audit& audit) {
  Redaction r = redact_reply(cfg, what, reply, metrics);
  if (!r.refused) return;
  AuditRecord a;
  a.principal = caller.principal;
  a.session = caller.session;
  a.mode = caller.mode;
  a.tool = std::string(target);
  a.reason = "redaction: " + cfg.detectors->names_of(r.tally);
  a.redactions = r.counts_json(cfg);
  audit.refused("redaction", std::move(a));
}

bool RelayRedaction::on() const {
  return cfg && metrics && cfg->redact.enabled && cfg->redact.results && cfg->redact.detectors;
}

bool redact_relayed(const RelayRedaction& r, json::Document& params) {
  if (!r.on()) return false;
  const redact::Redactor& d = *r.cfg->redact.detectors;
  redact::Tally tally = d.tally();
  if (!redact::mask_json(d, params, params.GetAllocator(), tally)) return false;
  count(d, tally, *r.metrics);
  return true;
}

void redact_task_reply(const RelayRedaction& r, std::string_view method, upstream::Reply& reply) {
  if (!r.on()) return;
  const config::Redact& cfg = r.cfg->redact;
  if (method == "tasks/result") {
    if (redact_reply(cfg, Relayed::ToolResult, reply, *r.metrics).refused) r.metrics->refused("redaction");
    return;
  }
  if (reply.rpc_error || !reply.body.IsObject()) {
    redact_relayed(r, reply.body);
    return;
  }
  auto& a = reply.body.GetAllocator();
  if (cfg.action == config::Redact::Action::Refuse) {
    // A 2026-07-28 task inlines its outcome: refused as the call's answer would be.
    for (const char* key : {"result", "error"}) {
      const json::Value* inlined = json::find(reply.body, key);
      if (!inlined) continue;
      upstream::Reply outcome{std::string_view(key) == "error", json::clone(*inlined)};
      if (!redact_reply(cfg, Relayed::ToolResult, outcome, *r.metrics).refused) continue;
      r.metrics->refused("redaction");
      reply.body.RemoveMember(key);
      json::set(reply.body, "result", json::copy(outcome.body, a), a);
    }
  }
  redact_relayed(r, reply.body);
}

redact::Tally CompositeTally::get() {
  util::MutexLock lk(mu);
  return tally;
}

void screen_composite_calls(std::shared_ptr<const config::Config> cfg, Metrics& metrics, upstream::CallOptions& opts,
                            std::shared_ptr<CompositeTally> found) {
  if (!cfg->redact.enabled || !cfg->redact.results || !cfg->redact.detectors) return;
  opts.screen_upstream_reply = [cfg = std::move(cfg), &metrics, found = std::move(found)](upstream::Reply& reply) {
    Redaction r = redact_reply(cfg->redact, Relayed::ToolResult, reply, metrics);
    if (r.refused) metrics.refused("redaction");
    if (r.tally.total() == 0) return;
    util::MutexLock lk(found->mu);
    found->tally.merge(r.tally);
  };
}

std::optional<mcp::Span> masked_span(const redact::Redactor& r, const mcp::Span& span) {
  bool any = r.detects(span.name) || r.detects(span.status_message);
  for_each_attribute(span, [&](std::string_view, std::string_view value) { any = any || r.detects(value); });
  if (!any) return std::nullopt;
  redact::Tally tally = r.tally();
  std::string out;
  mcp::Span copy;
  copy.trace_id = span.trace_id;
  copy.span_id = span.span_id;
  copy.parent_span_id = span.parent_span_id;
  copy.kind = span.kind;
  copy.start_unix_ns = span.start_unix_ns;
  copy.end_unix_ns = span.end_unix_ns;
  copy.error = span.error;
  copy.name = r.mask(span.name, out, tally) ? out : span.name;
  copy.status_message = r.mask(span.status_message, out, tally) ? out : span.status_message;
  for_each_attribute(span, [&](std::string_view key, std::string_view value) {
    copy.set(key, r.mask(value, out, tally) ? std::string_view(out) : value);
  });
  return copy;
}

void RedactingSpans::record(const mcp::Span& span) {
  auto cfg = settings_.config();
  if (!cfg->redact.enabled || !cfg->redact.detectors) return inner_.record(span);
  if (auto masked = masked_span(*cfg->redact.detectors, span)) return inner_.record(*masked);
  inner_.record(span);
}

}  // namespace mcpgw::server
