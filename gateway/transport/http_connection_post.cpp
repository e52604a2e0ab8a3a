// One request's POST to an HTTP upstream and the reading of its answer (a
// JSON body, or an SSE stream until the request's response), with a token
// renewed after a 401 and a stream resumed after it broke.
#include "transport/http_connection.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "transport/sse.hpp"
#include "util/ascii.hpp"

namespace mcpgw::transport {
namespace {

/// True when a JSON-RPC error body says the session is unknown or the
/// server is not initialized (how servers word a stale session).
bool names_session(std::string_view body) {
  auto doc = json::parse(body);
  const json::Value* error = doc ? json::find(*doc, "error") : nullptr;
  auto message = error ? json::get_string(*error, "message") : std::nullopt;
  if (!message) return false;
  std::string m = ascii_lowered(std::string(*message));
  return m.find("session") != std::string::npos || m.find("not initialized") != std::string::npos;
}

/// ": <message>" of a JSON-RPC error body, or "".
std::string session_error_text(std::string_view body) {
  auto doc = json::parse(body);
  const json::Value* error = doc ? json::find(*doc, "error") : nullptr;
  auto message = error ? json::get_string(*error, "message") : std::nullopt;
  return message ? ": " + std::string(message->substr(0, 200)) : "";
}

}  // namespace

struct HttpConnection::PostAnswer {
  // (A constructor, not aggregate initialization: make_unique with
  // parentheses needs C++20's P0960, which the Clang of the thread-safety
  // stage lacks.)
  PostAnswer(HttpConnection& conn, std::optional<std::int64_t> request,
             std::function<void(jsonrpc::Message&)> related, std::string in_session, bool relay_answer)
      : c(conn), id(request), on_related(std::move(related)), session(std::move(in_session)), relay(relay_answer) {}

  HttpConnection& c;
  const std::optional<std::int64_t> id;
  const std::function<void(jsonrpc::Message&)> on_related;
  const std::string session;  ///< the session the POST goes in; "" = the connection's
  const bool relay;            ///< RequestOptions::relay
  std::optional<jsonrpc::Message> answer{};
  bool sse = false;
  std::optional<std::size_t> too_large{};
  std::optional<std::string> malformed{};  ///< what is wrong with the answer to this request
  /// Where an answer's text is kept: large ones in the loop's reused buffers.
  const jsonrpc::Message::Buffers buffers = [this](std::size_t n) { return c.client_->io().buffers().take(n); };
  std::string json_body{};        ///< a body read piece by piece (chunked)
  std::shared_ptr<char[]> whole{};  ///< a body of announced length, read in place
  std::size_t whole_size = 0;
  sse::Parser parser{[this](std::string_view, std::string_view data) { return on_event(data); },
                     c.target_.max_response_bytes, [this](std::size_t bytes) {
                       // On a request's own stream, the event too large to keep is
                       // most likely its answer: fail the request rather than wait.
                       too_large = bytes;
                       return false;
                     }};

