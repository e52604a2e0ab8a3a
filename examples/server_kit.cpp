#include "server_kit.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <future>
#include <iomanip>
#include <iostream>
#include <list>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include "mcp/protocol.hpp"
#include "transport/http_listener.hpp"
#include "transport/io.hpp"
#include "util/worker_pool.hpp"
#include "util/random.hpp"

namespace mcpgw::examples {
namespace {

using namespace std::chrono_literals;

/// How long a tool waits for the client to answer a server-to-client request
/// (sampling, elicitation): long enough for a person to answer a short form,
/// short enough that a client that never answers does not pin a thread.
constexpr auto kClientRequestTimeout = 30s;

constexpr std::array<std::string_view, 8> kLogLevels = {
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};

// The `_meta` keys of the stateless era.
using mcp::kMetaCapabilities;
using mcp::kMetaLogLevel;
using mcp::kMetaServerInfo;
using mcp::kMetaSubscriptionId;
using mcp::kMetaVersion;
/// Name a stateful-era request to the client the way the stateless era's
/// inputRequests would, and say how many go out together, so a gateway
/// bridging the call to a stateless client keeps the handler's keys and
/// hands the questions out in one round.
constexpr std::string_view kMetaInputKey = "mcpgw/inputKey";
constexpr std::string_view kMetaInputBatch = "mcpgw/inputBatch";

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

void log_line(std::string_view what) { std::cerr << what << std::endl; }

json::Document parse_or_throw(const JsonText& text, std::string_view what) {
  auto doc = json::parse(text.text());
  if (!doc) throw std::invalid_argument(std::string(what) + ": " + doc.error());
  return std::move(*doc);
}

/// Integral numbers as JSON integers (50, not 50.0): what a client written
/// in any language reads back as the number it expects.
json::Value number(double v) {
  if (v == static_cast<double>(static_cast<std::int64_t>(v))) return json::Value(static_cast<std::int64_t>(v));
  return json::Value(v);
}

/// Runs a registered handler; a throwing one is a bug in the server, not in
/// the caller's input, hence an internal error. Only std::exception is
/// caught: the stateless era's unwinding (detail::InputRequired) passes.
template <typename F>
Outcome guarded(F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const std::exception& e) {
    return RpcError{jsonrpc::kInternalError, std::string("Internal error: ") + e.what()};
  }
}

std::string answer(const json::Value& id, Outcome out) {
  if (auto* err = std::get_if<RpcError>(&out)) {
    if (err->data.empty()) return jsonrpc::make_error(id, err->code, err->message);
    auto data = json::parse(err->data.text());
    if (data) return jsonrpc::make_error(id, err->code, err->message, &*data);
    // A handler's bug; the error itself still tells the client what failed.
    log_line("dropping the malformed data of error " + std::to_string(err->code) + ": " + data.error());
    return jsonrpc::make_error(id, err->code, err->message);
  }
  return jsonrpc::make_result(id, std::get<json::Document>(out));
}

json::Document empty_result() { return json::Document(rapidjson::kObjectType); }

/// Adds the optional descriptive members shared by resources, templates and prompts.
void add_optional(json::Value& def, const char* key, const std::string& value, json::Allocator& a) {
  if (!value.empty()) def.AddMember(json::ref(key), json::str(value, a), a);
}

/// The HTTP status of a stateless answer with JSON-RPC error `code`
/// (2026-07-28 Streamable HTTP): 404 for an unknown method, 400 for the
/// errors about the request's envelope and headers, else 200 like any
/// answer. `envelope` marks errors of the envelope checks, whose -32602
/// (missing `_meta` keys) is a bad request too.
int http_status(int code, bool envelope) {
  switch (code) {
    case jsonrpc::kMethodNotFound:
      return 404;
    case kHeaderMismatch:
    case kMissingClientCapability:
    case kUnsupportedProtocolVersion:
      return 400;
    case jsonrpc::kInvalidParams:
      return envelope ? 400 : 200;
    default:
      return 200;
  }
}

int http_status(const Outcome& out) {
  const auto* err = std::get_if<RpcError>(&out);
  return err ? http_status(err->code, false) : 200;
}

/// The protocol versions server/discover lists (and a -32022 names).
json::Value supported_versions(Era era, json::Allocator& a) {
  json::Value list(rapidjson::kArrayType);
  list.PushBack(json::ref(kStatelessVersion), a);
  if (era == Era::Both)
    for (std::string_view v : mcp::kSessionVersions)
      if (v != kStatelessVersion) list.PushBack(json::ref(v), a);
  return list;
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

// ---------------------------------------------------------------------------
// Base64 and requestState integrity

constexpr std::string_view kBase64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64_encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < in.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, in.size() - i);
    std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << 16;
    if (n > 1) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i + 1])) << 8;
    if (n > 2) v |= static_cast<unsigned char>(in[i + 2]);
    for (std::size_t j = 0; j < 4; ++j) out.push_back(j <= n ? kBase64[(v >> (18 - 6 * j)) & 63] : '=');
  }
  return out;
}

/// Strict RFC 4648 base64: padded, standard alphabet, and canonical (the
/// bits the padding drops are zero), so one text has one encoding; nullopt
/// otherwise.
std::optional<std::string> base64_decode(std::string_view in) {
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (std::size_t i = 0; i < in.size(); i += 4) {
    std::array<std::uint32_t, 4> six{};
    int pad = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const char c = in[i + j];
      if (c == '=') {
        if (i + 4 != in.size() || j < 2) return std::nullopt;
        ++pad;
        continue;
      }
      if (pad) return std::nullopt;
      const std::size_t pos = kBase64.find(c);
      if (pos == std::string_view::npos) return std::nullopt;
      six[j] = static_cast<std::uint32_t>(pos);
    }
    if ((pad == 1 && (six[2] & 3) != 0) || (pad == 2 && (six[1] & 15) != 0)) return std::nullopt;
    const std::uint32_t v = six[0] << 18 | six[1] << 12 | six[2] << 6 | six[3];
    out.push_back(static_cast<char>(v >> 16));
    if (pad < 2) out.push_back(static_cast<char>((v >> 8) & 255));
    if (pad < 1) out.push_back(static_cast<char>(v & 255));
  }
  return out;
}

/// HMAC-SHA256 of `data` under a key drawn once per process: a requestState
/// only has to survive the rounds of one call, which a restart ends anyway.
std::string state_mac(std::string_view data) {
  static const std::array<unsigned char, 32> key = [] {
    std::array<unsigned char, 32> k{};
    if (RAND_bytes(k.data(), static_cast<int>(k.size())) != 1) throw std::runtime_error("RAND_bytes failed");
    return k;
  }();
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), mac.data(), &len);
  return std::string(reinterpret_cast<const char*>(mac.data()), len);
}

}  // namespace

// ---------------------------------------------------------------------------
// Sessions, stateless calls, listen streams

namespace detail {

/// The SSE frame of one message on a standalone or POST stream.
std::string sse_event(std::string_view data) {
  std::string frame = "event: message\ndata: ";
  frame.append(data);
  frame.append("\n\n");
  return frame;
}

/// Messages waiting for a standalone stream (HTTP only): a session's GET
/// stream or a subscriptions/listen response. At most one stream is
/// attached; without one, unsolicited messages are dropped (the spec lets a
/// server send them only on such a stream). Messages queue here until the
/// stream's writer binds its queue, then go straight to it.
class Outbox {
 public:
  /// Reserves the outbox for one stream; false when taken or closed.
  bool attach() {
    std::lock_guard lock(mutex_);
    if (attached_ || closed_) return false;
    attached_ = true;
    return true;
  }
  /// The attached stream's writer is ready: what waited goes first.
  void bind(std::shared_ptr<transport::http::StreamQueue> stream) {
    std::lock_guard lock(mutex_);
    stream_ = std::move(stream);
    for (auto& m : queue_) stream_->push(sse_event(m));
    queue_.clear();
    if (closed_) end_stream();
  }
  void detach() {
    std::lock_guard lock(mutex_);
    attached_ = false;
    queue_.clear();
    stream_.reset();
  }
  bool push(std::string msg) {
    std::lock_guard lock(mutex_);
    if (!attached_ || closed_) return false;
    if (stream_) return stream_->push(sse_event(msg));
    queue_.push_back(std::move(msg));
    return true;
  }
  /// Ends the stream once what is queued, then `last` (if any), is written.
  void close(std::string last = {}) {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    last_ = std::move(last);
    if (stream_) end_stream();
  }

 private:
  void end_stream() {
    if (!last_.empty()) stream_->push(sse_event(last_));
    stream_->close();
  }
  std::mutex mutex_;
  std::deque<std::string> queue_;
  std::shared_ptr<transport::http::StreamQueue> stream_;
  std::string last_;
  bool attached_ = false;
  bool closed_ = false;
};

/// The way to reach a client outside of a call: over stdio a write to
/// stdout, over HTTP the outbox that feeds a standalone stream.
struct Channel {
  /// Set (over stdio) before the owner is shared; unset over HTTP.
  std::function<void(std::string)> writer;
  Outbox outbox;

