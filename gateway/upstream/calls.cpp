// Upstream's calls: a tools/call through the call filters, any other
// request, the input rounds of a stateless server, the client span's
// description, and the renewal of a connection the send filters ask for.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "mcp/era.hpp"
#include "mcp/protocol.hpp"
#include "mcp/resource_refs.hpp"
#include "upstream/upstream.hpp"

namespace mcpgw::upstream {
namespace {

using Clock = std::chrono::steady_clock;

/// Rounds of input_required a stateless server may ask for one call.
constexpr int kMaxInputRounds = 16;

/// The `error.type` of a request that got no answer.
std::string_view failure_type(transport::Failure f) {
  switch (f) {
    case transport::Failure::Timeout: return "timeout";
    case transport::Failure::Cancelled: return "cancelled";
    case transport::Failure::TooLarge: return "response_too_large";
    default: return "unavailable";
  }
}

}  // namespace

void Upstream::describe_client_span(mcp::Span& span, std::string_view method, const json::Value& params,
                                    const transport::Response& r) const {
  mcp::describe_request(span, method, mcp::target_of(method, &params), &params);
  span.set("mcpgw.server", cfg_.name);
  span.set("network.transport", cfg_.transport == config::Server::Transport::Http ? "tcp" : "pipe");
  if (modern()) span.set("mcp.protocol.version", mcp::kStatelessVersion);
  if (!r.message) {
    span.fail(failure_type(r.failure), r.detail);
    return;
  }
  mcp::set_request_id(span, r.message->id());
  if (const auto* e = r.message->error()) mcp::set_outcome(span, true, *e);
  else if (const auto* res = r.message->result()) mcp::set_outcome(span, false, *res);
}

Task<transport::Response> Upstream::send_rounds(std::string_view method, const json::Document& params,
                                                const CallOptions& opts,
                                                std::vector<std::pair<std::string, std::string>> headers) {
  auto r = co_await send(method, json::clone(params), opts, headers);
  for (int round = 0; round < kMaxInputRounds; ++round) {
    const json::Value* res = r.message ? r.message->result() : nullptr;
    if (!res || json::get_string(*res, "resultType") != "input_required") co_return r;
    // The server needs the client's input before it can answer: ask the
    // client (in whatever form it speaks) and send the request again with
    // the answers and the server's state.
    auto answers = co_await ask_client(*res, opts, "upstream '" + cfg_.name + "'", false);
    if (!answers) co_return failed(r.message->id(), jsonrpc::kInternalError, answers.error());
    if (answers->rpc_error) {
      auto msg = jsonrpc::parse(jsonrpc::make_error_response(r.message->id(), answers->body));
      co_return transport::Response{std::move(msg.messages.front()), transport::Failure::Transport, {}};
    }
    json::Document retry = json::clone(params);
    auto& a = retry.GetAllocator();
    json::set(retry, "inputResponses", json::Value(answers->body, a), a);
    if (const json::Value* state = json::find(*res, "requestState")) json::set(retry, "requestState", json::Value(*state, a), a);
    r = co_await send(method, std::move(retry), opts, headers);
  }
  const json::Value* res = r.message ? r.message->result() : nullptr;
  if (!res || json::get_string(*res, "resultType") != "input_required") co_return r;
  co_return failed(r.message->id(), jsonrpc::kInternalError,
                "mcpgw: upstream '" + cfg_.name + "' asked for client input more than " +
                    std::to_string(kMaxInputRounds) + " times in one call");
}

json::Document Upstream::own_result(const json::Value& result) const {
  json::Document out = json::clone(result);
  // A stateless server's "complete" is the revision's framing, not content:
  // the gateway frames its own answers for each client's revision.
  if (modern() && json::get_string(out, "resultType") == "complete") out.RemoveMember("resultType");
  return out;
}

transport::Response Upstream::failed(const jsonrpc::Id& id, int code, const std::string& message) {
  auto msg = jsonrpc::parse(jsonrpc::make_error(id, code, message));
  return {std::move(msg.messages.front()), transport::Failure::Transport, {}};
}

Task<bool> Upstream::renew(std::shared_ptr<transport::Connection> dead, Clock::time_point deadline) {
  std::uint64_t seen = 0;
  {
    util::MutexLock lk(mu_);
    seen = attempts_;
    if (dead && conn_ == dead) conn_dead_ = true;
  }
  changed_.notify();
  std::function<bool()> settled = [&]() REQUIRES(mu_) {
    return (conn_ && conn_ != dead) || stopping_ || attempts_ > seen;
  };
  bool ready = co_await wait_until(settled, deadline);
  util::MutexLock lk(mu_);
  co_return ready && conn_ && conn_ != dead && !stopping_;
}

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

std::string Upstream::answering_session(const CallOptions& opts) const {
  if (!opts.upstream_session.empty()) return opts.upstream_session;
  auto c = connection();
  return c ? c->session_id() : std::string();
}

Task<Reply> Upstream::request(std::string_view method, const json::Value& params, const CallOptions& opts) {
  InFlight counted(*this);
  if (per_principal() && !child_)
    if (auto instead = co_await authorize(opts, false)) co_return std::move(*instead);
  auto own = co_await for_client(opts);
  if (!own) co_return Reply::error(jsonrpc::kInternalError, own.error());
  if (*own) co_return co_await (*own)->request(method, params, opts);
  json::Document p = json::clone(params);
  auto r = co_await send_rounds(method, p, opts);
  if (!r.message) co_return Reply::error(jsonrpc::kInternalError, r.detail);
  if (const auto* e = r.message->error()) co_return Reply{true, json::clone(*e)};
  const auto* res = r.message->result();
  if (!res || !res->IsObject())
    co_return Reply::error(jsonrpc::kInternalError,
                           "mcpgw: upstream '" + cfg_.name + "' returned a result that is not an object");
  json::Document result = own_result(*res);
  // A task's CallToolResult leaves like a tools/call's: on its own
  // (tasks/result, 2025-11-25) or inlined in the task (tasks/get, 2026-07-28).
  if (cfg_.prefix && method == "tasks/result") mcp::expose_result_refs(cfg_.name, result, result.GetAllocator());
  if (json::Value* inlined = cfg_.prefix && method == "tasks/get" ? json::find(result, "result") : nullptr;
      inlined && inlined->IsObject())
    mcp::expose_result_refs(cfg_.name, *inlined, result.GetAllocator());
  co_return Reply{false, std::move(result), false, answering_session(opts)};
}

}  // namespace mcpgw::upstream
