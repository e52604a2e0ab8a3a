// The OAuth step of a call to an upstream whose grant is per principal:
// the caller's token is at hand, exchanged (token_exchange), or the
// caller's consent is asked (authorization_code) in whatever form its
// client speaks: a URL-mode elicitation (streamed, or suspended as an
// input_required URL request or a saga step), the -32042 error, or a result
// whose text carries the link.
#include "upstream/credential.hpp"

#include <spdlog/spdlog.h>

#include "mcp/protocol.hpp"
#include "oauth/flow.hpp"
#include "upstream/upstream.hpp"

namespace mcpgw::upstream {
namespace {

/// URL elicitation required (MCP 2025-11-25, client/elicitation).
constexpr int kUrlElicitationRequired = -32042;

class OAuthCredential final : public transport::Credential {
 public:
  OAuthCredential(std::shared_ptr<oauth::Client> client, std::string principal)
      : client_(std::move(client)), principal_(std::move(principal)) {}

  Task<Result<std::string>> authorization(std::chrono::steady_clock::time_point deadline, CancelSignal* cancel,
                                          const std::string& rejected) override {
    auto got = co_await client_->authorization(principal_, deadline, cancel, rejected);
    if (auto* p = std::get_if<oauth::Problem>(&got)) co_return Error{p->message};
    co_return std::get<std::string>(got);
  }

 private:
  std::shared_ptr<oauth::Client> client_;
  std::string principal_;
};

bool declares_url_elicitation(const json::Value& caps) {
  const json::Value* e = json::find(caps, "elicitation");
  return e && e->IsObject() && json::find(*e, "url");
}

/// A failure as the request answers it: an isError result for a tool call,
/// else a JSON-RPC error.
Reply failure(bool tool_call, const std::string& text) {
  return tool_call ? Reply{false, mcp::tool_error(text)} : Reply::error(jsonrpc::kInternalError, text);
}

}  // namespace

std::shared_ptr<transport::Credential> credential_for(std::shared_ptr<oauth::Client> client, std::string principal) {
  return std::make_shared<OAuthCredential>(std::move(client), std::move(principal));
}

Task<std::optional<Reply>> Upstream::authorize(const CallOptions& opts, bool tool_call) {
  if (!per_principal()) co_return std::nullopt;
  const std::string principal = opts.caller ? opts.caller->principal : std::string();
  if (opts.caller && !opts.caller->subject_token.empty()) oauth_->set_subject(principal, opts.caller->subject_token);
  auto got = co_await oauth_->authorization(principal, opts.deadline, opts.cancel);
  if (std::holds_alternative<std::string>(got)) co_return std::nullopt;
  const auto& problem = std::get<oauth::Problem>(got);
  if (problem.fault == oauth::Fault::ConsentRequired) co_return co_await consent(opts, principal, tool_call);
  co_return failure(tool_call, "mcpgw: upstream '" + cfg_.name + "': " + problem.message);
}

Task<std::optional<Reply>> Upstream::consent(const CallOptions& opts, const std::string& principal, bool tool_call) {
  const std::string session = opts.caller ? opts.caller->session : std::string();
  auto link = co_await oauth_->begin_consent(principal, session, opts.deadline, opts.cancel);
  if (!link) co_return failure(tool_call, "mcpgw: upstream '" + cfg_.name + "': " + link.error());
  const std::string message = "mcpgw needs your authorization to use " + cfg_.name +
                              " on your behalf: open the link, sign in and approve.";
  const std::string later = "open " + link->url + " in a browser, sign in and approve, then call again (the link stays "
                            "valid for " + std::to_string(oauth::kFlowTtl.count() / 60) + " minutes)";
  if (opts.client && opts.client->can_ask()) {
    json::Document p(rapidjson::kObjectType);
    auto& a = p.GetAllocator();
    p.AddMember("mode", "url", a);
    p.AddMember("message", json::str(message, a), a);
    p.AddMember("url", json::str(link->url, a), a);
    p.AddMember("elicitationId", json::str(link->elicitation_id, a), a);
    // One key for this server's consent, whichever link: a replayed call
    // finds the answer its client gave.
    json::Value meta(rapidjson::kObjectType);
    meta.AddMember(json::ref(kInputKey), json::str("mcpgw-oauth-" + cfg_.name, a), a);
    p.AddMember("_meta", meta, a);
    CancelSignal never;
    const std::string method = "elicitation/create";
    Reply answer = co_await opts.client->request(method, &p, opts.deadline, opts.cancel ? *opts.cancel : never);
    auto action = answer.rpc_error ? std::nullopt : json::get_string(answer.body, "action");
    if (action == "accept") {
      // Accepted means the person went to the link; the callback brings the tokens.
      auto done = co_await oauth_->wait_for_tokens(principal, link->elicitation_id, opts.deadline, opts.cancel);
      if (!done)
        // That link is spent (its state completes once): a new call makes a new one.
        co_return failure(tool_call, "mcpgw: upstream '" + cfg_.name + "': " + done.error() +
                                         "; call the tool again for a new authorization link");
      if (!*done)
        co_return failure(tool_call, "mcpgw: the authorization to use " + cfg_.name +
                                         " was not completed within the call's time; when it is, " + later);
      json::Document n(rapidjson::kObjectType);
      n.AddMember("elicitationId", json::str(link->elicitation_id, n.GetAllocator()), n.GetAllocator());
      opts.client->notify("notifications/elicitation/complete", &n);
      co_return std::nullopt;
    }
    if (action)
      co_return failure(tool_call, "mcpgw: the authorization to use " + cfg_.name + " was " +
                                       (*action == "decline" ? "declined" : "cancelled") + "; to give it, " + later);
    // The client cannot take a URL elicitation: the link goes in the answer.
  } else if ((opts.client && declares_url_elicitation(opts.client->capabilities())) || !tool_call) {
    Reply r = Reply::error(kUrlElicitationRequired, "mcpgw: authorization needed to use " + cfg_.name + ": " + later);
    auto& a = r.body.GetAllocator();
    json::Value e(rapidjson::kObjectType);
    e.AddMember("mode", "url", a);
    e.AddMember("elicitationId", json::str(link->elicitation_id, a), a);
    e.AddMember("url", json::str(link->url, a), a);
    e.AddMember("message", json::str(message, a), a);
    json::Value list(rapidjson::kArrayType);
    list.PushBack(e, a);
    json::Value data(rapidjson::kObjectType);
    data.AddMember("elicitations", list, a);
    r.body.AddMember("data", data, a);
    co_return r;
  }
  co_return failure(tool_call, "mcpgw: authorization needed to use " + cfg_.name + " on your behalf: " + later);
}

}  // namespace mcpgw::upstream
