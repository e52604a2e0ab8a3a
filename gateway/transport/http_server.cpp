#include "transport/http_server.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>

#include "mcp/era.hpp"
#include "mcp/protocol.hpp"
#include "mcp/trace.hpp"
#include "transport/http_admission.hpp"
#include "transport/http_cors.hpp"
#include "transport/http_listener.hpp"
#include "transport/http_post_stream.hpp"
#include "transport/http_sessions.hpp"
#include "transport/sse.hpp"
#include "util/memory.hpp"
#include "util/random.hpp"

namespace mcpgw::transport {
namespace {

using Clock = std::chrono::steady_clock;
template <typename T>
using awaitable = http::awaitable<T>;
constexpr const char* kJson = "application/json";
constexpr const char* kEventStream = "text/event-stream";
/// A stateless request still running after this is answered as a stream.
constexpr std::chrono::milliseconds kStreamAfter{200};
/// Heartbeats of such a stream: how soon a client that left is noticed.
constexpr std::chrono::milliseconds kCallHeartbeat{250};

http::StreamOptions heartbeats(std::chrono::milliseconds every, bool prime) {
  return {every, std::string(sse::kHeartbeat), prime};
}

/// A response with no body. Responses are built outside the coroutines,
/// and every argument of a co_await is a named local: GCC 12 destroys some
/// temporaries of a co_await full-expression twice.
http::Response bare(int status) { return http::Response{status, {}, {}}; }

http::Response simple(SimpleResponse r) {
  http::Response out;
  out.status = r.status;
  out.headers.push_back({"Content-Type", std::move(r.content_type)});
  for (auto& [name, value] : r.headers) out.headers.push_back({std::move(name), std::move(value)});
  out.body = std::move(r.body);
  return out;
}

http::Response event_stream_head(std::vector<http::Header> extra = {}) {
  http::Response head{200, {{"Content-Type", kEventStream}, {"Cache-Control", "no-cache"}}, {}};
  for (auto& h : extra) head.headers.push_back(std::move(h));
  return head;
}

/// The mode named by `path` under `base` ("" for base itself); nothing when
/// `path` is not the MCP endpoint.
std::optional<std::string> mode_of(std::string_view path, std::string_view base) {
  if (path == base) return std::string();
  if (path.size() <= base.size() + 1 || path.substr(0, base.size()) != base || path[base.size()] != '/')
    return std::nullopt;
  std::string_view mode = path.substr(base.size() + 1);
  bool ok = std::all_of(mode.begin(), mode.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  return ok ? std::optional<std::string>(mode) : std::nullopt;
}

}  // namespace

struct HttpServer::Impl {
  Impl(HttpServerOptions o, Handler& h, Io& i)
      : opts(std::move(o)), handler(h), io(i), admission(opts, handler, nullptr), sessions(handler, io.context(), opts.session_idle_s) {}

  HttpServerOptions opts;
  Handler& handler;
  Io& io;
  Admission admission;
  SessionStore sessions;
  std::map<std::string, std::function<SimpleResponse()>, std::less<>> gets;
  std::set<std::string, std::less<>> token_gets;  ///< GetAccess::Token paths
  std::map<std::string, Route, std::less<>> routes;
  std::unique_ptr<http::Listener> listener;
  std::mutex listens_mu;
  std::set<std::shared_ptr<PostStream>> listens;  // open subscriptions/listen streams
  bool stopping = false;                          // guarded by listens_mu
  SharedSessions* shared = nullptr;               // cluster: sealed ids, cluster-wide DELETE
  MemoryTrimmer trimmer;                          // after large bodies

  awaitable<void> handle(http::Request& req, http::Responder& res);
  awaitable<void> route(http::Request& req, http::Responder& res);
  awaitable<void> post(http::Request& req, http::Responder& res, const std::string& mode);
  awaitable<void> post_stateless(http::Request& req, http::Responder& res, ClientContext& ctx, jsonrpc::Parsed& parsed,
                                 bool accept_json, bool accept_sse);
  awaitable<void> get(http::Request& req, http::Responder& res, const std::string& mode);
  awaitable<void> del(http::Request& req, http::Responder& res, const std::string& mode);

