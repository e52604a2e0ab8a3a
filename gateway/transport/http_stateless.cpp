// A POST of MCP 2026-07-28, the stateless revision: one request, whose
// headers must agree with its body, run in a session of its own that ends
// with it. It is answered as JSON, or as a stream once it runs for a
// moment (its client cancels by leaving) or when it is a
// subscriptions/listen. The protocol's checks of the request are
// mcp_post's; this file is the HTTP around them.
#include <chrono>

#include "transport/http_server_impl.hpp"
#include "transport/mcp_post.hpp"
#include "util/random.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::transport {
namespace {

/// A stateless request still running after this is answered as a stream.
constexpr std::chrono::milliseconds kStreamAfter{200};
/// Heartbeats of such a stream: how soon a client that left is noticed.
constexpr std::chrono::milliseconds kCallHeartbeat{250};

/// The reply as one JSON body, in the HTTP status its error code has.
Task<void> answer_as_json(http::Responder& res, PostStream& stream) {
  int status = mcp_post::answer_status(stream.first_error().value_or(0));
  SplicedText body = stream.take_json(false);
  auto reply = json_response(status, std::move(body));
  co_await res.send(std::move(reply));
}

}  // namespace

Task<void> HttpServer::Impl::post_stateless(PostRequest& p) {
  std::optional<http::Response> refused = screen_stateless(p);
  if (refused) {
    co_await p.res.send(std::move(*refused));
    co_return;
  }
  mcp_post::take_param_headers(p.req, p.ctx);
  auto opened = handler.open_session(p.ctx);
  if (!opened) {
    const jsonrpc::Message& m = p.parsed.messages.front();
    auto reply = json_response(403, jsonrpc::make_error(m.id(), jsonrpc::kInvalidRequest, opened.error()));
    co_await p.res.send(std::move(reply));
    co_return;
  }
  std::shared_ptr<Session> session = std::move(*opened);
  session->bind(random_hex(16), p.ctx, [](std::string) { return false; });
  auto stream = std::make_shared<PostStream>(p.res.executor(), opts);
  Answer answer = co_await run_stateless(p, session, stream);
  handler.close_session(session);
  if (answer == Answer::Json) co_await answer_as_json(p.res, *stream);
}

std::optional<http::Response> HttpServer::Impl::screen_stateless(const PostRequest& p) const {
  if (auto answered = mcp_post::screen_stateless(p.req, p.parsed)) return answered;
  if (auto over = admission.limit_call(p.ctx, p.parsed.messages.front(), -1)) return json_response(200, std::move(*over));
  return std::nullopt;
}

Task<Answer> HttpServer::Impl::run_stateless(PostRequest& p, const std::shared_ptr<Session>& session,
                                             const std::shared_ptr<PostStream>& stream) {
  jsonrpc::Message& m = p.parsed.messages.front();
  auto ex = std::make_shared<PostExchange>(stream, p.accept_sse);
  stream->expect_reply(ex);
  bool listen = m.method() == "subscriptions/listen";
  if (listen) listen_opened(stream, *ex);
  handler.handle(session, std::move(m), std::move(ex));
  // A client of this revision cancels by closing its stream, and a socket
  // is only seen closed when written to: a request still running after a
  // moment is answered as a stream, with frequent heartbeats.
  Answer answer = co_await stream->wait_answer(p.accept_json, p.accept_sse, kStreamAfter);
  if (answer == Answer::Stream) {
    auto queue = stream->start_streaming();
    auto beats = listen ? heartbeats(std::chrono::milliseconds(opts.heartbeat_ms), false) : heartbeats(kCallHeartbeat, true);
    auto head = event_stream_head();
    co_await p.res.stream(std::move(head), std::move(queue), std::move(beats));
    // However the stream ended, nothing waits for this request any more.
    stream->cancel_all();
  }
  if (listen) listen_closed(stream);
  co_return answer;
}

void HttpServer::Impl::listen_opened(const std::shared_ptr<PostStream>& stream, Exchange& ex) {
  util::MutexLock lk(listens_mu);
  // A listen lasts until its client leaves, or until the server stops.
  if (stopping) ex.cancel();
  listens.insert(stream);
}

void HttpServer::Impl::listen_closed(const std::shared_ptr<PostStream>& stream) {
  util::MutexLock lk(listens_mu);
  listens.erase(stream);
}

}  // namespace mcpgw::transport
