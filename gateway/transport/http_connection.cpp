#include "transport/http_connection.hpp"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "mcp/era.hpp"
#include "transport/sse.hpp"

namespace mcpgw::transport {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxBody = 64 * 1024 * 1024;
constexpr std::size_t kMaxIdle = 32;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

/// httplib's error names are terse ("Connection"); say what happened.
std::string describe(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection: return "cannot connect (connection refused or host unreachable)";
    case httplib::Error::ConnectionTimeout: return "connection attempt timed out";
    case httplib::Error::Read: return "connection closed while reading the response";
    case httplib::Error::Write: return "connection closed while sending the request";
    case httplib::Error::SSLConnection: return "TLS handshake failed";
    case httplib::Error::SSLLoadingCerts: return "cannot load TLS certificates";
    case httplib::Error::SSLServerVerification: return "TLS certificate verification failed";
    case httplib::Error::Compression: return "cannot decompress the response";
    default: return "HTTP client error (" + httplib::to_string(e) + ")";
  }
}

}  // namespace

Result<std::unique_ptr<HttpConnection>> HttpConnection::create(
    std::string name, const std::string& url, std::vector<std::pair<std::string, std::string>> headers,
    ConnectionHandlers handlers) {
  auto scheme = url.find("://");
  if (scheme == std::string::npos || (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0))
    return Error{"url must start with http:// or https://: " + url};
  auto slash = url.find('/', scheme + 3);
  std::unique_ptr<HttpConnection> c(new HttpConnection());  // private constructor: make_unique cannot reach it
  c->name_ = std::move(name);
  c->origin_ = url.substr(0, slash);
  c->path_ = slash == std::string::npos ? "/" : url.substr(slash);
  c->headers_ = std::move(headers);
  c->handlers_ = std::move(handlers);
  return c;
}

HttpConnection::~HttpConnection() { close(); }

