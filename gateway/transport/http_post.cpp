// A POST to the MCP endpoint in the session-based revisions, step by step:
// admission, Content-Type and Accept, the body, the session (opened by an
// initialize, else named by Mcp-Session-Id), each message to the handler,
// and the answer as one JSON body or an SSE stream. A POST of the
// stateless revision leaves after the body (http_stateless.cpp). The MCP
// decisions among these steps (which revision, the version header, the
// initialize rule) are mcp_post's.
#include <spdlog/spdlog.h>

#include "mcp/trace.hpp"
#include "transport/http_server_impl.hpp"
#include "transport/mcp_post.hpp"
#include "util/ascii.hpp"
#include "util/random.hpp"

namespace mcpgw::transport {

Task<void> HttpServer::Impl::post(http::Request& req, http::Responder& res, const std::string& mode) {
  PostRequest p(req, res);
  std::optional<http::Response> refused = co_await admission.admit(req, mode, p.ctx);
  if (!refused) refused = negotiate(p);
  if (!refused) refused = read_body(p);
  if (!refused && !mcp_post::speaks_sessions(req, p.parsed)) {
    co_await post_stateless(p);
    co_return;
  }
  if (!refused) refused = mcp_post::unsupported_version(req);
  p.init = mcp_post::has_initialize(p.parsed);
  if (!refused) refused = p.init ? open_session(p) : find_session(p);
  if (refused) {
    co_await res.send(std::move(*refused));
    co_return;
  }
  auto stream = std::make_shared<PostStream>(res.executor(), opts);
  std::vector<PostWork> work = take_messages(p, stream);
  run(p, work);
  co_await answer(p, *stream);
}

std::optional<http::Response> HttpServer::Impl::negotiate(PostRequest& p) const {
  if (!istarts_with(p.req.get("Content-Type"), kJson))
    return json_error(415, jsonrpc::kInvalidRequest, "Unsupported Media Type: Content-Type must be application/json");
  std::string_view accept = p.req.get("Accept");
  bool any = accept.empty() || icontains(accept, "*/*");
  p.accept_json = any || icontains(accept, kJson);
  p.accept_sse = any || icontains(accept, kEventStream);
  if (!p.accept_json && !p.accept_sse)
    return json_error(406, jsonrpc::kInvalidRequest,
                      "Not Acceptable: Accept must include application/json or text/event-stream");
  if (p.req.body_too_large)
    return json_error(413, jsonrpc::kInvalidRequest,
                      "Payload Too Large: body exceeds " + std::to_string(opts.max_body_bytes) + " bytes");
  return std::nullopt;
}

std::optional<http::Response> HttpServer::Impl::read_body(PostRequest& p) {
  p.batches = admission.batch_limits();
  // The body is kept with what is read from it: a tool call's arguments
  // go upstream as these bytes.
  p.parsed = jsonrpc::parse_keeping(std::move(p.req.body), p.batches.max_size);
  if (std::size_t size = p.parsed.oversized_batch) {
    std::string reply = batch_refusal(size, p.batches.max_size);
    admission.on_refused({"batch", p.ctx.principal,
                          "a batch of " + std::to_string(size) + " messages, over limits.max_batch_size", p.ctx.mode});
    return json_response(400, std::move(reply));
  }
  // W3C trace context: the handler finds it where stdio clients put it.
  if (p.req.has("traceparent"))
    for (auto& m : p.parsed.messages) mcp::adopt_traceparent(m, p.req.get("traceparent"));
  if (p.parsed.messages.empty() && !p.parsed.batch) return json_response(400, p.parsed.errors.front());
  return std::nullopt;
}

std::optional<http::Response> HttpServer::Impl::open_session(PostRequest& p) {
  if (auto refused = mcp_post::initialize_alone(p.parsed)) return refused;
  if (p.req.has("Mcp-Session-Id") && sessions.find(std::string(p.req.get("Mcp-Session-Id"))))
    return json_error(400, jsonrpc::kInvalidRequest, "Invalid Request: session is already initialized");
  if (!sessions.make_room(static_cast<std::size_t>(admission.max_sessions()))) return admission.sessions_full(p.ctx);
  Result<std::string> id = shared ? shared->seal(describe_session(p.ctx, p.parsed.messages.front()))
                                  : Result<std::string>(random_hex(16));
  if (!id) return json_error(400, jsonrpc::kInvalidRequest, "Invalid Request: " + id.error());
  auto opened = handler.open_session(p.ctx);
  if (!opened) return json_error(403, jsonrpc::kInvalidRequest, opened.error());
  p.hs = HttpSession::make(*id, std::move(*opened), p.ctx);
  sessions.add(*id, p.hs);
  p.extra.push_back({"Mcp-Session-Id", *id});
  return std::nullopt;
}

std::optional<http::Response> HttpServer::Impl::find_session(PostRequest& p) {
  if (auto refused = lookup(p.req, p.ctx, p.hs)) return refused;
  p.hs->session->set_subject_token(p.ctx.subject_token);
  return std::nullopt;
}

std::vector<PostWork> HttpServer::Impl::take_messages(PostRequest& p, const std::shared_ptr<PostStream>& stream) {
  std::vector<PostWork> work;
  for (auto& m : p.parsed.messages) {
    std::shared_ptr<Exchange> ex;
    std::optional<std::string> over;
    if (m.is_request()) {
      // Before this request's exchange counts itself in the session.
      over = admission.limit_call(p.ctx, m, p.hs->in_flight.load());
      ex = std::make_shared<PostExchange>(stream, p.accept_sse, p.hs);
      stream->expect_reply(ex);
    }
    work.push_back({std::move(m), std::move(ex), std::move(over)});
  }
  for (auto& err : p.parsed.errors) stream->push_error(std::move(err));
  return work;
}

void HttpServer::Impl::run(PostRequest& p, std::vector<PostWork>& work) {
  // A batch's requests run batch_concurrency at a time, in order.
  auto gate = p.parsed.batch ? std::make_shared<BatchGate>(p.batches.concurrency) : nullptr;
  for (auto& w : work) {
    if (w.over) w.ex->reply(std::move(*w.over), kLimitRefused);
    else if (!gate || !w.ex) handler.handle(p.hs->session, std::move(w.msg), std::move(w.ex));
    else {
      static_cast<PostExchange&>(*w.ex).on_reply([gate] { gate->done(); });
      gate->start([this, s = p.hs->session, m = std::make_shared<jsonrpc::Message>(std::move(w.msg)), ex = w.ex] {
        // The client went away while it waited its turn: it does not run.
        if (ex->cancelled())
          ex->reply(jsonrpc::make_error(m->id(), jsonrpc::kInternalError, "cancelled: the client went away"),
                    jsonrpc::kInternalError);
        else handler.handle(s, std::move(*m), ex);
      });
    }
  }
}

Task<void> HttpServer::Impl::answer(PostRequest& p, PostStream& stream) {
  if (stream.expects_nothing()) {
    auto reply = bare(202);
    co_await p.res.send(std::move(reply));
    co_return;
  }
  Answer answer = co_await stream.wait_answer(p.accept_json, p.accept_sse);
  if (p.init) forget_failed_init(p, stream);
  if (answer == Answer::Json) co_await answer_json(p, stream);
  else co_await answer_stream(p, stream);
}

void HttpServer::Impl::forget_failed_init(PostRequest& p, PostStream& stream) {
  if (!stream.complete()) return;
  std::optional<int> error = stream.first_error();
  if (!error || *error == 0) return;
  // A failed initialize leaves no session behind.
  sessions.remove(p.hs->session->id());
  p.extra.clear();
}

Task<void> HttpServer::Impl::answer_json(PostRequest& p, PostStream& stream) {
  auto reply = json_response(200, stream.take_json(p.parsed.batch));
  for (auto& h : p.extra) reply.headers.push_back(std::move(h));
  co_await p.res.send(std::move(reply));
}

Task<void> HttpServer::Impl::answer_stream(PostRequest& p, PostStream& stream) {
  auto queue = stream.start_streaming();
  auto head = event_stream_head(std::move(p.extra));
  auto beats = heartbeats(std::chrono::milliseconds(opts.heartbeat_ms), false);
  auto end = co_await p.res.stream(std::move(head), std::move(queue), std::move(beats));
  if (end != http::StreamEnd::Done) stream.cancel_all();
  if (std::size_t dropped = stream.dropped())
    spdlog::warn("session {}: the client read a response stream too slowly: {} message(s) dropped (progress "
                 "kept its latest, answers all went out)",
                 p.hs->session->id().substr(0, 8), dropped);
}

}  // namespace mcpgw::transport
