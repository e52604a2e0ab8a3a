// The Streamable HTTP transport on the gateway's generic listener
// (transport/http_listener): sessions of the stateful era with their GET
// streams, stateless requests with their header checks (SEP-2243; the
// protocol's decisions are the gateway's, transport/mcp_post), listen
// streams, and calls run on a worker pool so the I/O threads never block.
#include <pthread.h>
#include <signal.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <deque>
#include <thread>
#include <utility>

#include "kit_internal.hpp"
#include "transport/http_admission.hpp"
#include "transport/io.hpp"
#include "transport/mcp_post.hpp"
#include "util/ascii.hpp"
#include "util/event.hpp"
#include "util/random.hpp"
#include "util/thread_annotations.hpp"
#include "util/worker_pool.hpp"

namespace mcpgw::examples {
namespace {

using namespace std::chrono_literals;
using detail::answer;
using detail::log_line;
using detail::no_initialize;
using transport::json_error;
using transport::json_response;
using transport::http::Request;
using transport::http::Responder;
using transport::http::Response;
namespace mcp_post = transport::mcp_post;

constexpr const char* kEventStream = "text/event-stream";
/// Comment line on an idle GET stream, so proxies and clients see it alive.
constexpr std::string_view kHeartbeat = ": ping\n\n";
constexpr auto kHeartbeatInterval = 15s;

// Responses are built here, outside the coroutines, and every argument of a
// co_await is a named local: GCC 12 destroys some temporaries of a co_await
// full-expression twice (braced initializers, lambdas converted to
// std::function).

/// A refusal without a request to answer, in HTTP status `status`.
Response status_reply(int status, const std::string& why) { return json_error(status, jsonrpc::kInvalidRequest, why); }

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

/// DNS-rebinding protection (spec: transports, "Security Warning"): this
/// server listens on loopback only, so a Host or Origin naming another host
/// means a web page reached it through a name rebound to 127.0.0.1. Empty
/// when the request may proceed, else why not.
std::string foreign_host_or_origin(const Request& req) {
  if (req.has("Host") && !transport::is_loopback_host(transport::lower(std::string(req.get("Host")))))
    return "Forbidden: Host " + std::string(req.get("Host")) + " is not a loopback name";
  if (req.has("Origin")) {
    const std::string origin(req.get("Origin"));
    const std::size_t scheme = origin.find("://");
    const std::string authority =
        scheme == std::string::npos ? std::string() : origin.substr(scheme + 3, origin.find('/', scheme + 3) - scheme - 3);
    if (!transport::is_loopback_host(transport::lower(authority)))
      return "Forbidden: Origin " + origin + " is not a loopback origin";
  }
  return {};
}

/// Whether the client takes an SSE stream as the answer to a POST; a client
/// that sends no Accept header is assumed to take anything.
bool accepts_event_stream(const Request& req) {
  if (!req.has("Accept")) return true;
  const std::string_view accept = req.get("Accept");
  return icontains(accept, kEventStream) || icontains(accept, "*/*");
}

// The Mcp-Param-* headers of a stateless tool call (SEP-2243) must agree
// with the arguments they repeat; mcp_post checks the other headers.

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
  if (!req.has(header))
    return header_mismatch("the body carries " + json::write(body) + " but the " + header + " header is absent");
  const auto got = mcp::decode_header_value(req.get(header));
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

/// `e` as the protocol layer's refusal, which mcp_post answers.
mcp::Refusal refusal_of(RpcError e) {
  mcp::Refusal r{e.code, std::move(e.message), json::Document()};
  if (!e.data.empty())
    if (auto data = json::parse(e.data.text())) r.data = std::move(*data);
  return r;
}

/// The answer to one POST, filled by the worker thread that runs the call
/// (what the call sends on the way, then its response) and read by the
/// request's coroutine, which never blocks on it.
class PostExchange {
 public:
  PostExchange(const transport::http::asio::any_io_executor& strand, bool can_stream)
      : stream_(std::make_shared<transport::http::StreamQueue>(strand)),
        can_stream_(can_stream) {}

