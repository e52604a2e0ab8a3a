// The stateless revision (2026-07-28): era detection, the per-request
// envelope, multi-round-trip requests (questions answered by the client's
// retry, the answers so far carried in a signed requestState),
// server/discover with its result decoration, and subscriptions/listen.
#include <algorithm>
#include <array>
#include <chrono>
#include <utility>

#include "kit_internal.hpp"
#include "saga/token.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::examples {
namespace {

using detail::kLogLevels;

// The `_meta` keys of the stateless era.
using mcp::kMetaCapabilities;
using mcp::kMetaLogLevel;
using mcp::kMetaServerInfo;
using mcp::kMetaVersion;

/// Caching hints (SEP-2549). server/discover cannot change while the
/// process runs. Lists can (replace_tool, replace_prompt) and resource
/// contents are the readers' business, so those are stale at once; clients
/// that want to cache them listen for list_changed instead. Nothing here
/// depends on who asks, hence "public".
constexpr std::int64_t kDiscoverTtlMs = 300000;
constexpr std::int64_t kListTtlMs = 0;

/// Methods whose stateless results carry ttlMs and cacheScope.
constexpr std::array<std::string_view, 6> kCacheableMethods = {
    "server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"};

/// The protocol versions server/discover lists (and a -32022 names).
json::Value supported_versions(Era era, json::Allocator& a) {
  json::Value list(rapidjson::kArrayType);
  list.PushBack(json::ref(kStatelessVersion), a);
  if (era == Era::Both)
    for (std::string_view v : mcp::kSessionVersions)
      if (v != kStatelessVersion) list.PushBack(json::ref(v), a);
  return list;
}

constexpr const char* kForeignState = "Invalid requestState: it was not issued by this server for this request";

/// The key requestStates are signed with: drawn once per process, since a
/// requestState only has to survive the rounds of one call, which a restart
/// ends anyway. The TTL bounds a round to what a person answering a form
/// takes, with room to spare.
const saga::Keyring& state_keys() {
  static const saga::Keyring keys({}, std::chrono::hours(1));
  return keys;
}

/// What a requestState of `call` is bound to: its kind, the method and the
/// name it continues (no principal: the kit has no auth). Arguments are not
/// bound: a retry is the same call, however its client spells them.
saga::Claims state_claims(const detail::Stateless& call) {
  saga::Claims c;
  c.kind = "kit-mrtr";
  c.target = call.method + " " + call.name;
  return c;
}

/// A requestState: the answers so far and what they belong to, signed by
/// this process. The token's id makes every round's state differ even when
/// the answers do not.
Result<std::string> seal_state(const detail::Stateless& call) {
  saga::Claims c = state_claims(call);
  c.state = json::clone(call.used);
  return state_keys().seal(std::move(c));
}

/// Adds the answers of a requestState made by seal_state for the same call
/// to `call.answers`; the error when it was not. One message for every
/// refusal but expiry: which check failed is no business of a forger's.
std::optional<RpcError> open_state(std::string_view state, detail::Stateless& call) {
  auto opened = state_keys().open(state, state_claims(call));
  if (const auto* refused = std::get_if<saga::Refusal>(&opened)) {
    if (refused->why == saga::Refusal::Why::Expired)
      return RpcError{jsonrpc::kInvalidParams, "Invalid requestState: " + refused->message};
    return RpcError{jsonrpc::kInvalidParams, kForeignState};
  }
  const json::Value& answers = std::get<saga::Claims>(opened).state;
  if (!answers.IsObject())
    return RpcError{jsonrpc::kInvalidParams, kForeignState};
  auto& a = call.answers.GetAllocator();
  for (const auto& m : answers.GetObject())
    json::set(call.answers, std::string_view(m.name.GetString(), m.name.GetStringLength()), json::copy(m.value, a), a);
  return std::nullopt;
}

/// Collects the answers a stateless retry brings (requestState, then
/// inputResponses); the error when either is malformed.
std::optional<RpcError> load_answers(const json::Value& params, detail::Stateless& call) {
  if (const json::Value* state = json::find(params, "requestState")) {
    if (!state->IsString()) return RpcError{jsonrpc::kInvalidParams, "requestState must be a string"};
    if (auto bad = open_state(std::string_view(state->GetString(), state->GetStringLength()), call)) return bad;
  }
  if (const json::Value* responses = json::find(params, "inputResponses")) {
    if (!responses->IsObject())
      return RpcError{jsonrpc::kInvalidParams, "inputResponses must be an object mapping input keys to results"};
    auto& a = call.answers.GetAllocator();
    for (const auto& m : responses->GetObject())
      json::set(call.answers, std::string_view(m.name.GetString(), m.name.GetStringLength()), json::copy(m.value, a),
                a);
  }
  return std::nullopt;
}

/// Completes a stateless result: `resultType`, caching hints on the
/// methods that take them, and the server's identity in `_meta`.
void decorate(json::Document& r, std::string_view method, std::string_view name, std::string_view version) {
  if (!r.IsObject()) return;
  auto& a = r.GetAllocator();
  if (!json::find(r, "resultType")) r.AddMember("resultType", "complete", a);
  if (std::find(kCacheableMethods.begin(), kCacheableMethods.end(), method) != kCacheableMethods.end() &&
      !json::find(r, "ttlMs")) {
    r.AddMember("ttlMs", method == "server/discover" ? kDiscoverTtlMs : kListTtlMs, a);
    r.AddMember("cacheScope", "public", a);
  }
  if (!json::find(r, "_meta")) r.AddMember("_meta", json::Value(rapidjson::kObjectType), a);
  json::Value* meta = json::find(r, "_meta");
  if (!meta->IsObject() || json::find(*meta, kMetaServerInfo)) return;
  json::Value info(rapidjson::kObjectType);
  info.AddMember("name", json::str(name, a), a);
  info.AddMember("version", json::str(version, a), a);
  meta->AddMember(json::ref(kMetaServerInfo), info, a);
}

}  // namespace

