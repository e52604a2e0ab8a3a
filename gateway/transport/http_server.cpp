#include "transport/http_server.hpp"

#include <httplib.h>
#include <openssl/crypto.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "mcp/era.hpp"
#include "mcp/protocol.hpp"
#include "transport/sse.hpp"
#include "util/random.hpp"

namespace mcpgw::transport {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kJson = "application/json";
constexpr const char* kEventStream = "text/event-stream";
/// A stateless request still running after this is answered as a stream.
constexpr std::chrono::milliseconds kStreamAfter{200};
/// Heartbeats of such a stream: how soon a client that left is noticed.
constexpr int kCallHeartbeatMs = 250;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

/// Host part of a Host header or URL authority, without port or brackets.
std::string host_of(std::string_view authority) {
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    return std::string(authority.substr(1, close == std::string_view::npos ? authority.npos : close - 1));
  }
  auto colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(':') == colon) authority = authority.substr(0, colon);
  return std::string(authority);
}

void json_error(httplib::Response& res, int status, int code, const std::string& message) {
  res.status = status;
  res.set_content(jsonrpc::make_error(json::Value(), code, message), kJson);
}

/// The events of one POST: replies and related messages, in order.
struct PostStream {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<bool, std::string>> events;  // (is_final, message)
  std::size_t finals_expected = 0;
  std::size_t finals_seen = 0;
  bool seen_related = false;
  // Weak: each exchange owns the stream, not the other way round.
  std::vector<std::weak_ptr<Exchange>> exchanges;

  void push(bool final, std::string msg) {
    {
      std::lock_guard lk(mu);
      if (final) ++finals_seen;
      else seen_related = true;
      events.emplace_back(final, std::move(msg));
    }
    cv.notify_all();
  }
  void cancel_all() {
    std::vector<std::shared_ptr<Exchange>> live;
    {
      std::lock_guard lk(mu);
      for (auto& e : exchanges)
        if (auto x = e.lock()) live.push_back(std::move(x));
    }
    // Cancel callbacks take other locks: run them outside ours.
    for (auto& x : live) x->cancel();
  }
};

class PostExchange final : public Exchange {
 public:
  PostExchange(std::shared_ptr<PostStream> stream, bool can_stream, bool alone)
      : stream_(std::move(stream)), can_stream_(can_stream), alone_(alone) {}
  bool may_block_caller() const override { return alone_; }
  bool can_send() const override { return can_stream_; }
  void send(std::string msg) override {
    // A client that accepts only JSON cannot receive messages mid-request;
    // dropping them is what the spec leaves us.
    if (can_stream_ && !cancelled()) stream_->push(false, std::move(msg));
  }
  void reply(std::string response) override { stream_->push(true, std::move(response)); }

 private:
  std::shared_ptr<PostStream> stream_;
  bool can_stream_;
  bool alone_;
};

/// A POST body, read through httplib's content reader. It is kept only up
/// to the limit (httplib enforces Content-Length limits but not chunked
/// ones), and a body that was not wanted (a request refused early) is still
/// read to its end but dropped, so the keep-alive connection stays in sync
/// for the next request; past a hard cap, reading stops altogether.
class Body {
 public:
  Body(const httplib::ContentReader& reader, const httplib::Request& req, std::size_t max)
      : reader_(reader), max_(max) {
    std::string length = req.get_header_value("Content-Length");
    std::size_t declared = 0;
    std::from_chars(length.data(), length.data() + length.size(), declared);
    too_big_ = declared > max;
  }
  ~Body() {
    if (!consumed_) consume(false);
  }
  /// Reads the body; false when it is over the limit.
  bool read() {
    consume(true);
    return !too_big_;
  }
  const std::string& text() const { return text_; }

 private:
  void consume(bool keep) {
    consumed_ = true;
    std::size_t seen = 0;
    reader_([&](const char* data, size_t len) {
      seen += len;
      if (text_.size() + len > max_) {
        too_big_ = true;
        std::string().swap(text_);
      }
      if (keep && !too_big_) text_.append(data, len);
      return seen <= 16 * max_;
    });
  }
  const httplib::ContentReader& reader_;
  std::size_t max_;
  bool too_big_ = false, consumed_ = false;
  std::string text_;
};