std::unique_ptr<httplib::Client> HttpConnection::acquire() {
  {
    std::lock_guard lk(mu_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  auto c = std::make_unique<httplib::Client>(origin_);
  c->set_tcp_nodelay(true);
  c->set_keep_alive(true);
  c->set_connection_timeout(std::chrono::seconds(5));
  return c;
}

void HttpConnection::release(std::unique_ptr<httplib::Client> c) {
  std::lock_guard lk(mu_);
  if (idle_.size() < kMaxIdle && !closed_.load()) idle_.push_back(std::move(c));
}

void HttpConnection::set_protocol_version(std::string version) {
  std::lock_guard lk(mu_);
  protocol_version_ = std::move(version);
}

Response HttpConnection::post(const std::string& body, std::optional<std::int64_t> id,
                              const RequestOptions& opts,
                              const std::vector<std::pair<std::string, std::string>>& routing) {
  if (closed_.load()) return {std::nullopt, Failure::Closed, "connection closed"};
  httplib::Request req;
  req.method = "POST";
  req.path = path_;
  req.body = body;
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "application/json, text/event-stream");
  std::string had_session;
  {
    std::lock_guard lk(mu_);
    had_session = session_id_;
    if (!session_id_.empty() && routing.empty()) req.set_header("Mcp-Session-Id", session_id_);
    if (!protocol_version_.empty() && routing.empty()) req.set_header("MCP-Protocol-Version", protocol_version_);
  }
  for (const auto& [k, v] : routing) req.set_header(k, v);
  for (const auto& [k, v] : headers_) req.set_header(k, v);

  std::optional<jsonrpc::Message> answer;
  bool sse = false, timed_out = false, cancelled = false;
  std::string json_body;
  auto deliver = [&](jsonrpc::Message& m) {
    if (m.is_response()) {
      if (id && m.id().IsInt64() && m.id().GetInt64() == *id) {
        answer = std::move(m);
        return false;  // we have what we came for; stop reading
      }
      return true;
    }
    if (opts.on_related) opts.on_related(m);
    else if (handlers_.on_message) handlers_.on_message(m);
    return true;
  };
  sse::Parser parser([&](std::string_view, std::string_view data) {
    // Servers prime a stream with an event without data (2025-11-25).
    if (data.empty()) return true;
    auto doc = json::parse(data);
    if (!doc) {
      spdlog::warn("upstream {}: ignoring an SSE event that is not JSON: {:.200}", name_, data);
      return true;
    }
    auto m = jsonrpc::Message::from(std::move(*doc));
    if (!m) {
      spdlog::warn("upstream {}: ignoring an invalid JSON-RPC message: {:.200}", name_, data);
      return true;
    }
    return deliver(*m);
  });
  req.response_handler = [&](const httplib::Response& r) {
    sse = lower(r.get_header_value("Content-Type")).rfind("text/event-stream", 0) == 0;
    // Read the session id from the headers: an SSE answer is taken before
    // the response object is complete.
    if (auto sid = r.get_header_value("Mcp-Session-Id"); !sid.empty()) {
      std::lock_guard lk(mu_);
      session_id_ = sid;
    }
    return true;
  };
  req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
    if (Clock::now() >= opts.deadline) {
      timed_out = true;
      return false;
    }
    if (opts.cancel && opts.cancel->cancelled()) {
      cancelled = true;
      return false;
    }
    if (sse) return parser.feed(std::string_view(data, len));
    if (json_body.size() + len > kMaxBody) return false;
    json_body.append(data, len);
    return true;
  };

  auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(opts.deadline - Clock::now());
  if (remaining.count() <= 0) return {std::nullopt, Failure::Timeout, "timed out"};
  auto cli = acquire();
  cli->set_read_timeout(remaining);
  cli->set_write_timeout(remaining);
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  // A cancel closes the socket the send is blocked on; the client is then
  // not reused.
  CancelSignal::Subscription abort;
  if (opts.cancel) abort = opts.cancel->on_cancel([c = cli.get()] { c->stop(); });
  bool sent = cli->send(req, res, err);
  abort.reset();
  if (opts.cancel && opts.cancel->cancelled()) cancelled = true;
  // A connection we stopped reading mid-stream cannot be reused.
  if (sent && !cancelled) release(std::move(cli));

  // Resumability (2025-11-25): a stream that ended before the answer, after
  // events with ids, goes on in a GET with Last-Event-ID once the delay the
  // server asked for has passed.
  for (int attempt = 0; attempt < kMaxResumes && sent && sse && id && !answer && !cancelled &&
                        res.status == 200 && !parser.last_event_id().empty() && Clock::now() < opts.deadline;
       ++attempt) {
    auto delay = std::chrono::milliseconds(parser.retry_ms() >= 0 ? parser.retry_ms() : 1000);
    if (!wait_resume(std::min<Clock::time_point>(Clock::now() + delay, opts.deadline), opts.cancel)) {
      cancelled = opts.cancel && opts.cancel->cancelled();
      break;
    }
    httplib::Headers h{{"Accept", "text/event-stream"}, {"Last-Event-ID", parser.last_event_id()}};
    {
      std::lock_guard lk(mu_);
      if (!session_id_.empty()) h.emplace("Mcp-Session-Id", session_id_);
      if (!protocol_version_.empty()) h.emplace("MCP-Protocol-Version", protocol_version_);
    }
    for (const auto& [k, v] : headers_) h.emplace(k, v);
    httplib::Client resume(origin_);
    resume.set_tcp_nodelay(true);
    resume.set_read_timeout(std::chrono::duration_cast<std::chrono::milliseconds>(opts.deadline - Clock::now()));
    CancelSignal::Subscription stop;
    if (opts.cancel) stop = opts.cancel->on_cancel([&resume] { resume.stop(); });
    int status = 0;
    resume.Get(
        path_, h, [&](const httplib::Response& r) { return (status = r.status) == 200; },
        [&](const char* data, size_t len) {
          if (Clock::now() >= opts.deadline) return false;
          return parser.feed(std::string_view(data, len));
        });
    if (status != 200) break;
  }
  if (answer) return {std::move(answer), Failure::Transport, {}};
  if (timed_out || (err == httplib::Error::Read && Clock::now() >= opts.deadline))
    return {std::nullopt, Failure::Timeout, "timed out"};
  if (cancelled) return {std::nullopt, Failure::Cancelled, "cancelled"};
  if (!sent) return {std::nullopt, Failure::Transport, origin_ + path_ + ": " + describe(err)};

  if (res.status == 404 && !had_session.empty())
    return {std::nullopt, Failure::SessionExpired, "session expired (HTTP 404)"};
  if (!id) {
    if (res.status >= 200 && res.status < 300) return {std::nullopt, Failure::Transport, {}};
    return {std::nullopt, Failure::Transport, "HTTP " + std::to_string(res.status)};
  }
  if (!sse && !json_body.empty()) {
    auto doc = json::parse(json_body);
    if (doc) {
      auto handle = [&](json::Document d) {
        if (auto m = jsonrpc::Message::from(std::move(d))) deliver(*m);
      };
      if (doc->IsArray()) {
        for (auto& v : doc->GetArray()) handle(json::clone(v));
      } else if (doc->IsObject()) {
        // An HTTP error status with a JSON-RPC error body (null id) is still
        // the server's answer to us.
        if (res.status >= 400 && json::find(*doc, "error")) {
          json::Value* i = json::find(*doc, "id");
          if (!i) json::set(*doc, "id", json::Value(*id), doc->GetAllocator());
          else if (i->IsNull()) i->SetInt64(*id);
        }
        handle(std::move(*doc));
      }
      if (answer) return {std::move(answer), Failure::Transport, {}};
    }
  }
  std::string what = res.status >= 300 ? "HTTP " + std::to_string(res.status)
                     : sse             ? "SSE stream ended without a response"
                                       : "response was not the JSON-RPC answer";
  return {std::nullopt, Failure::Transport, what};
}

bool HttpConnection::wait_resume(Clock::time_point until, CancelSignal* cancel) {
  CancelSignal::Subscription woken;
  if (cancel) woken = cancel->on_cancel([this] {
    std::lock_guard g(mu_);
    stream_cv_.notify_all();
  });
  std::unique_lock lk(mu_);
  stream_cv_.wait_until(lk, until, [&] { return closed_.load() || (cancel && cancel->cancelled()); });
  return !closed_.load() && !(cancel && cancel->cancelled());
}