  bool deliver(jsonrpc::Message& m) {
    if (m.is_response()) {
      if (!id || m.id().int64() != *id) return true;
      answer = std::move(m);
      return false;  // we have what we came for; stop reading
    }
    if (on_related) on_related(m);
    else if (c.handlers_.on_message) c.handlers_.on_message(m);
    return true;
  }
  bool on_event(std::string_view data) {
    // Servers prime a stream with an event without data (2025-11-25).
    if (data.empty()) return true;
    if (relay)
      if (auto m = jsonrpc::Message::relayed(data, buffers)) return deliver(*m);
    auto read = jsonrpc::read(data);
    if (auto* bad = std::get_if<jsonrpc::Unreadable>(&read)) {
      if (id && bad->answers == *id) {
        malformed = bad->why;
        return false;  // the answer came, unusable: no point waiting on
      }
      spdlog::warn("upstream {}: ignoring a malformed message on an SSE stream ({}): {:.200}", c.target_.name,
                   bad->why, data);
      return true;
    }
    return deliver(std::get<jsonrpc::Message>(read));
  }
  const HttpClient::OnHead on_head = [this](const HttpHead& h) {
    sse = istarts_with(h.get("Content-Type"), "text/event-stream");
    // A request sent in another session (see RequestOptions) leaves the
    // connection's own alone.
    if (std::string sid = h.get("Mcp-Session-Id"); !sid.empty() && session.empty()) c.remember_session(std::move(sid));
    return true;
  };
  /// A JSON body of announced length is read by the socket into the one
  /// buffer that holds it from then on: a large answer is not copied, nor
  /// moved as a buffer grows. The buffer is not zero-filled (the socket
  /// writes every byte before any is read), and a large one was used
  /// before (BufferCache): its pages are in place.
  const HttpClient::IntoBuffer into = [this](std::size_t n) -> std::span<char> {
    if (sse || n > c.target_.max_response_bytes) return {};
    whole = buffers(n);
    whole_size = n;
    return {whole.get(), n};
  };
  /// The JSON body as it came.
  std::string_view body() const { return whole ? std::string_view(whole.get(), whole_size) : json_body; }
  const HttpClient::OnData on_data = [this](std::string_view data) {
    if (sse) return parser.feed(data);
    if (json_body.size() + data.size() > c.target_.max_response_bytes) {
      too_large = json_body.size() + data.size();
      return false;
    }
    json_body.append(data);
    return true;
  };
  /// Reads a JSON body that came with HTTP `status`.
  void read_json(int status) {
    if (relay && status < 300) {
      // The body is the answer's text from now on, held once (a chunked
      // one, rare, after one copy into a buffer).
      if (auto m = whole ? jsonrpc::Message::relayed(whole, body()) : jsonrpc::Message::relayed(json_body, buffers)) {
        deliver(*m);
        return;
      }
    }
    const std::string_view text = body();
    auto doc = json::parse(text);
    if (!doc) malformed = "not JSON (" + doc.error() + ")";
    else if (doc->IsArray()) {
      for (auto& v : doc->GetArray())
        if (auto m = jsonrpc::Message::from(json::clone(v))) deliver(*m);
    } else if (doc->IsObject()) {
      // An HTTP error status with a JSON-RPC error body (null id) is still
      // the server's answer to us.
      if (status >= 400 && json::find(*doc, "error")) {
        json::Value* i = json::find(*doc, "id");
        if (!i) json::set(*doc, "id", json::Value(*id), doc->GetAllocator());
        else if (i->IsNull()) i->SetInt64(*id);
      }
      // A JSON object is the body of the answer to this request: when it
      // is not a valid message, the answer is malformed.
      if (auto m = jsonrpc::Message::from(std::move(*doc), text)) deliver(*m);
      else malformed = m.error();
    }
  }
  /// What came of the POST, sent in `had_session`, whose last exchange is
  /// `res`, ended early for `ended`.
  Response outcome(const HttpResult& res, Abort::Why ended, const std::string& had_session) {
    whole_size = std::min<std::size_t>(whole_size, res.body_bytes);  // only what came was written
    if (answer) return Response{std::move(answer), Failure::Transport, {}};
    if (too_large)
      return Response{std::nullopt, Failure::TooLarge, size_text(*too_large, c.target_.max_response_bytes)};
    if (malformed) return Response{std::nullopt, Failure::Transport, "sent a malformed answer: " + *malformed};
    switch (ended) {
      case Abort::Why::Timeout: return Response{std::nullopt, Failure::Timeout, "timed out"};
      case Abort::Why::Cancelled: return Response{std::nullopt, Failure::Cancelled, "cancelled"};
      case Abort::Why::Closed: return Response{std::nullopt, Failure::Closed, "connection closed"};
      case Abort::Why::None: break;
    }
    if (res.head.status == 0)
      return Response{std::nullopt,
                      res.kind == HttpError::Unreachable ? Failure::Unreachable
                      : res.kind == HttpError::Broken    ? Failure::Interrupted
                                                         : Failure::Transport,
                      c.client_->url().text() + ": " + res.error};
    int status = res.head.status;
    if ((status == 401 || status == 403) && c.target_.credential) {
      std::string why = "HTTP " + std::to_string(status);
      std::string challenge = res.head.get("WWW-Authenticate");
      if (!challenge.empty()) why += " (" + challenge.substr(0, 300) + ")";
      return Response{std::nullopt, Failure::Unauthorized, "refused the gateway's OAuth token: " + why};
    }
    // A restarted server does not know our session: the spec says 404, the
    // official SDKs' examples answer 400 ("Bad Request: No valid session ID
    // provided", "Server not initialized"). Another 400 is the server's
    // answer to the request itself.
    if ((status == 404 || (status == 400 && names_session(body()))) && !had_session.empty())
      return Response{std::nullopt, Failure::SessionExpired,
                      "the server does not know session " + had_session.substr(0, 8) + " (HTTP " +
                          std::to_string(status) + session_error_text(body()) + ")"};
    if (!id) {
      if (status >= 200 && status < 300) return Response{std::nullopt, Failure::Transport, {}};
      return Response{std::nullopt, Failure::Transport, "HTTP " + std::to_string(status)};
    }
    if (!sse && !body().empty()) {
      read_json(status);
      if (answer) return Response{std::move(answer), Failure::Transport, {}};
      if (malformed && status < 300)
        return Response{std::nullopt, Failure::Transport, "sent a malformed answer: " + *malformed};
    }
    if (status >= 400 && status < 500)
      return Response{std::nullopt, Failure::Rejected, "HTTP " + std::to_string(status)};
    if (status >= 300) return Response{std::nullopt, Failure::Transport, "HTTP " + std::to_string(status)};
    if (!res.error.empty())
      return Response{std::nullopt, res.kind == HttpError::Broken ? Failure::Interrupted : Failure::Transport,
                      c.client_->url().text() + ": " + res.error};
    return Response{std::nullopt, Failure::Transport,
                    sse ? "SSE stream ended without a response" : "response was not the JSON-RPC answer"};
  }
};

Task<Response> HttpConnection::post(std::string& body, std::optional<std::int64_t> id, Abort& abort,
                                    RequestOptions& opts, const Headers& routing) {
  // What only some requests need (a renewed token, a resumed stream) is in
  // coroutines of its own, and the answer's state on the heap: a bigger
  // frame would miss the allocator's fast path on every call.
  HttpRequest req{"POST", base_headers(routing, opts.session), std::move(body), {}};
  req.headers.insert(req.headers.end(), opts.forwarded.begin(), opts.forwarded.end());
  req.headers.emplace_back("Content-Type", "application/json");
  req.headers.emplace_back("Accept", "application/json, text/event-stream");
  const std::string had_session = opts.session.empty() ? session_id() : opts.session;
  auto p = std::make_unique<PostAnswer>(*this, id, std::move(opts.on_related), std::move(opts.session), opts.relay);
  // (Checked here, not in authorize(): a coroutine frame per request is not free.)
  if (target_.credential)
    if (auto authorized = co_await authorize(req, abort, opts.cancel); !authorized)
      co_return Response{std::nullopt, Failure::Credential, authorized.error()};
  HttpResult res = co_await client_->exchange(req, abort, p->on_head, p->on_data, p->into);
  // An OAuth upstream refused the token (expired early, revoked): renewed
  // once, the request goes again; a 401 is the answer to nothing done.
  if (res.error.empty() && res.head.status == 401 && target_.credential && abort.why() == Abort::Why::None)
    if (auto again = co_await post_again(req, *p, res, abort, opts.cancel); !again)
      co_return Response{std::nullopt, Failure::Credential, again.error()};
  if (res.error.empty() && p->sse && id && !p->answer && !p->too_large && !p->malformed && res.head.status == 200 &&
      !p->parser.last_event_id().empty() && abort.why() == Abort::Why::None)
    if (auto resumed = co_await resume(*p, res, abort, opts.cancel); !resumed)
      co_return Response{std::nullopt, Failure::Credential, resumed.error()};
  co_return p->outcome(res, abort.why(), had_session);
}

Task<Result<void>> HttpConnection::post_again(HttpRequest& req, PostAnswer& p, HttpResult& res, Abort& abort,
                                              CancelSignal* cancel) {
  std::string refused;
  for (const auto& [name, value] : req.headers)
    if (istarts_with(name, "authorization")) refused = value;
  if (auto renewed = co_await authorize(req, abort, cancel, refused); !renewed) co_return renewed;
  p.json_body.clear();
  p.whole.reset();
  p.whole_size = 0;
  p.sse = false;
  p.too_large.reset();
  p.parser.restart();
  res = co_await client_->exchange(req, abort, p.on_head, p.on_data, p.into);
  co_return Result<void>{};
}

Task<Result<void>> HttpConnection::resume(PostAnswer& p, HttpResult& res, Abort& abort, CancelSignal* cancel) {
  for (int attempt = 0; attempt < kMaxResumes; ++attempt) {
    asio::steady_timer pause(co_await asio::this_coro::executor,
                             std::chrono::milliseconds(p.parser.retry_ms() >= 0 ? p.parser.retry_ms() : 1000));
    abort.on_fire([&pause] { pause.cancel(); });
    co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
    abort.on_fire({});
    if (abort.why() != Abort::Why::None) break;
    p.parser.restart();
    HttpRequest get{"GET", base_headers({}, p.session), {}, {}};
    get.headers.emplace_back("Accept", "text/event-stream");
    get.headers.emplace_back("Last-Event-ID", p.parser.last_event_id());
    if (target_.credential)
      if (auto authorized = co_await authorize(get, abort, cancel); !authorized) co_return authorized;
    res = co_await client_->exchange(
        get, abort, [](const HttpHead& h) { return h.status == 200; },
        [&p](std::string_view data) { return p.parser.feed(data); });
    if (!res.error.empty() || p.answer || p.too_large || p.malformed || res.head.status != 200 ||
        p.parser.last_event_id().empty() || abort.why() != Abort::Why::None)
      break;
  }
  co_return Result<void>{};
}

}  // namespace mcpgw::transport