struct HttpSession {
  std::shared_ptr<Session> session;
  std::shared_ptr<Outbox> outbox = std::make_shared<Outbox>();
  std::string mode;
  std::string principal;
  std::atomic<bool> stream_open{false};
  std::atomic<Clock::rep> last_active{Clock::now().time_since_epoch().count()};
  void touch() { last_active.store(Clock::now().time_since_epoch().count()); }
};

}  // namespace

bool is_loopback_host(std::string_view host) {
  std::string h = host_of(host);
  return h == "localhost" || h == "::1" || h.rfind("127.", 0) == 0;
}

struct HttpServer::Impl {
  HttpServerOptions opts;
  Handler& handler;
  httplib::Server svr;
  mutable std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<HttpSession>> sessions;
  std::mutex sweep_mu;
  std::condition_variable sweep_cv;
  bool stopping = false;
  bool serving = false;
  std::atomic<std::size_t> open_streams{0};
  std::atomic<bool> served{false};
  std::thread sweeper;

  Impl(HttpServerOptions o, Handler& h) : opts(std::move(o)), handler(h) {}

  // --- checks shared by every MCP request -------------------------------

  bool host_allowed(const httplib::Request& req) const {
    if (!req.has_header("Host")) return true;
    std::string host = lower(host_of(req.get_header_value("Host")));
    if (!opts.allowed_hosts.empty())
      return std::any_of(opts.allowed_hosts.begin(), opts.allowed_hosts.end(),
                         [&](const std::string& a) { return lower(a) == host; });
    // Bound to loopback, only loopback names may reach us: a rebinding attack
    // arrives with the attacker's host name.
    if (is_loopback_host(opts.host)) return is_loopback_host(host);
    return true;
  }

  bool origin_allowed(const httplib::Request& req) const {
    if (!req.has_header("Origin")) return true;
    std::string origin = req.get_header_value("Origin");
    if (!opts.allowed_origins.empty())
      return std::find(opts.allowed_origins.begin(), opts.allowed_origins.end(), origin) !=
             opts.allowed_origins.end();
    auto scheme = origin.find("://");
    if (scheme == std::string::npos) return false;
    std::string_view rest(origin);
    rest.remove_prefix(scheme + 3);
    return is_loopback_host(rest.substr(0, rest.find('/')));
  }

  /// Finds the credential of the request; nullptr when auth is off.
  const BearerCredential* authenticate(const httplib::Request& req, bool& ok) const {
    ok = true;
    if (!opts.auth_enabled) return nullptr;
    ok = false;
    std::string h = req.get_header_value("Authorization");
    if (h.size() < 7 || lower(h.substr(0, 7)) != "bearer ") return nullptr;
    std::string_view tok = std::string_view(h).substr(7);
    const BearerCredential* found = nullptr;
    // Compare against every token in constant time so timing reveals nothing.
    for (const auto& c : opts.credentials)
      if (c.token.size() == tok.size() && CRYPTO_memcmp(c.token.data(), tok.data(), tok.size()) == 0)
        found = &c;
    ok = found != nullptr;
    return found;
  }

  /// Runs the checks every MCP request passes; false when `res` is final.
  bool admit(const httplib::Request& req, httplib::Response& res, const std::string& mode,
             ClientContext& ctx) {
    if (!host_allowed(req)) {
      json_error(res, 403, jsonrpc::kInvalidRequest, "Forbidden: Host not allowed");
      return false;
    }
    if (!origin_allowed(req)) {
      json_error(res, 403, jsonrpc::kInvalidRequest, "Forbidden: Origin not allowed");
      return false;
    }
    bool ok = true;
    const BearerCredential* cred = authenticate(req, ok);
    if (!ok) {
      res.set_header("WWW-Authenticate", "Bearer realm=\"mcpgw\"");
      json_error(res, 401, jsonrpc::kInvalidRequest, "Unauthorized: missing or invalid bearer token");
      return false;
    }
    std::vector<std::string> modes;
    if (!mode.empty()) modes = handler.modes();
    if (!mode.empty() && std::find(modes.begin(), modes.end(), mode) == modes.end()) {
      std::string list;
      for (const auto& m : modes) {
        if (!list.empty()) list += ", ";
        list += m;
      }
      json_error(res, 404, jsonrpc::kInvalidRequest,
                 "Unknown mode \"" + mode + "\"; available modes: " + (list.empty() ? "(none)" : list));
      return false;
    }
    if (cred) {
      ctx.principal = cred->principal;
      ctx.allowed_modes = cred->modes;
    }
    ctx.mode = mode;
    return true;
  }