/// The answer to a stateless call whose handler is waiting for input: every
/// open question, and the state that brings the answers so far back.
Outcome detail::input_required(const Stateless& call) {
  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  r.AddMember("resultType", "input_required", a);
  json::Value requests(rapidjson::kObjectType);
  for (const auto& q : call.asked) {
    json::Value entry(rapidjson::kObjectType);
    entry.AddMember("method", json::str(q.method, a), a);
    entry.AddMember("params", json::copy(q.params, a), a);
    json::set(requests, q.key, std::move(entry), a);
  }
  r.AddMember("inputRequests", requests, a);
  auto state = seal_state(call);
  if (!state) return RpcError{jsonrpc::kInternalError, "cannot ask the client for input: " + state.error()};
  r.AddMember("requestState", json::str(*state, a), a);
  return r;
}

std::variant<RpcError, std::shared_ptr<Server::Listener>> Server::listen(const jsonrpc::Message& msg,
                                                                         std::function<void(std::string)> writer) {
  const json::Value* filter = msg.params() ? json::find(*msg.params(), "notifications") : nullptr;
  if (!filter || !filter->IsObject())
    return RpcError{jsonrpc::kInvalidParams, "subscriptions/listen needs params.notifications (a SubscriptionFilter)"};
  auto listener = std::make_shared<Listener>();
  listener->id = msg.id();

  // The acknowledgement names what the server agreed to: what was asked
  // for and can actually happen here.
  json::Document ack(rapidjson::kObjectType);
  auto& a = ack.GetAllocator();
  json::Value honoured(rapidjson::kObjectType);
  auto wants = [&](const char* key) {
    const json::Value* v = json::find(*filter, key);
    return v && v->IsBool() && v->GetBool();
  };
  auto honour = [&](const char* key, bool can, bool& flag) {
    if (!can || !wants(key)) return;
    flag = true;
    honoured.AddMember(rapidjson::StringRef(key), true, a);
  };
  honour("toolsListChanged", true, listener->tools);
  honour("promptsListChanged", has_prompts(), listener->prompts);
  honour("resourcesListChanged", has_resources(), listener->resources);
  const json::Value* uris = json::find(*filter, "resourceSubscriptions");
  if (subscriptions_ && has_resources() && uris && uris->IsArray()) {
    json::Value list(rapidjson::kArrayType);
    for (const auto& uri : uris->GetArray()) {
      if (!uri.IsString()) continue;
      listener->uris.emplace(uri.GetString(), uri.GetStringLength());
      list.PushBack(json::copy(uri, a), a);
    }
    honoured.AddMember("resourceSubscriptions", list, a);
  }
  ack.AddMember("notifications", honoured, a);

  if (writer)
    listener->channel.writer = std::move(writer);
  else
    listener->channel.outbox.attach();
  // Acknowledged before it is registered: nothing may precede the ack.
  listener->notify("notifications/subscriptions/acknowledged", &ack);
  util::MutexLock lock(listeners_mutex_);
  listeners_.push_back(listener);
  return listener;
}

void Server::unlisten(const Listener* listener) {
  util::MutexLock lock(listeners_mutex_);
  std::erase_if(listeners_, [&](const auto& l) { return l.get() == listener; });
}