Response HttpConnection::request(std::string_view method, const json::Value* params,
                                 const RequestOptions& opts) {
  std::int64_t id = next_id_.fetch_add(1);
  // A request of the stateless revision repeats its version, method and
  // addressed name in headers, for intermediaries that route on them.
  std::vector<std::pair<std::string, std::string>> routing;
  const json::Value* meta = params ? json::find(*params, "_meta") : nullptr;
  if (auto version = meta ? json::get_string(*meta, mcp::kMetaVersion) : std::nullopt) {
    routing.emplace_back("MCP-Protocol-Version", std::string(*version));
    routing.emplace_back("Mcp-Method", std::string(method));
    if (const char* key = mcp::named_param(method))
      if (auto name = json::get_string(*params, key)) routing.emplace_back("Mcp-Name", mcp::encode_header_value(*name));
    routing.insert(routing.end(), opts.headers.begin(), opts.headers.end());
  }
  Response r = post(jsonrpc::make_request(id, method, params), id, opts, routing);
  if (!r.message && (r.failure == Failure::Timeout || r.failure == Failure::Cancelled)) {
    json::Document p(rapidjson::kObjectType);
    p.AddMember("requestId", id, p.GetAllocator());
    p.AddMember("reason", json::ref(r.failure == Failure::Timeout ? "timeout" : "cancelled by client"),
                p.GetAllocator());
    notify("notifications/cancelled", &p);
  }
  return r;
}

bool HttpConnection::notify(std::string_view method, const json::Value* params) {
  RequestOptions o;
  o.deadline = Clock::now() + std::chrono::seconds(5);
  Response r = post(jsonrpc::make_notification(method, params), std::nullopt, o);
  return r.detail.empty();
}

bool HttpConnection::respond(std::string message) {
  RequestOptions o;
  o.deadline = Clock::now() + std::chrono::seconds(5);
  return post(message, std::nullopt, o).detail.empty();
}

void HttpConnection::listen() {
  listening_ = true;
  listener_ = std::thread([this] {
    auto backoff = std::chrono::milliseconds(100);
    while (!closed_.load()) {
      httplib::Headers h{{"Accept", "text/event-stream"}};
      {
        std::lock_guard lk(mu_);
        if (!session_id_.empty()) h.emplace("Mcp-Session-Id", session_id_);
        if (!protocol_version_.empty()) h.emplace("MCP-Protocol-Version", protocol_version_);
        stream_client_ = std::make_unique<httplib::Client>(origin_);
        stream_client_->set_tcp_nodelay(true);
        stream_client_->set_connection_timeout(std::chrono::seconds(5));
        // Servers send heartbeats far more often than this; silence this
        // long means the stream is dead.
        stream_client_->set_read_timeout(std::chrono::minutes(5));
      }
      for (const auto& [k, v] : headers_) h.emplace(k, v);
      int status = 0;
      sse::Parser parser([&](std::string_view, std::string_view data) {
        if (data.empty()) return true;
        auto doc = json::parse(data);
        if (!doc) return true;
        auto m = jsonrpc::Message::from(std::move(*doc));
        if (m && handlers_.on_message) handlers_.on_message(*m);
        return !closed_.load();
      });
      stream_client_->Get(
          path_, h, [&](const httplib::Response& r) { return (status = r.status) == 200; },
          [&](const char* data, size_t len) { return parser.feed(std::string_view(data, len)); });
      // 405: the server offers no stream (allowed by the spec); stop asking.
      if (status == 405 || closed_.load()) break;
      if (status == 200) backoff = std::chrono::milliseconds(100);
      std::unique_lock lk(mu_);
      stream_cv_.wait_for(lk, backoff, [&] { return closed_.load(); });
      backoff = std::min(backoff * 2, std::chrono::milliseconds(30000));
    }
    std::lock_guard lk(mu_);
    listening_ = false;
    stream_cv_.notify_all();
  });
}

void HttpConnection::close() {
  if (closed_.exchange(true)) return;
  std::string sid;
  {
    std::lock_guard lk(mu_);
    sid = session_id_;
    idle_.clear();
  }
  {
    // stop() has no effect on a request that has not reached its socket
    // yet, so repeat it until the listener has noticed.
    std::unique_lock lk(mu_);
    while (listening_) {
      if (stream_client_) stream_client_->stop();
      stream_cv_.notify_all();
      stream_cv_.wait_for(lk, std::chrono::milliseconds(20));
    }
  }
  if (listener_.joinable()) listener_.join();
  if (sid.empty()) return;
  // Tell the server the session is over so it can free it; best effort.
  httplib::Client c(origin_);
  c.set_connection_timeout(std::chrono::seconds(1));
  c.set_read_timeout(std::chrono::seconds(1));
  httplib::Headers h{{"Mcp-Session-Id", sid}};
  for (const auto& [k, v] : headers_) h.emplace(k, v);
  c.Delete(path_.c_str(), h);
}

}  // namespace mcpgw::transport