  std::shared_ptr<HttpSession> find_session(const std::string& id) {
    std::lock_guard lk(mu);
    auto it = sessions.find(id);
    return it == sessions.end() ? nullptr : it->second;
  }

  /// Resolves Mcp-Session-Id for a non-initialize request; false when `res` is final.
  bool lookup(const httplib::Request& req, httplib::Response& res, const ClientContext& ctx,
              std::shared_ptr<HttpSession>& out) {
    std::string sid = req.get_header_value("Mcp-Session-Id");
    if (sid.empty()) {
      json_error(res, 400, jsonrpc::kInvalidRequest, "Bad Request: Mcp-Session-Id header is required");
      return false;
    }
    out = find_session(sid);
    // A session of another mode or principal is as good as unknown to this
    // caller: never reveal that it exists.
    if (!out || out->mode != ctx.mode || out->principal != ctx.principal) {
      json_error(res, 404, jsonrpc::kInvalidRequest, "Session not found");
      return false;
    }
    out->touch();
    return true;
  }

  // --- POST --------------------------------------------------------------

  void post(const httplib::Request& req, httplib::Response& res, const std::string& mode,
            const httplib::ContentReader& reader) {
    Body body(reader, req, opts.max_body_bytes);
    ClientContext ctx;
    if (!admit(req, res, mode, ctx)) return;
    std::string ctype = lower(req.get_header_value("Content-Type"));
    if (ctype.rfind(kJson, 0) != 0) {
      json_error(res, 415, jsonrpc::kInvalidRequest, "Unsupported Media Type: Content-Type must be application/json");
      return;
    }
    std::string accept = lower(req.get_header_value("Accept"));
    bool any = accept.empty() || accept.find("*/*") != std::string::npos;
    bool accept_json = any || accept.find(kJson) != std::string::npos;
    bool accept_sse = any || accept.find(kEventStream) != std::string::npos;
    if (!accept_json && !accept_sse) {
      json_error(res, 406, jsonrpc::kInvalidRequest,
                 "Not Acceptable: Accept must include application/json or text/event-stream");
      return;
    }
    if (!body.read()) {
      json_error(res, 413, jsonrpc::kInvalidRequest,
                 "Payload Too Large: body exceeds " + std::to_string(opts.max_body_bytes) + " bytes");
      return;
    }
    jsonrpc::Parsed parsed = jsonrpc::parse(body.text());
    if (parsed.messages.empty() && !parsed.batch) {
      res.status = 400;
      res.set_content(parsed.errors.front(), kJson);
      return;
    }
    // Which revision the client speaks: a session means the stateful ones;
    // so does a request without the stateless revision's `_meta` claim whose
    // header (if any) names a stateful version. Everything else is a
    // stateless request and gets that revision's precise errors.
    bool has_version = req.has_header("MCP-Protocol-Version");
    std::string version = req.get_header_value("MCP-Protocol-Version");
    bool claims = !parsed.batch && parsed.messages.size() == 1 && mcp::claimed_version(parsed.messages.front());
    bool stateful = req.has_header("Mcp-Session-Id") || (!claims && (!has_version || mcp::is_supported(version)));
    if (!stateful) return post_stateless(req, res, ctx, parsed, accept_json, accept_sse);
    if (has_version && !mcp::is_supported(version)) {
      json_error(res, 400, jsonrpc::kInvalidRequest, "Bad Request: unsupported MCP-Protocol-Version " + version);
      return;
    }
    bool init = std::any_of(parsed.messages.begin(), parsed.messages.end(),
                            [](const jsonrpc::Message& m) { return m.method() == "initialize"; });
    std::shared_ptr<HttpSession> hs;
    if (init) {
      if (parsed.messages.size() != 1 || parsed.batch) {
        json_error(res, 400, jsonrpc::kInvalidRequest, "Invalid Request: initialize must be sent alone");
        return;
      }
      if (req.has_header("Mcp-Session-Id") && find_session(req.get_header_value("Mcp-Session-Id"))) {
        json_error(res, 400, jsonrpc::kInvalidRequest, "Invalid Request: session is already initialized");
        return;
      }
      auto opened = handler.open_session(ctx);
      if (!opened) {
        json_error(res, 403, jsonrpc::kInvalidRequest, opened.error());
        return;
      }
      hs = std::make_shared<HttpSession>();
      hs->session = std::move(*opened);
      hs->mode = ctx.mode;
      hs->principal = ctx.principal;
      std::weak_ptr<HttpSession> weak = hs;
      std::string id = random_hex(16);
      hs->session->bind(id, ctx, [weak](std::string msg) {
        auto s = weak.lock();
        return s && s->stream_open.load() && s->outbox->push(std::move(msg));
      });
      {
        std::lock_guard lk(mu);
        sessions.emplace(id, hs);
      }
      res.set_header("Mcp-Session-Id", id);
    } else if (!lookup(req, res, ctx, hs)) {
      return;
    }

    auto stream = std::make_shared<PostStream>();
    std::vector<std::pair<jsonrpc::Message, std::shared_ptr<Exchange>>> work;
    for (auto& m : parsed.messages) {
      std::shared_ptr<Exchange> ex;
      if (m.is_request()) {
        ex = std::make_shared<PostExchange>(stream, accept_sse, !parsed.batch);
        stream->exchanges.push_back(ex);
        ++stream->finals_expected;
      }
      work.emplace_back(std::move(m), std::move(ex));
    }
    for (auto& err : parsed.errors) {
      ++stream->finals_expected;
      stream->push(true, std::move(err));
    }
    for (auto& [m, ex] : work) handler.handle(hs->session, std::move(m), std::move(ex));

    if (stream->finals_expected == 0) {
      res.status = 202;
      return;
    }
    bool json_answer = wait_first(*stream, accept_json, accept_sse);
    if (init) {
      // A failed initialize leaves no session behind.
      std::lock_guard lk(stream->mu);
      auto answer = json::parse(stream->events.front().second);
      if (!answer || json::find(*answer, "error")) {
        remove_session(hs->session->id());
        res.headers.erase("Mcp-Session-Id");
      }
    }
    if (json_answer) {
      std::lock_guard lk(stream->mu);
      std::string answer;
      if (parsed.batch) {
        answer.push_back('[');
        for (auto& [final, msg] : stream->events) {
          if (answer.size() > 1) answer += ',';
          answer += msg;
        }
        answer.push_back(']');
      } else {
        answer = std::move(stream->events.front().second);
      }
      res.set_content(answer, kJson);
      return;
    }
    stream_events(res, stream, {});
  }

