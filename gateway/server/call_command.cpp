#include "server/call_command.hpp"

#include <spdlog/spdlog.h>

#include <future>
#include <ostream>

#include "jsonrpc/message.hpp"
#include "mcp/protocol.hpp"
#include "server/gateway.hpp"
#include "transport/downstream.hpp"

namespace mcpgw::server {
namespace {

/// The one request in flight: its reply, handed to the waiting thread.
class Waiting final : public transport::Exchange {
 public:
  /// Requests the server sends mid-call (elicitation, sampling) cannot
  /// reach anyone: refused, so the call goes on without them.
  bool send(std::string) override { return false; }
  bool can_send() const override { return false; }
  void reply(SplicedText response, int) override { done_.set_value(std::move(response).flatten()); }
  std::future<std::string> answer() { return done_.get_future(); }

 private:
  std::promise<std::string> done_;
};

/// Sends request `text` to `h` for `session` and waits for its reply.
Result<json::Document> request(transport::Handler& h, const std::shared_ptr<transport::Session>& session,
                               const std::string& text) {
  auto parsed = json::parse(text);
  if (!parsed) return Error{parsed.error()};
  auto msg = jsonrpc::Message::from(std::move(*parsed), text);
  if (!msg) return Error{msg.error()};
  auto ex = std::make_shared<Waiting>();
  auto answer = ex->answer();
  h.handle(session, std::move(*msg), ex);
  auto reply = json::parse(answer.get());
  if (!reply) return Error{"the gateway answered with invalid JSON: " + reply.error()};
  return std::move(*reply);
}

}  // namespace

int run_call(config::Config cfg, const CallCommand& call, std::ostream& out, std::ostream& err) {
  auto args = json::parse(call.arguments);
  if (!args || !args->IsObject()) {
    err << "mcpgw: ARGS_JSON must be a JSON object, got: " << call.arguments << "\n";
    return 2;
  }
  const std::string source = cfg.source;
  // One I/O thread: one client, as with --stdio.
  Gateway gw(std::move(cfg), 1);
  if (!gw.startup_error().empty()) {
    err << "mcpgw: " << source << ": " << gw.startup_error() << "\n";
    return 2;
  }
  gw.start_upstreams();
  if (auto checked = gw.await_upstreams(); !checked) {
    err << "mcpgw: " << source << ": " << checked.error() << "\n";
    return 2;
  }
  transport::ClientContext ctx;
  ctx.mode = call.mode;
  ctx.principal = call.principal;
  transport::Handler& h = gw.handler();
  auto opened = h.open_session(ctx);
  if (!opened) {
    err << "mcpgw: " << opened.error() << "\n";
    return 2;
  }
  std::shared_ptr<transport::Session> session = std::move(*opened);
  // Notifications outside the call (list_changed) have nobody to go to.
  session->bind("mcpgw-call", ctx, [](std::string) { return true; });

  json::Document init(rapidjson::kObjectType);
  {
    auto& a = init.GetAllocator();
    json::Value params(rapidjson::kObjectType);
    params.AddMember("protocolVersion", json::str(mcp::kLatestVersion, a), a);
    params.AddMember("capabilities", json::Value(rapidjson::kObjectType), a);
    json::Value info(rapidjson::kObjectType);
    info.AddMember("name", "mcpgw-call", a);
    info.AddMember("version", json::str(MCPGW_VERSION, a), a);
    params.AddMember("clientInfo", info, a);
    init.AddMember("jsonrpc", "2.0", a);
    init.AddMember("id", 1, a);
    init.AddMember("method", "initialize", a);
    init.AddMember("params", params, a);
  }
  int code = 1;
  auto initialized = request(h, session, json::write(init));
  if (!initialized || json::find(*initialized, "error")) {
    err << "mcpgw: initialize failed: " << (initialized ? json::write(*initialized) : initialized.error()) << "\n";
  } else {
    const std::string note = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";
    if (auto parsed = json::parse(note))
      if (auto m = jsonrpc::Message::from(std::move(*parsed), note)) h.handle(session, std::move(*m), nullptr);
    json::Document req(rapidjson::kObjectType);
    auto& a = req.GetAllocator();
    json::Value params(rapidjson::kObjectType);
    params.AddMember("name", json::str(call.tool, a), a);
    params.AddMember("arguments", json::copy(*args, a), a);
    req.AddMember("jsonrpc", "2.0", a);
    req.AddMember("id", 2, a);
    req.AddMember("method", "tools/call", a);
    req.AddMember("params", params, a);
    auto answered = request(h, session, json::write(req));
    if (!answered) {
      err << "mcpgw: " << answered.error() << "\n";
    } else if (const json::Value* e = json::find(*answered, "error")) {
      out << json::write(*e) << "\n";
    } else if (const json::Value* r = json::find(*answered, "result")) {
      out << json::write(*r) << "\n";
      const json::Value* is_error = json::find(*r, "isError");
      code = is_error && is_error->IsTrue() ? 1 : 0;
    }
  }
  h.close_session(session);
  return code;
}

}  // namespace mcpgw::server
