#include "transport/http_server.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "transport/http_cors.hpp"
#include "transport/http_server_impl.hpp"
#include "util/ascii.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::transport {
namespace {

http::Response simple(SimpleResponse r) {
  http::Response out;
  out.status = r.status;
  out.headers.push_back({"Content-Type", std::move(r.content_type)});
  for (auto& [name, value] : r.headers) out.headers.push_back({std::move(name), std::move(value)});
  out.body = std::move(r.body);
  return out;
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

Task<void> HttpServer::Impl::handle(http::Request& req, http::Responder& res) {
  auto origin = admission.cors_origin(req);
  if (!origin) {
    // A preflight from an origin we do not grant is refused as its request would be.
    if (req.method == "OPTIONS" && req.has("Origin")) {
      admission.on_refused({"origin", "", "preflight from Origin " + std::string(req.get("Origin")), ""});
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

Task<void> HttpServer::Impl::route(http::Request& req, http::Responder& res) {
  // An MCP POST goes straight on; the other endpoints' replies are made in
  // coroutines of their own, as their locals in this frame would take every
  // call off the allocator's fast path.
  bool failed = false;
  try {
    auto mode = req.method == "POST" ? mode_of(req.path(), opts.path) : std::nullopt;
    if (mode) {
      co_await post(req, res, *mode);
      trimmer.after(req.body.size());
    } else {
      co_await route_other(req, res);
    }
    if (!res.answered()) co_await send_error(res, false);
  } catch (const std::exception& e) {
    spdlog::error("HTTP handler failed: {}", e.what());
    failed = true;
  }
  if (failed && !res.answered()) co_await send_error(res, true);
}

Task<void> HttpServer::Impl::route_other(http::Request& req, http::Responder& res) {
  std::string_view path = req.path();
  if (auto meta = req.method == "GET" ? admission.metadata(path) : std::nullopt) {
    co_await res.send(std::move(*meta));
  } else if (auto mode = mode_of(path, opts.path)) {
    if (req.method == "GET") co_await get(req, res, *mode);
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
}

Task<void> HttpServer::Impl::send_error(http::Responder& res, bool failed) {
  auto reply = failed ? json_error(500, jsonrpc::kInternalError, "Internal error") : bare(404);
  co_await res.send(std::move(reply));
}

// --- Sessions --------------------------------------------------------------

std::optional<http::Response> HttpServer::Impl::lookup(const http::Request& req, const ClientContext& ctx,
                                                       std::shared_ptr<HttpSession>& out) {
  const std::string sid(req.get("Mcp-Session-Id"));
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

std::optional<http::Response> HttpServer::Impl::restore(const std::string& sid, const ClientContext& ctx,
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

// --- GET -------------------------------------------------------------------

Task<void> HttpServer::Impl::get(http::Request& req, http::Responder& res, const std::string& mode) {
  ClientContext ctx;
  std::optional<http::Response> refused = co_await admission.admit(req, mode, ctx);
  std::string_view accept = req.get("Accept");
  if (!refused && !icontains(accept, kEventStream) && !icontains(accept, "*/*"))
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

Task<void> HttpServer::Impl::del(http::Request& req, http::Responder& res, const std::string& mode) {
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
    auto ended = co_await end_everywhere(*shared, hs->session->id());
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

Task<std::variant<std::string, http::Response>> HttpServer::authenticate(const http::Request& req) const {
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
    util::MutexLock lk(impl_->listens_mu);
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