  bool notify(std::string msg) {
    if (writer) {
      writer(std::move(msg));
      return true;
    }
    return outbox.push(std::move(msg));
  }
};

/// One stateful-era client session: what the protocol remembers between
/// messages (client capabilities, logging level, subscriptions, requests
/// awaiting the client's answer) and the way to reach the client outside of
/// a call.
struct Session {
  explicit Session(std::string session_id) : id(std::move(session_id)) {}

  const std::string id;
  /// Least severe level CallContext::log sends (logging/setLevel).
  std::atomic<int> log_level{static_cast<int>(LogLevel::Debug)};
  /// Set by initialize: before it (over stdio, a client that speaks only the
  /// stateless era) nothing unsolicited may reach the client.
  std::atomic<bool> initialized{false};
  Channel channel;

  bool notify(std::string msg) { return initialized && channel.notify(std::move(msg)); }

  void set_client_capabilities(const json::Value& caps) {
    std::lock_guard lock(mutex_);
    capabilities_.CopyFrom(caps, capabilities_.GetAllocator());
  }
  bool client_supports(std::string_view name) {
    std::lock_guard lock(mutex_);
    const json::Value* cap = json::find(capabilities_, name);
    return cap && cap->IsObject();
  }

  void subscribe(std::string_view uri, bool on) {
    std::lock_guard lock(mutex_);
    if (on)
      subscriptions_.emplace(uri);
    else if (auto it = subscriptions_.find(uri); it != subscriptions_.end())
      subscriptions_.erase(it);
  }
  bool subscribed(std::string_view uri) {
    std::lock_guard lock(mutex_);
    return subscriptions_.find(uri) != subscriptions_.end();
  }

  /// Registers a request to the client: its id and where the answer lands.
  std::pair<std::int64_t, std::future<Outcome>> begin_request() {
    std::lock_guard lock(mutex_);
    const std::int64_t request_id = next_request_id_++;
    std::promise<Outcome> promise;
    auto future = promise.get_future();
    if (closed_)
      promise.set_value(RpcError{jsonrpc::kInternalError, "the session has ended"});
    else
      pending_.emplace(request_id, std::move(promise));
    return {request_id, std::move(future)};
  }
  void abandon(std::int64_t request_id) {
    std::lock_guard lock(mutex_);
    pending_.erase(request_id);
  }
  /// Hands a client's response to the request waiting for it; responses to
  /// nothing we asked (or asked and gave up on) are dropped. An error
  /// answer keeps the client's code, message and data, so a handler can
  /// tell "not supported" (and fall back) from other failures.
  void resolve(const jsonrpc::Message& response) {
    const json::Value& rid = response.id();
    if (!rid.IsInt64()) return;
    std::promise<Outcome> promise;
    {
      std::lock_guard lock(mutex_);
      auto it = pending_.find(rid.GetInt64());
      if (it == pending_.end()) return;
      promise = std::move(it->second);
      pending_.erase(it);
    }
    if (const json::Value* result = response.result()) {
      promise.set_value(json::clone(*result));
      return;
    }
    RpcError err{jsonrpc::kInternalError, "the client answered with an error"};
    if (const json::Value* error = response.error()) {
      if (const json::Value* code = json::find(*error, "code"); code && code->IsInt()) err.code = code->GetInt();
      if (auto message = json::get_string(*error, "message")) err.message = std::string(*message);
      if (const json::Value* data = json::find(*error, "data")) err.data = JsonText(*data);
    }
    promise.set_value(std::move(err));
  }

  /// Ends the session: requests waiting for the client fail, the GET
  /// stream ends.
  void close(std::string_view why) {
    std::map<std::int64_t, std::promise<Outcome>> pending;
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      pending.swap(pending_);
    }
    for (auto& [request_id, promise] : pending) promise.set_value(RpcError{jsonrpc::kInternalError, std::string(why)});
    channel.outbox.close();
  }

 private:
  std::mutex mutex_;
  json::Document capabilities_{rapidjson::kObjectType};
  std::set<std::string, std::less<>> subscriptions_;
  std::map<std::int64_t, std::promise<Outcome>> pending_;
  std::int64_t next_request_id_ = 1;
  bool closed_ = false;
};

/// One stateless-era request in progress: what its envelope said and, for
/// a call that asks the client for input, the answers it came with and the
/// questions still open.
struct Stateless {
  json::Document capabilities{rapidjson::kObjectType};
  /// The request's `_meta` log level; none means no notifications/message.
  std::optional<int> log_level;
  /// requestState answers merged with inputResponses (which win).
  json::Document answers{rapidjson::kObjectType};
  /// The answers the handler used this round: the next requestState carries them.
  json::Document used{rapidjson::kObjectType};
  struct Asked {
    std::string key;
    std::string method;
    json::Document params;
  };
  /// Questions without an answer: the `inputRequests` of the input_required answer.
  std::vector<Asked> asked;
  /// What a requestState is bound to, so one call's state is useless to another.
  std::string method;
  std::string name;
};

/// Unwinds a stateless handler that asked a question without an answer yet.
/// Not a std::exception, so handlers' error handling (and guarded) lets it pass.
struct InputRequired {};

}  // namespace detail

/// One subscriptions/listen stream: what it asked to hear and how to reach it.
struct Server::Listener {
  json::Document id;  // the listen request's id, which tags everything sent on the stream
  bool tools = false;
  bool prompts = false;
  bool resources = false;
  std::set<std::string, std::less<>> uris;
  detail::Channel channel;

  bool wants(ListKind list) const {
    switch (list) {
      case ListKind::Tools:
        return tools;
      case ListKind::Prompts:
        return prompts;
      case ListKind::Resources:
        return resources;
    }
    return false;
  }

  /// Sends notification `method` with `params` (an object, or none), tagged
  /// with the stream's subscription id.
  void notify(std::string_view method, const json::Value* params) {
    json::Document p(rapidjson::kObjectType);
    auto& a = p.GetAllocator();
    if (params) p.CopyFrom(*params, a);
    json::Value meta(rapidjson::kObjectType);
    meta.AddMember(json::ref(kMetaSubscriptionId), json::Value(id, a), a);
    json::set(p, "_meta", std::move(meta), a);
    channel.notify(jsonrpc::make_notification(method, &p));
  }

  /// The result that ends the stream gracefully (server shutdown).
  std::string closing_result() const {
    json::Document r(rapidjson::kObjectType);
    auto& a = r.GetAllocator();
    r.AddMember("resultType", "complete", a);
    json::Value meta(rapidjson::kObjectType);
    meta.AddMember(json::ref(kMetaSubscriptionId), json::Value(id, a), a);
    r.AddMember("_meta", meta, a);
    return jsonrpc::make_result(id, r);
  }
};

namespace {

/// A requestState: the answers so far and what they belong to, readable by
/// nobody but this process (base64 JSON plus its HMAC). The nonce makes
/// every round's state differ even when the answers do not.
std::string seal_state(const detail::Stateless& call) {
  json::Document payload(rapidjson::kObjectType);
  auto& a = payload.GetAllocator();
  payload.AddMember("m", json::str(call.method, a), a);
  payload.AddMember("n", json::str(call.name, a), a);
  payload.AddMember("a", json::Value(call.used, a), a);
  payload.AddMember("r", json::str(random_hex(8), a), a);
  std::string sealed = base64_encode(json::write(payload));
  const std::string mac = base64_encode(state_mac(sealed));
  sealed.push_back('.');
  sealed.append(mac);
  return sealed;
}

/// Adds the answers of a requestState made by seal_state for the same call
/// to `call.answers`; the error when it was not.
std::optional<RpcError> open_state(std::string_view state, detail::Stateless& call) {
  const RpcError invalid{jsonrpc::kInvalidParams,
                         "Invalid requestState: it was not issued by this server for this request"};
  const std::size_t dot = state.rfind('.');
  if (dot == std::string_view::npos) return invalid;
  const std::string_view sealed = state.substr(0, dot);
  const std::string expected = state_mac(sealed);
  const auto mac = base64_decode(state.substr(dot + 1));
  if (!mac || mac->size() != expected.size() || CRYPTO_memcmp(mac->data(), expected.data(), expected.size()) != 0)
    return invalid;
  const auto text = base64_decode(sealed);
  if (!text) return invalid;
  auto payload = json::parse(*text);
  if (!payload) return invalid;
  const json::Value* answers = json::find(*payload, "a");
  if (json::get_string(*payload, "m") != call.method || json::get_string(*payload, "n") != call.name || !answers ||
      !answers->IsObject())
    return invalid;
  auto& a = call.answers.GetAllocator();
  for (const auto& m : answers->GetObject())
    json::set(call.answers, std::string_view(m.name.GetString(), m.name.GetStringLength()), json::Value(m.value, a), a);
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
      json::set(call.answers, std::string_view(m.name.GetString(), m.name.GetStringLength()), json::Value(m.value, a),
                a);
  }
  return std::nullopt;
}

