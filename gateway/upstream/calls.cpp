// A server's calls: a tools/call through the call filters, outermost
// first: the circuit breaker (BreakerFilter), max_concurrency
// (LimiterFilter), and the request on the caller's link (RequestFilter);
// any other request on that link.
#include <spdlog/spdlog.h>

#include "mcp/protocol.hpp"
#include "upstream/upstream.hpp"

namespace mcpgw::upstream {

void Upstream::circuit_changed(Breaker::State state) {
  if (state == Breaker::State::Open)
    spdlog::warn("upstream {}: circuit open: {} consecutive calls failed; calls fail fast for {} ms, then one probe "
                 "call goes through",
                 cfg_.name, cfg_.circuit.failures, cfg_.circuit.open_ms);
  else if (state == Breaker::State::Closed)
    spdlog::info("upstream {}: circuit closed: the probe call succeeded", cfg_.name);
  listener_.on_circuit(cfg_.name, state);
}

Task<Reply> Upstream::call_tool(std::string_view tool, const json::Value* arguments, const json::Value* meta,
                                const CallOptions& opts) {
  InFlight counted(*this);
  ToolCall call{tool, arguments, meta, opts};
  co_return co_await ToolNext(call_chain_.order)(call);
}

Task<Reply> Upstream::request(std::string_view method, const json::Value& params, const CallOptions& opts) {
  InFlight counted(*this);
  if (per_principal())
    if (auto instead = co_await authorize(opts, false)) co_return std::move(*instead);
  auto link = co_await link_for(opts);
  if (!link) co_return Reply::error(jsonrpc::kInternalError, link.error());
  co_return co_await (*link)->request(method, params, opts);
}

/// The circuit breaker (`servers[].circuit`): while it is open a call
/// fails fast, naming the server; once `open_ms` passed, one call probes.
/// The outcome of an admitted call is what it counts, unless its client
/// gave up or a filter after it refused the call: those say nothing of the
/// server, and a probe that ends so lets the next call probe.
class Upstream::BreakerFilter final : public ToolFilter {
 public:
  explicit BreakerFilter(Upstream& u) : u_(u) {}

  Task<Reply> on_call(ToolCall& call, ToolNext next) override {
    std::string why;
    auto ticket = u_.breaker_.admit(why);
    if (!ticket) co_return Reply{false, mcp::tool_error("mcpgw: upstream '" + u_.cfg_.name + "' is failing: " + why)};
    if (ticket->probe) {
      spdlog::info("upstream {}: circuit half-open: probing with a call of {}", u_.cfg_.name, call.tool);
      u_.listener_.on_circuit(u_.cfg_.name, Breaker::State::HalfOpen);
    }
    Reply r = co_await next(call);
    if (call.refused || (call.opts.cancel && call.opts.cancel->cancelled())) u_.breaker_.release(*ticket);
    else if (auto changed = u_.breaker_.record(*ticket, !r.server_failed)) u_.circuit_changed(*changed);
    co_return r;
  }

 private:
  Upstream& u_;
};

/// `servers[].max_concurrency`: the call waits in line for a slot, until
/// its deadline or cancellation, and holds it until it ends.
class Upstream::LimiterFilter final : public ToolFilter {
 public:
  explicit LimiterFilter(Upstream& u) : u_(u) {}

  Task<Reply> on_call(ToolCall& call, ToolNext next) override {
    auto slot = co_await u_.limiter_.acquire(call.opts.deadline, call.opts.cancel);
    if (!slot) {
      call.refused = true;
      co_return Reply{false, mcp::tool_error("mcpgw: upstream '" + u_.cfg_.name + "' " + slot.error())};
    }
    co_return co_await next(call);
  }

 private:
  Upstream& u_;
};

/// The request itself: the OAuth step of a per-principal server, then the
/// tools/call on the link the caller's calls take (its own, per client or
/// principal, or the shared one).
class Upstream::RequestFilter final : public ToolFilter {
 public:
  explicit RequestFilter(Upstream& u) : u_(u) {}

  /// Not a coroutine for a call on the shared link: it has nothing to do
  /// around it.
  Task<Reply> on_call(ToolCall& call, ToolNext) override {
    if (!u_.own_links()) return u_.shared_->call_tool(call.tool, call.arguments, call.meta, call.opts);
    return on_own_link(call);
  }

 private:
  Task<Reply> on_own_link(ToolCall& call) {
    if (u_.per_principal())
      if (auto instead = co_await u_.authorize(call.opts)) co_return std::move(*instead);
    auto link = co_await u_.link_for(call.opts);
    if (!link) co_return Reply{false, mcp::tool_error(link.error())};
    co_return co_await (*link)->call_tool(call.tool, call.arguments, call.meta, call.opts);
  }

  Upstream& u_;
};

Chain<ToolFilter> Upstream::call_filters() {
  Chain<ToolFilter> chain;
  // A breaker or limiter not configured costs a call nothing.
  if (breaker_.enabled()) chain.add(std::make_unique<BreakerFilter>(*this));
  if (cfg_.max_concurrency > 0) chain.add(std::make_unique<LimiterFilter>(*this));
  chain.add(std::make_unique<RequestFilter>(*this));
  return chain;
}

}  // namespace mcpgw::upstream
