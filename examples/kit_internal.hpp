#pragma once
// The example kit's internals shared by its source files (not part of the
// kit's interface, server_kit.hpp): the per-client state of both eras, the
// listen streams, and the few helpers every transport answers with.
//   server_kit.cpp     dispatch and the MCP methods of both eras, run_main
//   kit_registry.cpp   tools, resources, prompts and their definitions
//   kit_context.cpp    CallContext and the helpers handlers build results with
//   kit_stateless.cpp  the 2026-07-28 revision: envelope, requestState (MRTR),
//                      server/discover, subscriptions/listen
//   kit_stdio.cpp      the stdio transport
//   kit_http.cpp       the Streamable HTTP transport
#include <array>
#include <atomic>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "server_kit.hpp"
#include "transport/http_listener.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::examples {

namespace detail {

/// The SSE frame of one message on a standalone or POST stream.
inline std::string sse_event(std::string_view data) {
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
    util::MutexLock lock(mutex_);
    if (attached_ || closed_) return false;
    attached_ = true;
    return true;
  }
  /// The attached stream's writer is ready: what waited goes first.
  void bind(std::shared_ptr<transport::http::StreamQueue> stream) {
    util::MutexLock lock(mutex_);
    stream_ = std::move(stream);
    for (auto& m : queue_) stream_->push(sse_event(m));
    queue_.clear();
    if (closed_) end_stream();
  }
  void detach() {
    util::MutexLock lock(mutex_);
    attached_ = false;
    queue_.clear();
    stream_.reset();
  }
  bool push(std::string msg) {
    util::MutexLock lock(mutex_);
    if (!attached_ || closed_) return false;
    if (stream_) return stream_->push(sse_event(msg));
    queue_.push_back(std::move(msg));
    return true;
  }
  /// Ends the stream once what is queued, then `last` (if any), is written.
  void close(std::string last = {}) {
    util::MutexLock lock(mutex_);
    if (closed_) return;
    closed_ = true;
    last_ = std::move(last);
    if (stream_) end_stream();
  }

 private:
  void end_stream() REQUIRES(mutex_) {
    if (!last_.empty()) stream_->push(sse_event(last_));
    stream_->close();
  }
  util::Mutex mutex_;
  std::deque<std::string> queue_ GUARDED_BY(mutex_);
  std::shared_ptr<transport::http::StreamQueue> stream_ GUARDED_BY(mutex_);
  std::string last_ GUARDED_BY(mutex_);
  bool attached_ GUARDED_BY(mutex_) = false;
  bool closed_ GUARDED_BY(mutex_) = false;
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
    util::MutexLock lock(mutex_);
    capabilities_ = json::clone(caps);
  }
  bool client_supports(std::string_view name) {
    util::MutexLock lock(mutex_);
    const json::Value* cap = json::find(capabilities_, name);
    return cap && cap->IsObject();
  }
  json::Document client_capabilities() {
    util::MutexLock lock(mutex_);
    return json::clone(capabilities_);
  }

  void subscribe(std::string_view uri, bool on) {
    util::MutexLock lock(mutex_);
    if (on)
      subscriptions_.emplace(uri);
    else if (auto it = subscriptions_.find(uri); it != subscriptions_.end())
      subscriptions_.erase(it);
  }
  bool subscribed(std::string_view uri) {
    util::MutexLock lock(mutex_);
    return subscriptions_.find(uri) != subscriptions_.end();
  }

  /// Registers a request to the client: its id and where the answer lands.
  std::pair<std::int64_t, std::future<Outcome>> begin_request() {
    util::MutexLock lock(mutex_);
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
    util::MutexLock lock(mutex_);
    pending_.erase(request_id);
  }
  /// Hands a client's response to the request waiting for it; responses to
  /// nothing we asked (or asked and gave up on) are dropped. An error
  /// answer keeps the client's code, message and data, so a handler can
  /// tell "not supported" (and fall back) from other failures.
  void resolve(const jsonrpc::Message& response) {
    auto rid = response.id().int64();
    if (!rid) return;
    std::promise<Outcome> promise;
    {
      util::MutexLock lock(mutex_);
      auto it = pending_.find(*rid);
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
      util::MutexLock lock(mutex_);
      closed_ = true;
      pending.swap(pending_);
    }
    for (auto& [request_id, promise] : pending) promise.set_value(RpcError{jsonrpc::kInternalError, std::string(why)});
    channel.outbox.close();
  }

 private:
  util::Mutex mutex_;
  json::Document capabilities_ GUARDED_BY(mutex_){rapidjson::kObjectType};
  std::set<std::string, std::less<>> subscriptions_ GUARDED_BY(mutex_);
  std::map<std::int64_t, std::promise<Outcome>> pending_ GUARDED_BY(mutex_);
  std::int64_t next_request_id_ GUARDED_BY(mutex_) = 1;
  bool closed_ GUARDED_BY(mutex_) = false;
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

/// MCP log level names, least severe first: LogLevel's order.
inline constexpr std::array<std::string_view, 8> kLogLevels = {
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};

/// A line on stderr: the server's own diagnostics (stdout is the protocol's).
void log_line(std::string_view what);
/// `text` parsed; std::invalid_argument naming `what` when it does not parse
/// (a handler's or a definition's bug).
json::Document parse_or_throw(const JsonText& text, std::string_view what);
/// The serialised JSON-RPC response to request `id`.
std::string answer(const jsonrpc::Id& id, Outcome out);
/// The answer to initialize in a stateless request: the method is gone in
/// 2026-07-28, and a client that sent it learns to use server/discover.
std::string no_initialize(const jsonrpc::Id& id);
/// The input_required answer of a stateless call whose handler is waiting
/// for input (kit_stateless.cpp); an internal error when its requestState
/// cannot be issued.
Outcome input_required(const Stateless& call);

}  // namespace detail

/// One subscriptions/listen stream: what it asked to hear and how to reach it.
struct Server::Listener {
  jsonrpc::Id id;  // the listen request's id, which tags everything sent on the stream
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
    json::Document p = params ? json::clone(*params) : json::Document(rapidjson::kObjectType);
    auto& a = p.GetAllocator();
    json::Value meta(rapidjson::kObjectType);
    meta.AddMember(json::ref(mcp::kMetaSubscriptionId), id.value(a), a);
    json::set(p, "_meta", std::move(meta), a);
    channel.notify(jsonrpc::make_notification(method, &p));
  }

  /// The result that ends the stream gracefully (server shutdown).
  std::string closing_result() const {
    json::Document r(rapidjson::kObjectType);
    auto& a = r.GetAllocator();
    r.AddMember("resultType", "complete", a);
    json::Value meta(rapidjson::kObjectType);
    meta.AddMember(json::ref(mcp::kMetaSubscriptionId), id.value(a), a);
    r.AddMember("_meta", meta, a);
    return jsonrpc::make_result(id, r);
  }
};

}  // namespace mcpgw::examples
