#include "server/metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <set>
#include <unordered_map>

#include "util/thread_annotations.hpp"

namespace mcpgw::server {

struct Metrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& messages =
      prometheus::BuildCounter().Name("mcpgw_messages_total").Help("MCP messages received from clients").Register(*registry);
  prometheus::Family<prometheus::Counter>& calls =
      prometheus::BuildCounter()
          .Name("mcpgw_tool_calls_total")
          .Help("Tool calls by origin server, its tool, how the call was made (call, chain_hop, plugin) and outcome")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& in_flight = prometheus::BuildGauge()
                                                         .Name("mcpgw_tool_calls_in_flight")
                                                         .Help("Tool calls running, by origin server")
                                                         .Register(*registry);
  prometheus::Family<prometheus::Gauge>& queued = prometheus::BuildGauge()
                                                      .Name("mcpgw_tool_calls_queued")
                                                      .Help("Tool calls waiting for a max_concurrency slot, by server")
                                                      .Register(*registry);
  prometheus::Family<prometheus::Gauge>& circuit =
      prometheus::BuildGauge()
          .Name("mcpgw_upstream_circuit_state")
          .Help("Circuit breaker of the upstream: 0 closed, 1 open, 2 half open (one probe call)")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& refused = prometheus::BuildCounter()
                                                         .Name("mcpgw_refused_total")
                                                         .Help("Requests refused before they ran, by reason")
                                                         .Register(*registry);
  prometheus::Family<prometheus::Counter>& redactions = prometheus::BuildCounter()
                                                            .Name("mcpgw_redactions_total")
                                                            .Help("Secrets masked or refused by redaction, by detector")
                                                            .Register(*registry);
  prometheus::Family<prometheus::Counter>& integrity = prometheus::BuildCounter()
                                                           .Name("mcpgw_integrity_changes_total")
                                                           .Help("Tool definitions seen changed or new against their pins, by server and state")
                                                           .Register(*registry);
  prometheus::Gauge& withheld = prometheus::BuildGauge()
                                    .Name("mcpgw_integrity_withheld_tools")
                                    .Help("Tools withheld until an operator approves them (integrity.pins: block)")
                                    .Register(*registry)
                                    .Add({});
  prometheus::Counter& audit_dropped = prometheus::BuildCounter()
                                           .Name("mcpgw_audit_dropped_total")
                                           .Help("Audit lines dropped (queue full or write failed)")
                                           .Register(*registry)
                                           .Add({});
  prometheus::Counter& spans_exported = prometheus::BuildCounter()
                                            .Name("mcpgw_otlp_spans_exported_total")
                                            .Help("Spans the OTLP collector accepted")
                                            .Register(*registry)
                                            .Add({});
  prometheus::Counter& spans_dropped =
      prometheus::BuildCounter()
          .Name("mcpgw_otlp_spans_dropped_total")
          .Help("Spans not exported: the queue was full, or the collector refused or stayed unreachable")
          .Register(*registry)
          .Add({});
  prometheus::Gauge& streams = prometheus::BuildGauge()
                                   .Name("mcpgw_open_streams")
                                   .Help("Open server-to-client streams")
                                   .Register(*registry)
                                   .Add({});
  prometheus::Gauge& suspended = prometheus::BuildGauge()
                                     .Name("mcpgw_suspended_calls")
                                     .Help("Calls suspended while their client answers (MRTR, sagas)")
                                     .Register(*registry)
                                     .Add({});
  prometheus::Family<prometheus::Histogram>& latency = prometheus::BuildHistogram()
                                                           .Name("mcpgw_tool_call_duration_seconds")
                                                           .Help("Tool call duration by origin server")
                                                           .Register(*registry);
  prometheus::Family<prometheus::Gauge>& up =
      prometheus::BuildGauge().Name("mcpgw_upstream_up").Help("1 when the upstream is connected").Register(*registry);
  prometheus::Gauge& sessions = prometheus::BuildGauge()
                                    .Name("mcpgw_sessions")
                                    .Help("Open client sessions")
                                    .Register(*registry)
                                    .Add({});

  // Family::Add builds a label map and hashes it on every call, which shows
  // on the per-call path: the children it returns are stable, so they are
  // looked up once per label set. Shared: after its first calls, every
  // worker only reads it.
  util::SharedMutex cache_mu;
  std::unordered_map<std::string, prometheus::Counter*> messages_by_method GUARDED_BY(cache_mu);
  std::unordered_map<std::string, prometheus::Counter*> calls_by_labels GUARDED_BY(cache_mu);
  std::unordered_map<std::string, prometheus::Histogram*> latency_by_server GUARDED_BY(cache_mu);
  std::unordered_map<std::string, prometheus::Gauge*> in_flight_by_server GUARDED_BY(cache_mu);

