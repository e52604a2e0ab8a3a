#pragma once
// The inside of HttpServer, shared by its sources: http_server.cpp (routing,
// GET, DELETE, the public API), http_post.cpp (a POST of the session-based
// revisions) and http_stateless.cpp (a POST of MCP 2026-07-28). Internal to
// HttpServer.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "jsonrpc/message.hpp"
#include "transport/batch.hpp"
#include "transport/http_admission.hpp"
#include "transport/http_listener.hpp"
#include "transport/http_post_stream.hpp"
#include "transport/http_server.hpp"
#include "transport/http_sessions.hpp"
#include "transport/sse.hpp"
#include "util/memory.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::transport {

inline constexpr const char* kJson = "application/json";
inline constexpr const char* kEventStream = "text/event-stream";

/// Heartbeats every `every`; `prime`: one right after the header.
inline http::StreamOptions heartbeats(std::chrono::milliseconds every, bool prime) {
  return {every, std::string(sse::kHeartbeat), prime};
}

/// A response with no body. Responses are built outside the coroutines,
/// and every argument of a co_await is a named local: GCC 12 destroys some
/// temporaries of a co_await full-expression twice.
inline http::Response bare(int status) { return http::Response{status, {}, {}}; }

/// The head of an SSE answer, with `extra` headers.
inline http::Response event_stream_head(std::vector<http::Header> extra = {}) {
  http::Response head{200, {{"Content-Type", kEventStream}, {"Cache-Control", "no-cache"}}, {}};
  for (auto& h : extra) head.headers.push_back(std::move(h));
  return head;
}

/// One POST to the MCP endpoint, as the steps that answer it fill it in.
struct PostRequest {
  PostRequest(http::Request& rq, http::Responder& rs) : req(rq), res(rs) {}

  http::Request& req;
  http::Responder& res;
  ClientContext ctx;
  bool accept_json = false;  ///< the client takes one JSON body
  bool accept_sse = false;   ///< the client takes an SSE stream
  BatchLimits batches;       ///< the limits this body was read under
  jsonrpc::Parsed parsed;
  bool init = false;                 ///< an initialize: it opens the session
  std::shared_ptr<HttpSession> hs;   ///< the session it belongs to (not stateless)
  std::vector<http::Header> extra;   ///< headers of the answer (a new session's id)
};

/// One message of a POST, ready to hand over: the exchange of a request,
/// and the refusal it gets instead when a limit refuses it.
struct PostWork {
  jsonrpc::Message msg;
  std::shared_ptr<Exchange> ex;
  std::optional<std::string> over;
};

/// What an HttpServer holds, and the steps that answer its requests.
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
  util::Mutex listens_mu;
  std::set<std::shared_ptr<PostStream>> listens GUARDED_BY(listens_mu);  // open subscriptions/listen streams
  bool stopping GUARDED_BY(listens_mu) = false;
  SharedSessions* shared = nullptr;               // cluster: sealed ids, cluster-wide DELETE
  MemoryTrimmer trimmer;                          // after large bodies

  /// Every request: CORS, then route().
  Task<void> handle(http::Request& req, http::Responder& res);
  /// To the MCP endpoint's methods or the other endpoints; a 500 when one throws.
  Task<void> route(http::Request& req, http::Responder& res);
  /// route() for all but an MCP POST.
  Task<void> route_other(http::Request& req, http::Responder& res);
  /// The 500 after a handler threw (`failed`), else the 404 of a request
  /// nothing answered.
  Task<void> send_error(http::Responder& res, bool failed);
  /// Opens the session's server-to-client stream.
  Task<void> get(http::Request& req, http::Responder& res, const std::string& mode);
  /// Ends the session (on every replica, in a cluster).
  Task<void> del(http::Request& req, http::Responder& res, const std::string& mode);

  /// Resolves Mcp-Session-Id for a non-initialize request; the refusal, or
  /// nothing with `out` set.
  std::optional<http::Response> lookup(const http::Request& req, const ClientContext& ctx,
                                       std::shared_ptr<HttpSession>& out);
  /// Serves here a session another replica began (or this one forgot):
  /// `out` is its copy, or null for an id that does not open.
  std::optional<http::Response> restore(const std::string& sid, const ClientContext& ctx,
                                        std::shared_ptr<HttpSession>& out);

  // A POST, in the order its steps run; each refusal is the answer.

  /// Answers a POST to the MCP endpoint.
  Task<void> post(http::Request& req, http::Responder& res, const std::string& mode);
  /// Content-Type, Accept and the body's size; sets what the client accepts.
  std::optional<http::Response> negotiate(PostRequest& p) const;
  /// Parses the body (a message or a batch) under the batch limits.
  std::optional<http::Response> read_body(PostRequest& p);
  /// An initialize's new session, its id in the answer's headers.
  std::optional<http::Response> open_session(PostRequest& p);
  /// The session named by Mcp-Session-Id.
  std::optional<http::Response> find_session(PostRequest& p);
  /// The POST's messages, each request's reply expected by `stream`.
  std::vector<PostWork> take_messages(PostRequest& p, const std::shared_ptr<PostStream>& stream);
  /// Hands the messages to the handler (a batch's through its gate).
  void run(PostRequest& p, std::vector<PostWork>& work);
  /// Waits for the replies and answers: 202, JSON or SSE.
  Task<void> answer(PostRequest& p, PostStream& stream);
  /// Ends the session a failed initialize opened.
  void forget_failed_init(PostRequest& p, PostStream& stream);
  /// Every reply in one body (an array for a batch).
  Task<void> answer_json(PostRequest& p, PostStream& stream);
  /// The replies and related messages as an SSE stream.
  Task<void> answer_stream(PostRequest& p, PostStream& stream);

  // A POST of MCP 2026-07-28: one request, a session for it alone.

  /// Answers a POST that read_body() found stateless.
  Task<void> post_stateless(PostRequest& p);
  /// The answer the request gets without running: a batch, a notification
  /// or response, headers that disagree with the body, a limit.
  std::optional<http::Response> screen_stateless(const PostRequest& p) const;
  /// Runs the request in `session` and, when it is answered as a stream,
  /// streams it; how it is answered.
  Task<Answer> run_stateless(PostRequest& p, const std::shared_ptr<Session>& session,
                             const std::shared_ptr<PostStream>& stream);
  /// A subscriptions/listen stream, where stop() ends it.
  void listen_opened(const std::shared_ptr<PostStream>& stream, Exchange& ex);
  /// The listen stream ended.
  void listen_closed(const std::shared_ptr<PostStream>& stream);
};

}  // namespace mcpgw::transport