/// The answer to a stateless call whose handler is waiting for input: every
/// open question, and the state that brings the answers so far back.
json::Document input_required(const detail::Stateless& call) {
  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  r.AddMember("resultType", "input_required", a);
  json::Value requests(rapidjson::kObjectType);
  for (const auto& q : call.asked) {
    json::Value entry(rapidjson::kObjectType);
    entry.AddMember("method", json::str(q.method, a), a);
    entry.AddMember("params", json::Value(q.params, a), a);
    json::set(requests, q.key, std::move(entry), a);
  }
  r.AddMember("inputRequests", requests, a);
  r.AddMember("requestState", json::str(seal_state(call), a), a);
  return r;
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

void Server::track(std::shared_ptr<detail::Session> session) {
  std::lock_guard lock(sessions_mutex_);
  sessions_[session->id] = std::move(session);
}

void Server::untrack(const std::string& id) {
  std::lock_guard lock(sessions_mutex_);
  sessions_.erase(id);
}

std::vector<std::shared_ptr<detail::Session>> Server::sessions() {
  std::lock_guard lock(sessions_mutex_);
  std::vector<std::shared_ptr<detail::Session>> out;
  for (const auto& [id, session] : sessions_) out.push_back(session);
  return out;
}

std::vector<std::shared_ptr<Server::Listener>> Server::listeners() {
  std::lock_guard lock(listeners_mutex_);
  return listeners_;
}

void Server::notify_resource_updated(std::string_view uri) {
  json::Document params(rapidjson::kObjectType);
  params.AddMember("uri", json::str(uri, params.GetAllocator()), params.GetAllocator());
  const std::string note = jsonrpc::make_notification("notifications/resources/updated", &params);
  for (const auto& session : sessions())
    if (session->subscribed(uri)) session->notify(note);
  for (const auto& listener : listeners())
    if (listener->uris.count(uri)) listener->notify("notifications/resources/updated", &params);
}

void Server::notify_list_changed(ListKind list) {
  const std::string_view method = list == ListKind::Tools     ? "notifications/tools/list_changed"
                                  : list == ListKind::Prompts ? "notifications/prompts/list_changed"
                                                              : "notifications/resources/list_changed";
  const std::string note = jsonrpc::make_notification(method, nullptr);
  for (const auto& session : sessions()) session->notify(note);
  for (const auto& listener : listeners())
    if (listener->wants(list)) listener->notify(method, nullptr);
}

std::variant<RpcError, std::shared_ptr<Server::Listener>> Server::listen(const jsonrpc::Message& msg,
                                                                         std::function<void(std::string)> writer) {
  const json::Value* filter = msg.params() ? json::find(*msg.params(), "notifications") : nullptr;
  if (!filter || !filter->IsObject())
    return RpcError{jsonrpc::kInvalidParams, "subscriptions/listen needs params.notifications (a SubscriptionFilter)"};
  auto listener = std::make_shared<Listener>();
  listener->id.CopyFrom(msg.id(), listener->id.GetAllocator());

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
      list.PushBack(json::Value(uri, a), a);
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
  std::lock_guard lock(listeners_mutex_);
  listeners_.push_back(listener);
  return listener;
}

void Server::unlisten(const Listener* listener) {
  std::lock_guard lock(listeners_mutex_);
  std::erase_if(listeners_, [&](const auto& l) { return l.get() == listener; });
}

void Server::cancel_listen(const json::Value& id) {
  std::lock_guard lock(listeners_mutex_);
  std::erase_if(listeners_, [&](const auto& l) { return l->id == id; });
}

// ---------------------------------------------------------------------------
// CallContext

CallContext::CallContext(Send send, const json::Value* progress_token, detail::Session* session,
                         detail::Stateless* stateless)
    : send_(std::move(send)), session_(session), stateless_(stateless) {
  if (progress_token) progress_token_.CopyFrom(*progress_token, progress_token_.GetAllocator());
}

void CallContext::progress(double progress, std::optional<double> total, std::string_view message) {
  if (!has_progress_token()) return;
  json::Document params(rapidjson::kObjectType);
  auto& a = params.GetAllocator();
  params.AddMember("progressToken", json::Value(progress_token_, a), a);
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
  params.AddMember("level", json::ref(kLogLevels[static_cast<std::size_t>(level)]), a);
  if (!logger.empty()) params.AddMember("logger", json::str(logger, a), a);
  params.AddMember("data", json::str(message, a), a);
  send_(jsonrpc::make_notification("notifications/message", &params));
}

bool CallContext::client_supports(std::string_view name) const {
  if (session_) return session_->client_supports(name);
  const json::Value* cap = json::find(stateless_->capabilities, name);
  return cap && cap->IsObject();
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
      json::set(call.used, q.key, json::Value(*given, call.used.GetAllocator()), call.used.GetAllocator());
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
    if (!progress_token_.IsNull()) json::set(meta, "progressToken", json::Value(progress_token_, a), a);
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
  json::set(result, key, json::Value(value, result.GetAllocator()), result.GetAllocator());
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

// ---------------------------------------------------------------------------
// Registration

Server::Server(std::string name, std::string version)
    : name_(std::move(name)), version_(std::move(version)) {}

Server::~Server() = default;

std::shared_ptr<const Server::Tool> Server::make_tool(ToolSpec spec) {
  if (static_cast<bool>(spec.handler) == static_cast<bool>(spec.context_handler))
    throw std::invalid_argument("tool " + spec.name + ": give exactly one of handler and context_handler");
  // Built once here, so tools/list only copies and a typo in a schema fails
  // at startup rather than on the first list.
  json::Document def(rapidjson::kObjectType);
  auto& a = def.GetAllocator();
  def.AddMember("name", json::str(spec.name, a), a);
  if (!spec.title.empty()) def.AddMember("title", json::str(spec.title, a), a);
  if (!spec.description.empty()) def.AddMember("description", json::str(spec.description, a), a);
  const std::pair<const char*, const JsonText*> fragments[] = {
      {"inputSchema", &spec.input_schema},
      {"outputSchema", &spec.output_schema},
      {"annotations", &spec.annotations},
      {"_meta", &spec.meta},
  };
  for (const auto& [key, text] : fragments) {
    if (text->empty()) continue;
    json::Document frag = parse_or_throw(*text, spec.name + "." + key);
    def.AddMember(json::ref(key), json::Value(frag, a), a);
  }
  return std::make_shared<const Tool>(Tool{std::move(spec.name), std::move(def), std::move(spec.handler),
                                           std::move(spec.context_handler)});
}

void Server::add_tool(ToolSpec spec) {
  auto tool = make_tool(std::move(spec));
  std::lock_guard lock(registry_mutex_);
  for (const auto& t : tools_)
    if (t->name == tool->name) throw std::invalid_argument("duplicate tool: " + tool->name);
  tools_.push_back(std::move(tool));
}

void Server::replace_tool(ToolSpec spec) {
  auto tool = make_tool(std::move(spec));
  {
    std::lock_guard lock(registry_mutex_);
    auto it = std::find_if(tools_.begin(), tools_.end(), [&](const auto& t) { return t->name == tool->name; });
    if (it == tools_.end()) throw std::invalid_argument("replace_tool: unknown tool " + tool->name);
    // A call running the old tool holds its own reference to it.
    *it = std::move(tool);
  }
  notify_list_changed(ListKind::Tools);
}

std::shared_ptr<const Server::Tool> Server::find_tool(std::string_view name) const {
  std::lock_guard lock(registry_mutex_);
  for (const auto& t : tools_)
    if (t->name == name) return t;
  return nullptr;
}

void Server::add_resource(ResourceSpec spec) {
  for (const Resource& r : resources_)
    if (r.spec.uri == spec.uri) throw std::invalid_argument("duplicate resource: " + spec.uri);
  if (!spec.read) throw std::invalid_argument("resource " + spec.uri + " has no reader");
  json::Document def(rapidjson::kObjectType);
  auto& a = def.GetAllocator();
  def.AddMember("uri", json::str(spec.uri, a), a);
  def.AddMember("name", json::str(spec.name.empty() ? spec.uri : spec.name, a), a);
  add_optional(def, "title", spec.title, a);
  add_optional(def, "description", spec.description, a);
  add_optional(def, "mimeType", spec.mime_type, a);
  resources_.push_back({std::move(spec), std::move(def)});
}

void Server::add_resource_template(ResourceTemplateSpec spec) {
  for (const ResourceTemplate& t : templates_)
    if (t.spec.uri_template == spec.uri_template)
      throw std::invalid_argument("duplicate resource template: " + spec.uri_template);
  if (!spec.read) throw std::invalid_argument("resource template " + spec.uri_template + " has no reader");
  json::Document def(rapidjson::kObjectType);
  auto& a = def.GetAllocator();
  def.AddMember("uriTemplate", json::str(spec.uri_template, a), a);
  def.AddMember("name", json::str(spec.name.empty() ? spec.uri_template : spec.name, a), a);
  add_optional(def, "title", spec.title, a);
  add_optional(def, "description", spec.description, a);
  add_optional(def, "mimeType", spec.mime_type, a);
  templates_.push_back({std::move(spec), std::move(def)});
}

std::shared_ptr<const Server::Prompt> Server::make_prompt(PromptSpec spec) {
  if (static_cast<bool>(spec.get) == static_cast<bool>(spec.context_get))
    throw std::invalid_argument("prompt " + spec.name + ": give exactly one of get and context_get");
  json::Document def(rapidjson::kObjectType);
  auto& a = def.GetAllocator();
  def.AddMember("name", json::str(spec.name, a), a);
  add_optional(def, "title", spec.title, a);
  add_optional(def, "description", spec.description, a);
  if (!spec.arguments.empty()) {
    json::Value args(rapidjson::kArrayType);
    for (const PromptArgument& arg : spec.arguments) {
      json::Value v(rapidjson::kObjectType);
      v.AddMember("name", json::str(arg.name, a), a);
      add_optional(v, "description", arg.description, a);
      v.AddMember("required", arg.required, a);
      args.PushBack(v, a);
    }
    def.AddMember("arguments", args, a);
  }
  return std::make_shared<const Prompt>(Prompt{std::move(spec), std::move(def)});
}

void Server::add_prompt(PromptSpec spec) {
  auto prompt = make_prompt(std::move(spec));
  std::lock_guard lock(registry_mutex_);
  for (const auto& p : prompts_)
    if (p->spec.name == prompt->spec.name) throw std::invalid_argument("duplicate prompt: " + prompt->spec.name);
  prompts_.push_back(std::move(prompt));
}

void Server::replace_prompt(PromptSpec spec) {
  auto prompt = make_prompt(std::move(spec));
  {
    std::lock_guard lock(registry_mutex_);
    auto it = std::find_if(prompts_.begin(), prompts_.end(),
                           [&](const auto& p) { return p->spec.name == prompt->spec.name; });
    if (it == prompts_.end()) throw std::invalid_argument("replace_prompt: unknown prompt " + prompt->spec.name);
    *it = std::move(prompt);
  }
  notify_list_changed(ListKind::Prompts);
}

std::shared_ptr<const Server::Prompt> Server::find_prompt(std::string_view name) const {
  std::lock_guard lock(registry_mutex_);
  for (const auto& p : prompts_)
    if (p->spec.name == name) return p;
  return nullptr;
}

bool Server::has_prompts() const {
  std::lock_guard lock(registry_mutex_);
  return !prompts_.empty();
}

void Server::set_completion_handler(CompletionHandler handler) { completion_ = std::move(handler); }

// ---------------------------------------------------------------------------
// Protocol

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

std::optional<std::string> Server::dispatch(const jsonrpc::Message& msg, detail::Session& session,
                                            const CallContext::Send& send) {
  if (msg.is_response()) {
    session.resolve(msg);
    return std::nullopt;
  }
  // Notifications (notifications/initialized, cancellations) need no action.
  if (!msg.is_request()) return std::nullopt;
  return answer(msg.id(), handle(msg, &session, nullptr, send));
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
  call.capabilities.CopyFrom(*caps, call.capabilities.GetAllocator());
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

Outcome Server::handle(const jsonrpc::Message& msg, detail::Session* session, detail::Stateless* stateless,
                       const CallContext::Send& send) {
  const std::string_view method = msg.method();
  const json::Value* params = msg.params();
  auto list = [](const char* key, const auto& items) -> Outcome {
    json::Document r(rapidjson::kObjectType);
    auto& a = r.GetAllocator();
    json::Value array(rapidjson::kArrayType);
    for (const auto& item : items) array.PushBack(json::Value(item.definition, a), a);
    r.AddMember(json::ref(key), array, a);
    return r;
  };
  const json::Value* meta = params ? json::find(*params, "_meta") : nullptr;
  const json::Value* token = meta ? json::find(*meta, "progressToken") : nullptr;

  // The methods only one era has: the stateless era dropped the session
  // handshake, ping, the session's log level and resources/subscribe.
  if (session) {
    if (method == "initialize") return initialize(params, *session);
    if (method == "ping") return empty_result();
    if (subscriptions_ && has_resources() && (method == "resources/subscribe" || method == "resources/unsubscribe"))
      return subscribe(params, *session, method == "resources/subscribe");
    if (logging_ && method == "logging/setLevel") return set_log_level(params, *session);
  } else if (method == "server/discover") {
    return discover();
  }

  if (method == "tools/list") return list_tools(params);
  if (method == "tools/call") {
    CallContext ctx(send, token, session, stateless);
    return call(params, ctx);
  }
  if (has_resources()) {
    if (method == "resources/list") return list("resources", resources_);
    if (method == "resources/templates/list") return list("resourceTemplates", templates_);
    if (method == "resources/read") return read_resource(params, stateless != nullptr);
  }
  if (has_prompts()) {
    if (method == "prompts/list") return list_prompts();
    if (method == "prompts/get") {
      CallContext ctx(send, token, session, stateless);
      return get_prompt(params, ctx);
    }
  }
  if (completion_ && method == "completion/complete") return complete(params);
  return RpcError{jsonrpc::kMethodNotFound, "Method not found: " + std::string(method)};
}

bool Server::talks_during_call(const jsonrpc::Message& msg) const {
  if (!msg.is_request() || !msg.params()) return false;
  auto name = json::get_string(*msg.params(), "name");
  if (!name) return false;
  if (msg.method() == "tools/call") {
    auto tool = find_tool(*name);
    return tool && tool->context_handler;
  }
  if (msg.method() == "prompts/get") {
    auto prompt = find_prompt(*name);
    return prompt && prompt->spec.context_get;
  }
  return false;
}

json::Value Server::capabilities(json::Allocator& a) const {
  // Only what this server actually answers: a client (or gateway) decides
  // from the capabilities which methods to try.
  json::Value caps(rapidjson::kObjectType);
  json::Value tools(rapidjson::kObjectType);
  tools.AddMember("listChanged", true, a);
  caps.AddMember("tools", tools, a);
  if (has_resources()) {
    json::Value resources(rapidjson::kObjectType);
    resources.AddMember("subscribe", subscriptions_, a);
    resources.AddMember("listChanged", true, a);
    caps.AddMember("resources", resources, a);
  }
  if (has_prompts()) {
    json::Value prompts(rapidjson::kObjectType);
    prompts.AddMember("listChanged", true, a);
    caps.AddMember("prompts", prompts, a);
  }
  if (completion_) caps.AddMember("completions", json::Value(rapidjson::kObjectType), a);
  if (logging_) caps.AddMember("logging", json::Value(rapidjson::kObjectType), a);
  return caps;
}

Outcome Server::initialize(const json::Value* params, detail::Session& session) {
  std::string_view requested;
  if (params) {
    requested = json::get_string(*params, "protocolVersion").value_or("");
    if (const json::Value* caps = json::find(*params, "capabilities")) session.set_client_capabilities(*caps);
  }
  session.initialized = true;

  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  r.AddMember("protocolVersion", json::str(mcp::negotiate(requested), a), a);
  r.AddMember("capabilities", capabilities(a), a);
  json::Value info(rapidjson::kObjectType);
  info.AddMember("name", json::str(name_, a), a);
  info.AddMember("version", json::str(version_, a), a);
  r.AddMember("serverInfo", info, a);
  if (!instructions_.empty()) r.AddMember("instructions", json::str(instructions_, a), a);
  return r;
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

Outcome Server::list_tools(const json::Value* params) const {
  std::lock_guard lock(registry_mutex_);
  std::size_t offset = 0;
  if (params && json::find(*params, "cursor")) {
    auto cursor = json::get_string(*params, "cursor");
    auto decoded = cursor ? mcp::decode_cursor(*cursor) : std::nullopt;
    if (!decoded || *decoded > tools_.size()) return RpcError{jsonrpc::kInvalidParams, "Invalid cursor"};
    offset = *decoded;
  }
  const std::size_t end =
      page_size_ == 0 ? tools_.size() : std::min(tools_.size(), offset + page_size_);

  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  for (std::size_t i = offset; i < end; ++i) list.PushBack(json::Value(tools_[i]->definition, a), a);
  r.AddMember("tools", list, a);
  if (end < tools_.size()) r.AddMember("nextCursor", json::str(mcp::encode_cursor(end), a), a);
  return r;
}

Outcome Server::list_prompts() const {
  std::lock_guard lock(registry_mutex_);
  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  for (const auto& p : prompts_) list.PushBack(json::Value(p->definition, a), a);
  r.AddMember("prompts", list, a);
  return r;
}

Outcome Server::call(const json::Value* params, CallContext& ctx) {
  auto name = params ? json::get_string(*params, "name") : std::nullopt;
  if (!name) return RpcError{jsonrpc::kInvalidParams, "Missing tool name"};
  // Our own reference: the tool may be replaced while it runs.
  const auto tool = find_tool(*name);
  if (!tool) return RpcError{jsonrpc::kInvalidParams, "Unknown tool: " + std::string(*name)};

  const json::Value empty(rapidjson::kObjectType);
  const json::Value* args = json::find(*params, "arguments");
  if (!args) args = &empty;
  if (!args->IsObject()) return RpcError{jsonrpc::kInvalidParams, "\"arguments\" must be an object"};
  if (tool->handler) return guarded([&] { return tool->handler(*args); });
  try {
    return guarded([&] { return tool->context_handler(*args, ctx); });
  } catch (const detail::InputRequired&) {
    return input_required(*ctx.stateless_);
  }
}

bool Server::known_resource(std::string_view uri) const {
  return std::any_of(resources_.begin(), resources_.end(), [&](const Resource& r) { return r.spec.uri == uri; }) ||
         std::any_of(templates_.begin(), templates_.end(), [&](const ResourceTemplate& t) {
           return match_uri_template(t.spec.uri_template, uri).has_value();
         });
}

Outcome Server::read_resource(const json::Value* params, bool stateless) {
  auto uri = params ? json::get_string(*params, "uri") : std::nullopt;
  if (!uri) return RpcError{jsonrpc::kInvalidParams, "Missing resource uri"};
  for (const Resource& r : resources_)
    if (r.spec.uri == *uri) return guarded([&] { return r.spec.read(*uri); });
  for (const ResourceTemplate& t : templates_)
    if (auto vars = match_uri_template(t.spec.uri_template, *uri))
      return guarded([&] { return t.spec.read(*uri, *vars); });
  // SEP-2164 retired -32002 for the stateless era: an unknown URI is a bad parameter.
  return RpcError{stateless ? jsonrpc::kInvalidParams : kResourceNotFound, "Resource not found: " + std::string(*uri),
                  R"({"uri":)" + json::quote(*uri) + "}"};
}

Outcome Server::subscribe(const json::Value* params, detail::Session& session, bool on) {
  auto uri = params ? json::get_string(*params, "uri") : std::nullopt;
  if (!uri) return RpcError{jsonrpc::kInvalidParams, "Missing resource uri"};
  // Unsubscribing from anything is harmless; subscribing to nothing is a
  // mistake the client should hear about.
  if (on && !known_resource(*uri))
    return RpcError{kResourceNotFound, "Resource not found: " + std::string(*uri),
                    R"({"uri":)" + json::quote(*uri) + "}"};
  session.subscribe(*uri, on);
  return empty_result();
}

Outcome Server::get_prompt(const json::Value* params, CallContext& ctx) {
  auto name = params ? json::get_string(*params, "name") : std::nullopt;
  if (!name) return RpcError{jsonrpc::kInvalidParams, "Missing prompt name"};
  const auto prompt = find_prompt(*name);
  if (!prompt) return RpcError{jsonrpc::kInvalidParams, "Unknown prompt: " + std::string(*name)};

  PromptArgs args;
  if (const json::Value* given = json::find(*params, "arguments"); given && !given->IsNull()) {
    if (!given->IsObject()) return RpcError{jsonrpc::kInvalidParams, "\"arguments\" must be an object"};
    for (const auto& m : given->GetObject()) {
      if (!m.value.IsString())
        return RpcError{jsonrpc::kInvalidParams,
                        "Prompt argument " + std::string(m.name.GetString()) + " must be a string"};
      args.emplace(m.name.GetString(), std::string(m.value.GetString(), m.value.GetStringLength()));
    }
  }
  for (const PromptArgument& arg : prompt->spec.arguments)
    if (arg.required && !args.count(arg.name))
      return RpcError{jsonrpc::kInvalidParams, "Missing required argument: " + arg.name};
  if (prompt->spec.get) return guarded([&] { return prompt->spec.get(args); });
  try {
    return guarded([&] { return prompt->spec.context_get(args, ctx); });
  } catch (const detail::InputRequired&) {
    return input_required(*ctx.stateless_);
  }
}

Outcome Server::complete(const json::Value* params) {
  const json::Value* ref = params ? json::find(*params, "ref") : nullptr;
  const json::Value* argument = params ? json::find(*params, "argument") : nullptr;
  auto type = ref ? json::get_string(*ref, "type") : std::nullopt;
  auto arg_name = argument ? json::get_string(*argument, "name") : std::nullopt;
  auto arg_value = argument ? json::get_string(*argument, "value") : std::nullopt;
  if (!type || !arg_name || !arg_value)
    return RpcError{jsonrpc::kInvalidParams, "completion/complete needs ref.type, argument.name and argument.value"};
  if (*type == "ref/prompt") {
    auto name = json::get_string(*ref, "name").value_or("");
    if (!find_prompt(name)) return RpcError{jsonrpc::kInvalidParams, "Unknown prompt: " + std::string(name)};
  } else if (*type == "ref/resource") {
    auto uri = json::get_string(*ref, "uri").value_or("");
    if (std::none_of(templates_.begin(), templates_.end(),
                     [&](const ResourceTemplate& t) { return t.spec.uri_template == uri; }) &&
        !known_resource(uri))
      return RpcError{jsonrpc::kInvalidParams, "Unknown resource or template: " + std::string(uri)};
  } else {
    return RpcError{jsonrpc::kInvalidParams, "Unknown ref type: " + std::string(*type)};
  }

  return guarded([&]() -> Outcome {
    std::vector<std::string> values = completion_(*ref, *arg_name, *arg_value);
    // The spec caps a response at 100 values; hasMore tells the client there
    // are others.
    constexpr std::size_t kMaxValues = 100;
    json::Document r(rapidjson::kObjectType);
    auto& a = r.GetAllocator();
    json::Value list(rapidjson::kArrayType);
    for (std::size_t i = 0; i < values.size() && i < kMaxValues; ++i) list.PushBack(json::str(values[i], a), a);
    json::Value completion(rapidjson::kObjectType);
    completion.AddMember("values", list, a);
    completion.AddMember("total", static_cast<std::uint64_t>(values.size()), a);
    completion.AddMember("hasMore", values.size() > kMaxValues, a);
    r.AddMember("completion", completion, a);
    return r;
  });
}

Outcome Server::set_log_level(const json::Value* params, detail::Session& session) {
  auto level = params ? json::get_string(*params, "level") : std::nullopt;
  auto it = level ? std::find(kLogLevels.begin(), kLogLevels.end(), *level) : kLogLevels.end();
  if (it == kLogLevels.end())
    return RpcError{jsonrpc::kInvalidParams, "level must be one of debug, info, notice, warning, error, "
                                             "critical, alert, emergency"};
  session.log_level = static_cast<int>(it - kLogLevels.begin());
  return empty_result();
}

// ---------------------------------------------------------------------------
// stdio transport

namespace {

/// The answer to initialize in a stateless request: the method is gone in
/// 2026-07-28, and a client that sent it learns to use server/discover.
std::string no_initialize(const json::Value& id) {
  return jsonrpc::make_error(id, jsonrpc::kMethodNotFound,
                             "Method not found: initialize (protocol 2026-07-28 has none; use server/discover)");
}

}  // namespace

void Server::write_line(std::string_view line) {
  std::lock_guard lock(stdout_mutex_);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void Server::write_raw_line(std::string_view line) {
  if (stdio_) write_line(line);
}

int Server::serve_stdio() {
  stdio_ = true;
  // One client, one session for the whole process (once it initializes).
  auto session = std::make_shared<detail::Session>("stdio");
  session->channel.writer = [this](std::string msg) { write_line(msg); };
  track(session);
  const CallContext::Send send = [this](std::string msg) {
    write_line(msg);
    return true;
  };
  std::jthread background;
  if (background_) background = std::jthread(background_);

  // One thread per request, so a slow call (sleep, or one waiting for the
  // client's answer, which this loop must read) never holds up the others.
  // std::list keeps each entry in place, so a thread can flag its own entry.
  struct Worker {
    std::atomic<bool> done{false};
    std::thread thread;
  };
  std::list<Worker> workers;
  auto reap = [&](bool all) {
    for (auto it = workers.begin(); it != workers.end();) {
      if (all || it->done) {
        it->thread.join();
        it = workers.erase(it);
      } else {
        ++it;
      }
    }
  };
  auto spawn = [&](auto work) {
    Worker& w = workers.emplace_back();
    w.thread = std::thread([&w, work = std::move(work)] {
      work();
      w.done = true;
    });
  };

  // A stateless request: checked here, run on a worker. A listen request
  // is never answered; the stream ends when the client cancels it.
  auto serve_stateless = [&](jsonrpc::Message msg) {
    if (msg.method() == "initialize") return write_line(no_initialize(msg.id()));
    auto call = std::make_shared<detail::Stateless>();
    if (auto bad = check_envelope(msg, nullptr, *call)) return write_line(answer(msg.id(), std::move(*bad)));
    if (msg.method() == "subscriptions/listen") {
      auto opened = listen(msg, [this](std::string note) { write_line(note); });
      if (auto* err = std::get_if<RpcError>(&opened)) write_line(answer(msg.id(), std::move(*err)));
      return;
    }
    spawn([this, call, &send, m = std::move(msg)] { write_line(answer(m.id(), dispatch_stateless(m, *call, send))); });
  };

  std::string line;
  while (std::getline(std::cin, line)) {
    reap(false);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    jsonrpc::Parsed parsed = jsonrpc::parse(line);
    if (parsed.batch) {
      write_line(jsonrpc::make_error(json::Value(), jsonrpc::kInvalidRequest,
                                     "Invalid Request: batches are not supported"));
      continue;
    }
    for (const std::string& err : parsed.errors) write_line(err);
    for (jsonrpc::Message& msg : parsed.messages) {
      // Over stdio, cancelling its request is how a client closes a listen stream.
      if (msg.is_notification() && msg.method() == "notifications/cancelled" && msg.params())
        if (const json::Value* id = json::find(*msg.params(), "requestId")) cancel_listen(*id);
      if (is_stateless(msg, false)) {
        // Stateless clients post no responses (the server asks nothing)
        // and their notifications need no action.
        if (msg.is_request()) serve_stateless(std::move(msg));
        continue;
      }
      // Initialize runs here, before anything read after it: the session's
      // client capabilities must be known before a call asks about them.
      if (!msg.is_request() || msg.method() == "initialize") {
        if (auto reply = dispatch(msg, *session, send)) write_line(*reply);
        continue;
      }
      spawn([this, &session, &send, m = std::move(msg)] {
        if (auto reply = dispatch(m, *session, send)) write_line(*reply);
      });
    }
  }
  // No more answers can arrive: calls waiting for one give up now.
  session->close("the client closed stdin");
  reap(true);
  untrack(session->id);
  std::lock_guard lock(listeners_mutex_);
  listeners_.clear();
  return 0;
}

// ---------------------------------------------------------------------------
// Streamable HTTP transport

namespace {

using transport::http::Request;
using transport::http::Responder;
using transport::http::Response;
template <typename T>
using awaitable = transport::http::awaitable<T>;

constexpr const char* kJson = "application/json";
constexpr const char* kEventStream = "text/event-stream";
/// Comment line on an idle GET stream, so proxies and clients see it alive.
constexpr std::string_view kHeartbeat = ": ping\n\n";
constexpr auto kHeartbeatInterval = 15s;

// Responses are built here, outside the coroutines, and every argument of a
// co_await is a named local: GCC 12 destroys some temporaries of a co_await
// full-expression twice (braced initializers, lambdas converted to
// std::function).

Response json_reply(int status, std::string body) {
  Response r;
  r.status = status;
  r.headers.push_back({"Content-Type", kJson});
  r.body = std::move(body);
  return r;
}

Response status_reply(int status, std::string_view why) {
  return json_reply(status, jsonrpc::make_error(json::Value(), jsonrpc::kInvalidRequest, std::string(why)));
}

Response bare(int status, std::string allow = {}) {
  Response r;
  r.status = status;
  if (!allow.empty()) r.headers.push_back({"Allow", std::move(allow)});
  return r;
}

Response event_stream_head() {
  Response r;
  r.headers.push_back({"Content-Type", kEventStream});
  r.headers.push_back({"Cache-Control", "no-cache"});
  return r;
}

transport::http::StreamOptions heartbeats() {
  return {std::chrono::duration_cast<std::chrono::milliseconds>(kHeartbeatInterval), std::string(kHeartbeat), false};
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// True for "localhost", "127.0.0.1" and "[::1]", with or without a port.
bool is_loopback_authority(std::string_view authority) {
  std::string host = lower(authority);
  if (host.starts_with('[')) {
    const std::size_t end = host.find(']');
    if (end == std::string::npos) return false;
    host.resize(end + 1);
  } else if (const std::size_t colon = host.rfind(':'); colon != std::string::npos) {
    host.resize(colon);
  }
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]";
}

/// DNS-rebinding protection (spec: transports, "Security Warning"): this
/// server listens on loopback only, so a Host or Origin naming another host
/// means a web page reached it through a name rebound to 127.0.0.1. Empty
/// when the request may proceed, else why not.
std::string foreign_host_or_origin(const Request& req) {
  if (req.has("Host") && !is_loopback_authority(req.get("Host")))
    return "Forbidden: Host " + req.get("Host") + " is not a loopback name";
  if (req.has("Origin")) {
    const std::string origin = req.get("Origin");
    const std::size_t scheme = origin.find("://");
    const std::string authority =
        scheme == std::string::npos ? std::string() : origin.substr(scheme + 3, origin.find('/', scheme + 3) - scheme - 3);
    if (!is_loopback_authority(authority)) return "Forbidden: Origin " + origin + " is not a loopback origin";
  }
  return {};
}

/// Whether the client takes an SSE stream as the answer to a POST; a client
/// that sends no Accept header is assumed to take anything.
bool accepts_event_stream(const Request& req) {
  if (!req.has("Accept")) return true;
  const std::string accept = lower(req.get("Accept"));
  return accept.find(kEventStream) != std::string::npos || accept.find("*/*") != std::string::npos;
}

// Request metadata headers of the stateless era (SEP-2243): the body is
// authoritative, and the headers (which let intermediaries route without
// parsing it) must agree with it.

/// Header `name` without optional whitespace around it, if present.
std::optional<std::string> header_value(const Request& req, const std::string& name) {
  if (!req.has(name)) return std::nullopt;
  const std::string value = req.get(name);
  const std::size_t begin = value.find_first_not_of(" \t");
  if (begin == std::string::npos) return std::string();
  return value.substr(begin, value.find_last_not_of(" \t") - begin + 1);
}

/// A header value as text: `=?base64?…?=` decoded, anything else as is;
/// nullopt for a broken base64 inside the markers.
std::optional<std::string> decode_header_value(const std::string& raw) {
  constexpr std::string_view kPrefix = "=?base64?";
  constexpr std::string_view kSuffix = "?=";
  if (raw.size() < kPrefix.size() + kSuffix.size() || !raw.starts_with(kPrefix) || !raw.ends_with(kSuffix))
    return raw;
  return base64_decode(std::string_view(raw).substr(kPrefix.size(), raw.size() - kPrefix.size() - kSuffix.size()));
}

RpcError header_mismatch(const std::string& what) { return RpcError{kHeaderMismatch, "Header mismatch: " + what}; }

/// Checks `header` against argument value `body`, which a property with
/// `x-mcp-header` names.
std::optional<RpcError> check_param_header(const Request& req, const std::string& header,
                                           const json::Value& body) {
  std::string expected;
  if (body.IsString())
    expected.assign(body.GetString(), body.GetStringLength());
  else if (body.IsBool())
    expected = body.GetBool() ? "true" : "false";
  else if (body.IsInt64())
    expected = std::to_string(body.GetInt64());
  else if (body.IsUint64())
    expected = std::to_string(body.GetUint64());
  else
    return std::nullopt;  // null: the client omits the header
  const auto raw = header_value(req, header);
  if (!raw)
    return header_mismatch("the body carries " + json::write(body) + " but the " + header + " header is absent");
  const auto got = decode_header_value(*raw);
  if (!got) return header_mismatch("the " + header + " header is not valid base64");
  bool same = *got == expected;
  if (!same && (body.IsInt64() || body.IsUint64())) {
    // Integers compare as numbers: "42.0" and "42" name the same value.
    double n = 0;
    auto [end, ec] = std::from_chars(got->data(), got->data() + got->size(), n);
    same = ec == std::errc() && end == got->data() + got->size() && n == body.GetDouble();
  }
  if (!same)
    return header_mismatch("the body carries " + json::write(body) + " but the " + header + " header names " +
                           json::quote(*got));
  return std::nullopt;
}

/// Checks the Mcp-Param-* headers of the `x-mcp-header` properties of
/// `schema` (reachable through `properties` only) against `value`.
std::optional<RpcError> check_param_headers(const Request& req, const json::Value& schema,
                                            const json::Value& value) {
  const json::Value* props = json::find(schema, "properties");
  if (!props || !props->IsObject()) return std::nullopt;
  for (const auto& m : props->GetObject()) {
    const json::Value* v = json::find(value, std::string_view(m.name.GetString(), m.name.GetStringLength()));
    if (!v) continue;
    if (auto header = json::get_string(m.value, "x-mcp-header"))
      if (auto bad = check_param_header(req, "Mcp-Param-" + std::string(*header), *v)) return bad;
    if (v->IsObject())
      if (auto bad = check_param_headers(req, m.value, *v)) return bad;
  }
  return std::nullopt;
}

/// Checks Mcp-Method, Mcp-Name and (for a tool whose `input_schema` is
/// given) the Mcp-Param-* headers of a stateless request against its body.
std::optional<RpcError> check_request_headers(const Request& req, const jsonrpc::Message& msg,
                                              const json::Value* input_schema) {
  const std::string method(msg.method());
  const auto header = header_value(req, "Mcp-Method");
  if (!header)
    return header_mismatch("the body names method " + method + " but the required Mcp-Method header is absent");
  if (*header != method)
    return header_mismatch("the body names method " + method + " but the Mcp-Method header names " + *header);
  const json::Value* params = msg.params();
  const char* name_key = method == "tools/call" || method == "prompts/get" ? "name"
                         : method == "resources/read"                     ? "uri"
                                                                          : nullptr;
  if (auto name = name_key && params ? json::get_string(*params, name_key) : std::nullopt) {
    const auto raw = header_value(req, "Mcp-Name");
    if (!raw)
      return header_mismatch("the body carries params." + std::string(name_key) + "=" + json::quote(*name) +
                             " but the required Mcp-Name header is absent");
    const auto got = decode_header_value(*raw);
    if (!got || *got != *name)
      return header_mismatch("the body carries params." + std::string(name_key) + "=" + json::quote(*name) +
                             " but the Mcp-Name header names " + json::quote(*raw));
  }
  const json::Value* args = input_schema && params ? json::find(*params, "arguments") : nullptr;
  return args ? check_param_headers(req, *input_schema, *args) : std::nullopt;
}

/// The answer to one POST, filled by the worker thread that runs the call
/// (what the call sends on the way, then its response) and read by the
/// request's coroutine, which never blocks on it.
class PostExchange {
 public:
  PostExchange(const transport::http::asio::any_io_executor& strand, bool can_stream)
      : signal_(std::make_shared<transport::http::Signal>(strand)),
        stream_(std::make_shared<transport::http::StreamQueue>(strand)),
        can_stream_(can_stream) {}

  /// Queues a message for the stream; false when there will be no stream
  /// (the client does not accept one, or has gone away).
  bool send(std::string msg) {
    {
      std::lock_guard lock(mutex_);
      if (!can_stream_ || abandoned_) return false;
      if (streaming_) stream_->push(detail::sse_event(msg));
      else events_.emplace_back(std::move(msg), false);
    }
    signal_->notify();
    return true;
  }
  /// Queues the response, with the HTTP status it gets if it goes out alone.
  void finish(std::string response, int status) {
    {
      std::lock_guard lock(mutex_);
      status_ = status;
      if (streaming_) {
        stream_->push(detail::sse_event(response));
        stream_->close();
      } else {
        events_.emplace_back(std::move(response), true);
      }
    }
    signal_->notify();
  }
  /// Waits for the first message; the response with its status when it
  /// comes first (it then goes out as plain JSON), else nothing.
  awaitable<std::optional<Response>> first() {
    for (;;) {
      {
        std::lock_guard lock(mutex_);
        if (!events_.empty()) {
          if (!events_.front().second) co_return std::nullopt;
          co_return json_reply(status_, std::move(events_.front().first));
        }
      }
      co_await signal_->wait(std::chrono::hours(1));
    }
  }
  /// From now on the answer is a stream: what came so far goes first.
  std::shared_ptr<transport::http::StreamQueue> stream() {
    std::lock_guard lock(mutex_);
    streaming_ = true;
    for (auto& [msg, is_response] : events_) {
      stream_->push(detail::sse_event(msg));
      if (is_response) stream_->close();
    }
    events_.clear();
    return stream_;
  }
  /// The client went away: what the call sends from now on goes nowhere.
  void abandon() {
    std::lock_guard lock(mutex_);
    abandoned_ = true;
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<transport::http::Signal> signal_;
  std::shared_ptr<transport::http::StreamQueue> stream_;
  std::deque<std::pair<std::string, bool>> events_;
  const bool can_stream_;
  bool abandoned_ = false, streaming_ = false;
  int status_ = 200;
};

/// The HTTP status and body of one dispatched POST; no body = 202.
using Dispatched = std::pair<int, std::optional<std::string>>;
/// Runs one message on a worker thread, given the way to talk to the client.
using Work = std::function<Dispatched(const std::function<bool(std::string)>&)>;

/// Answers a POST by running `work` on `pool`: tool handlers block, and
/// the I/O threads must not. A call that sends nothing before its response
/// is answered with plain JSON like any other; one that talks (to a client
/// that takes a stream) is answered as SSE.
awaitable<void> run_on_pool(WorkerPool& pool, Responder& res, bool can_stream, Work work) {
  auto exchange = std::make_shared<PostExchange>(res.executor(), can_stream);
  bool queued = pool.submit([exchange, work = std::move(work)] {
    auto [status, body] = work([exchange](std::string out) { return exchange->send(std::move(out)); });
    exchange->finish(body ? std::move(*body) : std::string(), body ? status : 202);
  });
  if (!queued) {
    {
      auto reply = status_reply(503, "Service Unavailable: the server is stopping");
      co_await res.send(std::move(reply));
    }
    co_return;
  }
  if (auto whole = co_await exchange->first()) {
    if (whole->status == 202) whole = bare(202);
    co_await res.send(std::move(*whole));
    co_return;
  }
  auto head = event_stream_head();
  auto stream = exchange->stream();
  transport::http::StreamOptions quiet;  // no heartbeats on a call's stream
  auto end = co_await res.stream(std::move(head), std::move(stream), std::move(quiet));
  if (end != transport::http::StreamEnd::Done) exchange->abandon();
}

}  // namespace

/// The HTTP side of a Server: one coroutine per request on the listener.
struct Server::Http {
  Server& server;
  WorkerPool& pool;
  const std::function<bool(std::string)> no_stream = [](std::string) { return false; };

  awaitable<void> handle(Request& req, Responder& res) {
    if (req.path() == "/mcp") {
      if (req.method == "POST") co_await post(req, res);
      else if (req.method == "GET") co_await get(req, res);
      else if (req.method == "DELETE") co_await del(req, res);
    }
    if (!res.answered()) {
      auto reply = bare(404);
      co_await res.send(std::move(reply));
    }
  }

  // The session named by the request, or the status to answer with: 400
  // without an id (spec 2025-06-18, "Session Management"), 404 for an
  // unknown or ended one, which tells the client to initialize again.
  std::shared_ptr<detail::Session> find_session(const Request& req, int& status) {
    if (!req.has("Mcp-Session-Id")) {
      status = 400;
      return nullptr;
    }
    std::lock_guard lock(server.sessions_mutex_);
    auto it = server.sessions_.find(req.get("Mcp-Session-Id"));
    if (it == server.sessions_.end()) {
      status = 404;
      return nullptr;
    }
    return it->second;
  }
  static Response session_status(int status) {
    return status_reply(status, status == 400 ? "Missing Mcp-Session-Id" : "Unknown session");
  }

  awaitable<void> post(Request& req, Responder& res) {
    if (std::string why = foreign_host_or_origin(req); !why.empty()) {
      {
        auto reply = status_reply(403, why);
        co_await res.send(std::move(reply));
      }
      co_return;
    }
    jsonrpc::Parsed parsed = jsonrpc::parse(req.body);
    if (parsed.batch || parsed.messages.empty()) {
      {
        auto reply = parsed.batch ? status_reply(400, "Invalid Request: batches are not supported")
                                     : json_reply(400, parsed.errors.front());
        co_await res.send(std::move(reply));
      }
      co_return;
    }
    jsonrpc::Message msg = std::move(parsed.messages.front());
    const std::string header_version = req.get("MCP-Protocol-Version");
    if (server.is_stateless(msg, header_version == kStatelessVersion)) {
      co_await post_stateless(req, res, msg);
      co_return;
    }
    // The stateful era. A server of only this era knows no server/discover,
    // and says so before asking for a session the probe cannot have.
    std::optional<Response> early;
    if (server.era_ == Era::Legacy && msg.is_request() && msg.method() == "server/discover")
      early = json_reply(200, answer(msg.id(), RpcError{jsonrpc::kMethodNotFound, "Method not found: server/discover"}));
    else if (!header_version.empty() && !mcp::is_supported(header_version))
      early = status_reply(400, "Unsupported MCP-Protocol-Version: " + header_version);
    else if (msg.is_request() && msg.method() == "initialize")
      early = initialize(msg);
    if (early) {
      co_await res.send(std::move(*early));
      co_return;
    }
    int status = 0;
    std::shared_ptr<detail::Session> session = find_session(req, status);
    if (!session) {
      {
        auto reply = session_status(status);
        co_await res.send(std::move(reply));
      }
      co_return;
    }
    bool talks = server.talks_during_call(msg) && accepts_event_stream(req);
    // Shared: the pool's task must be copyable, a message is not.
    auto m = std::make_shared<jsonrpc::Message>(std::move(msg));
    Work work = [this, session, m](const std::function<bool(std::string)>& send) {
      return Dispatched{200, server.dispatch(*m, *session, send)};
    };
    co_await run_on_pool(pool, res, talks, std::move(work));
  }

  Response initialize(const jsonrpc::Message& msg) {
    auto session = std::make_shared<detail::Session>(random_hex(16));
    Response r = json_reply(200, *server.dispatch(msg, *session, no_stream));
    r.headers.push_back({"Mcp-Session-Id", session->id});
    server.track(std::move(session));
    return r;
  }

  awaitable<void> post_stateless(Request& req, Responder& res, jsonrpc::Message& msg) {
    // A stateless client posts no responses (the server asks nothing), and
    // its notifications need no action: cancelling means closing the stream.
    if (!msg.is_request()) {
      {
        auto reply = bare(202);
        co_await res.send(std::move(reply));
      }
      co_return;
    }
    if (msg.method() == "initialize") {
      {
        auto reply = json_reply(404, no_initialize(msg.id()));
        co_await res.send(std::move(reply));
      }
      co_return;
    }
    auto call = std::make_shared<detail::Stateless>();
    const std::string version = req.get("MCP-Protocol-Version");
    std::optional<RpcError> bad = server.check_envelope(msg, &version, *call);
    if (!bad) {
      auto name = msg.method() == "tools/call" ? json::get_string(*msg.params(), "name") : std::nullopt;
      const auto tool = name ? server.find_tool(*name) : nullptr;
      bad = check_request_headers(req, msg, tool ? json::find(tool->definition, "inputSchema") : nullptr);
    }
    if (bad) {
      {
        auto reply = json_reply(http_status(bad->code, true), answer(msg.id(), std::move(*bad)));
        co_await res.send(std::move(reply));
      }
      co_return;
    }
    if (msg.method() == "subscriptions/listen") {
      co_await listen(res, msg);
      co_return;
    }
    bool talks = server.talks_during_call(msg) && accepts_event_stream(req);
    auto m = std::make_shared<jsonrpc::Message>(std::move(msg));
    Work work = [this, call, m](const std::function<bool(std::string)>& send) {
      Outcome out = server.dispatch_stateless(*m, *call, send);
      const int status = http_status(out);
      return Dispatched{status, answer(m->id(), std::move(out))};
    };
    co_await run_on_pool(pool, res, talks, std::move(work));
  }

  // A subscriptions/listen request: an SSE response that stays open, the
  // acknowledgement first, until the client goes away or the server stops.
  awaitable<void> listen(Responder& res, const jsonrpc::Message& msg) {
    auto opened = server.listen(msg, {});
    if (auto* err = std::get_if<RpcError>(&opened)) {
      int status = http_status(err->code, false);
      {
        auto reply = json_reply(status, answer(msg.id(), std::move(*err)));
        co_await res.send(std::move(reply));
      }
      co_return;
    }
    std::shared_ptr<Listener> listener = std::get<std::shared_ptr<Listener>>(std::move(opened));
    auto stream = std::make_shared<transport::http::StreamQueue>(res.executor());
    listener->channel.outbox.bind(stream);
    auto head = event_stream_head();
    auto beats = heartbeats();
    co_await res.stream(std::move(head), stream, std::move(beats));
    server.unlisten(listener.get());
    listener->channel.outbox.detach();
  }

  // Only the stateful era has GET streams and sessions to delete.
  bool stateless_only() const { return server.era_ == Era::Stateless; }

  awaitable<void> del(Request& req, Responder& res) {
    int status = 0;
    std::shared_ptr<detail::Session> session;
    std::optional<Response> refused;
    if (stateless_only()) refused = bare(405, "POST");
    else if (std::string why = foreign_host_or_origin(req); !why.empty()) refused = status_reply(403, why);
    else if (!(session = find_session(req, status))) refused = bare(status);
    if (refused) {
      co_await res.send(std::move(*refused));
      co_return;
    }
    server.untrack(session->id);
    session->close("the client ended the session");
    {
      auto reply = bare(200);
      co_await res.send(std::move(reply));
    }
  }

  awaitable<void> get(Request& req, Responder& res) {
    int status = 0;
    std::shared_ptr<detail::Session> session;
    std::optional<Response> refused;
    if (stateless_only()) refused = bare(405, "POST");
    // Without subscriptions nothing is ever sent outside a call, so there
    // is no standalone SSE stream (spec: 405).
    else if (!server.subscriptions_) refused = bare(405, "POST, DELETE");
    else if (std::string why = foreign_host_or_origin(req); !why.empty()) refused = status_reply(403, why);
    else if (!(session = find_session(req, status))) refused = session_status(status);
    else if (!session->channel.outbox.attach())
      refused = status_reply(409, "Conflict: this session already has a GET stream open");
    if (refused) {
      co_await res.send(std::move(*refused));
      co_return;
    }
    auto stream = std::make_shared<transport::http::StreamQueue>(res.executor());
    session->channel.outbox.bind(stream);
    auto head = event_stream_head();
    auto beats = heartbeats();
    co_await res.stream(std::move(head), stream, std::move(beats));
    session->channel.outbox.detach();
  }
};

int Server::serve_http(int port) {
  // Block the stop signals before any thread starts, so they all inherit
  // the mask and only the sigwait below ever receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  transport::Io io(2);
  // Tool handlers block (a person answering, a sleep): each call gets a
  // pool thread, so slow calls never starve the others.
  WorkerPool pool(2, 256);
  Http http{*this, pool};
  transport::http::ListenerOptions opts;
  opts.host = "127.0.0.1";
  opts.port = port;
  opts.max_body_bytes = 256 << 20;
  transport::http::Listener listener(io.context(), opts,
                                     [&http](Request& req, Responder& res) { return http.handle(req, res); });
  auto bound = listener.bind();
  if (!bound) {
    log_line("cannot bind 127.0.0.1:" + std::to_string(port));
    return 1;
  }
  std::printf("listening http://127.0.0.1:%d/mcp\n", *bound);
  std::fflush(stdout);

  std::jthread background;
  if (background_) background = std::jthread(background_);

  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    // Ending the sessions and listen streams ends their SSE streams and
    // wakes calls waiting for a client's answer, so the requests in flight
    // that the listener waits for finish promptly.
    for (const auto& session : sessions()) session->close("the server is shutting down");
    for (const auto& l : listeners()) l->channel.outbox.close(l->closing_result());
    listener.stop();
  });
  listener.start();
  // Returns after stop(), once every connection has closed.
  listener.wait();
  stopper.join();
  return 0;
}

// ---------------------------------------------------------------------------
// Command line

int run_main(Server& server, int argc, char** argv, const std::vector<Flag>& extra) {
  const std::string prog = argc > 0 ? argv[0] : "server";
  auto usage = [&](std::ostream& out) {
    auto row = [&](const std::string& left, std::string_view help) {
      out << "  " << std::left << std::setw(20) << left << help << "\n";
    };
    out << "usage: " << prog << " [--http PORT] [--era ERA]";
    for (const Flag& f : extra) out << " [" << f.name << " VALUE]";
    out << "\n";
    row("(default)", "serve MCP over stdin/stdout");
    row("--http PORT", "serve Streamable HTTP on 127.0.0.1:PORT/mcp (0 = any free port)");
    row("--era ERA", "protocol eras to accept: legacy (sessions, the default), 2026 (stateless "
                     "2026-07-28 only) or both");
    for (const Flag& f : extra) row(f.name + " VALUE", f.help);
  };
  auto fail = [&](const std::string& why) {
    std::cerr << prog << ": " << why << "\n";
    usage(std::cerr);
    return 2;
  };

  // A client that goes away mid-reply must not kill the server with SIGPIPE;
  // the failed write is enough.
  signal(SIGPIPE, SIG_IGN);

  std::optional<int> http_port;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      usage(std::cout);
      return 0;
    }
    if (i + 1 >= argc) return fail("missing value for " + std::string(flag));
    const std::string_view value = argv[++i];
    if (flag == "--http") {
      int port = -1;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), port);
      if (ec != std::errc() || p != value.data() + value.size() || port < 0 || port > 65535)
        return fail("invalid port: " + std::string(value));
      http_port = port;
      continue;
    }
    if (flag == "--era") {
      if (value == "legacy")
        server.set_era(Era::Legacy);
      else if (value == "2026")
        server.set_era(Era::Stateless);
      else if (value == "both")
        server.set_era(Era::Both);
      else
        return fail("invalid era (legacy, 2026 or both): " + std::string(value));
      continue;
    }
    auto f = std::find_if(extra.begin(), extra.end(), [&](const Flag& e) { return e.name == flag; });
    if (f == extra.end()) return fail("unknown flag: " + std::string(flag));
    try {
      if (!f->apply(value)) return fail("invalid value for " + f->name + ": " + std::string(value));
    } catch (const std::exception& e) {  // e.g. a flag that adds a tool twice
      return fail(e.what());
    }
  }
  return http_port ? server.serve_http(*http_port) : server.serve_stdio();
}

}  // namespace mcpgw::examples