void Server::cancel_listen(const json::Value& id) {
  util::MutexLock lock(listeners_mutex_);
  std::erase_if(listeners_, [&](const auto& l) { return l->id == jsonrpc::Id(id); });
}

bool Server::is_stateless(const jsonrpc::Message& msg, bool header_says_so) const {
  switch (era_) {
    case Era::Legacy:
      return false;
    case Era::Stateless:
      return true;
    case Era::Both:
      break;
  }
  if (header_says_so || (msg.is_request() && msg.method() == "server/discover")) return true;
  const json::Value* params = msg.params();
  const json::Value* meta = params ? json::find(*params, "_meta") : nullptr;
  return meta && json::find(*meta, kMetaVersion);
}


std::optional<RpcError> Server::check_envelope(const jsonrpc::Message& msg, const std::string* header_version,
                                               detail::Stateless& call) const {
  // The order is the one the spec's reference server uses, and clients can
  // tell the cases apart by it: a missing header, missing `_meta` keys, a
  // header that disagrees with `_meta`, and only then a version this
  // server does not speak.
  if (header_version && header_version->empty())
    return RpcError{kHeaderMismatch, "Header mismatch: the required MCP-Protocol-Version header is absent"};
  const json::Value* params = msg.params();
  const json::Value* meta = params ? json::find(*params, "_meta") : nullptr;
  const json::Value* version = meta ? json::find(*meta, kMetaVersion) : nullptr;
  const json::Value* caps = meta ? json::find(*meta, kMetaCapabilities) : nullptr;
  if (!version || !caps) {
    std::string missing;
    for (const auto& [key, value] : {std::pair{kMetaVersion, version}, std::pair{kMetaCapabilities, caps}}) {
      if (value) continue;
      if (!missing.empty()) missing += ", ";
      missing += key;
    }
    return RpcError{jsonrpc::kInvalidParams, "Invalid params: missing _meta keys: " + missing};
  }
  if (!version->IsString())
    return RpcError{jsonrpc::kInvalidParams, "Invalid params: _meta protocolVersion must be a string"};
  if (!caps->IsObject())
    return RpcError{jsonrpc::kInvalidParams, "Invalid params: _meta clientCapabilities must be an object"};
  const std::string_view claimed(version->GetString(), version->GetStringLength());
  if (header_version && *header_version != claimed)
    return RpcError{kHeaderMismatch, "Header mismatch: the MCP-Protocol-Version header names " + *header_version +
                                         " but _meta names " + std::string(claimed)};
  if (claimed != kStatelessVersion) {
    json::Document data(rapidjson::kObjectType);
    auto& a = data.GetAllocator();
    data.AddMember("supported", supported_versions(era_, a), a);
    data.AddMember("requested", json::str(claimed, a), a);
    return RpcError{kUnsupportedProtocolVersion, "Unsupported protocol version: " + std::string(claimed), data};
  }
  if (const json::Value* level = json::find(*meta, kMetaLogLevel)) {
    const std::string_view name = level->IsString() ? std::string_view(level->GetString(), level->GetStringLength())
                                                    : std::string_view();
    auto it = std::find(kLogLevels.begin(), kLogLevels.end(), name);
    if (it == kLogLevels.end())
      return RpcError{jsonrpc::kInvalidParams, "Invalid params: _meta logLevel must be one of debug, info, notice, "
                                               "warning, error, critical, alert, emergency"};
    call.log_level = static_cast<int>(it - kLogLevels.begin());
  }
  call.capabilities = json::clone(*caps);
  return std::nullopt;
}

Outcome Server::dispatch_stateless(const jsonrpc::Message& msg, detail::Stateless& call,
                                   const CallContext::Send& send) {
  const std::string_view method = msg.method();
  if (method == "tools/call" || method == "prompts/get") {
    // check_envelope saw `_meta`, so there are params.
    const json::Value& params = *msg.params();
    call.method = method;
    call.name = json::get_string(params, "name").value_or("");
    if (auto bad = load_answers(params, call)) return std::move(*bad);
  }
  Outcome out = handle(msg, nullptr, &call, send);
  if (auto* result = std::get_if<json::Document>(&out)) decorate(*result, method, name_, version_);
  return out;
}

Outcome Server::discover() const {
  // serverInfo goes into `_meta` with every stateless result (decorate).
  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  r.AddMember("supportedVersions", supported_versions(era_, a), a);
  r.AddMember("capabilities", capabilities(a), a);
  if (!instructions_.empty()) r.AddMember("instructions", json::str(instructions_, a), a);
  return r;
}

}  // namespace mcpgw::examples
