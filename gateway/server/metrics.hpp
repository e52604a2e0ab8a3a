#pragma once
// Prometheus metrics of the gateway, served on /metrics.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "server/call_history.hpp"

namespace mcpgw::server {

class Metrics {
 public:
  Metrics();
  ~Metrics();
  /// One MCP message received, by method ("response" for answers).
  void message(std::string_view method);
  /// One tool call to an origin finished: a client's call, a chain hop or a
  /// plugin's upstream call (`via`: call, chain_hop, plugin). `tool` is the
  /// origin's own name of it; callers pass only names the catalog knows.
  void tool_call(const std::string& server, const std::string& tool, std::string_view via, std::string_view outcome,
                 double seconds);
  /// A tool call to `server` started (+1) or ended (-1).
  void call_in_flight(const std::string& server, int delta);
  /// Tool calls to `server` waiting for a max_concurrency slot.
  void set_queued(const std::string& server, int n);
  void set_upstream_up(const std::string& server, bool up);
  /// Circuit breaker state of `server`: 0 closed, 1 open, 2 half open.
  void set_circuit(const std::string& server, int state);
  void set_sessions(double n);
  /// Open server-to-client streams (GET streams and subscriptions/listen).
  void set_open_streams(double n);
  /// Calls suspended (MRTR, sagas) waiting for their client.
  void set_suspended(double n);
  /// A request refused before it ran, by reason (auth, rate_limited,
  /// tool_hidden, ...).
  void refused(std::string_view reason);
  /// `n` secrets detector `detector` masked or refused (redact:).
  void redacted(const std::string& detector, std::uint32_t n);
  /// A tool definition of `server` seen changed or new against its pin
  /// (`state`: changed, new), once per definition.
  void integrity_change(const std::string& server, std::string_view state);
  /// Tools withheld until an operator approves them (integrity.pins: block).
  void set_withheld(double n);
  /// An audit line that could not be queued or written.
  void audit_dropped();
  /// Spans the OTLP collector accepted, and spans dropped (queue full,
  /// refused, collector unreachable for too long).
  void spans_exported(std::size_t n);
  void spans_dropped(std::size_t n);
  /// The Prometheus text exposition.
  std::string render() const;
  /// The last 15 minutes of tool calls per origin (the status page's charts).
  const CallHistory& history() const { return history_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  CallHistory history_;
};

}  // namespace mcpgw::server