  /// Waits until the answer can start: every reply is in, or (for a client
  /// that takes SSE) something must stream first. True when the answer is
  /// then one JSON body rather than an event stream.
  static bool wait_first(PostStream& stream, bool accept_json, bool accept_sse,
                         std::optional<std::chrono::milliseconds> stream_after = std::nullopt) {
    std::unique_lock lk(stream.mu);
    auto ready = [&] { return stream.finals_seen == stream.finals_expected || (stream.seen_related && accept_sse); };
    if (stream_after && accept_sse) {
      if (!stream.cv.wait_for(lk, *stream_after, ready)) return false;
    } else {
      stream.cv.wait(lk, ready);
    }
    return accept_json && !stream.seen_related;
  }

  /// Answers with `stream`'s events as SSE, until its last reply; `done`
  /// runs once the response is over, however it ends.
  void stream_events(httplib::Response& res, std::shared_ptr<PostStream> stream, std::function<void()> done,
                     std::optional<int> heartbeat_ms = std::nullopt) {
    int heartbeat = heartbeat_ms.value_or(opts.heartbeat_ms);
    bool prime = heartbeat_ms.has_value();
    res.set_header("Cache-Control", "no-cache");
    auto provider = [stream, heartbeat, prime](size_t, httplib::DataSink& sink) {
      if (prime && !sink.write(sse::kHeartbeat.data(), sse::kHeartbeat.size())) {
        stream->cancel_all();
        return false;
      }
      std::unique_lock lk(stream->mu);
      std::size_t written_finals = 0;
      for (;;) {
        while (!stream->events.empty()) {
          auto [final, msg] = std::move(stream->events.front());
          stream->events.pop_front();
          lk.unlock();
          std::string frame = sse::format_event(msg);
          bool ok = sink.write(frame.data(), frame.size());
          lk.lock();
          if (!ok) {
            lk.unlock();
            stream->cancel_all();
            return false;
          }
          if (final && ++written_finals == stream->finals_expected) {
            lk.unlock();
            sink.done();
            return true;
          }
        }
        if (!stream->cv.wait_for(lk, std::chrono::milliseconds(heartbeat),
                                 [&] { return !stream->events.empty(); })) {
          lk.unlock();
          bool ok = sink.write(sse::kHeartbeat.data(), sse::kHeartbeat.size());
          lk.lock();
          if (!ok) {
            lk.unlock();
            stream->cancel_all();
            return false;
          }
        }
      }
    };
    if (!done) return res.set_chunked_content_provider(kEventStream, provider);
    res.set_chunked_content_provider(kEventStream, provider, [stream, done](bool) {
      // However the stream ended, nothing waits for this request any more.
      stream->cancel_all();
      done();
    });
  }

