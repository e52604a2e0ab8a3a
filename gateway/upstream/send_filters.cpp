// The filters of Upstream::send, outermost first: the request's client span
// (TraceFilter), the readable failure and the server's last trouble
// (FailureFilter), the gateway's progress token and the way back to the
// calling client (ClientRoutingFilter), the client's forwarded headers
// (ForwardFilter), and the send itself with one renewal of a forgotten
// session (RenewalFilter).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "mcp/span.hpp"
#include "upstream/upstream.hpp"

namespace mcpgw::upstream {

Task<transport::Response> SendNext::operator()(Outgoing& out) const {
  SendFilter* first = rest_.front();
  co_return co_await first->on_send(out, SendNext(rest_.subspan(1)));
}

/// Each request is a child span of the client's call (a client span when
/// spans are recorded): a header over HTTP, `_meta` where there are no
/// headers (stdio).
class Upstream::TraceFilter final : public SendFilter {
 public:
  explicit TraceFilter(const Upstream& u) : u_(u) {}

  Task<transport::Response> on_send(Outgoing& out, SendNext next) override {
    if (!out.opts.trace) co_return co_await next(out);
    mcp::SpanTimer span(out.opts.spans, *out.opts.trace, mcp::span_name(out.method, &out.params),
                        mcp::Span::Kind::Client);
    std::string child = span.context().header();
    auto& a = out.params.GetAllocator();
    if (u_.cfg_.transport == config::Server::Transport::Http) {
      out.wire.headers.emplace_back("traceparent", child);
      if (json::Value* meta = json::find(out.params, "_meta"); meta && meta->IsObject())
        meta->RemoveMember(mcp::kMetaTraceparent.data());
    } else {
      json::set(json::object_member(out.params, "_meta", a), mcp::kMetaTraceparent, json::str(child, a), a);
    }
    transport::Response r = co_await next(out);
    if (span.recording()) {
      u_.describe_client_span(span.span(), out.method, out.params, r);
      span.finish();
    }
    co_return r;
  }

 private:
  const Upstream& u_;
};

/// A request that got no answer says why in words that name the server,
/// and, unless its client gave up, is the server's last trouble.
class Upstream::FailureFilter final : public SendFilter {
 public:
  explicit FailureFilter(Upstream& u) : u_(u) {}

  Task<transport::Response> on_send(Outgoing& out, SendNext next) override {
    transport::Response r = co_await next(out);
    if (r.message) co_return r;
    using F = transport::Failure;
    std::string why = u_.failure_text(r);
    bool plain = r.failure == F::Timeout || r.failure == F::Cancelled || out.unconnected;
    r.detail = "mcpgw: upstream '" + u_.cfg_.name + "' " + (plain ? why : "failed: " + why);
    if (r.failure != F::Cancelled) {
      std::string what = out.method == "tools/call" ? r.detail + " (tools/call " +
                                                          std::string(json::get_string(out.params, "name").value_or("")) + ")"
                                                    : r.detail + " (" + std::string(out.method) + ")";
      std::lock_guard lk(u_.mu_);
      u_.note_trouble_locked(std::move(what));
    }
    co_return r;
  }

 private:
  Upstream& u_;
};

/// The gateway's own progress token replaces the client's (tokens of
/// different clients never meet on a shared upstream connection), and
/// while the request runs, what the server sends for it (progress, its own
/// requests, messages about its tasks) reaches the calling client.
class Upstream::ClientRoutingFilter final : public SendFilter {
 public:
  explicit ClientRoutingFilter(Upstream& u) : u_(u) {}

  Task<transport::Response> on_send(Outgoing& out, SendNext next) override {
    const CallOptions& opts = out.opts;
    if (!opts.on_progress && !opts.client) {
      if (json::Value* meta = json::find(out.params, "_meta"); meta && meta->IsObject())
        meta->RemoveMember("progressToken");
      co_return co_await next(out);
    }
    out.token = "mcpgw-" + std::to_string(u_.next_token_.fetch_add(1));
    auto& a = out.params.GetAllocator();
    json::set(json::object_member(out.params, "_meta", a), "progressToken", json::str(out.token, a), a);
    Registration registered(u_, out);
    co_return co_await next(out);
  }