  /// Resolves Mcp-Session-Id for a non-initialize request; the refusal, or
  /// nothing with `out` set.
  std::optional<http::Response> lookup(const http::Request& req, const ClientContext& ctx,
                                       std::shared_ptr<HttpSession>& out) {
    std::string sid = req.get("Mcp-Session-Id");
    if (sid.empty()) return json_error(400, jsonrpc::kInvalidRequest, "Bad Request: Mcp-Session-Id header is required");
    out = sessions.find(sid);
    if (!out && shared)
      if (auto refused = restore(sid, ctx, out)) return refused;
    // A session of another mode or principal is as good as unknown to this
    // caller: never reveal that it exists.
    if (!out || out->mode != ctx.mode || out->principal != ctx.principal)
      return json_error(404, jsonrpc::kInvalidRequest, "Session not found");
    out->touch();
    return std::nullopt;
  }

  /// Serves here a session another replica began (or this one forgot):
  /// `out` is its copy, or null for an id that does not open.
  std::optional<http::Response> restore(const std::string& sid, const ClientContext& ctx,
                                        std::shared_ptr<HttpSession>& out) {
    auto opened = shared->open(sid);
    if (auto* refusal = std::get_if<OpenRefusal>(&opened)) {
      if (refusal->unavailable) return json_error(503, jsonrpc::kInternalError, refusal->message);
      return std::nullopt;
    }
    const SealedSession& sealed = std::get<SealedSession>(opened);
    if (sealed.mode != ctx.mode || sealed.principal != ctx.principal) return std::nullopt;
    // A copy counts toward limits.max_sessions like a session begun here.
    if (!sessions.make_room(static_cast<std::size_t>(admission.max_sessions()))) return admission.sessions_full(ctx);
    out = sessions.find_or_add(sid, [&]() -> std::shared_ptr<HttpSession> {
      auto resumed = handler.resume_session(ctx, sealed);
      return resumed ? HttpSession::make(sid, std::move(*resumed), ctx) : nullptr;
    });
    return std::nullopt;
  }
};

awaitable<void> HttpServer::Impl::handle(http::Request& req, http::Responder& res) {
  auto origin = admission.cors_origin(req);
  if (!origin) {
    // A preflight from an origin we do not grant is refused as its request would be.
    if (req.method == "OPTIONS" && req.has("Origin")) {
      admission.on_refused({"origin", "", "preflight from Origin " + req.get("Origin"), ""});
      auto reply = json_error(403, jsonrpc::kInvalidRequest, "Forbidden: Origin not allowed");
      co_await res.send(std::move(reply));
      co_return;
    }
    co_await route(req, res);
    co_return;
  }
  if (req.method == "OPTIONS") {
    auto reply = cors_preflight(req, *origin);
    co_await res.send(std::move(reply));
    co_return;
  }
  CorsResponder cors(res, std::move(*origin));
  co_await route(req, cors);
}

awaitable<void> HttpServer::Impl::route(http::Request& req, http::Responder& res) {
  bool failed = false;
  try {
    std::string_view path = req.path();
    if (auto meta = req.method == "GET" ? admission.metadata(path) : std::nullopt) {
      co_await res.send(std::move(*meta));
    } else if (auto mode = mode_of(path, opts.path)) {
      if (req.method == "POST") {
        co_await post(req, res, *mode);
        trimmer.after(req.body.size());
      }
      else if (req.method == "GET") co_await get(req, res, *mode);
      else if (req.method == "DELETE") co_await del(req, res, *mode);
    } else if (auto it = gets.find(path); it != gets.end() && (req.method == "GET" || req.method == "HEAD")) {
      std::optional<http::Response> refused;
      if (token_gets.contains(path)) refused = co_await admission.admit_operator(req);
      auto reply = refused ? std::move(*refused) : simple(it->second());
      co_await res.send(std::move(reply));
    } else if (auto route = routes.find(path); route != routes.end()) {
      auto reply = co_await route->second(req);
      co_await res.send(std::move(reply));
    }
    if (!res.answered()) {
      auto reply = bare(404);
      co_await res.send(std::move(reply));
    }
  } catch (const std::exception& e) {
    spdlog::error("HTTP handler failed: {}", e.what());
    failed = true;
  }
  if (failed && !res.answered()) {
    auto reply = json_error(500, jsonrpc::kInternalError, "Internal error");
    co_await res.send(std::move(reply));
  }
}

// --- POST ------------------------------------------------------------------

awaitable<void> HttpServer::Impl::post(http::Request& req, http::Responder& res, const std::string& mode) {
  ClientContext ctx;
  if (auto refused = co_await admission.admit(req, mode, ctx)) {
    co_await res.send(std::move(*refused));
    co_return;
  }
  std::string ctype = lower(req.get("Content-Type"));
  if (ctype.rfind(kJson, 0) != 0) {
    {
      auto reply = json_error(415, jsonrpc::kInvalidRequest,
                                 "Unsupported Media Type: Content-Type must be application/json");
      co_await res.send(std::move(reply));
    }
    co_return;
  }
  std::string accept = lower(req.get("Accept"));
  bool any = accept.empty() || accept.find("*/*") != std::string::npos;
  bool accept_json = any || accept.find(kJson) != std::string::npos;
  bool accept_sse = any || accept.find(kEventStream) != std::string::npos;
  if (!accept_json && !accept_sse) {
    {
      auto reply = json_error(406, jsonrpc::kInvalidRequest,
                                 "Not Acceptable: Accept must include application/json or text/event-stream");
      co_await res.send(std::move(reply));
    }
    co_return;
  }
  if (req.body_too_large) {
    {
      auto reply = json_error(413, jsonrpc::kInvalidRequest,
                                 "Payload Too Large: body exceeds " + std::to_string(opts.max_body_bytes) + " bytes");
      co_await res.send(std::move(reply));
    }
    co_return;
  }
  const BatchLimits batches = admission.batch_limits();
  jsonrpc::Parsed parsed = jsonrpc::parse(req.body, batches.max_size);
  if (parsed.oversized_batch) {
    std::string reply = batch_refusal(parsed.oversized_batch, batches.max_size);
    admission.on_refused({"batch", ctx.principal,
                          "a batch of " + std::to_string(parsed.oversized_batch) + " messages, over limits.max_batch_size",
                          ctx.mode});
    co_await res.send(json_response(400, std::move(reply)));
    co_return;
  }
  // W3C trace context: the handler finds it where stdio clients put it.
  if (req.has("traceparent"))
    for (auto& m : parsed.messages) mcp::adopt_traceparent(m, req.get("traceparent"));
  if (parsed.messages.empty() && !parsed.batch) {
    {
      auto reply = json_response(400, parsed.errors.front());
      co_await res.send(std::move(reply));
    }
    co_return;
  }
  // Which revision the client speaks: a session means the stateful ones;
  // so does a request without the stateless revision's `_meta` claim whose
  // header (if any) names a stateful version. Everything else is a
  // stateless request and gets that revision's precise errors.
  bool has_version = req.has("MCP-Protocol-Version");
  std::string version = req.get("MCP-Protocol-Version");
  bool claims = !parsed.batch && parsed.messages.size() == 1 && mcp::claimed_version(parsed.messages.front());
  bool stateful = req.has("Mcp-Session-Id") || (!claims && (!has_version || mcp::is_supported(version)));
  if (!stateful) {
    co_await post_stateless(req, res, ctx, parsed, accept_json, accept_sse);
    co_return;
  }
  if (has_version && !mcp::is_supported(version)) {
    {
      auto reply = json_error(400, jsonrpc::kInvalidRequest, "Bad Request: unsupported MCP-Protocol-Version " + version);
      co_await res.send(std::move(reply));
    }
    co_return;
  }
  bool init = std::any_of(parsed.messages.begin(), parsed.messages.end(),
                          [](const jsonrpc::Message& m) { return m.method() == "initialize"; });
  std::shared_ptr<HttpSession> hs;
  std::vector<http::Header> extra;
  if (init) {
    std::optional<http::Response> refused;
    if (parsed.messages.size() != 1 || parsed.batch)
      refused = json_error(400, jsonrpc::kInvalidRequest, "Invalid Request: initialize must be sent alone");
    else if (req.has("Mcp-Session-Id") && sessions.find(req.get("Mcp-Session-Id")))
      refused = json_error(400, jsonrpc::kInvalidRequest, "Invalid Request: session is already initialized");
    else if (!sessions.make_room(static_cast<std::size_t>(admission.max_sessions())))
      refused = admission.sessions_full(ctx);
    Result<std::string> id = random_hex(16);
    if (!refused && shared) {
      id = shared->seal(describe_session(ctx, parsed.messages.front()));
      if (!id) refused = json_error(400, jsonrpc::kInvalidRequest, "Invalid Request: " + id.error());
    }
    auto opened = refused ? Result<std::shared_ptr<Session>>(Error{""}) : handler.open_session(ctx);
    if (!refused && !opened) refused = json_error(403, jsonrpc::kInvalidRequest, opened.error());
    if (refused) {
      co_await res.send(std::move(*refused));
      co_return;
    }
    hs = HttpSession::make(*id, std::move(*opened), ctx);
    sessions.add(*id, hs);
    extra.push_back({"Mcp-Session-Id", *id});
  } else if (auto refused = lookup(req, ctx, hs)) {
    co_await res.send(std::move(*refused));
    co_return;
  } else {
    hs->session->set_subject_token(ctx.subject_token);
  }

  auto stream = std::make_shared<PostStream>(res.executor(), opts);
  struct Work {
    jsonrpc::Message msg;
    std::shared_ptr<Exchange> ex;
    std::optional<std::string> over;  ///< a limit's refusal
  };
  std::vector<Work> work;
  for (auto& m : parsed.messages) {
    std::shared_ptr<Exchange> ex;
    std::optional<std::string> over;
    if (m.is_request()) {
      over = admission.limit_call(ctx, m, hs->in_flight.load());
      ex = std::make_shared<PostExchange>(stream, accept_sse, hs);
      stream->exchanges.push_back(ex);
      ++stream->finals_expected;
    }
    work.push_back({std::move(m), std::move(ex), std::move(over)});
  }
  for (auto& err : parsed.errors) {
    ++stream->finals_expected;
    stream->push_final(std::move(err));
  }
  // A batch's requests run batch_concurrency at a time, in order.
  auto gate = parsed.batch ? std::make_shared<BatchGate>(batches.concurrency) : nullptr;
  for (auto& w : work) {
    if (w.over) w.ex->reply(std::move(*w.over));
    else if (!gate || !w.ex) handler.handle(hs->session, std::move(w.msg), std::move(w.ex));
    else {
      static_cast<PostExchange&>(*w.ex).on_reply([gate] { gate->done(); });
      gate->start([this, s = hs->session, m = std::make_shared<jsonrpc::Message>(std::move(w.msg)), ex = w.ex] {
        // The client went away while it waited its turn: it does not run.
        if (ex->cancelled()) ex->reply(jsonrpc::make_error(m->id(), jsonrpc::kInternalError, "cancelled: the client went away"));
        else handler.handle(s, std::move(*m), ex);
      });
    }
  }

  if (stream->finals_expected == 0) {
    {
      auto reply = bare(202);
      co_await res.send(std::move(reply));
    }
    co_return;
  }
  Answer answer = co_await wait_first(*stream, accept_json, accept_sse);
  if (init && stream->complete()) {
    // A failed initialize leaves no session behind.
    std::lock_guard lk(stream->mu);
    auto it = std::find_if(stream->events.begin(), stream->events.end(), [](const auto& e) { return e.final; });
    bool failed = false;
    if (it != stream->events.end()) {
      auto reply = json::parse(it->msg);
      failed = !reply || json::find(*reply, "error");
    }
    if (failed) {
      sessions.remove(hs->session->id());
      extra.clear();
    }
  }
  if (answer == Answer::Json) {
    std::string body;
    {
      std::lock_guard lk(stream->mu);
      if (parsed.batch) {
        body.push_back('[');
        for (auto& e : stream->events) {
          if (body.size() > 1) body += ',';
          body += e.msg;
        }
        body.push_back(']');
      } else {
        body = std::move(stream->events.front().msg);
      }
    }
    auto r = json_response(200, std::move(body));
    for (auto& h : extra) r.headers.push_back(std::move(h));
    co_await res.send(std::move(r));
    co_return;
  }
  stream->start_streaming();
  auto head = event_stream_head(std::move(extra));
  auto beats = heartbeats(std::chrono::milliseconds(opts.heartbeat_ms), false);
  auto end = co_await res.stream(std::move(head), stream->queue, std::move(beats));
  if (end != http::StreamEnd::Done) stream->cancel_all();
  if (std::size_t dropped = stream->dropped())
    spdlog::warn("session {}: the client read a response stream too slowly: {} message(s) dropped (progress "
                 "kept its latest, answers all went out)",
                 hs->session->id().substr(0, 8), dropped);
}

// --- POST, MCP 2026-07-28 (stateless) -----------------------------------

awaitable<void> HttpServer::Impl::post_stateless(http::Request& req, http::Responder& res, ClientContext& ctx,
                                                 jsonrpc::Parsed& parsed, bool accept_json, bool accept_sse) {
  if (parsed.batch || parsed.messages.size() != 1) {
    {
      auto reply = json_error(400, jsonrpc::kInvalidRequest, "Bad Request: MCP 2026-07-28 does not allow JSON-RPC batches");
      co_await res.send(std::move(reply));
    }
    co_return;
  }
  jsonrpc::Message& m = parsed.messages.front();
  // Clients of this revision cancel by closing the stream and answer no
  // requests (there are none): a notification or response changes nothing.
  if (!m.is_request()) {
    {
      auto reply = bare(202);
      co_await res.send(std::move(reply));
    }
    co_return;
  }
  std::optional<http::Response> refusal;
  auto refuse = [&](int code, const std::string& message, const json::Value* data = nullptr) {
    refusal = json_response(mcp::http_status(code, true), jsonrpc::make_error(m.id(), code, message, data));
  };
  std::string method(m.method());
  if (!req.has("MCP-Protocol-Version")) {
    refuse(mcp::kHeaderMismatch, "Header mismatch: the MCP-Protocol-Version header is required");
  } else if (auto envelope = mcp::read_envelope(m, req.get("MCP-Protocol-Version"));
             auto* r = std::get_if<mcp::Refusal>(&envelope)) {
    refuse(r->code, r->message, r->data.IsNull() ? nullptr : &r->data);
  } else if (!req.has("Mcp-Method")) {
    refuse(mcp::kHeaderMismatch, "Header mismatch: the body names method " + method + " but the Mcp-Method header is absent");
  } else if (auto h = mcp::decode_header_value(req.get("Mcp-Method")); !h || *h != method) {
    refuse(mcp::kHeaderMismatch,
           "Header mismatch: the Mcp-Method header names '" + req.get("Mcp-Method") + "' but the body names " + method);
  } else if (const char* key = mcp::named_param(method)) {
    auto body_name = m.params() ? json::get_string(*m.params(), key) : std::nullopt;
    if (body_name) {
      if (!req.has("Mcp-Name")) {
        refuse(mcp::kHeaderMismatch, "Header mismatch: the body carries params." + std::string(key) + "=\"" +
                                         std::string(*body_name) + "\" but the Mcp-Name header is absent");
      } else if (auto name = mcp::decode_header_value(req.get("Mcp-Name")); !name) {
        refuse(mcp::kHeaderMismatch, "Header mismatch: the Mcp-Name header is not valid =?base64?...?=");
      } else if (!mcp::header_matches(*name, *body_name)) {
        refuse(mcp::kHeaderMismatch, "Header mismatch: the Mcp-Name header names \"" + *name +
                                         "\" but the body carries params." + key + "=\"" + std::string(*body_name) +
                                         "\"");
      }
    }
  }
  if (!refusal) {
    if (auto over = admission.limit_call(ctx, m, -1)) refusal = json_response(200, std::move(*over));
  }
  if (refusal) {
    co_await res.send(std::move(*refusal));
    co_return;
  }
  ctx.stateless = true;
  ctx.has_param_headers = true;
  for (const auto& [name, value] : req.headers) {
    std::string n = lower(name);
    if (n.rfind("mcp-param-", 0) == 0) ctx.param_headers.emplace_back(n.substr(10), value);
  }
  auto opened = handler.open_session(ctx);
  if (!opened) {
    {
      auto reply = json_response(403, jsonrpc::make_error(m.id(), jsonrpc::kInvalidRequest, opened.error()));
      co_await res.send(std::move(reply));
    }
    co_return;
  }
  std::shared_ptr<Session> session = std::move(*opened);
  session->bind(random_hex(16), ctx, [](std::string) { return false; });
  auto stream = std::make_shared<PostStream>(res.executor(), opts);
  auto ex = std::make_shared<PostExchange>(stream, accept_sse);
  stream->exchanges.push_back(ex);
  stream->finals_expected = 1;
  bool listen = method == "subscriptions/listen";
  if (listen) {
    std::lock_guard lk(listens_mu);
    // A listen lasts until its client leaves, or until the server stops.
    if (stopping) ex->cancel();
    listens.insert(stream);
  }
  handler.handle(session, std::move(m), std::move(ex));
  // A client of this revision cancels by closing its stream, and a socket
  // is only seen closed when written to: a request still running after a
  // moment is answered as a stream, with frequent heartbeats.
  Answer answer = co_await wait_first(*stream, accept_json, accept_sse, kStreamAfter);
  if (answer == Answer::Stream) {
    stream->start_streaming();
    auto beats = listen ? heartbeats(std::chrono::milliseconds(opts.heartbeat_ms), false) : heartbeats(kCallHeartbeat, true);
    auto head = event_stream_head();
    co_await res.stream(std::move(head), stream->queue, std::move(beats));
    // However the stream ended, nothing waits for this request any more.
    stream->cancel_all();
  }
  if (listen) {
    std::lock_guard lk(listens_mu);
    listens.erase(stream);
  }
  handler.close_session(session);
  if (answer == Answer::Stream) co_return;
  std::string body;
  {
    std::lock_guard lk(stream->mu);
    body = std::move(stream->events.front().msg);
  }
  auto reply = json::parse(body);
  const json::Value* error = reply ? json::find(*reply, "error") : nullptr;
  const json::Value* code = error ? json::find(*error, "code") : nullptr;
  {
    auto reply = json_response(code && code->IsInt() ? mcp::http_status(code->GetInt(), false) : 200, std::move(body));
    co_await res.send(std::move(reply));
  }
}

// --- GET -------------------------------------------------------------------

awaitable<void> HttpServer::Impl::get(http::Request& req, http::Responder& res, const std::string& mode) {
  ClientContext ctx;
  std::optional<http::Response> refused = co_await admission.admit(req, mode, ctx);
  std::string accept = lower(req.get("Accept"));
  if (!refused && accept.find(kEventStream) == std::string::npos && accept.find("*/*") == std::string::npos)
    refused = json_error(406, jsonrpc::kInvalidRequest, "Not Acceptable: Accept must include text/event-stream");
  std::shared_ptr<HttpSession> hs;
  if (!refused) refused = lookup(req, ctx, hs);
  auto queue = std::make_shared<http::StreamQueue>(res.executor(), opts.stream_max_messages, opts.stream_max_bytes);
  if (!refused && !hs->open_stream(queue))
    refused = json_error(409, jsonrpc::kInvalidRequest, "Conflict: this session already has a GET stream open");
  if (refused) {
    co_await res.send(std::move(*refused));
    co_return;
  }
  // Tell the client right away that the stream is up.
  auto head = event_stream_head();
  auto beats = heartbeats(std::chrono::milliseconds(opts.heartbeat_ms), true);
  handler.stream_opened(hs->session);
  auto end = co_await res.stream(std::move(head), queue, std::move(beats));
  hs->close_stream(queue);
  handler.stream_closed(hs->session);
  hs->touch();
  if (end == http::StreamEnd::Overflow)
    spdlog::warn("session {}: GET stream closed: the client stopped reading ({} messages waiting)",
                 hs->session->id().substr(0, 8), opts.stream_max_messages);
}

// --- DELETE ----------------------------------------------------------------

awaitable<void> HttpServer::Impl::del(http::Request& req, http::Responder& res, const std::string& mode) {
  ClientContext ctx;
  std::shared_ptr<HttpSession> hs;
  std::optional<http::Response> refused = co_await admission.admit(req, mode, ctx);
  if (!refused) refused = lookup(req, ctx, hs);
  if (refused) {
    co_await res.send(std::move(*refused));
    co_return;
  }
  if (shared) {
    // Acknowledged only once every replica will refuse the id.
    auto ended = co_await end_everywhere(*shared, res.executor(), hs->session->id());
    if (!ended) {
      auto reply = json_error(503, jsonrpc::kInternalError, ended.error());
      co_await res.send(std::move(reply));
      co_return;
    }
  }
  sessions.remove(hs->session->id());
  {
    auto reply = bare(200);
    co_await res.send(std::move(reply));
  }
}

// --- HttpServer ------------------------------------------------------------

HttpServer::HttpServer(HttpServerOptions opts, Handler& handler, Io& io)
    : impl_(std::make_unique<Impl>(std::move(opts), handler, io)) {
  const auto& o = impl_->opts;
  http::ListenerOptions lo;
  lo.host = o.host;
  lo.port = o.port;
  lo.reuse_port = o.reuse_port;
  lo.tls_cert_file = o.tls_cert_file;
  lo.tls_key_file = o.tls_key_file;
  lo.max_body_bytes = o.max_body_bytes;
  lo.header_timeout = std::chrono::milliseconds(o.header_timeout_ms);
  lo.idle_timeout = std::chrono::milliseconds(o.idle_timeout_ms);
  Impl* im = impl_.get();
  impl_->listener = std::make_unique<http::Listener>(
      io, std::move(lo), [im](http::Request& req, http::Responder& res) { return im->handle(req, res); });
}

HttpServer::~HttpServer() {
  stop();
  impl_->listener->wait();
}

void HttpServer::add_route(const std::string& path, Route fn) { impl_->routes[path] = std::move(fn); }

http::awaitable<std::variant<std::string, http::Response>> HttpServer::authenticate(const http::Request& req) const {
  ClientContext ctx;
  if (auto refused = co_await impl_->admission.admit(req, "", ctx)) co_return std::move(*refused);
  co_return ctx.principal;
}

void HttpServer::add_get(const std::string& path, std::function<SimpleResponse()> fn, GetAccess access) {
  impl_->gets[path] = std::move(fn);
  if (access == GetAccess::Token) impl_->token_gets.insert(path);
}

Result<int> HttpServer::bind() {
  const auto& o = impl_->opts;
  if (auto applied = set_access(o.access, o.limits, o.forward_headers); !applied) return Error{applied.error()};
  return impl_->listener->bind();
}

Result<void> HttpServer::set_access(const auth::AccessSettings& access, const auth::LimitSettings& limits,
                                    std::vector<std::string> forward_headers) {
  auto old = impl_->admission.state();
  auto next = make_access_state(impl_->io, access, limits, std::move(forward_headers), old.get());
  if (!next) return Error{next.error()};
  impl_->admission.set_state(std::move(*next));
  return {};
}

void HttpServer::share_sessions(SharedSessions& shared) {
  impl_->shared = &shared;
  impl_->sessions.share(&shared);
  Impl* im = impl_.get();
  shared.on_ended_elsewhere([im](const std::string& id) { im->sessions.remove(id); });
}

bool HttpServer::tls() const { return impl_->listener->tls(); }

void HttpServer::serve() {
  impl_->sessions.start();
  impl_->listener->start();
  impl_->listener->wait();
}

void HttpServer::stop() {
  std::vector<std::shared_ptr<PostStream>> listens;
  {
    std::lock_guard lk(impl_->listens_mu);
    if (impl_->stopping) return;
    impl_->stopping = true;
    listens.assign(impl_->listens.begin(), impl_->listens.end());
  }
  impl_->listener->stop();
  impl_->sessions.stop();
  for (auto& s : listens) s->cancel_all();
}

std::size_t HttpServer::session_count() const { return impl_->sessions.size(); }

std::size_t HttpServer::open_streams() const { return impl_->sessions.open_streams(); }

}  // namespace mcpgw::transport