  // --- POST, MCP 2026-07-28 (stateless) ----------------------------------

  void post_stateless(const httplib::Request& req, httplib::Response& res, ClientContext ctx,
                      jsonrpc::Parsed& parsed, bool accept_json, bool accept_sse) {
    if (parsed.batch || parsed.messages.size() != 1) {
      json_error(res, 400, jsonrpc::kInvalidRequest, "Bad Request: MCP 2026-07-28 does not allow JSON-RPC batches");
      return;
    }
    jsonrpc::Message& m = parsed.messages.front();
    // Clients of this revision cancel by closing the stream and answer no
    // requests (there are none): a notification or response changes nothing.
    if (!m.is_request()) {
      res.status = 202;
      return;
    }
    auto refuse = [&](int code, const std::string& message, const json::Value* data = nullptr) {
      res.status = mcp::http_status(code, true);
      res.set_content(jsonrpc::make_error(m.id(), code, message, data), kJson);
    };
    if (!req.has_header("MCP-Protocol-Version"))
      return refuse(mcp::kHeaderMismatch, "Header mismatch: the MCP-Protocol-Version header is required");
    auto envelope = mcp::read_envelope(m, req.get_header_value("MCP-Protocol-Version"));
    if (auto* r = std::get_if<mcp::Refusal>(&envelope))
      return refuse(r->code, r->message, r->data.IsNull() ? nullptr : &r->data);
    std::string method(m.method());
    if (!req.has_header("Mcp-Method"))
      return refuse(mcp::kHeaderMismatch, "Header mismatch: the body names method " + method +
                                              " but the Mcp-Method header is absent");
    if (auto h = mcp::decode_header_value(req.get_header_value("Mcp-Method")); !h || *h != method)
      return refuse(mcp::kHeaderMismatch, "Header mismatch: the Mcp-Method header names '" +
                                              req.get_header_value("Mcp-Method") + "' but the body names " + method);
    if (const char* key = mcp::named_param(method)) {
      auto body_name = m.params() ? json::get_string(*m.params(), key) : std::nullopt;
      if (body_name) {
        if (!req.has_header("Mcp-Name"))
          return refuse(mcp::kHeaderMismatch, "Header mismatch: the body carries params." + std::string(key) + "=\"" +
                                                  std::string(*body_name) + "\" but the Mcp-Name header is absent");
        auto h = mcp::decode_header_value(req.get_header_value("Mcp-Name"));
        if (!h) return refuse(mcp::kHeaderMismatch, "Header mismatch: the Mcp-Name header is not valid =?base64?...?=");
        if (!mcp::header_matches(*h, *body_name))
          return refuse(mcp::kHeaderMismatch, "Header mismatch: the Mcp-Name header names \"" + *h +
                                                  "\" but the body carries params." + key + "=\"" +
                                                  std::string(*body_name) + "\"");
      }
    }
    ctx.stateless = true;
    ctx.has_param_headers = true;
    for (const auto& [name, value] : req.headers) {
      std::string n = lower(name);
      if (n.rfind("mcp-param-", 0) == 0) ctx.param_headers.emplace_back(n.substr(10), value);
    }
    auto opened = handler.open_session(ctx);
    if (!opened) {
      res.status = 403;
      res.set_content(jsonrpc::make_error(m.id(), jsonrpc::kInvalidRequest, opened.error()), kJson);
      return;
    }
    std::shared_ptr<Session> session = std::move(*opened);
    session->bind(random_hex(16), ctx, [](std::string) { return false; });
    auto stream = std::make_shared<PostStream>();
    // The work runs off this thread, which waits to answer as JSON or to
    // turn the answer into a stream (below).
    auto ex = std::make_shared<PostExchange>(stream, accept_sse, false);
    stream->exchanges.push_back(ex);
    stream->finals_expected = 1;
    handler.handle(session, std::move(m), std::move(ex));
    auto done = [this, session] { handler.close_session(session); };
    // A client of this revision cancels by closing its stream, and a socket
    // is only seen closed when written to: a request still running after a
    // moment is answered as a stream, with frequent heartbeats.
    bool listen = method == "subscriptions/listen";
    if (!wait_first(*stream, accept_json, accept_sse, kStreamAfter))
      return stream_events(res, stream, std::move(done), listen ? std::optional<int>() : kCallHeartbeatMs);
    std::string answer;
    {
      std::lock_guard lk(stream->mu);
      answer = std::move(stream->events.front().second);
    }
    done();
    auto reply = json::parse(answer);
    const json::Value* error = reply ? json::find(*reply, "error") : nullptr;
    const json::Value* code = error ? json::find(*error, "code") : nullptr;
    res.status = code && code->IsInt() ? mcp::http_status(code->GetInt(), false) : 200;
    res.set_content(answer, kJson);
  }