 private:
  /// The request's entries in the server's tables, for as long as it runs.
  class Registration {
   public:
    Registration(Upstream& u, Outgoing& out) : u_(u), token_(out.token) {
      const CallOptions& opts = out.opts;
      if (opts.on_progress) {
        std::lock_guard lk(u_.progress_mu_);
        u_.progress_.emplace(token_, opts.on_progress);
      }
      if (!opts.client) return;
      ActiveCall active{opts.client, opts.deadline};
      // A request about one of the server's tasks (tasks/result): what the
      // server sends tied to that task is this call's.
      auto task = out.method.rfind("tasks/", 0) == 0 ? json::get_string(out.params, "taskId") : std::nullopt;
      {
        std::lock_guard lk(u_.calls_mu_);
        seq_ = active.seq = ++u_.next_call_;
        u_.calls_.emplace(seq_, active);
        u_.by_token_.emplace(token_, active);
        if (task) u_.by_task_[std::string(*task)] = active;
      }
      // What arrives on this request's own stream (Streamable HTTP) is
      // this call's, whoever else is calling.
      out.wire.on_related = [&u = u_, active](jsonrpc::Message& m) { u.route(m, active); };
    }
    ~Registration() {
      {
        std::lock_guard lk(u_.progress_mu_);
        u_.progress_.erase(token_);
      }
      if (!seq_) return;
      std::lock_guard lk(u_.calls_mu_);
      u_.calls_.erase(seq_);
      u_.by_token_.erase(token_);
      std::erase_if(u_.by_task_, [seq = seq_](const auto& e) { return e.second.seq == seq; });
    }
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;

   private:
    Upstream& u_;
    std::string token_;
    std::uint64_t seq_ = 0;
  };

  Upstream& u_;
};

/// The client's headers the server's forward_headers lists go with each of
/// its requests, whatever the revision.
class Upstream::ForwardFilter final : public SendFilter {
 public:
  explicit ForwardFilter(const Upstream& u) : u_(u) {}

  Task<transport::Response> on_send(Outgoing& out, SendNext next) override {
    if (const Caller* caller = out.opts.caller) {
      for (const auto& name : u_.cfg_.forward_headers)
        for (const auto& [have, value] : caller->headers)
          if (std::equal(name.begin(), name.end(), have.begin(), have.end(),
                         [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; }))
            out.wire.forwarded.emplace_back(name, value);
    }
    co_return co_await next(out);
  }

 private:
  const Upstream& u_;
};

/// The send itself. When the server forgot our session (it restarted:
/// HTTP 400 or 404 to our session id) or could not be reached at all, the
/// request never got there: initialize anew and send once more within the
/// same deadline. Another session (a task's, see CallOptions) is not ours
/// to renew. A connection attempt under way is waited for, once.
class Upstream::RenewalFilter final : public SendFilter {
 public:
  explicit RenewalFilter(Upstream& u) : u_(u) {}

  Task<transport::Response> on_send(Outgoing& out, SendNext) override {
    using F = transport::Failure;
    transport::Response r;
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto c = u_.connection();
      if (!c) {
        bool renewed = attempt == 0 && u_.state() == State::Connecting && co_await u_.renew(nullptr, out.opts.deadline);
        if (renewed) continue;
        out.unconnected = true;
        co_return transport::Response{std::nullopt, F::Closed, "is not connected (" + u_.status() + ")"};
      }
      r = co_await c->call(out.method, &out.params, out.wire);
      bool renewable = (r.failure == F::SessionExpired && out.opts.upstream_session.empty()) || r.failure == F::Unreachable;
      if (r.message || !renewable || attempt == 1) break;
      spdlog::warn("upstream {}: {}; initializing a new session and retrying {}{}", u_.cfg_.name, r.detail, out.method,
                   out.opts.trace ? " trace=" + out.opts.trace->trace_id : std::string());
      if (!co_await u_.renew(c, out.opts.deadline)) break;
    }
    co_return r;
  }

 private:
  Upstream& u_;
};

std::vector<std::unique_ptr<SendFilter>> Upstream::send_filters() {
  std::vector<std::unique_ptr<SendFilter>> chain;
  chain.push_back(std::make_unique<TraceFilter>(*this));
  chain.push_back(std::make_unique<FailureFilter>(*this));
  chain.push_back(std::make_unique<ClientRoutingFilter>(*this));
  chain.push_back(std::make_unique<ForwardFilter>(*this));
  chain.push_back(std::make_unique<RenewalFilter>(*this));
  return chain;
}

std::vector<SendFilter*> Upstream::chain_of(const std::vector<std::unique_ptr<SendFilter>>& filters) {
  std::vector<SendFilter*> chain;
  for (const auto& f : filters) chain.push_back(f.get());
  return chain;
}

Task<transport::Response> Upstream::send(std::string_view method, json::Document params, const CallOptions& opts,
                                         std::vector<std::pair<std::string, std::string>> headers) {
  if (modern()) add_envelope(params, &opts);
  Outgoing out{method, std::move(params), opts, {}, {}};
  out.wire.deadline = opts.deadline;
  out.wire.cancel = opts.cancel;
  out.wire.headers = std::move(headers);
  out.wire.session = opts.upstream_session;
  co_return co_await SendNext(send_chain_)(out);
}

}  // namespace mcpgw::upstream
