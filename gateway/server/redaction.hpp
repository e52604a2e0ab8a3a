#pragma once
// Redaction (`redact:`) where the gateway relays and writes text: what an
// upstream answered (a tool's result or error, a resource, a prompt, a
// completion, what it says of a task), what it sends a client during a call
// (log messages, progress, its requests), what a composite tool's own
// upstream calls hand back to its plugin, the arguments of a tool call going
// upstream, and the spans and log lines the gateway writes itself. The detectors are the configuration's
// (config::Redact, compiled at load); the audit log masks its own lines
// (server/audit).
#include <memory>
#include <string_view>

#include "config/config.hpp"
#include "mcp/span.hpp"
#include "redact/redactor.hpp"
#include "server/audit.hpp"
#include "server/metrics.hpp"
#include "upstream/origin.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::server {

class Settings;

/// What redaction did to one relayed item.
struct Redaction {
  redact::Tally tally;   ///< secrets detected, by detector
  bool refused = false;  ///< `action: refuse` and something was detected
  /// The detectors' counts as a JSON object ({"github_token":1}), "" when none.
  std::string counts_json(const config::Redact& cfg) const;
};

/// What relayed text is: where it came from, for a refusal's message.
enum class Relayed { ToolResult, Resource, Prompt, Completion };

/// Masks (or, under `action: refuse`, detects) the secrets in what an
/// upstream answered when `redact.in` has results: every string value of
/// a result (content text, structuredContent, resource text, prompt
/// messages) or of a JSON-RPC error. A refused reply becomes the refusal
/// naming the detectors: an isError result for a tool, a JSON-RPC error
/// otherwise. Counts mcpgw_redactions_total; the caller counts a refusal.
Redaction redact_reply(const config::Redact& cfg, Relayed what, upstream::Reply& reply, Metrics& metrics);

/// The arguments of a tool call as they may go upstream when `redact.in`
/// has arguments: `masked` is set to a copy with the secrets masked when
/// there were any (null otherwise), and a refusal under `action: refuse`
/// reported. Counts mcpgw_redactions_total.
Redaction redact_arguments(const config::Redact& cfg, const json::Value& arguments,
                           std::unique_ptr<json::Document>& masked, Metrics& metrics);

/// The refusal of a tool call whose arguments carry a secret: an isError
/// result naming the detectors.
upstream::Reply refused_arguments(const config::Redact& cfg, const Redaction& r);

/// redact_reply for resources/read and prompts/get (`target` as the audit
/// line names it): a refusal is also counted in mcpgw_refused_total and
/// audited (reason `redaction`).
void redact_answer(const config::Redact& cfg, Relayed what, std::string_view target, const upstream::Caller& caller,
                   upstream::Reply& reply, Metrics& metrics, Audit& audit);

/// What redacts an upstream's words that reach a client outside a tool
/// call's filters (a call's notifications and requests, a task's state and
/// result): the configuration the call or request began under, and where
/// the counts go. Off when either is missing or `redact.in` lacks results.
struct RelayRedaction {
  std::shared_ptr<const config::Config> cfg;
  Metrics* metrics = nullptr;
  bool on() const;
};

/// Masks every string in the params of a notification or request an
/// upstream sends a client during a call (notifications/message data,
/// notifications/progress message, an elicitation's message, a sampling
/// request's messages). Masked under `action: refuse` too: there is no call
/// answer to refuse, and the call itself goes on. Returns whether anything
/// was masked; counts mcpgw_redactions_total.
bool redact_relayed(const RelayRedaction& r, json::Document& params);

/// What an upstream answered to a tasks/* request about one of its tasks:
/// tasks/result as a tool's answer (redact_reply: masked, or under refuse
/// the isError refusal naming the detectors); any other (a task's state,
/// tasks/list) with its strings masked (statusMessage, a 2026-07-28
/// task's inputRequests), and under refuse its inlined `result` or `error`
/// replaced by that refusal (the task stays readable). A refusal is counted
/// in mcpgw_refused_total{reason="redaction"}.
void redact_task_reply(const RelayRedaction& r, std::string_view method, upstream::Reply& reply);

/// The redactions of a composite's upstream calls so far (calls may run at
/// once, on several threads).
struct CompositeTally {
  util::Mutex mu;
  redact::Tally tally GUARDED_BY(mu);
  /// A copy of what has been counted.
  redact::Tally get();
};

/// A composite (plugin) tool's own upstream calls, for the plugin: what
/// each answers is redacted as a tool's answer before the plugin sees it
/// (a refused one reaches the plugin as the isError refusal, counted in
/// mcpgw_refused_total); their counts are added to `found`, the call's.
/// Sets `opts.screen_upstream_reply`.
void screen_composite_calls(std::shared_ptr<const config::Config> cfg, Metrics& metrics, upstream::CallOptions& opts,
                            std::shared_ptr<CompositeTally> found);

/// The spans the gateway records, with what the detectors find masked in
/// their names, attributes and status messages before they go to `inner`
/// (the exporter); the detectors are those of the configuration in force.
class RedactingSpans final : public mcp::SpanSink {
 public:
  RedactingSpans(mcp::SpanSink& inner, const Settings& settings) : inner_(inner), settings_(settings) {}
  bool sampled(const mcp::TraceContext& trace) const override { return inner_.sampled(trace); }
  bool sample_new(std::string_view trace_id) const override { return inner_.sample_new(trace_id); }
  void record(const mcp::Span& span) override;

 private:
  mcp::SpanSink& inner_;
  const Settings& settings_;
};

/// `span` with the secrets `r` detects masked; nullopt when there are none.
std::optional<mcp::Span> masked_span(const redact::Redactor& r, const mcp::Span& span);

}  // namespace mcpgw::server
