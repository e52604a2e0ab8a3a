// What handlers use: the CallContext a talking tool or prompt reaches its
// client through (progress, log messages, questions in either era), and the
// helpers they build results and read arguments with.
#include <charconv>
#include <chrono>
#include <future>
#include <utility>

#include "kit_internal.hpp"

namespace mcpgw::examples {
namespace {

using namespace std::chrono_literals;
using detail::parse_or_throw;

/// How long a tool waits for the client to answer a server-to-client request
/// (sampling, elicitation): long enough for a person to answer a short form,
/// short enough that a client that never answers does not pin a thread.
constexpr auto kClientRequestTimeout = 30s;

/// Name a stateful-era request to the client the way the stateless era's
/// inputRequests would, and say how many go out together, so a gateway
/// bridging the call to a stateless client keeps the handler's keys and
/// hands the questions out in one round.
constexpr std::string_view kMetaInputKey = "mcpgw/inputKey";
constexpr std::string_view kMetaInputBatch = "mcpgw/inputBatch";

/// Integral numbers as JSON integers (50, not 50.0): what a client written
/// in any language reads back as the number it expects.
json::Value number(double v) {
  if (v == static_cast<double>(static_cast<std::int64_t>(v))) return json::Value(static_cast<std::int64_t>(v));
  return json::Value(v);
}

/// The client capability a request to the client needs, if it is one MCP
/// gates behind a capability.
std::optional<std::string_view> capability_for(std::string_view method) {
  if (method == "sampling/createMessage") return "sampling";
  if (method == "elicitation/create") return "elicitation";
  if (method == "roots/list") return "roots";
  return std::nullopt;
}

RpcError missing_capability(std::string_view capability, std::string_view method) {
  return RpcError{kMissingClientCapability,
                  "The client did not declare the " + std::string(capability) + " capability, so it cannot be asked " +
                      std::string(method),
                  R"({"requiredCapabilities":{)" + json::quote(capability) + ":{}}}"};
}

}  // namespace

// ---------------------------------------------------------------------------
// CallContext

CallContext::CallContext(Send send, const json::Value* progress_token, detail::Session* session,
                         detail::Stateless* stateless)
    : send_(std::move(send)), session_(session), stateless_(stateless) {
  if (progress_token) progress_token_ = json::clone(*progress_token);
}

void CallContext::progress(double progress, std::optional<double> total, std::string_view message) {
  if (!has_progress_token()) return;
  json::Document params(rapidjson::kObjectType);
  auto& a = params.GetAllocator();
  params.AddMember("progressToken", json::copy(progress_token_, a), a);
  params.AddMember("progress", number(progress), a);
  if (total) params.AddMember("total", number(*total), a);
  if (!message.empty()) params.AddMember("message", json::str(message, a), a);
  send_(jsonrpc::make_notification("notifications/progress", &params));
}

void CallContext::log(LogLevel level, std::string_view message, std::string_view logger) {
  // A stateless request opts in to log messages per request; a session
  // gets them all until it sets a level.
  if (stateless_ && !stateless_->log_level) return;
  const int threshold = stateless_ ? *stateless_->log_level : session_->log_level.load();
  if (static_cast<int>(level) < threshold) return;
  json::Document params(rapidjson::kObjectType);
  auto& a = params.GetAllocator();
  params.AddMember("level", json::ref(detail::kLogLevels[static_cast<std::size_t>(level)]), a);
  if (!logger.empty()) params.AddMember("logger", json::str(logger, a), a);
  params.AddMember("data", json::str(message, a), a);
  send_(jsonrpc::make_notification("notifications/message", &params));
}

bool CallContext::client_supports(std::string_view name) const {
  if (session_) return session_->client_supports(name);
  const json::Value* cap = json::find(stateless_->capabilities, name);
  return cap && cap->IsObject();
}

bool CallContext::client_declares(std::string_view id) const {
  json::Document caps = session_ ? session_->client_capabilities() : json::clone(stateless_->capabilities);
  const json::Value* extensions = json::find(caps, "extensions");
  const json::Value* ext = extensions ? json::find(*extensions, id) : nullptr;
  return ext && ext->IsObject();
}

Outcome CallContext::request(std::string_view method, const json::Value& params, std::string_view key) {
  InputAnswers answers = ask({Ask{key, method, params}});
  return std::move(answers.begin()->second);
}

InputAnswers CallContext::request_all(const std::vector<InputRequest>& requests) {
  std::vector<json::Document> params;
  params.reserve(requests.size());
  for (const InputRequest& r : requests)
    params.push_back(r.params.empty() ? json::Document(rapidjson::kObjectType) : parse_or_throw(r.params, r.key));
  std::vector<Ask> asks;
  for (std::size_t i = 0; i < requests.size(); ++i) asks.push_back(Ask{requests[i].key, requests[i].method, params[i]});
  return ask(asks);
}

InputAnswers CallContext::ask(const std::vector<Ask>& asks) {
  if (session_) return ask_session(asks);
  detail::Stateless& call = *stateless_;
  InputAnswers out;
  for (const Ask& q : asks) {
    if (const json::Value* given = json::find(call.answers, q.key)) {
      if (!given->IsObject()) {
        out.emplace(q.key, RpcError{jsonrpc::kInvalidParams, "inputResponses[" + json::quote(q.key) +
                                                                 "] must be an object: the client's answer to " +
                                                                 std::string(q.method)});
        continue;
      }
      json::set(call.used, q.key, json::copy(*given, call.used.GetAllocator()), call.used.GetAllocator());
      out.emplace(q.key, json::clone(*given));
      continue;
    }
    const auto capability = capability_for(q.method);
    if (!capability) {
      out.emplace(q.key, RpcError{jsonrpc::kInternalError,
                                  std::string(q.method) + " is not a request a stateless server can ask the client"});
      continue;
    }
    if (!client_supports(*capability)) {
      out.emplace(q.key, missing_capability(*capability, q.method));
      continue;
    }
    call.asked.push_back({std::string(q.key), std::string(q.method), json::clone(q.params)});
  }
  if (!call.asked.empty()) throw detail::InputRequired{};
  return out;
}

InputAnswers CallContext::ask_session(const std::vector<Ask>& asks) {
  struct Waiting {
    std::string_view key;
    std::string_view method;
    std::int64_t id;
    std::future<Outcome> answer;
  };
  InputAnswers out;
  std::vector<Waiting> waiting;
  // All questions go out before any answer is awaited: the client may
  // answer them in any order, and the timeout bounds them together.
  for (const Ask& q : asks) {
    if (auto capability = capability_for(q.method); capability && !client_supports(*capability)) {
      out.emplace(q.key, missing_capability(*capability, q.method));
      continue;
    }
    json::Document params = json::clone(q.params);
    if (!params.IsObject()) params.SetObject();
    auto& a = params.GetAllocator();
    if (const json::Value* meta = json::find(params, "_meta"); !meta || !meta->IsObject())
      json::set(params, "_meta", json::Value(rapidjson::kObjectType), a);
    json::Value& meta = *json::find(params, "_meta");
    json::set(meta, kMetaInputKey, json::str(q.key, a), a);
    json::set(meta, kMetaInputBatch, json::Value(static_cast<unsigned>(asks.size())), a);
    // The call's progress token ties the request to the call (as the
    // official SDKs do), so a gateway in front knows whose client to ask.
    if (!progress_token_.IsNull()) json::set(meta, "progressToken", json::copy(progress_token_, a), a);
    auto [request_id, answer] = session_->begin_request();
    if (!send_(jsonrpc::make_request(request_id, q.method, &params))) {
      session_->abandon(request_id);
      out.emplace(q.key, RpcError{jsonrpc::kInternalError,
                                  "this transport cannot send " + std::string(q.method) +
                                      " to the client (over HTTP it needs a POST answered as an SSE stream)"});
      continue;
    }
    waiting.push_back({q.key, q.method, request_id, std::move(answer)});
  }
  const auto deadline = std::chrono::steady_clock::now() + kClientRequestTimeout;
  for (Waiting& w : waiting) {
    if (w.answer.wait_until(deadline) != std::future_status::ready) {
      session_->abandon(w.id);
      out.emplace(w.key, RpcError{jsonrpc::kInternalError,
                                  "the client did not answer " + std::string(w.method) + " within " +
                                      std::to_string(std::chrono::seconds(kClientRequestTimeout).count()) + " s"});
      continue;
    }
    out.emplace(w.key, w.answer.get());
  }
  return out;
}

// ---------------------------------------------------------------------------
// Result and argument helpers

void set_json(json::Document& result, std::string_view key, std::string_view json_text) {
  json::Document value = parse_or_throw(std::string(json_text), key);
  json::set(result, key, json::copy(value, result.GetAllocator()), result.GetAllocator());
}

json::Document parse_json(std::string_view json_text) {
  return parse_or_throw(std::string(json_text), "JSON text");
}

std::optional<double> get_number(const json::Value& args, std::string_view key) {
  const json::Value* v = json::find(args, key);
  if (!v || !v->IsNumber()) return std::nullopt;
  return v->GetDouble();
}

std::optional<std::int64_t> get_int(const json::Value& args, std::string_view key) {
  const json::Value* v = json::find(args, key);
  if (!v || !v->IsInt64()) return std::nullopt;
  return v->GetInt64();
}

std::string format_number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

std::optional<TemplateVars> match_uri_template(std::string_view uri_template, std::string_view uri) {
  TemplateVars vars;
  std::size_t t = 0;
  std::size_t u = 0;
  while (t < uri_template.size()) {
    if (uri_template[t] != '{') {
      if (u >= uri.size() || uri[u] != uri_template[t]) return std::nullopt;
      ++t;
      ++u;
      continue;
    }
    const std::size_t close = uri_template.find('}', t);
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view name = uri_template.substr(t + 1, close - t - 1);
    t = close + 1;
    // The value runs to the next literal character of the template (or the
    // end) and never spans a path segment.
    const char stop = t < uri_template.size() ? uri_template[t] : '/';
    std::size_t end = u;
    while (end < uri.size() && uri[end] != '/' && uri[end] != stop) ++end;
    if (end == u) return std::nullopt;
    vars.emplace(name, uri.substr(u, end - u));
    u = end;
  }
  if (u != uri.size()) return std::nullopt;
  return vars;
}

}  // namespace mcpgw::examples
