#include "upstream/origin.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>

#include <atomic>
#include <vector>

namespace mcpgw::upstream {

Task<Result<Reply>> ask_client(const json::Value& result, const CallOptions& opts, std::string who,
                               bool errors_as_answers) {
  const json::Value* requests = json::find(result, "inputRequests");
  Reply out{false, json::Document(rapidjson::kObjectType)};
  if (!requests || !requests->IsObject() || requests->ObjectEmpty()) co_return out;
  if (!opts.client) co_return Error{"mcpgw: " + who + " asked for client input, but this call has no client to ask"};
  struct Ask {
    std::string key, method;
    json::Document params;
    Reply reply;
  };
  std::vector<Ask> asks;
  for (const auto& m : requests->GetObject()) {
    auto method = json::get_string(m.value, "method");
    if (!method) co_return Error{"mcpgw: " + who + " sent an input request without a method"};
    Ask ask{m.name.GetString(), std::string(*method), json::Document(rapidjson::kObjectType), {}};
    if (const json::Value* p = json::find(m.value, "params"); p && p->IsObject())
      ask.params = json::clone(*p);
    // The questions go out together, under the asker's own keys.
    auto& a = ask.params.GetAllocator();
    json::Value& meta = json::object_member(ask.params, "_meta", a);
    json::set(meta, "mcpgw/inputKey", json::str(ask.key, a), a);
    json::set(meta, "mcpgw/inputBatch", json::Value(static_cast<unsigned>(requests->MemberCount())), a);
    asks.push_back(std::move(ask));
  }
  CancelSignal none;
  CancelSignal& cancel = opts.cancel ? *opts.cancel : none;
  if (asks.size() == 1) {
    asks[0].reply = co_await opts.client->request(asks[0].method, &asks[0].params, opts.deadline, cancel);
  } else {
    // Asked at once, each in its own coroutine; this frame outlives them
    // all (it waits for the last).
    Event answered;
    std::atomic<std::size_t> left{asks.size()};
    auto ex = co_await asio::this_coro::executor;
    for (auto& ask : asks)
      asio::co_spawn(
          ex,
          [&]() -> Task<> {
            ask.reply = co_await opts.client->request(ask.method, &ask.params, opts.deadline, cancel);
            if (--left == 0) answered.notify();
          },
          asio::detached);
    for (;;) {
      const auto seen = answered.generation();
      if (left == 0) break;
      co_await answered.wait(seen, std::chrono::steady_clock::time_point::max());
    }
  }
  auto& a = out.body.GetAllocator();
  for (auto& ask : asks) {
    if (ask.reply.rpc_error && !errors_as_answers) co_return std::move(ask.reply);
    json::Value answer(ask.reply.body, a);
    if (ask.reply.rpc_error) {
      json::Value wrapped(rapidjson::kObjectType);
      wrapped.AddMember("error", answer, a);
      answer = std::move(wrapped);
    }
    out.body.AddMember(json::str(ask.key, a), answer, a);
  }
  co_return out;
}

}  // namespace mcpgw::upstream

namespace mcpgw::upstream {

void Reply::materialize() {
  if (!raw) return;
  auto parsed = json::parse(raw->result);
  // The scan accepted these bytes, so the parser does too.
  if (parsed) body = std::move(*parsed);
  raw.reset();
}

std::string_view outcome_of(const Reply& r, const CallOptions& opts) {
  if (opts.cancel && opts.cancel->cancelled()) return "cancelled";
  if (!r.rpc_error && !r.tool_error()) return "ok";
  if (std::chrono::steady_clock::now() >= opts.deadline) return "timeout";
  return "error";
}

}  // namespace mcpgw::upstream