  // --- GET ---------------------------------------------------------------

  void get(const httplib::Request& req, httplib::Response& res, const std::string& mode) {
    ClientContext ctx;
    if (!admit(req, res, mode, ctx)) return;
    std::string accept = lower(req.get_header_value("Accept"));
    if (accept.find(kEventStream) == std::string::npos && accept.find("*/*") == std::string::npos) {
      json_error(res, 406, jsonrpc::kInvalidRequest, "Not Acceptable: Accept must include text/event-stream");
      return;
    }
    std::shared_ptr<HttpSession> hs;
    if (!lookup(req, res, ctx, hs)) return;
    // Each open stream holds a worker thread: at most half of them may be
    // streams, so requests always find a thread.
    if (open_streams.fetch_add(1) >= static_cast<std::size_t>(opts.threads / 2)) {
      open_streams.fetch_sub(1);
      json_error(res, 503, jsonrpc::kInvalidRequest, "Service Unavailable: too many open GET streams; retry later");
      return;
    }
    if (hs->stream_open.exchange(true)) {
      open_streams.fetch_sub(1);
      json_error(res, 409, jsonrpc::kInvalidRequest, "Conflict: this session already has a GET stream open");
      return;
    }
    int heartbeat = opts.heartbeat_ms;
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        kEventStream,
        [hs, heartbeat](size_t, httplib::DataSink& sink) {
          // Tell the client right away that the stream is up.
          if (!sink.write(sse::kHeartbeat.data(), sse::kHeartbeat.size())) return false;
          for (;;) {
            auto msg = hs->outbox->pop(std::chrono::milliseconds(heartbeat));
            if (!msg && hs->outbox->closed()) {
              sink.done();
              return true;
            }
            std::string frame = msg ? sse::format_event(*msg) : std::string(sse::kHeartbeat);
            if (!sink.write(frame.data(), frame.size())) return false;
            hs->touch();
          }
        },
        [this, hs](bool) {
          hs->stream_open.store(false);
          open_streams.fetch_sub(1);
        });
  }

  // --- DELETE ------------------------------------------------------------

  void del(const httplib::Request& req, httplib::Response& res, const std::string& mode) {
    ClientContext ctx;
    if (!admit(req, res, mode, ctx)) return;
    std::shared_ptr<HttpSession> hs;
    if (!lookup(req, res, ctx, hs)) return;
    remove_session(hs->session->id());
    res.status = 200;
  }

  void remove_session(const std::string& id) {
    std::shared_ptr<HttpSession> hs;
    {
      std::lock_guard lk(mu);
      auto it = sessions.find(id);
      if (it == sessions.end()) return;
      hs = std::move(it->second);
      sessions.erase(it);
    }
    hs->outbox->close();
    handler.close_session(hs->session);
  }

  void sweep() {
    std::unique_lock lk(sweep_mu);
    auto period = std::chrono::seconds(std::clamp(opts.session_idle_s / 4, 1, 60));
    while (!sweep_cv.wait_for(lk, period, [&] { return stopping; })) {
      auto limit = Clock::now() - std::chrono::seconds(opts.session_idle_s);
      std::vector<std::string> idle;
      {
        std::lock_guard slk(mu);
        for (auto& [id, s] : sessions)
          if (!s->stream_open.load() && Clock::time_point(Clock::duration(s->last_active.load())) < limit)
            idle.push_back(id);
      }
      for (auto& id : idle) {
        spdlog::info("session {} ended after {} s idle", id.substr(0, 8), opts.session_idle_s);
        remove_session(id);
      }
    }
  }
};