  /// The child of `family` for the labels `labels()` makes, from the cache
  /// `by` (one of the maps above) after the first time: the labels are
  /// built and Family::Add is called once per `key`.
  template <class T, class MakeLabels, class... Extra>
  T& child(std::unordered_map<std::string, T*> Impl::*by, const std::string& key, prometheus::Family<T>& family,
           MakeLabels labels, const Extra&... extra) EXCLUDES(cache_mu) {
    {
      util::ReaderLock lk(cache_mu);
      if (auto it = (this->*by).find(key); it != (this->*by).end()) return *it->second;
    }
    util::WriterLock lk(cache_mu);
    auto& c = (this->*by)[key];
    if (!c) c = &family.Add(labels(), extra...);
    return *c;
  }
};

namespace {

// Methods are client input: only known ones become label values, so a client
// cannot grow the metric set without bound.
const std::set<std::string_view> kKnownMethods = {
    "initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read",
    "resources/templates/list", "prompts/list", "prompts/get", "completion/complete",
    "logging/setLevel", "notifications/initialized", "notifications/cancelled", "response",
    "skills/list", "skills/get", "resources/directory/read"};
}  // namespace

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {}
Metrics::~Metrics() = default;

void Metrics::message(std::string_view method) {
  std::string m(kKnownMethods.count(method) ? method : "other");
  auto labels = [&] { return prometheus::Labels{{"method", m}}; };
  impl_->child(&Impl::messages_by_method, m, impl_->messages, labels).Increment();
}

void Metrics::tool_call(const std::string& server, const std::string& tool, std::string_view via,
                        std::string_view outcome, double seconds) {
  history_.record(server, outcome == "ok", seconds);
  static const prometheus::Histogram::BucketBoundaries kBuckets = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30};
  std::string key = server;
  for (std::string_view part : {std::string_view(tool), via, outcome}) {
    key.push_back('\0');
    key.append(part);
  }
  auto call_labels = [&] {
    return prometheus::Labels{
        {"server", server}, {"tool", tool}, {"via", std::string(via)}, {"outcome", std::string(outcome)}};
  };
  impl_->child(&Impl::calls_by_labels, key, impl_->calls, call_labels).Increment();
  auto server_labels = [&] { return prometheus::Labels{{"server", server}}; };
  impl_->child(&Impl::latency_by_server, server, impl_->latency, server_labels, kBuckets).Observe(seconds);
}

void Metrics::set_upstream_up(const std::string& server, bool up) {
  impl_->up.Add({{"server", server}}).Set(up ? 1 : 0);
}

void Metrics::call_in_flight(const std::string& server, int delta) {
  auto labels = [&] { return prometheus::Labels{{"server", server}}; };
  impl_->child(&Impl::in_flight_by_server, server, impl_->in_flight, labels).Increment(delta);
}

void Metrics::set_queued(const std::string& server, int n) { impl_->queued.Add({{"server", server}}).Set(n); }

void Metrics::set_circuit(const std::string& server, int state) {
  impl_->circuit.Add({{"server", server}}).Set(state);
}

void Metrics::set_sessions(double n) { impl_->sessions.Set(n); }

void Metrics::set_open_streams(double n) { impl_->streams.Set(n); }

void Metrics::set_suspended(double n) { impl_->suspended.Set(n); }

void Metrics::refused(std::string_view reason) { impl_->refused.Add({{"reason", std::string(reason)}}).Increment(); }

void Metrics::redacted(const std::string& detector, std::uint32_t n) {
  impl_->redactions.Add({{"detector", detector}}).Increment(static_cast<double>(n));
}

void Metrics::integrity_change(const std::string& server, std::string_view state) {
  impl_->integrity.Add({{"server", server}, {"state", std::string(state)}}).Increment();
}

void Metrics::set_withheld(double n) { impl_->withheld.Set(n); }

void Metrics::audit_dropped() { impl_->audit_dropped.Increment(); }
void Metrics::spans_exported(std::size_t n) { impl_->spans_exported.Increment(static_cast<double>(n)); }
void Metrics::spans_dropped(std::size_t n) { impl_->spans_dropped.Increment(static_cast<double>(n)); }

std::string Metrics::render() const {
  prometheus::TextSerializer s;
  return s.Serialize(impl_->registry->Collect());
}

}  // namespace mcpgw::server