  /// Queues a message for the stream; false when there will be no stream
  /// (the client does not accept one, or has gone away).
  bool send(std::string msg) {
    {
      util::MutexLock lock(mutex_);
      if (!can_stream_ || abandoned_) return false;
      if (streaming_) stream_->push(detail::sse_event(msg));
      else events_.emplace_back(std::move(msg), false);
    }
    changed_.notify();
    return true;
  }
  /// Queues the response, with the HTTP status it gets if it goes out alone.
  void finish(std::string response, int status) {
    {
      util::MutexLock lock(mutex_);
      status_ = status;
      if (streaming_) {
        stream_->push(detail::sse_event(response));
        stream_->close();
      } else {
        events_.emplace_back(std::move(response), true);
      }
    }
    changed_.notify();
  }
  /// Waits for the first message; the response with its status when it
  /// comes first (it then goes out as plain JSON), else nothing.
  Task<std::optional<Response>> first() {
    for (;;) {
      std::uint64_t seen = changed_.generation();
      {
        util::MutexLock lock(mutex_);
        if (!events_.empty()) {
          if (!events_.front().second) co_return std::nullopt;
          co_return json_response(status_, std::move(events_.front().first));
        }
      }
      co_await changed_.wait(seen, Event::Clock::time_point::max());
    }
  }
  /// From now on the answer is a stream: what came so far goes first.
  std::shared_ptr<transport::http::StreamQueue> stream() {
    util::MutexLock lock(mutex_);
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
    util::MutexLock lock(mutex_);
    abandoned_ = true;
  }

