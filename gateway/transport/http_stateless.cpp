// A POST of MCP 2026-07-28, the stateless revision: one request, whose
// headers must agree with its body, run in a session of its own that ends
// with it. It is answered as JSON, or as a stream once it runs for a
// moment (its client cancels by leaving) or when it is a
// subscriptions/listen.
#include <chrono>

#include "mcp/era.hpp"
#include "transport/http_server_impl.hpp"
#include "util/random.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::transport {
namespace {

/// A stateless request still running after this is answered as a stream.
constexpr std::chrono::milliseconds kStreamAfter{200};
/// Heartbeats of such a stream: how soon a client that left is noticed.
constexpr std::chrono::milliseconds kCallHeartbeat{250};

/// Request `m` refused with JSON-RPC error `code`, in the HTTP status the
/// revision gives that code before any method runs.
http::Response refusal(const jsonrpc::Message& m, int code, const std::string& message,
                       const json::Value* data = nullptr) {
  return json_response(mcp::http_status(code, true), jsonrpc::make_error(m.id(), code, message, data));
}

/// How the Mcp-Name header disagrees with the name `m` carries in its
/// params (`method` names one), if it does.
std::optional<std::string> name_mismatch(const http::Request& req, const jsonrpc::Message& m,
                                         const std::string& method) {
  const char* key = mcp::named_param(method);
  auto body_name = key && m.params() ? json::get_string(*m.params(), key) : std::nullopt;
  if (!body_name) return std::nullopt;
  if (!req.has("Mcp-Name"))
    return "Header mismatch: the body carries params." + std::string(key) + "=\"" + std::string(*body_name) +
           "\" but the Mcp-Name header is absent";
  auto name = mcp::decode_header_value(req.get("Mcp-Name"));
  if (!name) return "Header mismatch: the Mcp-Name header is not valid =?base64?...?=";
  if (!mcp::header_matches(*name, *body_name))
    return "Header mismatch: the Mcp-Name header names \"" + *name + "\" but the body carries params." + key +
           "=\"" + std::string(*body_name) + "\"";
  return std::nullopt;
}

/// The refusal of request `m` when its envelope is wrong or the headers
/// disagree with its body.
std::optional<http::Response> header_mismatch(const http::Request& req, const jsonrpc::Message& m) {
  std::string method(m.method());
  if (!req.has("MCP-Protocol-Version"))
    return refusal(m, mcp::kHeaderMismatch, "Header mismatch: the MCP-Protocol-Version header is required");
  auto envelope = mcp::read_envelope(m, req.get("MCP-Protocol-Version"));
  if (auto* r = std::get_if<mcp::Refusal>(&envelope))
    return refusal(m, r->code, r->message, r->data.IsNull() ? nullptr : &r->data);
  if (!req.has("Mcp-Method"))
    return refusal(m, mcp::kHeaderMismatch,
                   "Header mismatch: the body names method " + method + " but the Mcp-Method header is absent");
  if (auto h = mcp::decode_header_value(req.get("Mcp-Method")); !h || *h != method)
    return refusal(m, mcp::kHeaderMismatch,
                   "Header mismatch: the Mcp-Method header names '" + req.get("Mcp-Method") + "' but the body names " +
                       method);
  if (auto why = name_mismatch(req, m, method)) return refusal(m, mcp::kHeaderMismatch, *why);
  return std::nullopt;
}

/// Marks `ctx` stateless, with the request's Mcp-Param-* headers.
void take_param_headers(const http::Request& req, ClientContext& ctx) {
  ctx.stateless = true;
  ctx.has_param_headers = true;
  for (const auto& [name, value] : req.headers) {
    std::string n = lower(name);
    if (n.rfind("mcp-param-", 0) == 0) ctx.param_headers.emplace_back(n.substr(10), value);
  }
}

/// The reply as one JSON body, in the HTTP status its error code has.
Task<void> answer_as_json(http::Responder& res, PostStream& stream) {
  std::string body = stream.take_json(false);
  auto parsed = json::parse(body);
  const json::Value* error = parsed ? json::find(*parsed, "error") : nullptr;
  const json::Value* code = error ? json::find(*error, "code") : nullptr;
  int status = code && code->IsInt() ? mcp::http_status(code->GetInt(), false) : 200;
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
  take_param_headers(p.req, p.ctx);
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
  if (p.parsed.batch || p.parsed.messages.size() != 1)
    return json_error(400, jsonrpc::kInvalidRequest, "Bad Request: MCP 2026-07-28 does not allow JSON-RPC batches");
  const jsonrpc::Message& m = p.parsed.messages.front();
  // Clients of this revision cancel by closing the stream and answer no
  // requests (there are none): a notification or response changes nothing.
  if (!m.is_request()) return bare(202);
  if (auto mismatch = header_mismatch(p.req, m)) return mismatch;
  if (auto over = admission.limit_call(p.ctx, m, -1)) return json_response(200, std::move(*over));
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