HttpServer::HttpServer(HttpServerOptions opts, Handler& handler)
    : impl_(std::make_unique<Impl>(std::move(opts), handler)) {
  auto& s = impl_->svr;
  int threads = impl_->opts.threads;
  // httplib owns the queue it gets from this factory; its API takes a raw pointer.
  s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  s.set_tcp_nodelay(true);
  s.set_keep_alive_max_count(100000);
  // An idle keep-alive connection holds a worker thread, and shutdown waits
  // for it: keep the idle wait short.
  s.set_keep_alive_timeout(1);
  s.set_payload_max_length(impl_->opts.max_body_bytes);
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("HTTP handler failed: {}", what);
    json_error(res, 500, jsonrpc::kInternalError, "Internal error");
  });
  s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.status == 413 && res.body.empty())
      json_error(res, 413, jsonrpc::kInvalidRequest, "Payload Too Large");
  });

  const std::string& base = impl_->opts.path;
  Impl* im = impl_.get();
  auto route = [&s, im](const std::string& pattern, bool with_mode) {
    auto mode_of = [with_mode](const httplib::Request& req) {
      return with_mode ? std::string(req.matches[1]) : std::string();
    };
    s.Post(pattern, [im, mode_of](const httplib::Request& q, httplib::Response& r, const httplib::ContentReader& c) {
      im->post(q, r, mode_of(q), c);
    });
    s.Get(pattern, [im, mode_of](const httplib::Request& q, httplib::Response& r) { im->get(q, r, mode_of(q)); });
    s.Delete(pattern, [im, mode_of](const httplib::Request& q, httplib::Response& r) { im->del(q, r, mode_of(q)); });
  };
  route(base, false);
  route(base + "/([A-Za-z0-9_-]+)", true);
}

HttpServer::~HttpServer() { stop(); }

void HttpServer::add_get(const std::string& path, std::function<SimpleResponse()> fn) {
  impl_->svr.Get(path, [fn = std::move(fn)](const httplib::Request&, httplib::Response& res) {
    SimpleResponse r = fn();
    res.status = r.status;
    res.set_content(r.body, r.content_type);
  });
}

Result<int> HttpServer::bind() {
  int port = impl_->opts.port;
  if (port == 0) port = impl_->svr.bind_to_any_port(impl_->opts.host);
  else if (!impl_->svr.bind_to_port(impl_->opts.host, port)) port = -1;
  if (port <= 0)
    return Error{"cannot listen on " + impl_->opts.host + ":" + std::to_string(impl_->opts.port) + ": " +
                 std::strerror(errno)};
  impl_->sweeper = std::thread([im = impl_.get()] {
    if (im->opts.session_idle_s > 0) im->sweep();
  });
  return port;
}

void HttpServer::serve() {
  {
    std::lock_guard lk(impl_->sweep_mu);
    if (impl_->stopping) return;
    impl_->serving = true;
  }
  impl_->svr.listen_after_bind();
  impl_->served.store(true);
}

void HttpServer::stop() {
  bool serving;
  {
    std::lock_guard lk(impl_->sweep_mu);
    if (impl_->stopping) return;
    impl_->stopping = true;
    serving = impl_->serving;
  }
  // httplib ignores stop() until its accept loop runs; serve() may be a few
  // instructions short of that.
  while (serving && !impl_->svr.is_running() && !impl_->served.load()) std::this_thread::yield();
  impl_->sweep_cv.notify_all();
  {
    std::lock_guard lk(impl_->mu);
    for (auto& [id, s] : impl_->sessions) s->outbox->close();
  }
  impl_->svr.stop();
  if (impl_->sweeper.joinable()) impl_->sweeper.join();
}

std::size_t HttpServer::session_count() const {
  std::lock_guard lk(impl_->mu);
  return impl_->sessions.size();
}

}  // namespace mcpgw::transport