 private:
  util::Mutex mutex_;
  // Both are safe to use from any thread.
  Event changed_{Resume::Inline};  // a message came; notified with no lock held
  const std::shared_ptr<transport::http::StreamQueue> stream_;
  std::deque<std::pair<std::string, bool>> events_ GUARDED_BY(mutex_);
  const bool can_stream_;
  bool abandoned_ GUARDED_BY(mutex_) = false;
  bool streaming_ GUARDED_BY(mutex_) = false;
  int status_ GUARDED_BY(mutex_) = 200;
};

/// The HTTP status and body of one dispatched POST; no body = 202.
using Dispatched = std::pair<int, std::optional<std::string>>;
/// Runs one message on a worker thread, given the way to talk to the client.
using Work = std::function<Dispatched(const std::function<bool(std::string)>&)>;

/// Answers a POST by running `work` on `pool`: tool handlers block, and
/// the I/O threads must not. A call that sends nothing before its response
/// is answered with plain JSON like any other; one that talks (to a client
/// that takes a stream) is answered as SSE.
Task<void> run_on_pool(WorkerPool& pool, Responder& res, bool can_stream, Work work) {
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

  Task<void> handle(Request& req, Responder& res) {
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
    util::MutexLock lock(server.sessions_mutex_);
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

  Task<void> post(Request& req, Responder& res) {
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
                                     : json_response(400, parsed.errors.front());
        co_await res.send(std::move(reply));
      }
      co_return;
    }
    if (server.is_stateless(parsed.messages.front(), req.get("MCP-Protocol-Version") == kStatelessVersion)) {
      co_await post_stateless(req, res, parsed);
      co_return;
    }
    jsonrpc::Message msg = std::move(parsed.messages.front());
    std::optional<Response> early = before_session(req, msg);
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

  // The stateful era's answers before the session is looked up. A server
  // of only this era knows no server/discover, and says so before asking
  // for a session the probe cannot have.
  std::optional<Response> before_session(const Request& req, const jsonrpc::Message& msg) {
    if (server.era_ == Era::Legacy && msg.is_request() && msg.method() == "server/discover")
      return json_response(200,
                           answer(msg.id(), RpcError{jsonrpc::kMethodNotFound, "Method not found: server/discover"}));
    if (auto refused = mcp_post::unsupported_version(req)) return refused;
    if (msg.is_request() && msg.method() == "initialize") return initialize(msg);
    return std::nullopt;
  }

  Response initialize(const jsonrpc::Message& msg) {
    auto session = std::make_shared<detail::Session>(random_hex(16));
    Response r = json_response(200, *server.dispatch(msg, *session, no_stream));
    r.headers.push_back({"Mcp-Session-Id", session->id});
    server.track(std::move(session));
    return r;
  }

  // The answer a stateless POST gets before it runs, if any: initialize,
  // which this revision lacks, then mcp_post's checks, exact about the
  // headers since this server stands in for an upstream the gateway must
  // forward the body's values to, with this server's envelope (which fills
  // `call`), then the Mcp-Param-* headers of the tool called.
  std::optional<Response> screen(const Request& req, const jsonrpc::Parsed& parsed, detail::Stateless& call) const {
    const jsonrpc::Message& msg = parsed.messages.front();
    if (msg.is_request() && msg.method() == "initialize") return json_response(404, no_initialize(msg.id()));
    mcp_post::Checks checks;
    checks.exact_headers = true;
    checks.envelope = [this, &call](const jsonrpc::Message& m, std::string_view version) {
      const std::string header(version);
      std::optional<RpcError> bad = server.check_envelope(m, &header, call);
      return bad ? std::optional<mcp::Refusal>(refusal_of(std::move(*bad))) : std::nullopt;
    };
    if (auto refused = mcp_post::screen_stateless(req, parsed, checks)) return refused;
    // The envelope was there, so are the params.
    auto name = msg.method() == "tools/call" ? json::get_string(*msg.params(), "name") : std::nullopt;
    const auto tool = name ? server.find_tool(*name) : nullptr;
    const json::Value* schema = tool ? json::find(tool->definition, "inputSchema") : nullptr;
    const json::Value* args = schema ? json::find(*msg.params(), "arguments") : nullptr;
    std::optional<RpcError> bad = args ? check_param_headers(req, *schema, *args) : std::nullopt;
    if (!bad) return std::nullopt;
    return json_response(mcp::http_status(bad->code, true), answer(msg.id(), std::move(*bad)));
  }

  Task<void> post_stateless(Request& req, Responder& res, jsonrpc::Parsed& parsed) {
    auto call = std::make_shared<detail::Stateless>();
    std::optional<Response> refused = screen(req, parsed, *call);
    if (refused) {
      co_await res.send(std::move(*refused));
      co_return;
    }
    jsonrpc::Message& msg = parsed.messages.front();
    if (msg.method() == "subscriptions/listen") {
      co_await listen(res, msg);
      co_return;
    }
    bool talks = server.talks_during_call(msg) && accepts_event_stream(req);
    auto m = std::make_shared<jsonrpc::Message>(std::move(msg));
    Work work = [this, call, m](const std::function<bool(std::string)>& send) {
      Outcome out = server.dispatch_stateless(*m, *call, send);
      const auto* err = std::get_if<RpcError>(&out);
      const int status = mcp_post::answer_status(err ? err->code : 0);
      return Dispatched{status, answer(m->id(), std::move(out))};
    };
    co_await run_on_pool(pool, res, talks, std::move(work));
  }

  // A subscriptions/listen request: an SSE response that stays open, the
  // acknowledgement first, until the client goes away or the server stops.
  Task<void> listen(Responder& res, const jsonrpc::Message& msg) {
    auto opened = server.listen(msg, {});
    if (auto* err = std::get_if<RpcError>(&opened)) {
      int status = mcp_post::answer_status(err->code);
      {
        auto reply = json_response(status, answer(msg.id(), std::move(*err)));
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

  Task<void> del(Request& req, Responder& res) {
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

  Task<void> get(Request& req, Responder& res) {
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
  transport::http::Listener listener(io, opts,
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

}  // namespace mcpgw::examples
