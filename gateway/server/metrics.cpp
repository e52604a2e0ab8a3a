#include "server/metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <set>

namespace mcpgw::server {

struct Metrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& messages =
      prometheus::BuildCounter().Name("mcpgw_messages_total").Help("MCP messages received from clients").Register(*registry);
  prometheus::Family<prometheus::Counter>& calls =
      prometheus::BuildCounter().Name("mcpgw_tool_calls_total").Help("Tool calls by origin server and outcome").Register(*registry);
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
};

namespace {
// Methods are client input: only known ones become label values, so a client
// cannot grow the metric set without bound.
const std::set<std::string_view> kKnownMethods = {
    "initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read",
    "resources/templates/list", "prompts/list", "prompts/get", "completion/complete",
    "logging/setLevel", "notifications/initialized", "notifications/cancelled", "response"};
}  // namespace

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {}
Metrics::~Metrics() = default;

void Metrics::message(std::string_view method) {
  std::string m = kKnownMethods.count(method) ? std::string(method) : "other";
  impl_->messages.Add({{"method", m}}).Increment();
}

void Metrics::tool_call(const std::string& server, std::string_view outcome, double seconds) {
  impl_->calls.Add({{"server", server}, {"outcome", std::string(outcome)}}).Increment();
  static const prometheus::Histogram::BucketBoundaries kBuckets = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30};
  impl_->latency.Add({{"server", server}}, kBuckets).Observe(seconds);
}

void Metrics::set_upstream_up(const std::string& server, bool up) {
  impl_->up.Add({{"server", server}}).Set(up ? 1 : 0);
}

void Metrics::set_sessions(double n) { impl_->sessions.Set(n); }

std::string Metrics::render() const {
  prometheus::TextSerializer s;
  return s.Serialize(impl_->registry->Collect());
}

}  // namespace mcpgw::server
